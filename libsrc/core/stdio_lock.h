/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * stdio_lock.c: stream locks taken for the call, and lent to the worker.
 *
 * Concurrency: the lock is glibc's own (recursive, its owner recorded);
 * this module only moves its owner field while the lock stays held.
 *   rto_stream_selftest()   once, in the constructor (init.c), before any
 *        thread is marked; lending_ok is read-only afterwards
 *   rto_stream_on_unlock()  once, at load (async.c); read relaxed
 *   rto_stream_owner_if_self(), rto_stream_lending_ok()   the caller's
 *        path (route.c): a load of the owner, which glibc also reads
 *        unlocked for its recursion
 *   rto_stream_lock_for_call(), rto_stream_unlock_after_call()   the
 *        caller's path, for calls.tbl's "lock" rows only: the caller takes
 *        the stream's lock where the call itself would have taken it, the
 *        one lock the caller's path takes, so that a worker never waits
 *        for a stream lock (see stdio_lock.c)
 *   rto_stream_borrow(), rto_stream_return()   the worker (helper.c),
 *        between taking the request and publishing it, while its caller
 *        waits: the owner becomes the worker, then the caller again.  Nobody
 *        else can take the lock meanwhile (it is held), and the request's
 *        hand-off orders the two stores with the caller's accesses; the
 *        stores are CMM_STORE_SHARED for other threads' unlocked reads
 *   rto_stream_release_if_mine()   the thread whose call faulted (caller
 *        or worker), on its own nesting only; borrowed is the worker's TLS
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
