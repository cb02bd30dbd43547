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
#include <pthread.h>
#include <stdint.h>

#define ID(key, t0) ((uint64_t)(key) << 32 | (uint32_t)(t0))

static const char *const handlings[] = {"offload", "local", "strict", "warn", "async"};
static const char *const pool_then[] = RTO_TR_POOL_NAMES;
static const char *const verdicts[] = RTO_TR_VERDICT_NAMES;

__attribute__((visibility("default"))) void rto_lttng_thread(void);
__attribute__((visibility("default"))) void
rto_lttng_event(int kind, const char *name, uint64_t t0, uint64_t t1, uint32_t arg, uint16_t key);
__attribute__((visibility("default"))) void rto_lttng_event_gated(int kind, const char *name,
								  uint64_t t0, uint64_t t1,
								  uint32_t arg, uint16_t key);

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
		lttng_ust_tracepoint(rtoffload, offload_request, name, ID(key, t0), (int)arg - 1);
		break;
	case RTO_TR_OFFLOAD:
	case RTO_TR_TAKEN:
		lttng_ust_tracepoint(rtoffload, offload_return, name, ID(key, t0), t1 - t0,
				     kind == RTO_TR_TAKEN, (int)arg - 1);
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
	case RTO_TR_NAP_BEGIN:
		lttng_ust_tracepoint(rtoffload, helper_nap_begin, t1 > t0 ? t1 - t0 : 0);
		break;
	case RTO_TR_WINDOW_OPEN:
		lttng_ust_tracepoint(rtoffload, window_open, t1 > t0 ? t1 - t0 : 0);
		break;
	case RTO_TR_WINDOW:
		lttng_ust_tracepoint(rtoffload, window_close, t1 - t0, (int)arg);
		break;
	case RTO_TR_POOL_FULL:
		lttng_ust_tracepoint(rtoffload, pool_full, name, arg,
				     key < 3 ? pool_then[key] : "?");
		break;
	case RTO_TR_STALL:
		lttng_ust_tracepoint(rtoffload, stall, name);
		break;
	case RTO_TR_VERDICT:
		lttng_ust_tracepoint(rtoffload, stall_verdict, name, (int)arg,
				     key < 3 ? verdicts[key] : "?");
		break;
	default:
		break;
	}
}

/*
 * The library's own threads that are not helpers (the stall watchdog)
 * trace through a gate that this object's destructor closes.  They run on
 * while the process exits, with no order with the exiting thread, and
 * LTTng-UST's destructors (which run after ours: it is what we link)
 * free its sessions' events and old probe arrays after an RCU grace
 * period that ThreadSanitizer does not see.  Behind the gate their last
 * event comes before those frees, for it too.  Not the helpers' events:
 * a mutex a call, and each call's result already orders them with its
 * caller.
 */
static pthread_mutex_t gate = PTHREAD_MUTEX_INITIALIZER;
static int gate_closed;

void rto_lttng_event_gated(int kind, const char *name, uint64_t t0, uint64_t t1, uint32_t arg,
			   uint16_t key)
{
	pthread_mutex_lock(&gate);
	if (!gate_closed)
		rto_lttng_event(kind, name, t0, t1, arg, key);
	pthread_mutex_unlock(&gate);
}

__attribute__((destructor)) static void close_gate(void)
{
	pthread_mutex_lock(&gate);
	gate_closed = 1;
	pthread_mutex_unlock(&gate);
}
