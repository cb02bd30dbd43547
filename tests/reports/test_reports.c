/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reports: where does realtime code make a warn or strict call?
 *
 *   ==PID==rtoffload: <event> '<function>' from realtime thread '<name>' (tid N)
 *       #0 0x... in save_state_a+0x.. (/path/rto_child+0x..)
 *       ...
 *   SUMMARY: rtoffload: <event> '<function>' in save_state_a
 *
 * rto_child's "sites" scenario calls fsync from save_state_a() NA times and
 * from save_state_b() NB times, and mkdir from make_dir() NC times, all
 * under control_loop() in a marked thread named "ctl" (child_report.c).
 */
#include "harness.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TestSuite(reports, .init = child_setup, .fini = child_teardown, .timeout = 60);

static void sites(struct run *r, const char *opts, const char *na, const char *nb, const char *nc)
{
	RUN_CHILD(r, opts, "sites", child_dir, na, nb, nc);
	assert_child_exit0(r);
}

/* "==PID==rtoffload: EVENT 'FN' from realtime thread 'ctl' (tid N)\n" of this run. */
static void header(char *buf, size_t len, const struct run *r, const char *event, const char *fn)
{
	snprintf(buf, len, "==%d==rtoffload: %s '%s' from realtime thread 'ctl' (tid %ld)\n",
		 r->pid, event, fn, out_long(r->out, NULL, "tid", -1));
}

/* Report headers in text: "==PID==rtoffload: ..." */
static int headers(const char *text)
{
	return count_of(text, "==rtoffload: ");
}

/* ---- the report itself ---------------------------------------------------------------- */

/* The frame lines after the header, up to SUMMARY; frame k must be "#k". */
static const char *check_frames(const char *p, int *nframes, int *names_a, int *names_loop)
{
	*nframes = *names_a = *names_loop = 0;
	while (strncmp(p, "    #", 5) == 0) {
		int k;
		unsigned long ip, off, rel;
		char fn[128], obj[512];
		cr_assert_eq(sscanf(p, "    #%d 0x%lx in %127[^+]+0x%lx (%511[^+]+0x%lx)", &k, &ip,
				    fn, &off, obj, &rel),
			     6, "frame line: %.*s", (int)strcspn(p, "\n"), p);
		cr_expect_eq(k, *nframes, "frames out of order");
		*names_a += *nframes == 0 && strcmp(fn, "save_state_a") == 0 &&
			    strstr(obj, "rto_child") != NULL;
		*names_loop += strcmp(fn, "control_loop") == 0;
		(*nframes)++;
		p += strcspn(p, "\n") + 1;
	}
	return p;
}

static void check_report(const char *event)
{
	char opts[64], head[256], summary[128];
	int nframes, names_a, names_loop;
	struct run r;

	snprintf(opts, sizeof(opts), "policy=fsync:%s", event);
	sites(&r, opts, "1", "0", "0");
	header(head, sizeof(head), &r, event, "fsync");
	const char *p = strstr(r.err, head);
	cr_assert_not_null(p, "no '%s' in:\n%s", head, r.err);
	p = check_frames(p + strlen(head), &nframes, &names_a, &names_loop);
	cr_expect_geq(nframes, 2, "%s", r.err);
	cr_expect_eq(names_a, 1, "frame #0 is not save_state_a in rto_child:\n%s", r.err);
	cr_expect_eq(names_loop, 1, "no frame names control_loop:\n%s", r.err);
	snprintf(summary, sizeof(summary), "SUMMARY: rtoffload: %s 'fsync' in save_state_a\n",
		 event);
	cr_expect_eq(strncmp(p, summary, strlen(summary)), 0, "after the frames: %.*s",
		     (int)strcspn(p, "\n"), p);
	run_free(&r);
}

Test(reports, warn_report_format_and_backtrace)
{
	check_report("warn");
}

Test(reports, strict_report_format_and_backtrace)
{
	check_report("strict");
}

/* ---- dedup, sites, counts ------------------------------------------------------------- */

