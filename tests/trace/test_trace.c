/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * trace_file= (issue 33): a marked periodic loop (trace_child.c) traced
 * to Chrome trace-event JSON, checked by check_trace.py:
 *  - the file parses as written, every slice has its duration, every
 *    flow start its finish, every track its name, and the counts match
 *    the statistics (stats_file): the loop's offloaded writes as slices
 *    on its track and on the helpers', its sleeps as local instants;
 *  - with tracing on, the loop's wrapped calls make no system call but
 *    futex (the seccomp witness on its thread);
 *  - abort() after the loop still leaves a complete file;
 *  - a ring too small drops events, counts them in the file, and the
 *    loop runs all its cycles;
 *  - async writes are instants, the helpers' predicted naps slices,
 *    trapped system calls slices, as many as the statistics count.
 */
#include "harness.h"
#include <criterion/criterion.h>
#include <signal.h>
#include <sys/wait.h>

#include <stdio.h>
#include <string.h>

#define CYCLES "300"

static void run_cycles(struct proc *p, const char *dir, const char *cycles, const char *extra,
		       const char *args2, const char *args3)
{
	char trace[PATH_MAX], stats[PATH_MAX], opts[3 * PATH_MAX], env0[3 * PATH_MAX + 32];

	path_join(trace, dir, "t.json");
	path_join(stats, dir, "s.json");
	cr_assert(snprintf(opts, sizeof(opts), "fd_local=none:trace_file=%s:stats_file=%s%s", trace,
			   stats, extra) < (int)sizeof(opts));
	snprintf(env0, sizeof(env0), "RTOFFLOAD_OPTIONS=%s", opts);
	char *env[] = {env0, NULL};
	char *argv[] = {TRACE_CHILD, (char *)cycles, (char *)args2, (char *)args3, NULL};
	cr_assert_eq(run_proc(argv, env, p), 0);
}

static void run_traced(struct proc *p, const char *dir, const char *extra, const char *args2,
		       const char *args3)
{
	run_cycles(p, dir, CYCLES, extra, args2, args3);
}

static void check(const char *dir, const char *const *more)
{
	char trace[PATH_MAX], buf[64];
	char *argv[12] = {PYTHON3, CHECK_TRACE};
	int n = 2;
	struct proc p;

	path_join(trace, dir, "t.json");
	argv[n++] = trace;
	for (; *more && n < 11; more++)
		argv[n++] = (char *)*more;
	argv[n] = NULL;
	cr_assert_eq(run_proc(argv, NULL, &p), 0);
	cr_assert_eq(p.status, 0, "check_trace.py %s:\n%s%s",
		     status_str(p.status, buf, sizeof(buf)), p.out, p.err);
}

Test(trace, file_parses_and_counts_match_the_statistics, .timeout = 120)
{
	char dir[PATH_MAX], stats[PATH_MAX], buf[64];
	struct proc p;

	tmp_make(dir);
	run_traced(&p, dir, "", NULL, NULL);
	cr_assert_eq(p.status, 0, "trace_child %s:\n%s%s", status_str(p.status, buf, sizeof(buf)),
		     p.out, p.err);
	cr_assert_eq(kv(p.out, "cycles", -1), 300, "%s", p.out);
	path_join(stats, dir, "s.json");
	check(dir, (const char *const[]){"--stats", stats, NULL});
	tmp_remove(dir);
}

Test(trace, caller_path_makes_no_system_call_with_tracing_on, .timeout = 120)
{
	char dir[PATH_MAX], stats[PATH_MAX], buf[64];
	struct proc p;

	tmp_make(dir);
	run_traced(&p, dir, "", "witness", NULL);
	cr_assert_eq(p.status, 0, "trace_child %s:\n%s%s", status_str(p.status, buf, sizeof(buf)),
		     p.out, p.err);
	cr_assert_eq(kv(p.out, "installed", 0), 1, "the witness filter: %s", p.out);
	cr_assert_eq(kv(p.out, "bad_writes", -1), 0, "%s", p.out);
	cr_assert_eq(kv(p.out, "other_syscalls", -1), 0,
		     "the loop's calls made system calls other than futex (the last: %ld): %s",
		     kv(p.out, "other_nr", -1), p.out);
	path_join(stats, dir, "s.json");
	check(dir, (const char *const[]){"--stats", stats, NULL});
	tmp_remove(dir);
}

