/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A periodic marked loop (1 kHz, one offloaded write per cycle) under a
 * seccomp witness of its own system calls (periodic_child.c):
 *  - with the defaults (helper_wake=predict), once the helpers learnt the
 *    period, a long run of calls makes no system call at all: no
 *    FUTEX_WAKE (a helper is polling when the call comes), no FUTEX_WAIT,
 *    and the write itself ran elsewhere; the loop's clock_nanosleep said
 *    when it would wake (wake_hint.h), and the windows were placed there;
 *  - the witness can see the opposite: with helpers that sleep at once
 *    (helper_wake=idle:helper_idle_us=0), nearly every call wakes one.
 * No timing is asserted: the steady state is found by counting calls, and
 * the cycle limit only turns a wrong library into a failure.
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

#define RUN_WANTED "30"	  /* calls in a row without a system call (helpers that sleep: 2-4) */
#define CYCLES_MAX "6000" /* 6 s at 1 kHz at most; a few cycles on a quiet machine */

static void run_child_every(const char *options, const char *cycles, const char *run,
			    const char *period_us, struct proc *p)
{
	char opt[PATH_MAX + 64];
	snprintf(opt, sizeof(opt), "RTOFFLOAD_OPTIONS=fd_local=none%s%s", *options ? ":" : "",
		 options);
	char *const argv[] = {PERIODIC_CHILD, (char *)cycles, (char *)run, (char *)period_us, NULL};
	char *const env[] = {opt, NULL};

	cr_assert_eq(run_proc(argv, env, p), 0, "cannot run %s", argv[0]);
	cr_assert(WIFEXITED(p->status) && WEXITSTATUS(p->status) == 0, "status %#x: %s %s",
		  p->status, p->out, p->err);
	cr_assert_eq(kv(p->out, "installed", 0), 1, "the witness filter: %s", p->out);
	cr_assert_eq(kv(p->out, "marked", 0), 1, "%s", p->out);
	cr_assert_eq(kv(p->out, "bad_writes", -1), 0, "%s", p->out);
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
Test(periodic, steady_state_makes_no_system_call, .timeout = TEST_TIMEOUT)
{
	char dir[PATH_MAX], opts[PATH_MAX + 32], path[PATH_MAX + 16];
	struct proc p;

	tmp_make(dir);
	snprintf(opts, sizeof(opts), "stats_file=%s/stats.json", dir);
	run_child(opts, CYCLES_MAX, RUN_WANTED, &p);
	cr_assert_geq(kv(p.out, "clean_run", 0), atol(RUN_WANTED),
		      "no %s calls in a row without a system call: %s", RUN_WANTED, p.out);
	/* The write never ran on the loop's thread: not once, warm-up included. */
	cr_assert_eq(kv(p.out, "other_syscalls", -1), 0, "%s", p.out);
	/* Served so without burning the CPU: the helper napped between cycles and polled windows.
	 */
	snprintf(path, sizeof(path), "%s/stats.json", dir);
	char *json = slurp(path, NULL);
	cr_assert_not_null(json, "no %s", path);
	cr_assert_gt(predict_count(json, "naps"), 0, "%s", json);
	cr_assert_gt(predict_count(json, "in_window"), 0, "%s", json);
	cr_assert_geq(predict_count(json, "during_nap"), 0, "%s", json);
	/* The loop sleeps with clock_nanosleep: its windows were placed at its own wake. */
	cr_assert_gt(predict_count(json, "hinted"), 0, "%s", json);
	free(json);
	tmp_remove(dir);
}

Test(periodic, witness_sees_a_sleeping_helper_woken, .timeout = TEST_TIMEOUT)
{
	struct proc p;

	run_child("helper_wake=idle:helper_idle_us=0", "200", "1000000", &p);
	long calls = kv(p.out, "calls", 0);
	cr_assert_eq(calls, 200, "%s", p.out);
	cr_assert_geq(kv(p.out, "wake_calls", 0), calls * 9 / 10, "%s", p.out);
	/* So the first test would fail with such helpers. */
	cr_assert_lt(kv(p.out, "clean_run", 0), atol(RUN_WANTED), "%s", p.out);
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
#else
Test(periodic, witness_needs_x86_64)
{
	cr_skip_test("the witness filter and its SIGSYS fix-up are x86-64");
}
#endif
