/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * stdio_lock.c: stream locks taken for the call, and lent to the worker.
 */
#ifndef RTO_STDIO_LOCK_H
#define RTO_STDIO_LOCK_H

#include "rto_base.h"

/* stdio_lock.c: hand a FILE lock held by the caller over to the helper. */
RTO_HIDDEN void rto_stream_selftest(void);
RTO_HIDDEN int rto_stream_lending_ok(void);
RTO_HIDDEN void *rto_stream_owner_if_self(FILE *f);
RTO_HIDDEN void *rto_stream_borrow(FILE *f);
RTO_HIDDEN void rto_stream_return(FILE *f, void *owner);
/* Before a call that takes f's lock: take it here, to lend it; 1 if taken. */
RTO_HIDDEN int rto_stream_lock_for_call(FILE *f);
/* fn() runs after each rto_stream_unlock_after_call() from now on (async.c, at load). */
RTO_HIDDEN void rto_stream_on_unlock(void (*fn)(void));
/* After it: give the lock back up. */
RTO_HIDDEN void rto_stream_unlock_after_call(FILE *f);
/* After a fault: give up a stream lock this thread took inside the call. */
RTO_HIDDEN void rto_stream_release_if_mine(FILE *f);

#endif /* RTO_STDIO_LOCK_H */
