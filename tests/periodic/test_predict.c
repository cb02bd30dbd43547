/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * predict.c on its own, on a made-up clock: what the helpers learn from a
 * periodic marked thread's calls, and the plan they follow.
 *  - a burst is what the caller says it is (RTO_RQ_BURST, by its own
 *    clock): a loop whose later calls of a cycle come long after the
 *    worker published the one before (the caller slept and woke late, as
 *    on a VM) is still one burst per cycle, and periodic;
 *  - the plan naps until just before the next burst and polls across it;
 *  - a burst that came while the poller napped widens the window; caught
 *    bursts narrow it slowly, an empty window a little;
 *  - a thread without a period gets no plan (helper_idle_us polling);
 *  - a thread that says when its sleep ends (wake_hint.h) gets its window
 *    there, however much its period jitters; the helper waits for that
 *    word after the thread's burst; a word of another thread's, or of a
 *    sleep that fits no burst, is not used; the window stays open past
 *    the wake for how late the thread came, at most an eighth of its
 *    period, but never less than the machine's own wake-up lateness;
 *  - a loop later than its window is polled for as long as it would be
 *    alone (helper_idle_us) before the helper naps until another loop's
 *    window; a plan carries the priority of the thread it waits for.
 * No real time passes: every instant is an argument.
 */
#include "predict.c"

#include <criterion/criterion.h>

/* predict.c's only link to the rest of the library: libc's mutex, as real.c resolves it. */
int (*rto_real_pthread_mutex_lock)(pthread_mutex_t *m) = pthread_mutex_lock;
int (*rto_real_pthread_mutex_unlock)(pthread_mutex_t *m) = pthread_mutex_unlock;

#define KEY	  7
#define PERIOD	  1000000ull	/* 1 kHz */
#define T_BASE	  1000000000ull /* the made-up clock's first cycle */
#define CALL_NS	  3000ull	/* from a call to its publish */
#define LATE_NEXT 100000ull	/* the caller's next call, after its late wake-up */

static struct rto_predict pred;

static void init(void)
{
	memset(&pred, 0, sizeof(pred));
	pthread_mutex_init(&pred.lock, NULL);
	rto_predict_configure(0);
}

/* The start of cycle k: a few microseconds of the loop's own jitter. */
static uint64_t cycle_start(unsigned k)
{
	return T_BASE + k * PERIOD + (k * 37 % 11) * 1000;
}

/*
 * Cycle k: `calls` calls, each LATE_NEXT after the previous one's publish
 * (far more than RTO_PRED_BURST_NS), the first one flagged a burst.
 * Returns when the last one was published.
 */
static uint64_t cycle(unsigned k, unsigned calls)
{
	uint64_t t0 = cycle_start(k), done = 0;

	for (unsigned c = 0; c < calls; c++) {
		done = t0 + CALL_NS;
		rto_predict_served(&pred, KEY, t0, c == 0, done, 0);
		t0 = done + LATE_NEXT;
	}
	return done;
}

static uint64_t learn_loop(unsigned cycles, unsigned calls)
{
	uint64_t end = 0;

	for (unsigned k = 0; k < cycles; k++)
		end = cycle(k, calls);
	return end;
}

TestSuite(predict, .init = init);

Test(predict, the_caller_says_where_a_burst_begins)
{
	uint64_t end = learn_loop(40, 3), next = cycle_start(40);
	struct rto_plan p;

	/*
	 * Three calls a cycle, 100 us apart: had the helpers counted from
	 * their own publish, each cycle would be three bursts with gaps of
	 * 0.1, 0.1 and 0.8 ms, not a period.
	 */
	cr_assert_eq(rto_predict_plan(&pred, end + 1000, &p), RTO_PLAN_POLL);
	cr_assert_eq(p.linger, 0, "the cycle's burst is over: a predicted window");
	cr_assert_gt(p.sleep_until, end + 1000, "the helper naps first");
	cr_assert_leq(p.sleep_until, next, "awake before the next burst (at %lu): %lu",
		      (unsigned long)next, (unsigned long)p.sleep_until);
	cr_assert_geq(p.poll_until, next, "and polling through it: until %lu",
		      (unsigned long)p.poll_until);
	cr_assert_lt(p.poll_until - p.sleep_until, PERIOD / 2, "a window, not the whole period");
}

