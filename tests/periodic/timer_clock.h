/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test_timerfd_track.c and test_timer_track.c: the clock, and a timespec of ns. */
#ifndef TIMER_CLOCK_H
#define TIMER_CLOCK_H

#include <stdint.h>
#include <time.h>

#define MS 1000000ull

static inline uint64_t mono(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static inline struct timespec ts(uint64_t ns)
{
	return (struct timespec){(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
}

#endif
