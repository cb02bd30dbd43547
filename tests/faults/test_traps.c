/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Traps: page faults are the other way into the kernel.  mlock=1 locks the
 * address space at load (VmLck), prefault_stack_kb=N touches a marked
 * thread's stack at mark time, and the minor faults a thread takes while
 * marked are counted in rt_offload_get_stats (those of unmarked threads
 * are not).  Fault counts are counts, not times: one fresh page touched is
 * one minor fault (the child turns transparent huge pages off).
 *
 * The library counts faults only when stats are asked for (stats=1 or
 * stats_file=: a getrusage per mark otherwise saved); every child here runs
 * with stats_file= (child_run), so the counts are on.
 */
#include "harness.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

TestSuite(traps, .init = child_setup, .fini = child_teardown, .timeout = 60);

#define NPAGES 256

static long child_long(const char *opts, const char *key, const char *const *argv)
{
	struct run r;

	child_run(&r, 1, opts, argv);
	assert_child_exit0(&r);
	long v = out_long(r.out, NULL, key, -1);
	cr_assert_neq(v, -1, "no %s= in: %s", key, r.out);
	run_free(&r);
	return v;
}

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

/*
 * ASan's and TSan's interceptors answer mlockall() themselves (0, nothing
 * locked): under a sanitizer mlock=1 locks nothing, so only what does not
 * depend on the locking is checked there (tests/sanitizers/README.md).
 */
Test(traps, mlock_locks_the_address_space)
{
	cr_expect_eq(child_long("mlock=1", "ran", ARGS("vmlck", child_dir)), 1,
		     "an offloaded call failed under mlock=1");
	if (!RTO_SANITIZED)
		cr_expect_gt(child_long("mlock=1", "vmlck_kb", ARGS("vmlck", child_dir)), 0);
	cr_expect_eq(child_long("", "vmlck_kb", ARGS("vmlck", child_dir)), 0);
}

Test(traps, faults_of_a_marked_thread_are_counted)
{
	long minor = child_long("", "minor", ARGS("faults", "1", "256"));
	cr_expect_geq(minor, NPAGES, "%ld minor faults for %d fresh pages", minor, NPAGES);
}

Test(traps, faults_of_an_unmarked_thread_are_not)
{
	cr_expect_eq(child_long("", "minor", ARGS("faults", "0", "256")), 0);
}

/* Under mlockall(MCL_FUTURE) a new mapping is populated when it is made. */
Test(traps, mlock_leaves_no_faults_to_take)
{
	if (RTO_SANITIZED) /* nothing is locked there: see above */
		CHILD_SKIP("mlock=1 under a sanitizer: its mlockall() interceptor locks nothing");
	long minor = child_long("mlock=1", "minor", ARGS("faults", "1", "256"));
	cr_expect_lt(minor, NPAGES / 4, "%ld minor faults for %d locked pages", minor, NPAGES);
}

/*
 * 256 KiB of stack below the current frame is 64 pages, the first shared
 * with the frames already there: 63 faults or more, unless the mark
 * prefaulted them.
 */
Test(traps, prefault_stack_takes_the_faults_at_mark_time)
{
	long cold = child_long("", "minor", ARGS("stack_faults", "256"));
	long warm = child_long("prefault_stack_kb=1024", "minor", ARGS("stack_faults", "256"));
	cr_expect_geq(cold, 63, "%ld faults for 64 fresh stack pages", cold);
	cr_expect_lt(warm, 64 / 4, "%ld faults on a prefaulted stack", warm);
}

/* ---- faults:warn: faults taken inside a wrapped call, reported by call site ------------- */

#define FAULT_PAGES "16"

/* The header of this run's fault report for fn, from thread ctl. */
static const char *fault_report(const struct run *r, const char *fn)
{
	char head[160];

	snprintf(head, sizeof(head),
		 "==%d==rtoffload: fault '%s' from realtime thread 'ctl' (tid %ld)\n", r->pid, fn,
		 out_long(r->out, NULL, "tid", -1));
	return strstr(r->err, head);
}

