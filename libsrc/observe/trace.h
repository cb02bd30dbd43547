/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * trace.c: the offloads on a timeline.  trace_file=PATH writes Chrome
 * trace-event JSON (ui.perfetto.dev, chrome://tracing) from per-thread
 * rings a helper drains; trace=lttng hands the same events to an LTTng-UST
 * provider (librtoffload-lttng.so, dlopen'ed only then).
 *
 * Concurrency:
 *   rto_trace_offload(), rto_trace_point(), rto_trace_trap()   the caller's
 *        path: off, one load and a branch; on, a vDSO clock read and a few
 *        stores into the thread's own ring (single producer, no lock, no
 *        system call, no allocation); a full ring drops and counts
 *   rto_trace_exec(), rto_trace_now()   a helper, around a request
 *   rto_trace_thread_marked()   at a mark (the thread's own, or mark='s
 *        from another thread): allocates the thread's ring there
 *   rto_trace_helper_started(), rto_trace_helper_idle()   a helper: its
 *        ring; an idle helper drains the rings to the file
 *   rto_trace_call_fd(), rto_trace_pool_full(), rto_trace_stall()   the
 *        caller's path too (route.c, malloc.c, stall.c via transport.c)
 *   rto_trace_window_open(), rto_trace_window_close(), rto_trace_nap_begin()
 *        the polling helper (helper.c)
 *   rto_trace_own_thread(), rto_trace_verdict()   the stall watchdog (stall.c)
 *   rto_trace_init(), rto_trace_at_exit(), rto_trace_at_abort()   the
 *        constructor, the end of the process (init.c), abort() (async.c)
 */
#ifndef RTO_TRACE_H
#define RTO_TRACE_H

#include "rto_base.h"
#include "fn.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct rto_thread;

#include "trace_kind.h"

#define RTO_TRACE_FILE	1 /* rto_trace_on: trace_file= */
#define RTO_TRACE_LTTNG 2 /* trace=lttng, and the provider loaded */

/* Set in the constructor, before any thread is marked; cleared in a fork()ed child. */
RTO_HIDDEN extern int rto_trace_on;

RTO_HIDDEN void rto_trace_init(void);
RTO_HIDDEN void rto_trace_thread_marked(struct rto_thread *t, pid_t tid);
RTO_HIDDEN void rto_trace_helper_started(unsigned index, pid_t tid);
RTO_HIDDEN void rto_trace_helper_idle(void);
RTO_HIDDEN void rto_trace_at_exit(void);
RTO_HIDDEN void rto_trace_at_abort(void);

RTO_HIDDEN void rto_trace_own_thread(const char *label);
RTO_HIDDEN void rto_trace_window_open(int linger, uint64_t until);
RTO_HIDDEN void rto_trace_window_close(int caught);

/*
 * The descriptor of the marked thread's call in progress (rto_call), -1:
 * none; written only while tracing, read by its offload's events.
 */
RTO_HIDDEN extern __thread int rto_trace_fd RTO_TLS;

RTO_HIDDEN void rto_trace_put(int kind, const struct rto_fn *fn, const char *name, uint64_t t0,
			      uint64_t t1, uint32_t arg, uint16_t key);
RTO_HIDDEN uint64_t rto_trace_clock(void);

/*
 * A marked thread's call on descriptor fd (-1: none) begins (route.c):
 * its offload's events carry it.  A signal handler's wrapped call that
 * comes before the offload begins may leave its own there.
 */
static inline void rto_trace_call_fd(int fd)
{
	if (RTO_UNLIKELY(rto_trace_on))
		rto_trace_fd = fd;
}

/* The caller's offload of fn, from t0 to t1 (taken: on_stall=local ran it here). */
static inline void rto_trace_offload(const struct rto_fn *fn, uint64_t t0, uint64_t t1, int taken,
				     uint16_t key)
{
	if (RTO_UNLIKELY(rto_trace_on))
		rto_trace_put(taken ? RTO_TR_TAKEN : RTO_TR_OFFLOAD, fn, NULL, t0, t1,
			      (uint32_t)(rto_trace_fd + 1), key);
}

/*
 * A call run here.  Not the table's local calls that never wait
 * (pthread_mutex_lock and _unlock, cond_signal, sem_post...: a program
 * makes them by the ten thousand, and they are counted in the
 * statistics): the instants are the decisions, by descriptor, by
 * argument, by a thread's own context, and the local calls a thread may
 * wait in (cancellation points: clock_nanosleep, sem_wait, poll...).
 */
static inline void rto_trace_local(const struct rto_fn *fn)
{
	if (RTO_UNLIKELY(rto_trace_on) && (fn->handling != RTO_LOCAL || (fn->flags & RTO_F_CANCEL)))
		rto_trace_put(RTO_TR_LOCAL, fn, NULL, 0, 0, 0, 0);
}

/* An instant of the caller's: RTO_TR_DENIED, RTO_TR_FALLBACK. */
static inline void rto_trace_point(int kind, const struct rto_fn *fn)
{
	if (RTO_UNLIKELY(rto_trace_on))
		rto_trace_put(kind, fn, NULL, 0, 0, 0, 0);
}

/* The caller hands fn's request (key, t0) over: an LTTng event only (a span's start). */
static inline void rto_trace_request(const struct rto_fn *fn, uint64_t t0, uint16_t key)
{
	if (RTO_UNLIKELY(rto_trace_on & RTO_TRACE_LTTNG))
		rto_trace_put(RTO_TR_REQUEST, fn, NULL, t0, 0, (uint32_t)(rto_trace_fd + 1), key);
}

/* A helper starts fn, the request (key, t0): the clock now, 0 when tracing is off. */
static inline uint64_t rto_trace_begin(const struct rto_fn *fn, uint16_t key, uint32_t t0)
{
	if (RTO_LIKELY(!rto_trace_on))
		return 0;
	uint64_t now = rto_trace_clock();
	rto_trace_put(RTO_TR_EXEC_BEGIN, fn, NULL, now, 0, t0, key);
	return now;
}

/* The caller queued an async write of bytes (async.c), or found its ring full. */
static inline void rto_trace_async(const struct rto_fn *fn, size_t bytes)
{
	if (RTO_UNLIKELY(rto_trace_on))
		rto_trace_put(RTO_TR_ASYNC, fn, NULL, 0, 0, (uint32_t)bytes, 0);
}

static inline void rto_trace_async_full(void)
{
	if (RTO_UNLIKELY(rto_trace_on))
		rto_trace_put(RTO_TR_ASYNC_FULL, NULL, "async_full", 0, 0, 0, 0);
}

/* A helper napped from begin until now (helper_wake=predict); timed_out: slept it out. */
static inline void rto_trace_nap(uint64_t begin, int timed_out)
{
	if (RTO_UNLIKELY(rto_trace_on))
		rto_trace_put(RTO_TR_NAP, NULL, "nap", begin, 0, (uint32_t)timed_out, 0);
}

/* A helper starts a predicted nap until until (trace=lttng: the slice's start). */
static inline void rto_trace_nap_begin(uint64_t until)
{
	if (RTO_UNLIKELY(rto_trace_on & RTO_TRACE_LTTNG))
		rto_trace_put(RTO_TR_NAP_BEGIN, NULL, "nap", 0, until, 0, 0);
}

/*
 * malloc=pool found the caller's pool full for a call of name asking for
 * bytes; then (pool_full=: RTO_POOL_FULL_*) what follows.
 */
static inline void rto_trace_pool_full(const char *name, size_t bytes, int then)
{
	if (RTO_UNLIKELY(rto_trace_on))
		rto_trace_put(RTO_TR_POOL_FULL, NULL, name, 0, 0,
			      bytes > UINT32_MAX ? UINT32_MAX : (uint32_t)bytes, (uint16_t)then);
}

/*
 * The caller's call of fn waited past stall_us and is noted for the
 * watchdog.  One taken back instead (on_stall=local) is its taken_back
 * offload event.
 */
static inline void rto_trace_stall(const struct rto_fn *fn)
{
	if (RTO_UNLIKELY(rto_trace_on))
		rto_trace_put(RTO_TR_STALL, fn, NULL, 0, 0, 0, 0);
}

/* The watchdog judged tid's noted call of fn: RTO_TR_UNCLAIMED, _RUNNING, _INPUT. */
static inline void rto_trace_verdict(const struct rto_fn *fn, pid_t tid, int verdict)
{
	if (RTO_UNLIKELY(rto_trace_on))
		rto_trace_put(RTO_TR_VERDICT, fn, NULL, 0, 0, (uint32_t)tid, (uint16_t)verdict);
}

/* The clock at a trap; 0 when tracing is off. */
static inline uint64_t rto_trace_now(void)
{
	return RTO_UNLIKELY(rto_trace_on) ? rto_trace_clock() : 0;
}

/* A helper ran fn from begin until now: the request of (key, t0) of its caller. */
static inline void rto_trace_exec(const struct rto_fn *fn, uint64_t begin, uint16_t key,
				  uint32_t t0)
{
	if (RTO_UNLIKELY(rto_trace_on) && begin)
		rto_trace_put(RTO_TR_EXEC, fn, NULL, begin, 0, t0, key);
}

/* A trapped system call named name, from begin until now, with its table's handling. */
static inline void rto_trace_trap(const char *name, uint64_t begin, int handling)
{
	if (RTO_UNLIKELY(rto_trace_on) && begin)
		rto_trace_put(RTO_TR_TRAP, NULL, name, begin, 0, (uint32_t)handling, 0);
}

#endif /* RTO_TRACE_H */
