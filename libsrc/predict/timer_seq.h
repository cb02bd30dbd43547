/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What timerfd_track.c and timer_track.c share: the sequence word that
 * guards each of their entries, and the clocks they follow.
 *
 * Concurrency: a writer (any thread, rare) takes the word from even to
 * odd with a compare and swap, or gives up when another writer holds it;
 * its stores are release stores, ended by rto_seq_write_end().  A reader
 * (the caller's path: loads only) loads the word (acquire), the fields
 * (acquire), then the word again: an odd word, or one that changed, means
 * no answer.  No fences: ThreadSanitizer does not model them.
 */
#ifndef RTO_TIMER_SEQ_H
#define RTO_TIMER_SEQ_H

#include <stdint.h>
#include <time.h>

#define RTO_NS_PER_S 1000000000ull

/* 1: the entry is this writer's until rto_seq_write_end(); 0: another writer's. */
static inline int rto_seq_write_begin(uint32_t *seq)
{
	uint32_t s = __atomic_load_n(seq, __ATOMIC_RELAXED);

	return !(s & 1) &&
	       __atomic_compare_exchange_n(seq, &s, s + 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

static inline void rto_seq_write_end(uint32_t *seq)
{
	__atomic_add_fetch(seq, 1, __ATOMIC_RELEASE);
}

/* The clocks the vDSO reads: a marked thread's call never asks the kernel the time. */
static inline int rto_timer_clock_followed(clockid_t clk)
{
	return clk == CLOCK_MONOTONIC || clk == CLOCK_REALTIME || clk == CLOCK_BOOTTIME;
}

static inline uint64_t rto_timespec_ns(const struct timespec *t)
{
	return (uint64_t)t->tv_sec * RTO_NS_PER_S + (uint64_t)t->tv_nsec;
}

/*
 * A timer's next expiry after now, from its first expiry and interval
 * (0: a one-shot): 0 and *next; -1: disarmed, or a one-shot that fired.
 */
static inline int rto_timer_next_expiry(uint64_t first, uint64_t interval, uint64_t now,
					uint64_t *next)
{
	if (!first || (first <= now && !interval))
		return -1;
	*next = first > now ? first : first + ((now - first) / interval + 1) * interval;
	return 0;
}

#endif