Test(predict, polls_for_the_rest_of_a_burst)
{
	uint64_t end = learn_loop(40, 3);
	uint64_t t0 = cycle_start(40);
	struct rto_plan p;

	/* The first call of the next cycle: two more are due (as in the bursts before). */
	rto_predict_served(&pred, KEY, t0, 1, t0 + CALL_NS, 0);
	cr_assert_eq(rto_predict_plan(&pred, t0 + CALL_NS + 1000, &p), RTO_PLAN_POLL);
	cr_assert_eq(p.linger, 1);
	cr_assert_eq(p.sleep_until, 0, "no nap inside a burst");
	cr_assert_eq(p.poll_until, t0 + CALL_NS + RTO_PRED_BURST_NS);
	(void)end;
}

Test(predict, a_burst_that_came_during_the_nap_widens_the_window)
{
	uint64_t end = learn_loop(40, 1);
	struct rto_plan p;

	cr_assert_eq(rto_predict_plan(&pred, end + 1000, &p), RTO_PLAN_POLL);
	uint64_t window = pred.window_ns;
	rto_predict_sleeps(&pred, end + 1000);
	/* The loop came before the nap ended (woke_at is not set yet). */
	uint64_t early = p.sleep_until - 1000;
	rto_predict_served(&pred, KEY, early, 1, early + CALL_NS, 0);
	cr_assert_eq(pred.grows, 1);
	uint64_t grown = window + window / 4;
	cr_assert_eq(pred.window_ns, grown > RTO_PRED_WINDOW_MAX ? RTO_PRED_WINDOW_MAX : grown,
		     "a quarter wider");
	rto_predict_woke(&pred, p.sleep_until, early + 20000, 0, 1);

	window = pred.window_ns;
	rto_predict_hit(&pred);
	cr_assert_eq(pred.window_ns, window - window / 1024, "a caught burst: 1/1024 narrower");
	window = pred.window_ns;
	rto_predict_missed(&pred);
	cr_assert_eq(pred.window_ns, window - window / 8, "an empty window: 1/8 narrower");
	for (int i = 0; i < 100; i++)
		rto_predict_missed(&pred);
	cr_assert_eq(pred.window_ns, RTO_PRED_WINDOW_MIN, "never below the minimum");
}

Test(predict, a_thread_without_a_period_gets_no_plan)
{
	uint64_t t0 = T_BASE;
	struct rto_plan p;

	/* Gaps of 0.2 and 3 ms in turn: no period within a factor of 2. */
	for (unsigned k = 0; k < 40; k++) {
		rto_predict_served(&pred, KEY, t0, 1, t0 + CALL_NS, 0);
		t0 += (k & 1) ? 3000000 : 200000;
	}
	cr_assert_eq(rto_predict_plan(&pred, t0 - 100000, &p), RTO_PLAN_NONE);
}

Test(predict, the_library_s_own_requests_teach_nothing)
{
	struct rto_plan p;

	for (unsigned k = 0; k < 40; k++)
		rto_predict_served(&pred, 0, cycle_start(k), 1, cycle_start(k) + CALL_NS, 0);
	cr_assert_eq(rto_predict_plan(&pred, cycle_start(40) - 100000, &p), RTO_PLAN_NONE);
}

/* ---- wake hints ------------------------------------------------------------------ */

#define ARRIVE_LATE 30000ull /* the loop's own wake-up: this late after its sleep ends */

static void hint(uint16_t key, uint64_t at)
{
	pred.hint[key % RTO_PRED_HINTS] = rto_wake_word(key, at, 0);
}

