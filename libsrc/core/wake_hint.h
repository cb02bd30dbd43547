/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A marked thread's word on when its timed sleep ends (clock_nanosleep,
 * nanosleep, usleep, a read of a periodic timerfd, a wait for a POSIX
 * timer's signal: calls.tbl's "wake:"
 * annotation) or when its timed wait ends at the latest (poll, select,
 * epoll_wait, condition variables, semaphores, sigtimedwait with a
 * timeout: "timeout:"), so that the polling
 * helper wakes just before the burst that follows instead of guessing it
 * from the gaps between bursts (predict.c).  Its next call cannot come
 * before the sleep ends (but for a signal), and on a loop with jitter, or
 * one whose own wake-ups are late now and then, the gaps say far less.
 *
 * One word per key hash (request.h) in struct rto_predict, whose input it
 * is: its format is predict.h's, and predict.c reads it.
 *
 * Concurrency:
 *   rto_wake_*()   the caller's path, before the sleep or wait: a few
 *        loads, vDSO clock reads, one relaxed store; no lock, no system
 *        call (a bad pointer: wake_hint.c)
 *   rto_wake_hinted()   the planning helper, without a lock (predict.c)
 * A hint is advice: two threads whose keys share a word overwrite each
 * other, and a word read while its owner rewrites it is either value;
 * the reader checks the key, and a wrong or missing hint only costs one
 * badly placed polling window.
 */
#ifndef RTO_WAKE_HINT_H
#define RTO_WAKE_HINT_H

#include "predict.h"

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/time.h>
#include <time.h>

/* The calling marked thread sleeps until req on clk (flags: TIMER_ABSTIME or 0). */
RTO_HIDDEN void rto_wake_at_clock(clockid_t clk, int flags, const struct timespec *req);
/* ... for ns from now (usleep). */
RTO_HIDDEN void rto_wake_after_ns(uint64_t ns);
/* ... until fd's next expiry, if fd is a timerfd the program armed (timerfd_track.h). */
RTO_HIDDEN void rto_wake_on_read(int fd);
/*
 * ... until a signal in *set comes (members 1; 0: a signal not in *set,
 * sigsuspend's mask): the next expiry of a POSIX timer the program armed
 * to send one (timer_track.h), or the timeout ts (NULL: none) at the
 * latest, whichever comes first.
 */
RTO_HIDDEN void rto_wake_on_signals(const sigset_t *set, int members, const struct timespec *ts);

/*
 * The calling marked thread waits for an event, at most: ms milliseconds
 * (poll, epoll_wait: negative is no timeout), a relative timeval
 * (select) or timespec (ppoll, pselect, epoll_pwait2, sigtimedwait: NULL
 * is no timeout), until an absolute time on clk (semaphores,
 * pthread_cond_clockwait) or on a condition variable's own clock
 * (pthread_cond_timedwait).  A zero timeout does not wait: no word.
 */
RTO_HIDDEN void rto_wake_by_ms(int ms);
RTO_HIDDEN void rto_wake_by_tv(const struct timeval *tv);
RTO_HIDDEN void rto_wake_by_ts(const struct timespec *ts);
RTO_HIDDEN void rto_wake_by_clock(clockid_t clk, const struct timespec *abs);
RTO_HIDDEN void rto_wake_by_cond(const pthread_cond_t *c, const struct timespec *abs);

struct rto_options;
/* helper_wake=, once at load (init.c), before anything here runs. */
RTO_HIDDEN void rto_wake_hint_configure(const struct rto_options *o);

#endif /* RTO_WAKE_HINT_H */
