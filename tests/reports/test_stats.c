/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The exit statistics per marked thread (stats=1 and stats_file=): name,
 * time marked, offloaded/local/denied/async counts and the page faults
 * taken while marked, for threads alive at exit and threads that exited;
 * past the table's rows, one "other threads" row.  Counts are exact: the
 * scenarios (child_stats.c) make known numbers of each kind of call.
 * Also the call-site rows in the JSON.
 */
#include "harness.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

TestSuite(stats, .init = child_setup, .fini = child_teardown, .timeout = 120);

static const char *const counts[] = {"offloaded", "local", "denied", "async"};
#define NCOUNTS (sizeof(counts) / sizeof(counts[0]))

static void expect_counts(const struct run *r, const char *thread, const long *want)
{
	for (size_t i = 0; i < NCOUNTS; i++) /* -1: not exact (see the caller) */
		cr_expect(want[i] < 0 || json_thread(r, thread, counts[i]) == want[i],
			  "%s: %s %ld, wanted %ld", thread, counts[i],
			  json_thread(r, thread, counts[i]), want[i]);
}

/* Every counted call belongs to a row: the rows add up to the totals. */
static void expect_rows_sum_to_totals(const struct run *r, const char *const *threads)
{
	for (size_t i = 0; i < NCOUNTS; i++) {
		long sum = json_other(r, counts[i]);
		for (const char *const *t = threads; *t; t++)
			sum += json_thread(r, *t, counts[i]);
		cr_expect_eq(sum, json_count(r, NULL, counts[i]), "%s: rows %ld, totals %ld",
			     counts[i], sum, json_count(r, NULL, counts[i]));
	}
}

#define OPTS "policy=fsync:strict,fwrite:async"

Test(stats, each_marked_thread_has_a_row_with_exact_counts)
{
	struct run r;

	RUN_CHILD(&r, OPTS, "thread_rows", child_dir);
	assert_child_exit0(&r);
	cr_assert_eq(out_long(r.out, "rows-a", "failed", -1), 0, "%s", r.out);
	cr_expect_eq(json_threads(&r), 3, "one row per marked thread: %s", r.json);

	expect_counts(&r, "rows-a", (const long[]){2, 4, 4, 5}); /* local: 3 writes, nanosleep */
	cr_expect_eq(json_thread(&r, "rows-a", "exited"), 1);
	expect_counts(&r, "rows-b", (const long[]){2, 0, 0, 0});
	cr_expect_eq(json_thread(&r, "rows-b", "exited"), 1);
	expect_counts(&r, "rows-live", (const long[]){0, 2, 0, 0});
	cr_expect_eq(json_thread(&r, "rows-live", "exited"), 0, "still running at exit");
	cr_expect_gt(json_thread(&r, "rows-live", "marked_ns"), 0);
	cr_expect_eq(json_other(&r, "threads"), 0);
	expect_rows_sum_to_totals(&r, (const char *const[]){"rows-a", "rows-b", "rows-live", NULL});
	run_free(&r);
}

/*
 * Marked time and faults lie between what the thread measured itself
 * inside its mark (a 20 ms sleep, 32 fresh pages touched) and around it.
 */
Test(stats, marked_time_and_faults_of_a_thread)
{
	struct run r;

	RUN_CHILD(&r, OPTS, "thread_rows", child_dir);
	assert_child_exit0(&r);
	long inner = out_long(r.out, "rows-a", "inner_ns", -1);
	long outer = out_long(r.out, "rows-a", "outer_ns", -1);
	long marked = json_thread(&r, "rows-a", "marked_ns");
	cr_expect_geq(inner, 20 * 1000 * 1000, "the thread slept 20 ms while marked: %s", r.out);
	cr_expect(marked >= inner && marked <= outer, "marked_ns %ld not in [%ld, %ld]", marked,
		  inner, outer);
	long minor = json_thread(&r, "rows-a", "minor_faults");
	long outer_minor = out_long(r.out, "rows-a", "outer_minor", -1);
	cr_expect(minor >= 32 && minor <= outer_minor,
		  "minor_faults %ld: 32 fresh pages touched, %ld in all around the mark", minor,
		  outer_minor);
	cr_expect_leq(json_thread(&r, "rows-a", "major_faults"),
		      out_long(r.out, "rows-a", "outer_major", -1));
	run_free(&r);
}

