/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The timerfds the program armed, so that a marked thread's read of one
 * says when it ends (wake_hint.h) without asking the kernel.
 *
 * A fixed table indexed by descriptor (below RTO_TIMERFD_MAX; others are
 * not followed): the clock timerfd_create gave, and what timerfd_settime
 * last set (the first expiry, on that clock, and the interval).  calls.tbl's "timerfd:" annotation
 * calls these from the run functions, wherever the call ran; fdclass.c forgets an entry wherever a
 * descriptor is closed or replaced.
 *
 * Concurrency: a sequence word per entry.  Writers (rto_timerfd_*() but
 * _next: any thread, rare) take it from even to odd with a compare and
 * swap, and give up when another writer holds it (two threads arming one
 * timerfd at once: the entry is dropped, no word, rather than a wrong
 * one).  The reader, rto_timerfd_next(), the caller's path: loads only,
 * and no answer when a write is under way or came between its loads.
 */
#ifndef RTO_TIMERFD_TRACK_H
#define RTO_TIMERFD_TRACK_H

#include "rto_base.h"

#include <stdint.h>
#include <sys/timerfd.h>
#include <time.h>

#define RTO_TIMERFD_MAX 1024

/* timerfd_create(clk, flags) returned fd (-1: failed, nothing to learn). */
RTO_HIDDEN void rto_timerfd_created(int fd, int clk, int flags);
/* timerfd_settime(fd, flags, nv, ...) returned ret. */
RTO_HIDDEN void rto_timerfd_set(int ret, int fd, int flags, const struct itimerspec *nv);
/* fd was closed or replaced: not the timerfd we knew any more. */
RTO_HIDDEN void rto_timerfd_forget(int fd);
/*
 * fd's next expiry after now is *at on *clk: 0 (a blocking read ends
 * then, unless an expiry is already due; a loop that drains its timerfd
 * when epoll says so makes its next calls then).  -1: not a timerfd we
 * know, disarmed, a one-shot already expired, or being set right now.
 */
RTO_HIDDEN int rto_timerfd_next(int fd, clockid_t *clk, uint64_t *at);

#endif
