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
 *    trapped system calls slices, as many as the statistics count;
 *  - malloc=pool's pool_full, the calls that waited past stall_us
 *    (noted, judged by the watchdog, taken back by on_stall=local) and
 *    the fallbacks are events, as many as the statistics count;
 *  - a forked child of a traced process writes its own file (trace_file
 *    with %p) or nothing (a raw fork): never into its parent's.
 */
#include "harness.h"
#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <stdio.h>
#include <string.h>

#define CYCLES "300"

/* A sanitizer's allocator wins over malloc=pool (tests/memory): no pool, no pool_full. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define POOL_FULL_MIN "0"
#else
#define POOL_FULL_MIN CYCLES
#endif
/*
 * Under ThreadSanitizer a forked child marks nothing (libsrc/core/fork.c): it
 * exits 10, its file has no track; and trace_child makes no raw fork.
 */
#ifdef __SANITIZE_THREAD__
#define FORK_CHILD_EXIT 10
#else
#define FORK_CHILD_EXIT 0
#endif

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

/* check_trace.py on dir/t.json with more arguments: its status in p. */
static void check_run(const char *dir, const char *const *more, struct proc *p)
{
	char trace[PATH_MAX];
	char *argv[12] = {PYTHON3, CHECK_TRACE};
	int n = 2;

	path_join(trace, dir, "t.json");
	argv[n++] = trace;
	for (; *more && n < 11; more++)
		argv[n++] = (char *)*more;
	argv[n] = NULL;
	cr_assert_eq(run_proc(argv, NULL, p), 0);
}

static void check(const char *dir, const char *const *more)
{
	char buf[64];
	struct proc p;

	check_run(dir, more, &p);
	cr_assert_eq(p.status, 0, "check_trace.py %s:\n%s%s",
		     status_str(p.status, buf, sizeof(buf)), p.out, p.err);
}

/*
 * trace_child's "hog" run with these options, checked with at least one
 * stall: up to three runs.  On a machine where other realtime programs
 * run, the busy thread may not get CPU 0 off the helpers in time and a run
 * has no stall to count (check_trace.py exits 2: the scenario did not
 * happen); the counts must match in every run.  witness: the loop's calls
 * make no system call but futex.
 */