/* stats=1: the same rows in the table on stderr. */
Test(stats, thread_rows_in_the_table)
{
	char name[32], tid[16], state[32];
	unsigned long us, off, loc, den, asy, mi, ma;
	struct run r;

	RUN_CHILD(&r, OPTS ":stats=1", "thread_rows", child_dir);
	assert_child_exit0(&r);
	cr_assert_not_null(strstr(r.err, "thread "), "no thread table:\n%s", r.err);
	const char *p = strstr(r.err, "\nrows-a ");
	cr_assert_not_null(p, "no row for rows-a:\n%s", r.err);
	int n = sscanf(p + 1, "%31s %15s %lu %lu %lu %lu %lu %lu %lu %31s", name, tid, &us, &off,
		       &loc, &den, &asy, &mi, &ma, state);
	cr_assert_eq(n, 10, "row: %.*s", (int)strcspn(p + 1, "\n"), p + 1);
	cr_expect(off == 2 && loc == 4 && den == 4 && asy == 5, "%.*s", (int)strcspn(p + 1, "\n"),
		  p + 1);
	cr_expect_str_eq(state, "(exited)");
	p = strstr(r.err, "\nrows-live ");
	cr_assert_not_null(p, "%s", r.err);
	char line[256];
	snprintf(line, sizeof(line), "%.*s", (int)strcspn(p + 1, "\n"), p + 1);
	cr_expect_null(strstr(line, "(exited)"), "rows-live did not exit: %s", line);
	run_free(&r);
}

/* mark=name: another thread renames it, so it is marked and unmarked from outside. */
Test(stats, a_thread_marked_from_outside_has_a_row)
{
	struct run r;

	RUN_CHILD(&r, OPTS ":mark=name:auto*", "remote_rows");
	assert_child_exit0(&r);
	cr_assert_eq(out_long(r.out, NULL, "failed", -1), 0, "%s", r.out);
	cr_expect_eq(json_threads(&r), 1, "%s", r.json);
	/* named "done" when it exited */
	/*
	 * local: its pthread_barrier_wait calls (rtsafe rows) made while marked,
	 * 2 or 3 depending on when the rename's marking lands.
	 */
	expect_counts(&r, "done", (const long[]){2, -1, 0, 0});
	cr_expect_eq(json_thread(&r, "done", "exited"), 1);
	cr_expect_gt(json_thread(&r, "done", "marked_ns"), 0);
	expect_rows_sum_to_totals(&r, (const char *const[]){"done", NULL});
	run_free(&r);
}

/* Past the table, one row for the rest; every call still counted exactly once. */
Test(stats, threads_beyond_the_table_share_one_row)
{
	char n[24], head[96];
	struct run r;

	RUN_CHILD(&r, "", "overflow", "1");
	long rows = json_other(&r, "table_rows");
	run_free(&r);
	cr_assert_gt(rows, 0);
	snprintf(n, sizeof(n), "%ld", rows + 4);
	RUN_CHILD(&r, "stats=1", "overflow", n);
	assert_child_exit0(&r);
	cr_assert_eq(out_long(r.out, NULL, "failed", -1), 0, "%s", r.out);
	cr_expect_eq(json_threads(&r), rows);
	cr_expect_eq(json_other(&r, "threads"), 4);
	cr_expect_eq(json_other(&r, "offloaded"), 4);
	cr_expect_eq(json_other(&r, "local"), 4);
	cr_expect_eq(json_other(&r, "marked_now"), 0);
	cr_expect_gt(json_other(&r, "marked_ns"), 0);
	cr_expect_eq(json_count(&r, NULL, "offloaded"), rows + 4);
	cr_expect_eq(json_count(&r, NULL, "local"), rows + 4);
	snprintf(head, sizeof(head), "(4 threads: the table of %ld rows is full", rows);
	cr_expect_not_null(strstr(r.err, head), "the table does not say so:\n%s",
			   strstr(r.err, "other threads") ? strstr(r.err, "other threads") : r.err);
	snprintf(head, sizeof(head), "many%ld", rows - 1);
	expect_counts(&r, head, (const long[]){1, 1, 0, 0});
	run_free(&r);
}

/* ---- call sites --------------------------------------------------------------------------- */

Test(stats, call_sites_in_the_json)
{
	struct run r;

	RUN_CHILD(&r, "policy=fsync:warn,mkdir:strict", "sites", child_dir, "5", "2", "3");
	assert_child_exit0(&r);
	cr_expect_eq(json_site(&r, "save_state_a", "warn", "fsync", "count"), 5, "%s", r.json);
	cr_expect_eq(json_site(&r, "save_state_b", "warn", "fsync", "count"), 2, "%s", r.json);
	cr_expect_eq(json_site(&r, "make_dir", "strict", "mkdir", "count"), 3, "%s", r.json);
	cr_expect_eq(json_site(&r, "make_dir", "strict", "mkdir", "suppressed"), 0);
	run_free(&r);
	RUN_CHILD(&r, "report_offloads=1", "sites", child_dir, "0", "0", "2");
	assert_child_exit0(&r);
	cr_expect_eq(json_site(&r, "make_dir", "offload", "mkdir", "count"), 2, "%s", r.json);
	cr_expect_gt(json_site(&r, "make_dir", "offload", "mkdir", "max_ns"), 0);
	run_free(&r);
}