/* policy=stdio:async: each queued line an instant; the helpers' naps slices. */
Test(trace, async_writes_and_naps_match_the_statistics, .timeout = 120)
{
	char dir[PATH_MAX], stats[PATH_MAX], buf[64];
	struct proc p;

	tmp_make(dir);
	run_traced(&p, dir, ":policy=stdio:async", "async", NULL);
	cr_assert_eq(p.status, 0, "trace_child %s:\n%s%s", status_str(p.status, buf, sizeof(buf)),
		     p.out, p.err);
	path_join(stats, dir, "s.json");
	check(dir, (const char *const[]){"--stats", stats, NULL});
	tmp_remove(dir);
}

/* backstop=on (the default): each trapped system call a slice, as the statistics count. */
Test(trace, traps_match_the_statistics, .timeout = 120)
{
	char dir[PATH_MAX], stats[PATH_MAX], buf[64];
	struct proc p;

	tmp_make(dir);
	run_traced(&p, dir, "", "trap", NULL);
	cr_assert_eq(p.status, 0, "trace_child %s:\n%s%s", status_str(p.status, buf, sizeof(buf)),
		     p.out, p.err);
	path_join(stats, dir, "s.json");
	check(dir, (const char *const[]){"--stats", stats, NULL});
	tmp_remove(dir);
}

Test(trace, abort_leaves_a_complete_file, .timeout = 120)
{
	char dir[PATH_MAX], writes[32], buf[64];
	struct proc p;

	tmp_make(dir);
	run_traced(&p, dir, "", "abort", NULL);
	cr_assert(WIFSIGNALED(p.status) && WTERMSIG(p.status) == SIGABRT,
		  "trace_child should die by SIGABRT, %s:\n%s%s",
		  status_str(p.status, buf, sizeof(buf)), p.out, p.err);
	/* No statistics at abort(): the loop's own count of its writes. */
	snprintf(writes, sizeof(writes), "%ld", kv(p.out, "writes", -1));
	check(dir, (const char *const[]){"--writes", writes, NULL});
	tmp_remove(dir);
}

Test(trace, full_ring_drops_and_counts, .timeout = 120)
{
	char dir[PATH_MAX], writes[32], buf[64];
	struct proc p;

	tmp_make(dir);
	/*
	 * 128 events a thread, and 300 local calls in a row each cycle; 20
	 * cycles, as each call is slow under ThreadSanitizer.
	 */
	run_cycles(&p, dir, "20", ":trace_ring_kb=4", "burst", NULL);
	cr_assert_eq(p.status, 0, "trace_child %s:\n%s%s", status_str(p.status, buf, sizeof(buf)),
		     p.out, p.err);
	cr_assert_eq(kv(p.out, "writes", -1), 20, "%s", p.out);
	snprintf(writes, sizeof(writes), "%ld", kv(p.out, "writes", -1));
	check(dir, (const char *const[]){"--drops", "--writes", writes, NULL});
	tmp_remove(dir);
}

/*
 * trace=lttng where the provider cannot load (RTOFFLOAD_LTTNG_PROVIDER
 * names a missing file, as on a machine without liblttng-ust): one line
 * says so, and the program runs on, untraced.
 */
Test(trace, lttng_unavailable_says_one_line_and_runs, .timeout = 120)
{
	char buf[64];
	struct proc p;
	char *env[] = {"RTOFFLOAD_OPTIONS=trace=lttng:fd_local=none",
		       "RTOFFLOAD_LTTNG_PROVIDER=/nonexistent/librtoffload-lttng.so", NULL};
	char *argv[] = {TRACE_CHILD, "50", NULL};

	cr_assert_eq(run_proc(argv, env, &p), 0);
	cr_assert_eq(p.status, 0, "trace_child %s:\n%s%s", status_str(p.status, buf, sizeof(buf)),
		     p.out, p.err);
	cr_assert_eq(kv(p.out, "writes", -1), 50, "%s", p.out);
	cr_assert_eq(lines_starting(p.err, "rtoffload: "), 1, "one line on stderr: %s", p.err);
	cr_assert_eq(count_of(p.err, "trace=lttng is unavailable"), 1, "%s", p.err);
	cr_assert_eq(count_of(p.err, "\n"), 1, "exactly one line: %s", p.err);
}
