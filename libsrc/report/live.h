/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * live.c: the live view's segment, kept current for rtoffload stat/top.
 *
 * Concurrency: nothing on the caller's path.  rto_live_start() runs on
 * the thread that starts the helpers (helper.c's start hook, registered
 * by init.c), once per process (a forked child starts its own) or again
 * after the library's threads left (alone.c, rto_live_leave/left); the
 * segment is then written only by the publisher thread, which copies the
 * counters when a reader asks (a futex word in the segment, shared with
 * the readers' processes, which read it without any lock of ours).
 * rto_live_at_exit() at exit (init.c's destructor): the segment pointer
 * is published with release and read with acquire.
 */
#ifndef RTO_LIVE_H
#define RTO_LIVE_H

#include "rto_base.h"

/* The helpers started on cpus (workers of them): start the publisher. */
RTO_HIDDEN void rto_live_start(const cpu_set_t *cpus, unsigned workers);
/*
 * The library's threads end (alone.c has set rto_q->leave): the publisher
 * is woken and ends; rto_live_left(), once it has, lets the next
 * rto_live_start() start another, which writes the same segment.
 */
RTO_HIDDEN void rto_live_leave(void);
RTO_HIDDEN void rto_live_left(void);
/* Exit: the segment goes (only this process's, not a parent's). */
RTO_HIDDEN void rto_live_at_exit(void);

struct rto_options;
/* live=, once at load (init.c), before anything here runs. */
RTO_HIDDEN void rto_live_configure(const struct rto_options *o);

#endif /* RTO_LIVE_H */
