/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A marked thread announces the end of its timed sleep (wake_hint.h).
 * The caller's path, just before it sleeps: no lock, no system call.
 */
#include "wake_hint.h"
#include "options_load.h"
#include "rto_fast.h"
#include "transport.h"
#include "signals.h"
#include "futex.h"

#include <time.h>

#define NS_PER_S 1000000000ull

/*
 * The sleep ends at `at` (now: rto_now_ns()).  A deadline already past
 * (the loop overran its period) ends it at once: now.  One too far for
 * the word says nothing.
 */
static void announce(uint64_t at, uint64_t now)
{
	uint16_t key = rto_req_key(&rto_self); /* as transport.c keys its requests */

	if (at < now)
		at = now;
	if (!rto_wake_fits(at, now))
		return;
	__atomic_store_n(&rto_q->predict.hint[key % RTO_PRED_HINTS], rto_wake_word(key, at),
			 __ATOMIC_RELAXED);
}

/* Only while helpers run: they plan from it, and they installed the fault guard. */
static int wanted(void)
{
	return rto_opt.helper_wake == RTO_WAKE_PREDICT && CMM_LOAD_SHARED(rto_q->ready);
}

/* The clocks a sleep may name that the vDSO reads without a system call. */
static int readable(clockid_t clk)
{
	return clk == CLOCK_MONOTONIC || clk == CLOCK_REALTIME || clk == CLOCK_BOOTTIME ||
	       clk == CLOCK_TAI;
}

void rto_wake_at_clock(clockid_t clk, int flags, const struct timespec *req)
{
	struct timespec ts, c;

	if (!wanted() || !req || !readable(clk))
		return;
	/* A bad pointer: the sleep itself fails with EFAULT, as it would without us. */
	if (rto_signal_copy_guarded(&ts, req, sizeof(ts)) != 0)
		return;
	/* EINVAL, or past what 64 bits of nanoseconds hold: the call says, not us. */
	if (ts.tv_sec < 0 || (uint64_t)ts.tv_sec >= UINT64_MAX / NS_PER_S / 2 || ts.tv_nsec < 0 ||
	    ts.tv_nsec >= (long)NS_PER_S)
		return;
	uint64_t t = (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec, now = rto_now_ns();
	if (!(flags & TIMER_ABSTIME)) {
		announce(now + t, now);
		return;
	}
	if (clk == CLOCK_MONOTONIC) {
		announce(t, now);
		return;
	}
	if (clock_gettime(clk, &c) != 0)
		return;
	/* Another clock's deadline, as a distance from its now onto ours. */
	uint64_t cn = (uint64_t)c.tv_sec * NS_PER_S + (uint64_t)c.tv_nsec;
	announce(now + (t > cn ? t - cn : 0), now);
}

void rto_wake_after_ns(uint64_t ns)
{
	if (!wanted())
		return;
	uint64_t now = rto_now_ns();
	announce(now + ns, now);
}
