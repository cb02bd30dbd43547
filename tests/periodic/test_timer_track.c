/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * timer_track.c on its own: when a wait for a POSIX timer's signal ends,
 * from what timer_create and timer_settime said (the test includes the
 * source, built as the library builds it).  No timing is asserted: each
 * expiry is checked against the clock read around the call.  Timer ids
 * are made up: the table never hands them to the kernel.
 */
#include "timer_track.c"

#include <criterion/criterion.h>

#include "timer_clock.h"

#define MS     1000000ull
#define BIT(s) (UINT64_C(1) << ((s)-1))

static timer_t id_of(uintptr_t n)
{
	return (timer_t)n;
}

static void made(uintptr_t n, clockid_t clk, int notify, int signo)
{
	struct sigevent ev = {.sigev_notify = notify, .sigev_signo = signo};
	timer_t id = id_of(n);

	rto_timer_created(0, clk, &ev, &id);
}

Test(timer_track, a_periodic_timer_ends_a_wait_for_its_signal_at_its_next_expiry)
{
	struct itimerspec its = {.it_value = ts(10 * MS), .it_interval = ts(MS)};
	uint64_t in;

	made(1, CLOCK_MONOTONIC, SIGEV_SIGNAL, SIGUSR1);
	uint64_t before = mono();
	rto_timer_set(0, id_of(1), 0, &its);
	cr_assert_eq(rto_timer_next(BIT(SIGUSR1), &in), 0);
	uint64_t after = mono();
	cr_assert_leq(in, 10 * MS);
	cr_assert_geq(in + (after - before), 10 * MS - (after - before));
	cr_assert_eq(rto_timer_next(BIT(SIGUSR2), &in), -1, "not a signal it sends");
	rto_timer_deleted(0, id_of(1));
	cr_assert_eq(rto_timer_next(BIT(SIGUSR1), &in), -1, "deleted");
}

Test(timer_track, the_soonest_of_the_timers_whose_signals_are_waited_for)
{
	uint64_t now = mono(), in;
	struct itimerspec slow = {.it_value = ts(now + 50 * MS), .it_interval = ts(50 * MS)};
	struct itimerspec fast = {.it_value = ts(now + 5 * MS), .it_interval = ts(5 * MS)};

	made(2, CLOCK_MONOTONIC, SIGEV_THREAD_ID, SIGRTMIN);
	made(3, CLOCK_MONOTONIC, SIGEV_SIGNAL, SIGALRM);
	rto_timer_set(0, id_of(2), TIMER_ABSTIME, &slow);
	rto_timer_set(0, id_of(3), TIMER_ABSTIME, &fast);
	cr_assert_eq(rto_timer_next(BIT(SIGRTMIN) | BIT(SIGALRM), &in), 0);
	cr_assert_leq(in, 5 * MS);
	cr_assert_eq(rto_timer_next(BIT(SIGRTMIN), &in), 0);
	cr_assert_gt(in, 5 * MS, "only the slow one sends SIGRTMIN");
	cr_assert_leq(in, 50 * MS);
	rto_timer_deleted(0, id_of(2));
	rto_timer_deleted(0, id_of(3));
}

Test(timer_track, an_absolute_timer_in_the_past_says_its_next_expiry_on_its_phase)
{
	uint64_t now = mono(), in;
	uint64_t first = now - 5 * MS - MS / 2;
	struct itimerspec its = {.it_value = ts(first), .it_interval = ts(MS)};

	made(4, CLOCK_MONOTONIC, SIGEV_SIGNAL, SIGUSR1);
	rto_timer_set(0, id_of(4), TIMER_ABSTIME, &its);
	uint64_t before = mono();
	cr_assert_eq(rto_timer_next(BIT(SIGUSR1), &in), 0);
	uint64_t after = mono();
	cr_assert_leq(in, MS, "within a period");
	/* The expiry lies on the timer's phase, as seen from a clock read around the call. */
	uint64_t lo = (before + in - first) % MS, hi = (after + in - first) % MS;
	cr_assert(lo <= after - before || hi <= after - before || MS - lo <= after - before,
		  "off its phase: %llu %llu", (unsigned long long)lo, (unsigned long long)hi);
	rto_timer_deleted(0, id_of(4));
}

