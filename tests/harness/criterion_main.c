/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The main of every criterion test program: criterion's own, except for
 * the exit status when a test was skipped.  Criterion exits 0 whether a
 * test passed or called cr_skip_test(), so ctest showed a test that could
 * not run here (no root, no second CPU, not x86-64, ThreadSanitizer) as
 * passed.  Here a run in which nothing failed but something was skipped
 * exits RTO_SKIP_STATUS (77), which the ctest entries take as "Skipped"
 * (SKIP_RETURN_CODE, rto_test() in tests/CMakeLists.txt).  A failure
 * always wins: a run with a failed or crashed test exits 1 as before, so a
 * skip can never hide one.
 *
 * What counts as skipped: a test that ran and skipped itself (its
 * POST_TEST report says so, with the reason, which is printed here since
 * criterion prints it only with --verbose), and a test disabled at build
 * time (.disabled, e.g. not under ThreadSanitizer).  Criterion counts the
 * tests a --filter left out as skipped too; those are the caller's choice,
 * not the machine's, so with a filter only the tests' own skips count.
 *
 * Linked into each program (an INTERFACE source of rto_harness), not
 * taken from the archive: nothing refers to main, and libcriterion's own
 * main would be used instead.
 */
#include <criterion/criterion.h>
#include <criterion/hooks.h>
#include <criterion/options.h>
#include <stdio.h>

#define RTO_SKIP_STATUS 77

/* The report hooks run in the runner, this process, one after another. */
static size_t self_skipped;
static size_t all_skipped;

ReportHook(POST_TEST)(struct criterion_test_stats *st)
{
	if (st->test_status != CR_STATUS_SKIPPED)
		return;
	self_skipped++;
	fprintf(stderr, "[SKIP] %s::%s: %s\n", st->test->category, st->test->name,
		st->message ? st->message : "(no reason given)");
}

ReportHook(POST_ALL)(struct criterion_global_stats *st)
{
	all_skipped = st->tests_skipped;
}

int main(int argc, char *argv[])
{
	struct criterion_test_set *tests = criterion_initialize();
	int status = 0;

	if (criterion_handle_args(argc, argv, true)) {
		int ok = criterion_run_all_tests(tests);
		size_t skipped = criterion_options.pattern ? self_skipped : all_skipped;

		if (!ok)
			status = 1;
		else if (skipped) {
			fprintf(stderr, "[SKIP] %zu test%s skipped, none failed: exit status %d\n",
				skipped, skipped == 1 ? "" : "s", RTO_SKIP_STATUS);
			status = RTO_SKIP_STATUS;
		}
	}
	criterion_finalize(tests);
	return status;
}
