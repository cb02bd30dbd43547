/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lifetime.c: the process ends when its last application thread ends.
 *
 * Concurrency: rto_lifetime_init() once, at load.  glibc's thread count
 * (__nptl_nthreads) is glibc's, changed by its own atomics: a helper's
 * start takes one off it with a cmpxchg, on the application thread that
 * started it, and an exiting extra helper adds one back.  The watch
 * (rto_lifetime_watch_due, rto_lifetime_watch) runs on one helper only
 * (worker 0, idle): its next_watch is that thread's alone.
 */
#ifndef RTO_LIFETIME_H
#define RTO_LIFETIME_H

#include "rto_base.h"

/* How often an idle helper looks whether only helpers are left. */
#define RTO_LIFETIME_WATCH_NS (1000L * 1000 * 1000)

/* At load: find glibc's thread count; at_end() is what a process ended here writes out. */
RTO_HIDDEN void rto_lifetime_init(void (*at_end)(void));
/* A helper was started (by the calling, application, thread): glibc must not count it. */
RTO_HIDDEN void rto_lifetime_helper_started(void);
/* An extra helper exits (helper.c): glibc counts it again, for its own exit's count. */
RTO_HIDDEN void rto_lifetime_helper_exiting(void);
/* The program's own threads as glibc counts them (the library's left out), or -1: unknown. */
RTO_HIDDEN int rto_lifetime_app_threads(void);
/* The watching helper, idle: RTO_LIFETIME_WATCH_NS since its last look? */
RTO_HIDDEN int rto_lifetime_watch_due(void);
/*
 * ... then: if every application thread has ended behind glibc's back (a
 * raw exit system call), end the process as the kernel would have;
 * otherwise return.
 */
RTO_HIDDEN void rto_lifetime_watch(void);

#endif /* RTO_LIFETIME_H */