Test(timer_track, no_word_for_what_would_not_end_the_wait)
{
	struct itimerspec past = {.it_value = ts(1)}, off = {0}, its = {.it_value = ts(MS)};
	uint64_t in;

	made(5, CLOCK_MONOTONIC, SIGEV_SIGNAL, SIGUSR1);
	rto_timer_set(0, id_of(5), TIMER_ABSTIME, &past); /* a one-shot long fired */
	cr_assert_eq(rto_timer_next(BIT(SIGUSR1), &in), -1);
	rto_timer_set(0, id_of(5), 0, &off); /* disarmed */
	cr_assert_eq(rto_timer_next(BIT(SIGUSR1), &in), -1);
	rto_timer_set(0, id_of(5), 0, &its);
	cr_assert_eq(rto_timer_next(BIT(SIGUSR1), &in), 0);
	rto_timer_set(-1, id_of(5), 0, &its); /* a failed call: what we knew may be stale */
	cr_assert_eq(rto_timer_next(BIT(SIGUSR1), &in), -1);
	rto_timer_deleted(0, id_of(5));
	rto_timer_set(0, id_of(5), 0, &its); /* an id we do not know (deleted) */
	cr_assert_eq(rto_timer_next(BIT(SIGUSR1), &in), -1);

	made(6, CLOCK_MONOTONIC, SIGEV_THREAD, SIGUSR1); /* starts a thread: no signal */
	made(7, CLOCK_MONOTONIC, SIGEV_NONE, SIGUSR1);
	made(8, CLOCK_PROCESS_CPUTIME_ID, SIGEV_SIGNAL, SIGUSR1); /* not a vDSO clock */
	for (uintptr_t n = 6; n <= 8; n++)
		rto_timer_set(0, id_of(n), 0, &its);
	cr_assert_eq(rto_timer_next(BIT(SIGUSR1), &in), -1);
	timer_t failed = id_of(9);
	rto_timer_created(-1, CLOCK_MONOTONIC, NULL, &failed); /* a failed create */
	rto_timer_set(0, id_of(9), 0, &its);
	cr_assert_eq(rto_timer_next(BIT(SIGALRM), &in), -1);
}

Test(timer_track, no_sigevent_is_sigalrm_and_an_id_given_again_is_a_new_timer)
{
	struct itimerspec its = {.it_value = ts(MS), .it_interval = ts(MS)};
	timer_t id = id_of(10);
	uint64_t in;

	rto_timer_created(0, CLOCK_MONOTONIC, NULL, &id);
	rto_timer_set(0, id, 0, &its);
	cr_assert_eq(rto_timer_next(BIT(SIGALRM), &in), 0);
	/* Deleted behind our back (a raw system call), and the id given out again. */
	made(10, CLOCK_MONOTONIC, SIGEV_SIGNAL, SIGUSR2);
	cr_assert_eq(rto_timer_next(BIT(SIGALRM), &in), -1, "the old timer is gone");
	cr_assert_eq(rto_timer_next(BIT(SIGUSR2), &in), -1, "the new one is not armed yet");
	rto_timer_deleted(0, id);
}

Test(timer_track, a_full_table_follows_no_more_and_frees_entries_for_reuse)
{
	struct itimerspec its = {.it_value = ts(MS), .it_interval = ts(MS)};
	uint64_t in;

	for (uintptr_t n = 100; n < 100 + RTO_TIMER_MAX; n++)
		made(n, CLOCK_MONOTONIC, SIGEV_SIGNAL, SIGUSR1);
	made(500, CLOCK_MONOTONIC, SIGEV_SIGNAL, SIGUSR2); /* past the table */
	rto_timer_set(0, id_of(500), 0, &its);
	cr_assert_eq(rto_timer_next(BIT(SIGUSR2), &in), -1);
	rto_timer_deleted(0, id_of(100));
	made(501, CLOCK_MONOTONIC, SIGEV_SIGNAL, SIGUSR2); /* the freed entry */
	rto_timer_set(0, id_of(501), 0, &its);
	cr_assert_eq(rto_timer_next(BIT(SIGUSR2), &in), 0);
}

Test(timer_track, a_forked_child_knows_no_timer)
{
	struct itimerspec its = {.it_value = ts(MS), .it_interval = ts(MS)};
	uint64_t in;

	made(11, CLOCK_MONOTONIC, SIGEV_SIGNAL, SIGUSR1);
	rto_timer_set(0, id_of(11), 0, &its);
	cr_assert_eq(rto_timer_next(BIT(SIGUSR1), &in), 0);
	rto_timer_after_fork(); /* fork.c, in the child */
	cr_assert_eq(rto_timer_next(BIT(SIGUSR1), &in), -1);
	made(12, CLOCK_MONOTONIC, SIGEV_SIGNAL, SIGUSR1); /* its own, afresh */
	rto_timer_set(0, id_of(12), 0, &its);
	cr_assert_eq(rto_timer_next(BIT(SIGUSR1), &in), 0);
}