/* The count of the stats=1 exit row "rtoffload: site WHERE EVENT FN count N[ (suppressed)]". */
static long site_count(const char *err, const char *where, const char *event, const char *fn,
		       int *suppressed)
{
	for (const char *p = err; (p = strstr(p, "rtoffload: site ")); p++) {
		char w[128], e[32], f[128];
		unsigned long n;
		if (sscanf(p, "rtoffload: site %127s %31s %127s count %lu", w, e, f, &n) == 4 &&
		    !strcmp(w, where) && !strcmp(e, event) && !strcmp(f, fn)) {
			if (suppressed)
				*suppressed = strncmp(p + strcspn(p, "\n") - 13, " (suppressed)",
						      13) == 0;
			return (long)n;
		}
	}
	return -1;
}

Test(reports, one_site_reported_once_and_counted)
{
	struct run r;

	sites(&r, "policy=fsync:warn:stats=1", "5", "0", "0");
	cr_expect_eq(out_long(r.out, NULL, "failed", -1), 0, "warn calls must run: %s", r.out);
	cr_expect_eq(headers(r.err), 1, "%s", r.err);
	cr_expect_eq(site_count(r.err, "save_state_a", "warn", "fsync", NULL), 5, "%s", r.err);
	cr_expect_eq(json_count(&r, "fsync", "local"), 5);
	run_free(&r);
}

Test(reports, two_sites_reported_twice)
{
	char head[256];
	struct run r;

	sites(&r, "policy=fsync:warn:stats=1", "2", "3", "0");
	header(head, sizeof(head), &r, "warn", "fsync");
	cr_expect_eq(count_of(r.err, head), 2, "%s", r.err);
	cr_expect_eq(count_of(r.err, "SUMMARY: rtoffload: warn 'fsync' in save_state_a\n"), 1);
	cr_expect_eq(count_of(r.err, "SUMMARY: rtoffload: warn 'fsync' in save_state_b\n"), 1);
	cr_expect_eq(site_count(r.err, "save_state_a", "warn", "fsync", NULL), 2, "%s", r.err);
	cr_expect_eq(site_count(r.err, "save_state_b", "warn", "fsync", NULL), 3, "%s", r.err);
	run_free(&r);
}

Test(reports, strict_sites_counted_at_exit)
{
	struct run r;

	sites(&r, "policy=fsync:strict,mkdir:strict:stats=1", "3", "0", "2");
	cr_expect_eq(out_long(r.out, NULL, "failed", -1), 5, "%s", r.out);
	cr_expect_eq(headers(r.err), 2, "%s", r.err);
	cr_expect_eq(site_count(r.err, "save_state_a", "strict", "fsync", NULL), 3, "%s", r.err);
	cr_expect_eq(site_count(r.err, "make_dir", "strict", "mkdir", NULL), 2, "%s", r.err);
	run_free(&r);
}

/* ---- where reports go, how many ----------------------------------------------------- */

Test(reports, report_path_appends_to_the_file)
{
	char opts[PATH_MAX + 64], path[PATH_MAX];
	struct run r;

	child_path(path, "report.txt");
	snprintf(opts, sizeof(opts), "policy=fsync:warn:report_path=%s", path);
	for (int i = 0; i < 2; i++) {
		sites(&r, opts, "1", "0", "0");
		cr_expect_eq(headers(r.err), 0, "report on stderr too:\n%s", r.err);
		run_free(&r);
	}
	char *text = slurp(path, NULL);
	cr_assert_not_null(text);
	cr_expect_eq(count_of(text, "==rtoffload: warn 'fsync' from realtime thread 'ctl'"), 2,
		     "%s", text);
	cr_expect_eq(count_of(text, "SUMMARY: rtoffload: warn 'fsync' in save_state_a"), 2);
	free(text);
}

Test(reports, report_max_limits_reports_not_counts)
{
	struct run r;

	sites(&r, "policy=fsync:warn,mkdir:warn:report_max=1:stats=1", "1", "1", "1");
	cr_expect_eq(headers(r.err), 1, "%s", r.err);
	cr_expect_eq(count_of(r.err, "SUMMARY: "), 1, "%s", r.err);
	cr_expect_eq(site_count(r.err, "save_state_a", "warn", "fsync", NULL), 1, "%s", r.err);
	cr_expect_eq(site_count(r.err, "save_state_b", "warn", "fsync", NULL), 1, "%s", r.err);
	cr_expect_eq(site_count(r.err, "make_dir", "warn", "mkdir", NULL), 1, "%s", r.err);
	run_free(&r);
	sites(&r, "policy=fsync:warn:report_max=0:stats=1", "2", "0", "0");
	cr_expect_eq(headers(r.err), 0, "%s", r.err);
	cr_expect_eq(site_count(r.err, "save_state_a", "warn", "fsync", NULL), 2, "%s", r.err);
	run_free(&r);
}