/*
 * A loop whose period is drawn in +-20% each cycle, one call a cycle, that
 * announces each sleep: the wake w[k] of cycle k, and the call ARRIVE_LATE
 * after it.  Returns the publish of the last call; *next: the next wake.
 */
static uint64_t jittered_loop(unsigned cycles, uint64_t *next)
{
	uint64_t w = T_BASE, done = 0;

	for (unsigned k = 0; k < cycles; k++) {
		uint64_t t0 = w + ARRIVE_LATE;
		done = t0 + CALL_NS;
		rto_predict_served(&pred, KEY, t0, 1, done, 0);
		w += PERIOD - PERIOD / 5 + (k * 7919 % 401) * (PERIOD / 1000); /* 0.8 to 1.2 */
		hint(KEY, w);
	}
	*next = w;
	return done;
}

Test(predict, a_jittered_loop_that_announces_its_sleep_gets_its_window_at_the_wake)
{
	uint64_t next, end = jittered_loop(60, &next);
	struct rto_plan p;

	cr_assert_eq(rto_predict_plan(&pred, end + 1000, &p), RTO_PLAN_POLL);
	uint64_t lead = pred.window_ns + pred.overshoot_ns;
	cr_assert_eq(p.sleep_until, next - lead, "napping until the announced wake less the lead");
	cr_assert_eq(pred.arrive_ns, ARRIVE_LATE, "it learnt how late the loop calls after a wake");
	cr_assert_eq(p.poll_until, next + ARRIVE_LATE + pred.window_ns,
		     "polling past it by as much");
	cr_assert_eq(pred.plan_hinted, 1);

	/* The same loop without its word (after waiting for it): the period's jitter. */
	pred.hint[KEY % RTO_PRED_HINTS] = 0;
	cr_assert_eq(rto_predict_plan(&pred, end + RTO_PRED_BURST_NS + 1000, &p), RTO_PLAN_POLL);
	cr_assert_eq(pred.plan_hinted, 0);
	cr_assert_gt(p.poll_until - p.sleep_until, PERIOD / 4, "%lu",
		     (unsigned long)(p.poll_until - p.sleep_until));
}

/*
 * A loop that drains its timerfd when epoll says it fired, then calls:
 * its read says the next expiry, so each burst's word is the next wake
 * already.  How late it calls after the wake it followed is still learnt
 * (the word its last burst saw).
 */
Test(predict, a_loop_that_says_its_next_wake_on_waking_learns_its_lateness)
{
	uint64_t w = T_BASE;

	for (unsigned k = 0; k < 60; k++) {
		uint64_t t0 = w + ARRIVE_LATE;
		w += PERIOD;
		hint(KEY, w); /* the draining read, before the call */
		rto_predict_served(&pred, KEY, t0, 1, t0 + CALL_NS, 0);
	}
	cr_assert_eq(pred.arrive_ns, ARRIVE_LATE);
}

Test(predict, after_a_hinted_burst_the_helper_waits_for_the_next_word)
{
	uint64_t next, end = jittered_loop(60, &next);
	struct rto_plan p;

	/* The next cycle's call: its word is the one of the sleep just ended. */
	uint64_t t0 = next + ARRIVE_LATE;
	rto_predict_served(&pred, KEY, t0, 1, t0 + CALL_NS, 0);
	cr_assert_eq(rto_predict_plan(&pred, t0 + CALL_NS + 1000, &p), RTO_PLAN_POLL);
	cr_assert_eq(p.linger, 1, "polling, not a window");
	cr_assert_eq(p.sleep_until, 0);
	cr_assert_eq(p.poll_until, t0 + CALL_NS + RTO_PRED_BURST_NS);
	cr_assert_eq(p.hint, &pred.hint[KEY % RTO_PRED_HINTS], "watching the thread's word");
	cr_assert_eq(p.hint_was, rto_wake_word(KEY, next, 0));

	/* The word came: a window at that wake. */
	hint(KEY, next + PERIOD);
	cr_assert_eq(rto_predict_plan(&pred, t0 + CALL_NS + 2000, &p), RTO_PLAN_POLL);
	cr_assert_eq(p.linger, 0);
	cr_assert_eq(p.sleep_until, next + PERIOD - pred.window_ns - pred.overshoot_ns);
	(void)end;
}

