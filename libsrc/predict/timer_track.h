/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The POSIX timers the program armed to send it a signal (timer_create
 * with SIGEV_SIGNAL or SIGEV_THREAD_ID), so that a marked thread's wait
 * for signals (sigwait, sigwaitinfo, sigtimedwait, sigsuspend) says when
 * it ends (wake_hint.h) without asking the kernel.  timerfd_track.h's
 * twin, for the loops that cyclictest's -s and older realtime code use.
 *
 * A fixed table of RTO_TIMER_MAX entries, found by timer id (glibc's
 * timer_t, opaque to us): the clock and the signal timer_create gave, and
 * what timer_settime last set (the first expiry, on that clock, and the
 * interval).  Timers past the table, on a clock the vDSO does not read,
 * or that start a thread (SIGEV_THREAD) are not followed.  calls.tbl's
 * "timer:" annotation calls these from the run functions, wherever the
 * call ran.
 *
 * Concurrency: as timerfd_track.h, a sequence word per entry.  Writers
 * (rto_timer_created/_set/_deleted: any thread, rare) take it from even
 * to odd with a compare and swap; one that finds it odd drops what it
 * knew of that timer rather than wait.  The reader, rto_timer_next(), the
 * caller's path: loads and vDSO clock reads only, bounded by the table's
 * size, and no answer from an entry being written.
 */
#ifndef RTO_TIMER_TRACK_H
#define RTO_TIMER_TRACK_H

#include "rto_base.h"

#include <signal.h>
#include <stdint.h>
#include <time.h>

#define RTO_TIMER_MAX 64

/* timer_create(clk, sevp, id) returned ret (0: *id is the new timer). */
RTO_HIDDEN void rto_timer_created(int ret, clockid_t clk, const struct sigevent *sevp,
				  const timer_t *id);
/* timer_settime(id, flags, nv, ...) returned ret. */
RTO_HIDDEN void rto_timer_set(int ret, timer_t id, int flags, const struct itimerspec *nv);
/* timer_delete(id) returned ret: the id may be given to the next timer. */
RTO_HIDDEN void rto_timer_deleted(int ret, timer_t id);
/* In a fork()ed child, which inherits no timer (POSIX): forget them all. */
RTO_HIDDEN void rto_timer_after_fork(void);
/*
 * The next expiry, *in_ns from now, of the followed timers whose signal
 * is in `signals` (bit s-1 for signal s: the first 64).  0; -1: none is
 * armed and due to fire again, or one is being set right now.
 */
RTO_HIDDEN int rto_timer_next(uint64_t signals, uint64_t *in_ns);

#endif
