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
#include "pol.h"

#include <criterion/criterion.h>

TestSuite(traps, .init = pol_setup, .fini = pol_teardown, .timeout = 60);

#define NPAGES 256

static long child_long(const char *opts, const char *key, const char *const *argv)
{
	struct run r;

	child_run(&r, 1, opts, argv);
	assert_exit0(&r);
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
	cr_expect_eq(child_long("mlock=1", "ran", ARGS("vmlck", pol_dir)), 1,
		     "an offloaded call failed under mlock=1");
	if (!POL_SANITIZED)
		cr_expect_gt(child_long("mlock=1", "vmlck_kb", ARGS("vmlck", pol_dir)), 0);
	cr_expect_eq(child_long("", "vmlck_kb", ARGS("vmlck", pol_dir)), 0);
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
	if (POL_SANITIZED) /* nothing is locked there: see above */
		POL_SKIP("mlock=1 under a sanitizer: its mlockall() interceptor locks nothing");
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