Test(predict, a_word_of_another_thread_or_of_a_cycle_without_calls_is_not_used)
{
	uint64_t end = learn_loop(40, 1), next = cycle_start(40);
	struct rto_plan p;

	/* Another thread whose key shares the word. */
	hint(KEY + RTO_PRED_HINTS, next + 50000);
	cr_assert_eq(rto_predict_plan(&pred, end + 1000, &p), RTO_PLAN_POLL);
	cr_assert_eq(pred.plan_hinted, 0);
	/* This thread's, but a sleep of a quarter period: a cycle it makes no call in. */
	hint(KEY, end + PERIOD / 4);
	cr_assert_eq(rto_predict_plan(&pred, end + 1000, &p), RTO_PLAN_POLL);
	cr_assert_eq(pred.plan_hinted, 0);
	cr_assert_gt(p.sleep_until, end + PERIOD / 2, "the window is the gaps' one");
}

/*
 * A timed wait's word says when it ends at the latest (wake_hint.h): an
 * event-driven loop's safety timeout, longer than its period, must not
 * place the window (the helper would nap through the event); a timeout
 * that paces the loop, at its next cycle, does.
 */
Test(predict, a_timeout_places_the_window_only_within_the_period)
{
	uint64_t end = learn_loop(40, 1), next = cycle_start(40);
	struct rto_plan p;

	pred.hint[KEY % RTO_PRED_HINTS] = rto_wake_word(KEY, end + 10 * PERIOD, RTO_WAKE_BOUND);
	cr_assert_eq(rto_predict_plan(&pred, end + 1000, &p), RTO_PLAN_POLL);
	cr_assert_eq(pred.plan_hinted, 0);
	cr_assert_lt(p.sleep_until, next, "the window is the gaps' one, not the timeout's");

	pred.hint[KEY % RTO_PRED_HINTS] = rto_wake_word(KEY, next, RTO_WAKE_BOUND);
	cr_assert_eq(rto_predict_plan(&pred, end + 1000, &p), RTO_PLAN_POLL);
	cr_assert_eq(pred.plan_hinted, 1);
	cr_assert_eq(p.sleep_until, next - pred.window_ns - pred.overshoot_ns);
}

Test(predict, a_word_is_read_back_across_its_47_bit_wrap)
{
	uint64_t wrap = UINT64_C(1) << RTO_WAKE_BITS;

	hint(KEY, wrap + 5000);
	cr_assert_eq(rto_wake_hinted(&pred, KEY, wrap - 5000), wrap + 5000, "ahead, across");
	hint(KEY, wrap - 5000);
	cr_assert_eq(rto_wake_hinted(&pred, KEY, wrap + 5000), wrap - 5000, "behind, across");
	cr_assert_eq(rto_wake_hinted(&pred, KEY + 1, wrap), 0, "another key: no word");
}

Test(predict, an_absolute_deadline_after_39_hours_of_uptime_still_fits_a_word)
{
	uint64_t now = (UINT64_C(1) << RTO_WAKE_BITS) * 3 + 12345; /* about 4.9 days up */

	cr_assert(rto_wake_fits(now + PERIOD, now), "a millisecond ahead");
	hint(KEY, now + PERIOD);
	cr_assert_eq(rto_wake_hinted(&pred, KEY, now), now + PERIOD);
	cr_assert_not(rto_wake_fits(now + (RTO_WAKE_MASK >> 1), now), "19 hours ahead: too far");
	cr_assert_not(rto_wake_fits(now - 1, now), "past");
}