static void hog_scenario(const char *extra, int witness)
{
	char dir[PATH_MAX], stats[PATH_MAX], buf[64];
	struct proc p, c;

	for (int run = 1;; run++) {
		tmp_make(dir);
		run_traced(&p, dir, extra, "hog", witness ? "witness" : NULL);
		cr_assert_eq(p.status, 0, "trace_child %s:\n%s%s",
			     status_str(p.status, buf, sizeof(buf)), p.out, p.err);
		if (witness) {
			cr_assert_eq(kv(p.out, "installed", 0), 1, "the witness filter: %s", p.out);
			cr_assert_eq(kv(p.out, "other_syscalls", -1), 0,
				     "the loop's calls made system calls other than futex (the "
				     "last: %ld): %s",
				     kv(p.out, "other_nr", -1), p.out);
		}
		path_join(stats, dir, "s.json");
		check_run(dir, (const char *const[]){"--stats", stats, "--min-stalls", "1", NULL},
			  &c);
		tmp_remove(dir);
		if (c.status == 0)
			return;
		cr_assert(c.status == 2 << 8 && run < 3, "check_trace.py %s (run %d):\n%s%s",
			  status_str(c.status, buf, sizeof(buf)), run, c.out, c.err);
	}
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

/* malloc=pool: each cycle's allocation past the pool is a pool_full instant. */
Test(trace, pool_full_events_match_the_statistics, .timeout = 120)
{
	char dir[PATH_MAX], stats[PATH_MAX], buf[64];
	struct proc p;

	tmp_make(dir);
	run_traced(&p, dir, ":malloc=pool:pool_kb=64", "pool", NULL);
	cr_assert_eq(p.status, 0, "trace_child %s:\n%s%s", status_str(p.status, buf, sizeof(buf)),
		     p.out, p.err);
	path_join(stats, dir, "s.json");
	check(dir, (const char *const[]){"--stats", stats, "--min-pool", POOL_FULL_MIN, NULL});
	tmp_remove(dir);
}

/* pool_full=fail: the allocation fails, traced, and its path makes no system call. */
Test(trace, pool_full_makes_no_system_call_with_tracing_on, .timeout = 120)
{
	char dir[PATH_MAX], stats[PATH_MAX], buf[64];
	struct proc p;

	tmp_make(dir);
	run_traced(&p, dir, ":malloc=pool:pool_kb=64:pool_full=fail", "witness", "pool");
	cr_assert_eq(p.status, 0, "trace_child %s:\n%s%s", status_str(p.status, buf, sizeof(buf)),
		     p.out, p.err);
	cr_assert_eq(kv(p.out, "installed", 0), 1, "the witness filter: %s", p.out);
	cr_assert_eq(kv(p.out, "other_syscalls", -1), 0,
		     "the loop's calls made system calls other than futex (the last: %ld): %s",
		     kv(p.out, "other_nr", -1), p.out);
	path_join(stats, dir, "s.json");
	check(dir, (const char *const[]){"--stats", stats, "--min-pool", POOL_FULL_MIN, NULL});
	tmp_remove(dir);
}

/*
 * The helpers' CPU held by a SCHED_FIFO 99 thread three times 30 ms
 * (helper_cpus=0, stall_us=2000): the loop's writes then wait past
 * stall_us.  Each is a stall instant on the loop's track, the watchdog's
 * verdicts instants on its own, as many as the statistics count; the
 * loop's calls, stalled and traced, make no system call but futex.
 */
Test(trace, stalls_and_verdicts_match_the_statistics, .timeout = 300)
{
	/* A stall's note wakes the watchdog (FUTEX_WAKE): its event adds no system call. */
	hog_scenario(":helper_cpus=0:stall_us=2000", 1);
}

/* on_stall=local: the calls taken back are stall instants and taken_back slices, fallbacks. */
Test(trace, calls_taken_back_match_the_statistics, .timeout = 300)
{
	hog_scenario(":helper_cpus=0:stall_us=2000:on_stall=local", 0);
}

/* dir/NAME.PID.json */
static void pid_path(char *out, const char *dir, const char *name, long pid)
{
	char file[64];

	snprintf(file, sizeof(file), "%s.%ld.json", name, pid);
	path_join(out, dir, file);
}

/*
 * trace_file=t.%p.json, two children made during the loop: by fork(), it
 * writes t.CHILD.json of its own, whole, its writes as its statistics
 * count them; by a raw fork system call (no atfork handler), nothing.
 * The parent's file is whole and counts what its statistics count.
 */
Test(trace, forked_children_never_write_into_the_parents_file, .timeout = 120)
{
	char dir[PATH_MAX], opts[3 * PATH_MAX], env0[3 * PATH_MAX + 32], buf[64];
	char trace[PATH_MAX], stats[PATH_MAX], raw[PATH_MAX];
	struct proc p, c;

	tmp_make(dir);
	path_join(trace, dir, "t.%p.json");
	path_join(stats, dir, "s.%p.json");
	snprintf(opts, sizeof(opts), "fd_local=none:trace_file=%s:stats_file=%s", trace, stats);
	snprintf(env0, sizeof(env0), "RTOFFLOAD_OPTIONS=%s", opts);
	char *env[] = {env0, NULL};
	char *argv[] = {TRACE_CHILD, CYCLES, "fork", NULL};
	cr_assert_eq(run_proc(argv, env, &p), 0);
	cr_assert_eq(p.status, 0, "trace_child %s:\n%s%s", status_str(p.status, buf, sizeof(buf)),
		     p.out, p.err);
	cr_assert_eq(kv(p.out, "child_status", -1), FORK_CHILD_EXIT << 8, "%s", p.out);
	cr_assert_eq(kv(p.out, "raw_child_status", -1), 0, "%s", p.out);
	long who[2] = {kv(p.out, "pid", -1), kv(p.out, "child", -1)};
	const char *loop[2] = {"control_loop", "forked_loop"};
	for (int i = 0; i < 2; i++) {
		pid_path(trace, dir, "t", who[i]);
		pid_path(stats, dir, "s", who[i]);
		/*
		 * The child's statistics keep its parent's stall counts (stall.c
		 * does not reset them at fork): its stalls are not compared.
		 */
		char *check_argv[] = {
			PYTHON3, CHECK_TRACE, trace,	       "--stats",
			stats,	 "--loop",    (char *)loop[i], i ? "--skip-stalls" : NULL,
			NULL};
		if (i == 1 && FORK_CHILD_EXIT) /* unmarked: whole, and nothing in it */
			check_argv[3] = "--parse-only", check_argv[4] = NULL;
		cr_assert_eq(run_proc(check_argv, NULL, &c), 0);
		cr_assert_eq(c.status, 0, "check_trace.py %s (%s):\n%s%s",
			     status_str(c.status, buf, sizeof(buf)), trace, c.out, c.err);
	}
	long raw_pid = kv(p.out, "raw_child", -1);
	pid_path(raw, dir, "t", raw_pid);
	cr_assert(raw_pid <= 0 || (access(raw, F_OK) != 0 && errno == ENOENT),
		  "a raw fork's child made %s", raw);
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
