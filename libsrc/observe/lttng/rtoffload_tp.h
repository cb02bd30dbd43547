/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The LTTng-UST tracepoint provider "rtoffload" (trace_lttng.c): LTTng's
 * pattern for a library that must not depend on it.  Only the provider,
 * librtoffload-lttng.so, includes this; the library loads it with trace=lttng.
 *
 * id is the request's: the caller's key << 32 | the low 32 bits of its
 * clock at the call (request.h); the caller's events and the helper's
 * that ran its call carry the same one.  Times are CLOCK_MONOTONIC ns.
 * fd is the call's descriptor, -1 where it has none (or the table does
 * not route it by descriptor).
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER rtoffload

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./rtoffload_tp.h"

#if !defined(RTO_LTTNG_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define RTO_LTTNG_TP_H

#include <lttng/tracepoint.h>
#include <stdint.h>

/* LTTng's macros read better as LTTng writes them. */
/* clang-format off */
/* The caller hands its call to the helpers. */
LTTNG_UST_TRACEPOINT_EVENT(rtoffload, offload_request,
	LTTNG_UST_TP_ARGS(const char *, fn, uint64_t, id, int, fd),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_string(fn, fn)
		lttng_ust_field_integer_hex(uint64_t, id, id)
		lttng_ust_field_integer(int, fd, fd)))
/* A call's request, on the helper: helper_begin. */
LTTNG_UST_TRACEPOINT_EVENT_CLASS(rtoffload, call,
	LTTNG_UST_TP_ARGS(const char *, fn, uint64_t, id),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_string(fn, fn)
		lttng_ust_field_integer_hex(uint64_t, id, id)))
/* A helper starts running it. */
LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(rtoffload, call, rtoffload, helper_begin,
	LTTNG_UST_TP_ARGS(const char *, fn, uint64_t, id))

/* The result is back: ns the caller waited; taken_back: on_stall=local ran it here. */
LTTNG_UST_TRACEPOINT_EVENT(rtoffload, offload_return,
	LTTNG_UST_TP_ARGS(const char *, fn, uint64_t, id, uint64_t, ns, int, taken, int, fd),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_string(fn, fn)
		lttng_ust_field_integer_hex(uint64_t, id, id)
		lttng_ust_field_integer(uint64_t, ns, ns)
		lttng_ust_field_integer(int, taken_back, taken)
		lttng_ust_field_integer(int, fd, fd)))
/* A span's end on the helper: helper_end. */
LTTNG_UST_TRACEPOINT_EVENT_CLASS(rtoffload, span,
	LTTNG_UST_TP_ARGS(const char *, fn, uint64_t, id, uint64_t, ns, int, taken),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_string(fn, fn)
		lttng_ust_field_integer_hex(uint64_t, id, id)
		lttng_ust_field_integer(uint64_t, ns, ns)
		lttng_ust_field_integer(int, taken_back, taken)))
/* The helper published it: ns it ran. */
LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(rtoffload, span, rtoffload, helper_end,
	LTTNG_UST_TP_ARGS(const char *, fn, uint64_t, id, uint64_t, ns, int, taken))

/* The caller's decisions that keep a call here: local, denied (strict), fallback. */
LTTNG_UST_TRACEPOINT_EVENT_CLASS(rtoffload, decision,
	LTTNG_UST_TP_ARGS(const char *, fn),
	LTTNG_UST_TP_FIELDS(lttng_ust_field_string(fn, fn)))
LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(rtoffload, decision, rtoffload, local,
	LTTNG_UST_TP_ARGS(const char *, fn))
LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(rtoffload, decision, rtoffload, denied,
	LTTNG_UST_TP_ARGS(const char *, fn))
LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(rtoffload, decision, rtoffload, fallback,
	LTTNG_UST_TP_ARGS(const char *, fn))

/* A marked thread's system call trapped (backstop=on), its table's handling, how long. */
LTTNG_UST_TRACEPOINT_EVENT(rtoffload, trap,
	LTTNG_UST_TP_ARGS(const char *, sys, const char *, handling, uint64_t, ns),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_string(syscall, sys)
		lttng_ust_field_string(handling, handling)
		lttng_ust_field_integer(uint64_t, ns, ns)))
/* A marked thread queued an async write of `bytes` (policy=...:async, async_path=). */
LTTNG_UST_TRACEPOINT_EVENT(rtoffload, async_enqueue,
	LTTNG_UST_TP_ARGS(const char *, fn, unsigned int, bytes),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_string(fn, fn)
		lttng_ust_field_integer(unsigned int, bytes, bytes)))
/* ... and found its async ring full (async_full= says what follows). */
LTTNG_UST_TRACEPOINT_EVENT(rtoffload, async_full,
	LTTNG_UST_TP_ARGS(int, unused),
	LTTNG_UST_TP_FIELDS(lttng_ust_field_integer(int, unused, unused)))
/* A helper's predicted nap (helper_wake=predict): ns long; slept_out 0: a caller woke it. */
LTTNG_UST_TRACEPOINT_EVENT(rtoffload, helper_nap,
	LTTNG_UST_TP_ARGS(uint64_t, ns, int, slept_out),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(uint64_t, ns, ns)
		lttng_ust_field_integer(int, slept_out, slept_out)))
/* ... which begins, planned to last ns. */
LTTNG_UST_TRACEPOINT_EVENT(rtoffload, helper_nap_begin,
	LTTNG_UST_TP_ARGS(uint64_t, ns),
	LTTNG_UST_TP_FIELDS(lttng_ust_field_integer(uint64_t, ns, ns)))
/* The polling helper's predicted window opens, planned to last ns. */
LTTNG_UST_TRACEPOINT_EVENT(rtoffload, window_open,
	LTTNG_UST_TP_ARGS(uint64_t, ns),
	LTTNG_UST_TP_FIELDS(lttng_ust_field_integer(uint64_t, ns, ns)))
/* ... and closes after ns; caught 1: work came in it, 0: it ended empty. */
LTTNG_UST_TRACEPOINT_EVENT(rtoffload, window_close,
	LTTNG_UST_TP_ARGS(uint64_t, ns, int, caught),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(uint64_t, ns, ns)
		lttng_ust_field_integer(int, caught, caught)))
/* malloc=pool: the caller's pool had no block for fn's bytes; then: fallback, fail, abort. */
LTTNG_UST_TRACEPOINT_EVENT(rtoffload, pool_full,
	LTTNG_UST_TP_ARGS(const char *, fn, unsigned int, bytes, const char *, then),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_string(fn, fn)
		lttng_ust_field_integer(unsigned int, bytes, bytes)
		lttng_ust_field_string(then, then)))
/* The caller's call waited past stall_us, noted for the watchdog. */
LTTNG_UST_TRACEPOINT_EVENT(rtoffload, stall,
	LTTNG_UST_TP_ARGS(const char *, fn),
	LTTNG_UST_TP_FIELDS(lttng_ust_field_string(fn, fn)))
/* The watchdog's verdict on a noted call of thread caller: unclaimed, running, input. */
LTTNG_UST_TRACEPOINT_EVENT(rtoffload, stall_verdict,
	LTTNG_UST_TP_ARGS(const char *, fn, int, caller, const char *, verdict),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_string(fn, fn)
		lttng_ust_field_integer(int, caller, caller)
		lttng_ust_field_string(verdict, verdict)))
/* clang-format on */

#endif /* RTO_LTTNG_TP_H */

#include <lttng/tracepoint-event.h>
