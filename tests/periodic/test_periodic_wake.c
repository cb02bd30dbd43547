/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A periodic marked loop (1 kHz, one offloaded write per cycle) under a
 * seccomp witness of its own system calls (periodic_child.c):
 *  - with the defaults (helper_wake=predict), the write never runs on the
 *    loop's thread, and the helpers learn the loop: the polling helper naps
 *    between its bursts and polls windows placed at the wake its
 *    clock_nanosleep announced (wake_hint.h); its counts of where the
 *    bursts fell add up to the loop's own count of its calls;
 *  - the witness sees what a call costs when the helpers sleep: with
 *    helpers that sleep at once (helper_wake=idle:helper_idle_us=0),
 *    nearly every call makes a FUTEX_WAKE.
 * No timing is asserted.  That a polled window spares the loop every
 * system call (a long run of calls with none) depends on the helper
 * being on its CPU when the call comes, which the machine decides:
 * bench-periodic measures it (bursts that came while the helper napped,
 * and the calls' latencies), periodic_child prints it (clean_run), and
 * the test shows it in its log.
 */
#include "harness.h"

#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#ifndef PERIODIC_CHILD
#error "PERIODIC_CHILD (the child's path) must come from the build"
#endif

#define CYCLES	"1000"	    /* 1 s at 1 kHz: the helpers learn the loop in a few */
#define RUN_ANY "100000000" /* the child stops after CYCLES, whatever its runs */

static void run_child_waiting(const char *options, const char *cycles, const char *run,
			      const char *period_us, const char *wait, struct proc *p)
{
	char opt[PATH_MAX + 64];
	snprintf(opt, sizeof(opt), "RTOFFLOAD_OPTIONS=fd_local=none%s%s", *options ? ":" : "",
		 options);
	char *const argv[] = {PERIODIC_CHILD,	 (char *)cycles, (char *)run,
			      (char *)period_us, (char *)wait,	 NULL};
	char *const env[] = {opt, NULL};

	cr_assert_eq(run_proc(argv, env, p), 0, "cannot run %s", argv[0]);
	cr_assert(WIFEXITED(p->status) && WEXITSTATUS(p->status) == 0, "status %#x: %s %s",
		  p->status, p->out, p->err);
	cr_assert_eq(kv(p->out, "installed", 0), 1, "the witness filter: %s", p->out);
	cr_assert_eq(kv(p->out, "marked", 0), 1, "%s", p->out);
	cr_assert_eq(kv(p->out, "bad_writes", -1), 0, "%s", p->out);
	cr_assert_eq(kv(p->out, "waiter", 0), 1, "the loop's wait: %s", p->out);
}

static void run_child_every(const char *options, const char *cycles, const char *run,
			    const char *period_us, struct proc *p)
{
	run_child_waiting(options, cycles, run, period_us, "sleep", p);
}

static void run_child(const char *options, const char *cycles, const char *run, struct proc *p)
{
	run_child_every(options, cycles, run, "1000", p);
}

/* The number after "key": in the stats JSON's "predict" object, or -1. */
static long predict_count(const char *json, const char *key)
{
	const char *obj = json ? strstr(json, "\"predict\":{") : NULL;
	char quoted[64];

	if (!obj)
		return -1;
	snprintf(quoted, sizeof(quoted), "\"%s\":", key);
	const char *at = strstr(obj, quoted);
	return at ? strtol(at + strlen(quoted), NULL, 10) : -1;
}

#if defined(__x86_64__)
Test(periodic, a_periodic_loop_is_learnt_and_its_calls_run_elsewhere, .timeout = TEST_TIMEOUT)
{
	char dir[PATH_MAX], opts[PATH_MAX + 32], path[PATH_MAX + 16];
	struct proc p;

	tmp_make(dir);
	snprintf(opts, sizeof(opts), "stats_file=%s/stats.json", dir);
	run_child(opts, CYCLES, RUN_ANY, &p);
	long calls = kv(p.out, "calls", 0);
	cr_assert_eq(calls, atol(CYCLES), "%s", p.out);
	/* The write never ran on the loop's thread: not once, warm-up included. */
	cr_assert_eq(kv(p.out, "other_syscalls", -1), 0, "%s", p.out);
	fprintf(stderr,
		"calls in a row without a system call: %ld of %ld (a measure, not asserted)\n",
		kv(p.out, "clean_run", 0), calls);
	/* The helper napped between cycles and placed windows at the loop's announced wakes. */
	snprintf(path, sizeof(path), "%s/stats.json", dir);
	char *json = slurp(path, NULL);
	cr_assert_not_null(json, "no %s", path);
	cr_assert_gt(predict_count(json, "naps"), 0, "%s", json);
	cr_assert_gt(predict_count(json, "hinted"), 0, "%s", json);
	/*
	 * Each burst of the loop (one call each) that fell in or around a
	 * planned window is counted once, where it fell: they are some of
	 * its calls, and those planned from a wake hint some of them.
	 */
	long in = predict_count(json, "in_window"), before = predict_count(json, "before_window");
	long late = predict_count(json, "nap_late"), after = predict_count(json, "after_window");
	cr_assert(in >= 0 && before >= 0 && late >= 0 && after >= 0, "%s", json);
	cr_assert_leq(in + before + late + after, calls, "%s", json);
	cr_assert_leq(predict_count(json, "hinted"), in + before + late + after, "%s", json);
	/*
	 * during_nap: the loop's bursts that came while the polling helper
	 * napped (each grew its window).  Some of its calls, and every burst
	 * that came inside its window before the nap had ended (nap_late) is
	 * one of them.
	 */
	long during_nap = predict_count(json, "during_nap");
	cr_assert_geq(during_nap, late, "%s", json);
	cr_assert_leq(during_nap, calls, "%s", json);
	free(json);
	tmp_remove(dir);
}

Test(periodic, witness_sees_a_sleeping_helper_woken, .timeout = TEST_TIMEOUT)
{
	struct proc p;

	run_child("helper_wake=idle:helper_idle_us=0", "200", RUN_ANY, &p);
	long calls = kv(p.out, "calls", 0);
	cr_assert_eq(calls, 200, "%s", p.out);
	cr_assert_geq(kv(p.out, "wake_calls", 0), calls * 9 / 10, "%s", p.out);
	cr_assert_eq(kv(p.out, "other_syscalls", -1), 0, "%s", p.out);
}

/*
 * predict is never worse than idle (issue 30): helper_idle_us is the
 * user's promise of polling after a call.  Calls 100 us apart with
 * helper_idle_us=100000: idle polls through every gap, and so must
 * predict, though the loop is periodic and announces its sleeps.  The
 * witness: the helper never napped (the stats' predict object, written
 * once it napped, is absent or says 0).
 */
Test(periodic, predict_never_naps_within_helper_idle_us, .timeout = TEST_TIMEOUT)
{
	char dir[PATH_MAX], opts[PATH_MAX + 64], path[PATH_MAX + 16];
	struct proc p;

	tmp_make(dir);
	snprintf(opts, sizeof(opts), "helper_idle_us=100000:stats_file=%s/stats.json", dir);
	run_child_every(opts, "5000", "1000000", "100", &p);
	cr_assert_eq(kv(p.out, "cycles", 0), 5000, "%s", p.out);
	snprintf(path, sizeof(path), "%s/stats.json", dir);
	char *json = slurp(path, NULL);
	cr_assert_not_null(json, "no %s", path);
	cr_expect_leq(predict_count(json, "naps"), 0, "the helper napped within helper_idle_us: %s",
		      json);
	cr_expect_leq(predict_count(json, "during_nap"), 0, "%s", json);
	free(json);
	tmp_remove(dir);
}

/*
 * helper_nap_us: the polling helper sleeps through the gap between two
 * bursts of a 1 kHz loop (about 800 us) in steps of at most 100 us, so a
 * nap takes several sleeps; with 0, one (or none, when a call came before
 * it began).  The witness: the stats' count of the naps' sleeps.
 */
static void nap_sleeps(const char *options, long *naps, long *sleeps)
{
	char dir[PATH_MAX], opts[PATH_MAX + 64], path[PATH_MAX + 16];
	struct proc p;

	tmp_make(dir);
	snprintf(opts, sizeof(opts), "%s:stats_file=%s/stats.json", options, dir);
	run_child(opts, CYCLES, RUN_ANY, &p);
	cr_assert_eq(kv(p.out, "calls", 0), atol(CYCLES), "%s", p.out);
	snprintf(path, sizeof(path), "%s/stats.json", dir);
	char *json = slurp(path, NULL);
	cr_assert_not_null(json, "no %s", path);
	*naps = predict_count(json, "naps");
	*sleeps = predict_count(json, "nap_sleeps");
	cr_assert_gt(*naps, 0, "%s", json);
	free(json);
	tmp_remove(dir);
}

Test(periodic, a_nap_sleeps_in_steps_of_helper_nap_us, .timeout = TEST_TIMEOUT)
{
	long naps, sleeps;

	nap_sleeps("helper_nap_us=100", &naps, &sleeps);
	cr_assert_geq(sleeps, 2 * naps, "%ld naps in %ld sleeps", naps, sleeps);
	nap_sleeps("helper_nap_us=0", &naps, &sleeps);
	cr_assert_leq(sleeps, naps, "%ld naps in %ld sleeps", naps, sleeps);
}

/*
 * Loops that wait otherwise than by sleeping (issue 30): each says when
 * its wait ends, and the helper places windows there.  The witness: the
 * stats count bursts planned from a wake hint (hinted), which without the
 * word stays 0; they are some of the bursts counted against their
 * windows, which are some of the loop's calls.
 */
static void hinted_loop(const char *wait, const char *options)
{
	char dir[PATH_MAX], opts[PATH_MAX + 64], path[PATH_MAX + 16];
	struct proc p;

	tmp_make(dir);
	snprintf(opts, sizeof(opts), "%s%sstats_file=%s/stats.json", options, *options ? ":" : "",
		 dir);
	run_child_waiting(opts, CYCLES, RUN_ANY, "1000", wait, &p);
	long calls = kv(p.out, "calls", 0);
	cr_assert_eq(calls, atol(CYCLES), "%s", p.out);
	cr_assert_eq(kv(p.out, "other_syscalls", -1), 0, "%s", p.out);
	snprintf(path, sizeof(path), "%s/stats.json", dir);
	char *json = slurp(path, NULL);
	cr_assert_not_null(json, "no %s", path);
	long in = predict_count(json, "in_window"), before = predict_count(json, "before_window");
	long late = predict_count(json, "nap_late"), after = predict_count(json, "after_window");
	long hinted = predict_count(json, "hinted");
	cr_assert(in >= 0 && before >= 0 && late >= 0 && after >= 0, "%s", json);
	cr_assert_leq(in + before + late + after, calls, "%s", json);
	cr_assert_leq(hinted, in + before + late + after, "%s", json);
	cr_assert_gt(hinted, 0, "%s: no burst planned from its word: %s", wait, json);
	fprintf(stderr, "%s: %ld of %ld calls' bursts planned from a wake hint\n", wait, hinted,
		calls);
	free(json);
	tmp_remove(dir);
}

Test(periodic, a_loop_waiting_by_epoll_wait_with_a_timeout_says_when, .timeout = TEST_TIMEOUT)
{
	hinted_loop("epoll", "");
}

/* fd_local=anon: the read of the timerfd runs on the loop's thread, the write is offloaded. */
Test(periodic, a_loop_reading_a_periodic_timerfd_says_when, .timeout = TEST_TIMEOUT)
{
	hinted_loop("timerfd", "fd_local=anon");
}

/*
 * Its condition variable is on CLOCK_MONOTONIC: the word reads the clock
 * glibc keeps.  ThreadSanitizer binds pthread_cond_timedwait by version,
 * past our wrapper (tests/coverage/families_process.c): there the clock
 * variant, which it does not intercept, stands in.
 */
Test(periodic, a_loop_waiting_by_pthread_cond_timedwait_says_when, .timeout = TEST_TIMEOUT)
{
#ifdef __SANITIZE_THREAD__
	hinted_loop("condclock", "");
#else
	hinted_loop("cond", "");
#endif
}

Test(periodic, a_loop_waiting_by_sigtimedwait_with_a_timeout_says_when, .timeout = TEST_TIMEOUT)
{
	hinted_loop("sigtimedwait", "");
}

/* A POSIX timer's signal, waited for with no timeout: its expiry is the word. */
Test(periodic, a_loop_sigwaiting_for_a_posix_timer_says_when, .timeout = TEST_TIMEOUT)
{
	hinted_loop("timer", "");
}

Test(periodic, a_loop_sigwaitinfo_for_a_posix_timer_says_when, .timeout = TEST_TIMEOUT)
{
	hinted_loop("timerinfo", "");
}
#else
Test(periodic, witness_needs_x86_64)
{
	cr_skip_test("the witness filter and its SIGSYS fix-up are x86-64");
}
#endif
