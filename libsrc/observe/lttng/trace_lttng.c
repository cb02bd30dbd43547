/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * librtoffload-lttng.so: the LTTng-UST provider of trace=lttng, a shared
 * object of its own that links liblttng-ust, so that the library never
 * does.  trace.c dlopens it only when trace=lttng is asked and calls its
 * one entry, rto_lttng_event(), with the events it would have put in a
 * trace_file= ring.
 *
 * The caller's path: a tracepoint that no session enabled is a load and a
 * branch; an enabled one writes into LTTng-UST's per-CPU ring buffer, lock
 * free, without a system call as long as the channel's consumer is woken
 * by its read timer (docs/TRACING.md: --read-timer), not by the writer.
 */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "rtoffload_tp.h"

#include "../trace_kind.h"

#include <lttng/urcu/urcu-ust.h>
#include <stdint.h>

#define ID(key, t0) ((uint64_t)(key) << 32 | (uint32_t)(t0))

static const char *const handlings[] = {"offload", "local", "strict", "warn", "async"};

__attribute__((visibility("default"))) void rto_lttng_thread(void);
__attribute__((visibility("default"))) void
rto_lttng_event(int kind, const char *name, uint64_t t0, uint64_t t1, uint32_t arg, uint16_t key);

/* At a thread's mark: LTTng-UST's RCU registration (a mutex, a first-use allocation). */
void rto_lttng_thread(void)
{
	lttng_ust_urcu_register_thread();
}

void rto_lttng_event(int kind, const char *name, uint64_t t0, uint64_t t1, uint32_t arg,
		     uint16_t key)
{
	switch (kind) {
	case RTO_TR_REQUEST:
		lttng_ust_tracepoint(rtoffload, offload_request, name, ID(key, t0));
		break;
	case RTO_TR_OFFLOAD:
	case RTO_TR_TAKEN:
		lttng_ust_tracepoint(rtoffload, offload_return, name, ID(key, t0), t1 - t0,
				     kind == RTO_TR_TAKEN);
		break;
	case RTO_TR_EXEC_BEGIN:
		lttng_ust_tracepoint(rtoffload, helper_begin, name, ID(key, arg));
		break;
	case RTO_TR_EXEC:
		lttng_ust_tracepoint(rtoffload, helper_end, name, ID(key, arg), t1 - t0, 0);
		break;
	case RTO_TR_LOCAL:
		lttng_ust_tracepoint(rtoffload, local, name);
		break;
	case RTO_TR_DENIED:
		lttng_ust_tracepoint(rtoffload, denied, name);
		break;
	case RTO_TR_FALLBACK:
		lttng_ust_tracepoint(rtoffload, fallback, name);
		break;
	case RTO_TR_TRAP:
		lttng_ust_tracepoint(rtoffload, trap, name, arg < 5 ? handlings[arg] : "?",
				     t1 - t0);
		break;
	case RTO_TR_ASYNC:
		lttng_ust_tracepoint(rtoffload, async_enqueue, name, arg);
		break;
	case RTO_TR_ASYNC_FULL:
		lttng_ust_tracepoint(rtoffload, async_full, 0);
		break;
	case RTO_TR_NAP:
		lttng_ust_tracepoint(rtoffload, helper_nap, t1 - t0, (int)arg);
		break;
	default:
		break;
	}
}
