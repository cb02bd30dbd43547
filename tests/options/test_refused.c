/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A configuration this machine cannot honour is refused before main, like
 * a typo: exit status 78 and one line on stderr naming the key.  CPU lists
 * are checked against the online CPUs, helpers may not share the realtime
 * CPUs, and mlock=1 must fit RLIMIT_MEMLOCK unless the process holds
 * CAP_IPC_LOCK.  The program run is the probe, preloaded.
 */
#include "harness.h"

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define EXIT_CONFIG 78

static int count_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* One CPU past the last online one, as a list. */
static int beyond_last_cpu(void)
{
	return (int)sysconf(_SC_NPROCESSORS_CONF);
}

static void run_probe(const char *options, struct proc *p)
{
	char preload[2 * PATH_MAX], opts[1024];
	char *argv[] = {(char *)rto_probe_path(), "api", NULL};

	pathf(preload, "LD_PRELOAD=%s", rto_preload());
	cr_assert_lt(snprintf(opts, sizeof(opts), "RTOFFLOAD_OPTIONS=%s", options),
		     (int)sizeof(opts));
	char *env[] = {preload, opts, NULL};
	cr_assert_eq(run_proc(argv, env, p), 0);
}

static void assert_refused(const struct proc *p, const char *options, const char *key,
			   const char *why)
{
	cr_assert(WIFEXITED(p->status), "'%s': killed, status %#x", options, p->status);
	cr_expect_eq(WEXITSTATUS(p->status), EXIT_CONFIG, "'%s': exit %d; stderr: %s", options,
		     WEXITSTATUS(p->status), p->err);
	cr_expect_eq(p->out[0], '\0', "'%s': main() ran: %s", options, p->out);
	cr_expect_eq(count_lines(p->err), 1, "'%s': not one line: %s", options, p->err);
	cr_expect_not_null(strstr(p->err, key), "'%s': the line does not name '%s': %s", options,
			   key, p->err);
	cr_expect_not_null(strstr(p->err, why), "'%s': the line does not say '%s': %s", options,
			   why, p->err);
}

struct refused {
	const char *fmt; /* %d: the first CPU this machine does not have */
	const char *key, *why;
};

static const struct refused refused[] = {
	{"helper_cpus=%d", "helper_cpus=", "not online"},
	{"rt_cpus=%d", "rt_cpus=", "not online"},
	{"rt_cpus=0:helper_cpus=1,%d", "helper_cpus=", "not online"},
	{"rt_cpus=1:helper_cpus=1", "helper_cpus=1 overlaps rt_cpus=1", "realtime CPUs"},
	{"rt_cpus=0-1:helper_cpus=0", "helper_cpus=0 overlaps rt_cpus=0-1", "realtime CPUs"},
	{"helper_cpus=0-1:rt_cpus=1", "overlaps rt_cpus=1 (CPU 1)", "realtime CPUs"},
};

static int indices[] = {0, 1, 2, 3, 4, 5};

ParameterizedTestParameters(refused, exits_78_with_one_line)
{
	return cr_make_param_array(int, indices, sizeof(refused) / sizeof(refused[0]));
}

ParameterizedTest(int *i, refused, exits_78_with_one_line, .timeout = TEST_TIMEOUT)
{
	const struct refused *r = &refused[*i];
	char options[256];
	struct proc p;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		cr_skip_test("the cases name CPUs 0 and 1: this machine has one CPU online");
	snprintf(options, sizeof(options), r->fmt, beyond_last_cpu());
	run_probe(options, &p);
	assert_refused(&p, options, r->key, r->why);
}

/* The same lists, within the machine and apart, run. */
Test(refused, a_valid_placement_runs, .timeout = TEST_TIMEOUT)
{
	struct proc p;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		cr_skip_test("needs CPUs 0 and 1");
	run_probe("rt_cpus=1:helper_cpus=0", &p);
	cr_expect(WIFEXITED(p.status) && WEXITSTATUS(p.status) == 0, "status %#x: %s", p.status,
		  p.err);
	cr_expect_eq(p.err[0], '\0', "%s", p.err);
}

/*
 * mlock=1 where mlockall() would fail: the address space is beyond a 64
 * KiB RLIMIT_MEMLOCK and CAP_IPC_LOCK is dropped (from the bounding set,
 * so root loses it across the exec too).  Without it the same program
 * runs.
 */
static void run_mlock(int drop_cap, struct proc *p)
{
	char preload[2 * PATH_MAX];

	pathf(preload, "LD_PRELOAD=%s", rto_preload());
	char *plain[] = {"prlimit",
			 "--memlock=65536",
			 "env",
			 preload,
			 "RTOFFLOAD_OPTIONS=mlock=1",
			 (char *)rto_probe_path(),
			 "api",
			 NULL};
	char *dropped[] = {"setpriv",
			   "--inh-caps=-ipc_lock",
			   "--bounding-set=-ipc_lock",
			   "prlimit",
			   "--memlock=65536",
			   "env",
			   preload,
			   "RTOFFLOAD_OPTIONS=mlock=1",
			   (char *)rto_probe_path(),
			   "api",
			   NULL};
	char *env[] = {"LD_PRELOAD", "RTOFFLOAD_OPTIONS", NULL};
	cr_assert_eq(run_proc(drop_cap && geteuid() == 0 ? dropped : plain, env, p), 0);
}

Test(refused, mlock_beyond_the_limit_without_the_capability, .timeout = TEST_TIMEOUT)
{
	struct proc p;

	run_mlock(1, &p);
	assert_refused(&p, "mlock=1 (64 KiB limit, no CAP_IPC_LOCK)", "mlock=1", "RLIMIT_MEMLOCK");
}

/* With the capability (root) the limit does not apply: it runs, locked. */
Test(refused, mlock_with_the_capability_runs, .timeout = TEST_TIMEOUT)
{
	struct proc p;

	if (geteuid() != 0)
		cr_skip_test("needs root for CAP_IPC_LOCK");
	run_mlock(0, &p);
	cr_expect(WIFEXITED(p.status) && WEXITSTATUS(p.status) == 0, "status %#x: %s", p.status,
		  p.err);
}