Test(predict, a_burst_during_an_overdue_nap_is_counted_by_the_overrun)
{
	uint64_t end = learn_loop(40, 1);
	struct rto_plan p;

	cr_assert_eq(rto_predict_plan(&pred, end + 1000, &p), RTO_PLAN_POLL);
	rto_predict_sleeps(&pred, end + 1000);
	/* The nap was due to end at sleep_until; 100 us later it still had not. */
	uint64_t t0 = p.sleep_until + 100000;
	rto_predict_served(&pred, KEY, t0, 1, t0 + CALL_NS, 0);
	cr_assert_eq(pred.counts.nap_late, 1);
	cr_assert_eq(pred.counts.overrun_hist[5], 1, "in the 80-160 us bucket");
	uint64_t all = 0;
	for (int b = 0; b < RTO_PRED_LATE_BUCKETS; b++)
		all += pred.counts.overrun_hist[b];
	cr_assert_eq(all, 1, "and nowhere else");
}

Test(predict, a_loop_that_computes_before_it_sleeps_is_not_waited_for)
{
	uint64_t next, end = jittered_loop(60, &next);
	struct rto_plan p;

	(void)end;
	/* Two cycles whose word came only after the helper had stopped waiting for it. */
	for (int k = 0; k < 2; k++) {
		uint64_t t0 = next + ARRIVE_LATE, done = t0 + CALL_NS;
		rto_predict_served(&pred, KEY, t0, 1, done, 0);
		cr_assert_eq(rto_predict_plan(&pred, done + 1000, &p), RTO_PLAN_POLL);
		cr_assert_eq(p.linger, 1, "cycle %d: waiting for its word", k);
		rto_predict_plan(&pred, done + RTO_PRED_BURST_NS + 1000, &p); /* the wait is over */
		next += PERIOD;
		hint(KEY, next); /* the word, late */
	}
	uint64_t t0 = next + ARRIVE_LATE, done = t0 + CALL_NS;
	rto_predict_served(&pred, KEY, t0, 1, done, 0);
	cr_assert_eq(rto_predict_plan(&pred, done + 1000, &p), RTO_PLAN_POLL);
	cr_assert_eq(p.linger, 0, "no more waiting: a window from the gaps");
	cr_assert_gt(p.sleep_until, done + PERIOD / 2);
}

Test(predict, after_a_late_burst_the_next_wake_is_still_used)
{
	uint64_t w = T_BASE;
	struct rto_plan p;

	for (unsigned k = 0; k < 40; k++) { /* 1 kHz, each call ARRIVE_LATE after its wake */
		rto_predict_served(&pred, KEY, w + ARRIVE_LATE, 1, w + ARRIVE_LATE + CALL_NS, 0);
		w += PERIOD;
		hint(KEY, w);
	}
	/* This cycle the loop woke 180 us late; its next sleep is that much shorter. */
	uint64_t t0 = w + 180000, done = t0 + CALL_NS;
	rto_predict_served(&pred, KEY, t0, 1, done, 0);
	hint(KEY, w + PERIOD);
	cr_assert_eq(rto_predict_plan(&pred, done + 1000, &p), RTO_PLAN_POLL);
	cr_assert_eq(pred.plan_hinted, 1, "the word of a sleep shortened by a late wake-up");
	cr_assert_eq(p.sleep_until, w + PERIOD - pred.window_ns - pred.overshoot_ns);
}

Test(predict, a_few_stalled_wake_ups_do_not_stretch_every_window)
{
	uint64_t w = T_BASE;
	struct rto_plan p;

	for (unsigned k = 0; k < 60; k++) { /* three of them 800 us late: a VM's stalls */
		uint64_t late = k % 20 == 5 ? 800000 : ARRIVE_LATE;
		rto_predict_served(&pred, KEY, w + late, 1, w + late + CALL_NS, 0);
		w += PERIOD;
		hint(KEY, w);
	}
	cr_assert_geq(pred.arrive_ns, 800000, "the 99th percentile is a stall");
	cr_assert_eq(rto_predict_plan(&pred, w - PERIOD / 2, &p), RTO_PLAN_POLL);
	cr_assert_eq(pred.plan_hinted, 1);
	cr_assert_leq(p.poll_until, w + PERIOD / 8 + pred.window_ns,
		      "open past the wake for at most an eighth of the period: %lu",
		      (unsigned long)(p.poll_until - w));
}

