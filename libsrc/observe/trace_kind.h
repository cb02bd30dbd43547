/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a traced event is: trace.c writes it as JSON (trace_file=), the
 * LTTng-UST provider (lttng/trace_lttng.c, built apart) as a tracepoint.
 * Plain C, nothing of the library's: the provider includes it too.
 */
#ifndef RTO_TRACE_KIND_H
#define RTO_TRACE_KIND_H

enum rto_trace_kind {
	RTO_TR_OFFLOAD = 1, /* caller: t0..t1 waiting for its request */
	RTO_TR_TAKEN,	    /* caller: on_stall=local took its request back and ran it */
	RTO_TR_EXEC,	    /* helper: t0..t1 running a request */
	RTO_TR_LOCAL,	    /* caller: run here (short, by descriptor, local handling) */
	RTO_TR_DENIED,	    /* caller: refused (strict) */
	RTO_TR_FALLBACK,    /* caller: no helper could start, run here */
	RTO_TR_TRAP,	    /* caller: a trapped system call, t0..t1, and its table handling */
	RTO_TR_REQUEST,	    /* caller: the request handed over (trace=lttng only) */
	RTO_TR_EXEC_BEGIN,  /* helper: it starts running a request (trace=lttng only) */
	RTO_TR_ASYNC,	    /* caller: an async write queued, arg bytes */
	RTO_TR_ASYNC_FULL,  /* caller: its async ring was full (async_full=) */
	RTO_TR_NAP,	    /* helper: t0..t1 a predicted nap, arg 1 if it slept it out */
	RTO_TR_POOL_FULL,   /* caller: malloc=pool had no block: arg bytes, key what followed */
	RTO_TR_STALL,	    /* caller: its call waited past stall_us, noted for the watchdog */
	RTO_TR_VERDICT,	    /* the watchdog: a noted call judged; arg its caller's tid, key how */
	RTO_TR_WINDOW,	    /* helper: t0..t1 a predicted polling window, arg 1 if work came */
	RTO_TR_WINDOW_OPEN, /* helper: a window opens, t1 its planned end (trace=lttng only) */
	RTO_TR_NAP_BEGIN,   /* helper: a predicted nap begins, t1 its planned end (trace=lttng only)
			     */
};

/* RTO_TR_POOL_FULL's key: what pool_full= made of the call. */
enum rto_trace_pool { RTO_TR_POOL_FALLBACK, RTO_TR_POOL_FAIL, RTO_TR_POOL_ABORT };
/* RTO_TR_VERDICT's key: what the watchdog found (stall.c). */
enum rto_trace_verdict { RTO_TR_UNCLAIMED, RTO_TR_RUNNING, RTO_TR_INPUT };
/* Their names, as both back ends write them. */
#define RTO_TR_POOL_NAMES                   \
	{                                   \
		"fallback", "fail", "abort" \
	}
#define RTO_TR_VERDICT_NAMES                    \
	{                                       \
		"unclaimed", "running", "input" \
	}

#endif /* RTO_TRACE_KIND_H */
