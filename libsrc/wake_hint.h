/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A marked thread's word on when its timed sleep ends (clock_nanosleep,
 * nanosleep, usleep: calls.tbl's "wake:" annotation), so that the polling
 * helper wakes just before the burst that follows instead of guessing it
 * from the gaps between bursts (predict.c).  Its next call cannot come
 * before the sleep ends (but for a signal), and on a loop with jitter, or
 * one whose own wake-ups are late now and then, the gaps say far less.
 *
 * One word per key hash (request.h) in struct rto_predict: the key in the
 * top 16 bits, the low 48 bits of the end of the sleep (rto_now_ns(),
 * CLOCK_MONOTONIC) below.  The reader rebuilds the full time from its own
 * clock: ends within 39 hours either side of now come out right.
 *
 * Concurrency:
 *   rto_wake_at_clock(), rto_wake_after_ns()   the caller's path, before
 *        the sleep: a few loads, vDSO clock reads, one relaxed store; no
 *        lock, no system call (a bad timespec pointer: wake_hint.c)
 *   rto_wake_hinted()   the planning helper, without a lock
 * A hint is advice: two threads whose keys share a word overwrite each
 * other, and a word read while its owner rewrites it is either value;
 * the reader checks the key, and a wrong or missing hint only costs one
 * badly placed polling window.
 */
#ifndef RTO_WAKE_HINT_H
#define RTO_WAKE_HINT_H

#include "predict.h"

#include <stdint.h>
#include <time.h>

#define RTO_WAKE_BITS 48
#define RTO_WAKE_MASK ((UINT64_C(1) << RTO_WAKE_BITS) - 1)

/* The calling marked thread sleeps until req on clk (flags: TIMER_ABSTIME or 0). */
RTO_HIDDEN void rto_wake_at_clock(clockid_t clk, int flags, const struct timespec *req);
/* ... for ns from now (usleep). */
RTO_HIDDEN void rto_wake_after_ns(uint64_t ns);

static inline uint64_t rto_wake_word(uint16_t key, uint64_t at)
{
	return (uint64_t)key << RTO_WAKE_BITS | (at & RTO_WAKE_MASK);
}

/*
 * 1: a sleep ending at `at` fits a word read back against a clock near
 * now: not past, and within half the 48 bits (39 hours).  An
 * absolute deadline on a machine up for longer than 78 hours fits too:
 * only the distance counts.
 */
static inline int rto_wake_fits(uint64_t at, uint64_t now)
{
	return at >= now && at - now < (RTO_WAKE_MASK >> 1);
}

/* When key's announced sleep ends (may be past), or 0: no word of key's. */
static inline uint64_t rto_wake_hinted(const struct rto_predict *s, uint16_t key, uint64_t now)
{
	uint64_t w = __atomic_load_n(&s->hint[key % RTO_PRED_HINTS], __ATOMIC_RELAXED);

	if (!w || (uint16_t)(w >> RTO_WAKE_BITS) != key)
		return 0;
	/* The 48-bit difference, sign-extended: how far from now it ends. */
	uint64_t d = (w - now) & RTO_WAKE_MASK;
	int64_t delta = (int64_t)(d << (64 - RTO_WAKE_BITS)) >> (64 - RTO_WAKE_BITS);
	uint64_t at = now + (uint64_t)delta;
	return at ? at : 1;
}

#endif /* RTO_WAKE_HINT_H */