Test(predict, a_loop_that_catches_up_after_late_bursts_stays_periodic)
{
	uint64_t t0 = T_BASE;
	struct rto_plan p;

	/* Every 7th burst 557 us late (its call before took that long), the next on phase. */
	for (unsigned k = 0; k < 70; k++) {
		uint64_t at = t0 + (k % 7 == 3 ? 557000 : 0);
		rto_predict_served(&pred, KEY, at, 1, at + CALL_NS, 0);
		t0 += PERIOD;
	}
	cr_assert_eq(rto_predict_plan(&pred, t0 - PERIOD / 2, &p), RTO_PLAN_POLL,
		     "two gaps in seven are off the period, but they add up to two");
	cr_assert_eq(p.linger, 0);
	cr_assert_leq(p.sleep_until, t0, "awake before the next burst");
	cr_assert_geq(p.poll_until, t0);
}

Test(predict, a_thread_without_a_period_that_announces_its_sleeps_gets_a_window_at_each)
{
	uint64_t w = T_BASE;
	struct rto_plan p;

	/* Sleeps of 0.2 and 3 ms in turn, each announced, each followed by a call. */
	for (unsigned k = 0; k < 40; k++) {
		rto_predict_served(&pred, KEY, w + ARRIVE_LATE, 1, w + ARRIVE_LATE + CALL_NS, 0);
		w += (k & 1) ? 3000000 : 200000;
		hint(KEY, w);
	}
	cr_assert_eq(rto_predict_plan(&pred, w - 100000, &p), RTO_PLAN_POLL);
	cr_assert_eq(pred.plan_hinted, 1);
	cr_assert_eq(p.sleep_until, w - pred.window_ns - pred.overshoot_ns,
		     "napping until its wake");
	/* Without its word, as before: no plan. */
	pred.hint[KEY % RTO_PRED_HINTS] = 0;
	cr_assert_eq(rto_predict_plan(&pred, w - 100000, &p), RTO_PLAN_NONE);
}

Test(predict, a_fast_loop_as_late_as_the_machine_s_own_wake_ups_keeps_its_window)
{
	const uint64_t period = 100000; /* 10 kHz: an eighth is 12.5 us */
	uint64_t w = T_BASE;
	struct rto_plan p;

	for (unsigned k = 1; k <= 60; k++) { /* one wake-up in ten ARRIVE_LATE, the last one */
		uint64_t late = k % 10 ? ARRIVE_LATE / 3 : ARRIVE_LATE;
		rto_predict_served(&pred, KEY, w + late, 1, w + late + CALL_NS, 0);
		w += period;
		hint(KEY, w);
	}
	/* The helper's own timed naps end about as late: this machine's wake-up. */
	for (unsigned k = 0; k < RTO_PRED_LATES; k++)
		rto_predict_woke(&pred, T_BASE, T_BASE + ARRIVE_LATE, 1, 1);
	cr_assert_eq(pred.overshoot_ns, ARRIVE_LATE);
	/* Past the late burst's tail (RTO_PRED_BURST_NS after its publish), before the wake. */
	cr_assert_eq(rto_predict_plan(&pred, w - period / 4, &p), RTO_PLAN_POLL);
	cr_assert_eq(p.linger, 0);
	cr_assert_eq(pred.plan_hinted, 1);
	cr_assert_geq(p.poll_until, w + ARRIVE_LATE,
		      "open past the wake for the machine's lateness, more than an eighth of "
		      "the period: %lu",
		      (unsigned long)(p.poll_until - w));
}

