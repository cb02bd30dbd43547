/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mark.c: marking and unmarking a thread, its marked time, its signal mask.
 *
 * Concurrency: Called on the thread concerned (or by mark= for another one: *_remote,
 * under automark.c's lock); not on the caller's path: they may make
 * system calls (getrusage, /proc).
 */
#ifndef RTO_MARK_H
#define RTO_MARK_H

#include "rto_base.h"
#include "rto_fast.h"

/* mark.c: what a helper must know of its caller (priority, signal mask). */
RTO_HIDDEN void rto_thread_capture(struct rto_thread *t);
/* mark.c: a strict thread learns its descriptors now (mark_api.c: a mode change). */
RTO_HIDDEN void rto_thread_strict_prepare(int mode);
/* mark.c: the calling thread becomes marked / unmarked (faults, prefault). */
RTO_HIDDEN void rto_thread_marked(void);
RTO_HIDDEN void rto_thread_unmarked(void);
RTO_HIDDEN void rto_thread_init(void);
/* mark.c: t (another thread, tid) was marked / unmarked by mark= (automark.c). */
RTO_HIDDEN void rto_thread_marked_remote(struct rto_thread *t, pid_t tid);
RTO_HIDDEN void rto_thread_unmarked_remote(struct rto_thread *t, pid_t tid);
/* mark.c: the calling thread exits (a thread-specific destructor). */
RTO_HIDDEN void rto_thread_exits(void);

struct rto_options;
/* live=, prefault_stack_kb=, mode=, once at load (init.c), before anything here runs. */
RTO_HIDDEN void rto_thread_configure(const struct rto_options *o);

#endif /* RTO_MARK_H */
