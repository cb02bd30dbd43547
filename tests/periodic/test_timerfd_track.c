/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * timerfd_track.c on its own: what a read of a timerfd waits for, from
 * what timerfd_create and timerfd_settime said (the test includes the
 * source, built as the library builds it).  No timing is asserted: each
 * expiry is checked against the clock read around the call.
 */
#include "timerfd_track.c"

#include <criterion/criterion.h>

#include "timer_clock.h"

Test(timerfd_track, a_relative_periodic_timer_expires_first_after_its_value)
{
	struct itimerspec its = {.it_value = ts(10 * MS), .it_interval = ts(MS)};
	clockid_t clk;
	uint64_t at;

	rto_timerfd_created(5, CLOCK_MONOTONIC, 0);
	uint64_t before = mono();
	rto_timerfd_set(0, 5, 0, &its);
	cr_assert_eq(rto_timerfd_next(5, &clk, &at), 0);
	cr_assert_eq(clk, CLOCK_MONOTONIC);
	cr_assert_geq(at, before + 10 * MS);
	cr_assert_leq(at, mono() + 10 * MS);
}

Test(timerfd_track, an_absolute_timer_in_the_past_says_its_next_expiry_after_now)
{
	uint64_t now = mono();
	struct itimerspec its = {.it_value = ts(now - 5 * MS - MS / 2), .it_interval = ts(MS)};
	clockid_t clk;
	uint64_t at;

	rto_timerfd_created(6, CLOCK_MONOTONIC, 0);
	rto_timerfd_set(0, 6, TFD_TIMER_ABSTIME, &its);
	cr_assert_eq(rto_timerfd_next(6, &clk, &at), 0);
	uint64_t after = mono();
	cr_assert_gt(at, now);
	cr_assert_leq(at, after + MS, "within a period of now");
	cr_assert_eq((at - (now - 5 * MS - MS / 2)) % MS, 0, "on the timer's phase");
}

Test(timerfd_track, no_word_for_what_a_read_would_not_wait_for)
{
	struct itimerspec past = {.it_value = ts(1)}, off = {0}, its = {.it_value = ts(MS)};
	clockid_t clk;
	uint64_t at;

	rto_timerfd_created(7, CLOCK_MONOTONIC, 0);
	rto_timerfd_set(0, 7, TFD_TIMER_ABSTIME, &past); /* a one-shot long expired */
	cr_assert_eq(rto_timerfd_next(7, &clk, &at), -1);
	rto_timerfd_set(0, 7, 0, &off); /* disarmed */
	cr_assert_eq(rto_timerfd_next(7, &clk, &at), -1);
	rto_timerfd_set(0, 7, 0, &its);
	cr_assert_eq(rto_timerfd_next(7, &clk, &at), 0);
	rto_timerfd_set(-1, 7, 0, &its); /* a failed call: what we knew may be stale */
	cr_assert_eq(rto_timerfd_next(7, &clk, &at), -1);
	rto_timerfd_set(0, 7, 0, &its);
	rto_timerfd_forget(7); /* closed */
	cr_assert_eq(rto_timerfd_next(7, &clk, &at), -1);
	rto_timerfd_set(0, 7, 0, &its); /* a descriptor reused, not a timerfd we made */
	cr_assert_eq(rto_timerfd_next(7, &clk, &at), -1);
	rto_timerfd_created(8, CLOCK_REALTIME_ALARM, 0); /* a clock the vDSO does not read */
	rto_timerfd_set(0, 8, 0, &its);
	cr_assert_eq(rto_timerfd_next(8, &clk, &at), -1);
	rto_timerfd_created(RTO_TIMERFD_MAX, CLOCK_MONOTONIC, 0); /* past the table */
	rto_timerfd_set(0, RTO_TIMERFD_MAX, 0, &its);
	cr_assert_eq(rto_timerfd_next(RTO_TIMERFD_MAX, &clk, &at), -1);
}
