/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * async.c: asynchronous writes: per-thread rings drained by the helpers.
 *
 * Concurrency: rto_async_put()/rto_async_vprintf() run on the caller's path: a ring of
 * the calling thread only, no lock, no system call unless the ring is full
 * (async_full=).  The drain runs on helpers under the drain lock.
 */
#ifndef RTO_ASYNC_H
#define RTO_ASYNC_H

#include "rto_base.h"
#include "fn.h"

struct rto_fn;

/* async.c: asynchronous writes for logging. */
/* rto_async_put()'s fd for a queued fflush(f): no bytes, the drain flushes f (async:flush). */
#define RTO_ASYNC_FLUSH (-2)
RTO_HIDDEN int rto_async_put(struct rto_fn *fn, int fd, FILE *f, const void *data, size_t len,
			     int nl);
RTO_HIDDEN int rto_async_vprintf(struct rto_fn *fn, FILE *f, int flag, const char *fmt, va_list ap,
				 int *ret);
RTO_HIDDEN void rto_async_barrier(void);

/*
 * Set once, when the first ring is made (a thread marked while an async
 * rule is set), and never written again: a cache line of its own (the
 * struct's alignment pads it), which every unmarked write reads
 * (rto_async_order).
 */
struct rto_async_flag {
	int used;
} __attribute__((aligned(64)));
RTO_HIDDEN extern struct rto_async_flag rto_async_on;

/* A ring was ever made: one load of a line nothing writes after. */
static inline int rto_async_used(void)
{
	return RTO_UNLIKELY(__atomic_load_n(&rto_async_on.used, __ATOMIC_RELAXED));
}

/* A flush point (calls.tbl's flush rows: fsync, close...): what is queued is written first. */
static inline void rto_async_flush_point(void)
{
	if (rto_async_used())
		rto_async_barrier();
}

/*
 * An unmarked thread's write to a stream or descriptor (calls.tbl's
 * async: rows, the printf family): what marked threads queued before it
 * is written first, so that what the threads' own synchronisation ordered
 * lands in that order.  Not inside a signal handler of the program's
 * (signals.c's depth): writing queued lines into their streams there is
 * not async-signal-safe, and the handler's write() must stay so.
 */
RTO_HIDDEN void rto_async_order_slow(void);
static inline void rto_async_order(void)
{
	if (rto_async_used())
		rto_async_order_slow();
}
/* A stream lock was released: queue the drain a helper gave up on (if any). */
RTO_HIDDEN void rto_async_kick(void);
/* A helper's drain gave up on a taken lock: idle helpers retry it (helper.c). */
RTO_HIDDEN int rto_async_stalled(void);
RTO_HIDDEN void rto_async_retry(void);
/* f is being closed: abort() no longer flushes it (lock-free, bounded). */
RTO_HIDDEN void rto_async_forget_stream(FILE *f);
RTO_HIDDEN void rto_async_thread_marked(void);
RTO_HIDDEN void rto_async_at_exit(void);
/* abort(): what is queued is written first, then libc's abort() (the exported abort() too). */
RTO_HIDDEN __attribute__((noreturn)) void rto_async_abort(void);
/* Bytes queued in the async rings now, their total size, and how many rings. */
RTO_HIDDEN void rto_async_ring_use(uint64_t *used, uint64_t *cap, uint32_t *rings);
RTO_HIDDEN void rto_async_forget(int fd);
RTO_HIDDEN void rto_async_init(void);

#endif /* RTO_ASYNC_H */