/*
 * read() of /dev/zero runs on the thread (a character device); into a
 * fresh mapping, the kernel's copy takes a fault per page, on the thread.
 * Reported once for the site in read_fresh (the second read there finds
 * the pages), never for read_again, frames naming the calling functions.
 *
 * Under TSan the runtime's own memory faults on the thread too, inside a
 * wrapped call, wherever the library's instrumented code records an event
 * or touches shadow: about 34 faults in the first call, and a fresh trace
 * page now and then after it (a later read took some in 8 runs of 80).
 * Under ASan, since the library's layout of 47edfba, read_again takes one
 * minor fault in every run, not one of the 16 pages (perf sees ASan's
 * shadow and a signal frame in that window; not yet pinned down).  The
 * library is right to report those, so under a sanitizer the check is
 * that the 16 pages were faulted by the first call: no later call took as
 * many.  The plain build keeps the exact check.
 */
static void expect_later_reads_found_the_pages(const struct run *r)
{
	long again = json_site(r, "read_again", "fault", "read", "minor_faults");

	if (!RTO_SANITIZED) {
		cr_expect_eq(json_site(r, "read_fresh", "fault", "read", "count"), 1,
			     "only the first read there faulted");
		cr_expect_eq(again, -1, "read_again faulted");
		cr_expect_eq(count_of(r->err, "==rtoffload: fault "), 1, "one report:\n%s", r->err);
		return;
	}
	long fresh = json_site(r, "read_fresh", "fault", "read", "count");
	cr_expect(fresh == 1 || fresh == 2, "%ld faulting calls of 2 at read_fresh", fresh);
	cr_expect_lt(again, 16, "read_again took %ld faults: the pages were not there", again);
}

Test(traps, faults_at_a_wrapped_call_are_reported_by_site)
{
	struct run r;

	RUN_CHILD(&r, "policy=faults:warn:stats=1", "fault_read", FAULT_PAGES);
	assert_child_exit0(&r);
	cr_assert_eq(out_long(r.out, NULL, "failed", -1), 0, "%s", r.out);
	const char *p = fault_report(&r, "read");
	cr_assert_not_null(p, "no fault report for read:\n%s", r.err);
	p = strchr(p, '\n') + 1;
	cr_expect_eq(strncmp(p, "    #0 ", 7), 0, "%s", p);
	cr_expect_not_null(strstr(p, " in read_fresh+"), "frame #0 is not read_fresh:\n%s", p);
	cr_expect_not_null(strstr(p, " in fault_loop+"), "no frame names fault_loop:\n%s", p);
	const char *summary = strstr(p, "SUMMARY: rtoffload: fault 'read' in read_fresh (");
	cr_expect_not_null(summary, "%s", p);

	/* the exit rows: the site, its faulting calls and their faults */
	long minor = json_site(&r, "read_fresh", "fault", "read", "minor_faults");
	cr_expect_geq(minor, 16, "%ld minor faults for 16 fresh pages", minor);
	expect_later_reads_found_the_pages(&r);
	cr_expect_not_null(strstr(r.err, "rtoffload: site read_fresh"), "%s", r.err);
	cr_expect_eq(json_count(&r, "read", "local"), 3, "the reads ran on the thread");
	run_free(&r);
}

Test(traps, faults_are_not_watched_without_faults_warn)
{
	struct run r;

	RUN_CHILD(&r, "", "fault_read", FAULT_PAGES);
	assert_child_exit0(&r);
	cr_expect_eq(count_of(r.err, "==rtoffload: fault "), 0, "%s", r.err);
	cr_expect_eq(json_site(&r, "read_fresh", "fault", "read", "count"), -1);
	run_free(&r);
}

Test(traps, fault_reports_are_suppressed_like_the_others)
{
	char opts[PATH_MAX + 64], path[PATH_MAX];
	struct run r;

	child_path(path, "supp.txt");
	write_file(path, "stack:read_fresh\n");
	snprintf(opts, sizeof(opts), "policy=faults:warn:suppressions=%s", path);
	RUN_CHILD(&r, opts, "fault_read", FAULT_PAGES);
	assert_child_exit0(&r);
	/* The suppressed site's; a later read's own faults (ThreadSanitizer's pages) are not its */
	cr_expect_eq(count_of(r.err, "fault 'read' in read_fresh"), 0, "%s", r.err);
	cr_expect_eq(json_site(&r, "read_fresh", "fault", "read", "suppressed"), 1);
	run_free(&r);
}

Test(traps, faults_take_warn_only)
{
	struct run r;

	RUN_CHILD_RAW(&r, "policy=faults:local", "fault_read", FAULT_PAGES);
	ASSERT_CONFIG_ERROR(&r, "policy=", "faults", "warn");
	run_free(&r);
}