Test(predict, a_loop_later_than_its_window_is_polled_for_before_another_loop_s_window)
{
	const uint64_t grace = 200000; /* helper_idle_us=200 */
	uint64_t t0 = T_BASE;
	struct rto_plan p;

	/* Two loops of one period, the second half a period after the first. */
	for (unsigned k = 0; k < 40; k++, t0 += PERIOD) {
		rto_predict_served(&pred, KEY, t0, 1, t0 + CALL_NS, 80);
		rto_predict_served(&pred, KEY + 1, t0 + PERIOD / 2, 1, t0 + PERIOD / 2 + CALL_NS,
				   79);
	}
	/* The first loop's burst, due at t0, has not come 100 us later: its window is over. */
	uint64_t now = t0 + 100000;
	cr_assert_eq(rto_predict_plan(&pred, now, &p), RTO_PLAN_POLL);
	uint64_t other = p.sleep_until;
	cr_assert(other > now && other < t0 + PERIOD / 2,
		  "without a grace: a nap until the second loop's window (%lu after t0)",
		  (unsigned long)(other - t0));
	cr_assert_eq(p.prio, 79, "the window is the FIFO 79 loop's: at its priority");

	rto_predict_configure(grace);
	cr_assert_eq(rto_predict_plan(&pred, now, &p), RTO_PLAN_POLL);
	cr_assert_eq(p.sleep_until, 0, "no nap while the late loop may still come");
	cr_assert(p.poll_until > now && p.poll_until < other,
		  "polling for the late loop until %lu after t0, before the other's window",
		  (unsigned long)(p.poll_until - t0));
	cr_assert_eq(p.linger, 1, "not a window of its own: it neither hits nor misses");
	cr_assert_eq(p.prio, 80, "polling for the late FIFO 80 loop: at its priority");

	/* Its grace over, the second loop's window as before. */
	cr_assert_eq(rto_predict_plan(&pred, p.poll_until + 1, &p), RTO_PLAN_POLL);
	cr_assert_eq(p.sleep_until, other);
	cr_assert_eq(p.linger, 0);
	cr_assert_eq(p.prio, 79);
}

Test(predict, a_loop_faster_than_helper_idle_us_is_served_as_idle_serves_it)
{
	const uint64_t idle_ns = 200000, fast = 100000; /* helper_idle_us=200, a 10 kHz loop */
	uint64_t t0 = T_BASE, done = 0;
	struct rto_plan p;

	rto_predict_configure(idle_ns);
	for (unsigned k = 0; k < 60; k++, t0 += fast) {
		done = t0 + CALL_NS;
		rto_predict_served(&pred, KEY, t0, 1, done, 80);
		if (k % 10 == 5) /* a 1 kHz loop beside it, between two of its calls */
			rto_predict_served(&pred, KEY + 1, t0 + fast / 2, 1,
					   t0 + fast / 2 + CALL_NS, 79);
	}
	/* Within the promise: idle polls, and so do we (helper.c asks this first). */
	cr_assert_eq(rto_predict_promised(&pred), done + idle_ns);
	/*
	 * The promise ran out (a wake-up of the loop came late): idle sleeps
	 * until a call wakes it.  No window of the fast loop's: only the
	 * slow one's, at its priority.
	 */
	cr_assert_eq(rto_predict_plan(&pred, done + idle_ns + 1000, &p), RTO_PLAN_POLL);
	cr_assert_eq(p.prio, 79, "the plan is the 1 kHz loop's, not the 10 kHz one's");
	cr_assert_eq(p.linger, 0);

	/* The fast loop alone: no plan at all, the helper sleeps as idle would. */
	init();
	rto_predict_configure(idle_ns);
	for (unsigned k = 0; k < 60; k++, t0 += fast) {
		done = t0 + CALL_NS;
		rto_predict_served(&pred, KEY, t0, 1, done, 80);
	}
	cr_assert_eq(rto_predict_plan(&pred, done + idle_ns + 1000, &p), RTO_PLAN_NONE,
		     "a plan would poll where idle sleeps");
}
