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
};

#endif /* RTO_TRACE_KIND_H */