/* ---- suppressions ------------------------------------------------------------------------ */

static void suppressed_run(struct run *r, const char *lines)
{
	char opts[PATH_MAX + 128], path[PATH_MAX];

	child_path(path, "supp.txt");
	write_file(path, lines);
	snprintf(opts, sizeof(opts), "policy=fsync:warn,mkdir:warn:stats=1:suppressions=%s", path);
	sites(r, opts, "1", "1", "1");
}

Test(reports, suppress_by_function_glob)
{
	int supp = 0;
	struct run r;

	suppressed_run(&r, "# not the fsync sites\n\nfunction:fsy*\n");
	cr_expect_eq(count_of(r.err, "warn 'fsync' from"), 0, "%s", r.err);
	cr_expect_eq(count_of(r.err, "warn 'mkdir' from"), 1, "%s", r.err);
	cr_expect_eq(site_count(r.err, "save_state_a", "warn", "fsync", &supp), 1, "%s", r.err);
	cr_expect(supp, "the exit row does not say suppressed:\n%s", r.err);
	cr_expect_eq(json_count(&r, "fsync", "local"), 2, "a suppressed warn call still runs");
	run_free(&r);
}

Test(reports, suppress_by_stack_glob)
{
	struct run r;

	suppressed_run(&r, "stack:save_state_a\n");
	cr_expect_eq(count_of(r.err, "SUMMARY: rtoffload: warn 'fsync' in save_state_a"), 0, "%s",
		     r.err);
	cr_expect_eq(count_of(r.err, "SUMMARY: rtoffload: warn 'fsync' in save_state_b"), 1, "%s",
		     r.err);
	cr_expect_eq(count_of(r.err, "SUMMARY: rtoffload: warn 'mkdir' in make_dir"), 1, "%s",
		     r.err);
	run_free(&r);
	/* any frame, not just the first: every site runs under control_loop */
	suppressed_run(&r, "stack:control_*\n");
	cr_expect_eq(headers(r.err), 0, "%s", r.err);
	run_free(&r);
}

Test(reports, bad_suppressions_line)
{
	char opts[PATH_MAX + 64], path[PATH_MAX], where[PATH_MAX + 16];
	struct run r;

	child_path(path, "supp.txt");
	write_file(path, "# ok\nfunction:fsync\nfun:mkdir\n");
	snprintf(opts, sizeof(opts), "policy=fsync:warn:suppressions=%s", path);
	snprintf(where, sizeof(where), "%s:3", path);
	RUN_CHILD_RAW(&r, opts, "sites", child_dir, "1", "0", "0");
	ASSERT_CONFIG_ERROR(&r, "suppressions", where);
	run_free(&r);
	child_path(path, "missing.txt");
	snprintf(opts, sizeof(opts), "suppressions=%s", path);
	RUN_CHILD_RAW(&r, opts, "sites", child_dir, "1", "0", "0");
	ASSERT_CONFIG_ERROR(&r, "suppressions", path);
	run_free(&r);
}

/* ---- report_offloads=1 -------------------------------------------------------------------- */

Test(reports, offload_sites_listed_with_stats)
{
	struct run r;

	sites(&r, "report_offloads=1:stats=1", "0", "0", "3");
	cr_expect_eq(headers(r.err), 0, "offloads are listed, not reported:\n%s", r.err);
	cr_expect_eq(site_count(r.err, "make_dir", "offload", "mkdir", NULL), 3, "%s", r.err);
	const char *row = strstr(r.err, "rtoffload: site make_dir");
	cr_assert_not_null(row);
	cr_expect(strstr(row, " avg_ns ") && strstr(row, " max_ns "), "%.*s",
		  (int)strcspn(row, "\n"), row);
	run_free(&r);
}
