/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * RTOFFLOAD_OPTIONS, read by the constructor: a typo must never silently
 * turn offloading off, so a bad option stops the program before main with
 * exit status 78 and one line on stderr naming the key.  The programs run
 * here are preloaded (LD_PRELOAD): the probe, and true(1), which knows
 * nothing of the library.
 */
#include "harness.h"

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#define EXIT_CONFIG 78 /* EX_CONFIG */

/* Run argv preloaded, with RTOFFLOAD_OPTIONS=options. */
static void run_with_options(char *const argv[], const char *options, struct proc *p)
{
	char preload[2 * PATH_MAX], opts[1024];

	pathf(preload, "LD_PRELOAD=%s", rto_preload());
	cr_assert_lt(snprintf(opts, sizeof(opts), "RTOFFLOAD_OPTIONS=%s", options),
		     (int)sizeof(opts));
	char *env[] = {preload, opts, NULL};
	cr_assert_eq(run_proc(argv, env, p), 0, "cannot run %s", argv[0]);
}

static int count_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* ---- bad options ------------------------------------------------------- */

struct bad {
	const char *options;
	const char *key; /* the message must name it */
};

static const struct bad bad_options[] = {
	{"bogus=1", "bogus"},		  /* unknown key */
	{"workers=2:wokers=3", "wokers"}, /* a typo after a good one */
	{"workers=abc", "workers"},	  /* not a number */
	{"workers=0", "workers"},	  /* out of range */
	{"workers=65", "workers"},
	{"workers", "workers"},	   /* no '=' */
	{"spin_ns=-1", "spin_ns"}, /* no sign */
	{"spin_ns=1e3", "spin_ns"},
	{"helper_idle_us=", "helper_idle_us"}, /* empty value */
	{"rt_cpus=1-", "rt_cpus"},	       /* bad CPU lists */
	{"rt_cpus=3-1", "rt_cpus"},
	{"helper_cpus=x", "helper_cpus"},
	{"helper_cpus=0,,1", "helper_cpus"},
	{"rt_cpus=99999", "rt_cpus"},
	{"mode=fast", "mode"}, /* bad words */
	{"helper_priority=100", "helper_priority"},
	{"helper_priority=high", "helper_priority"},
	{"stats=2", "stats"},
	{"verbosity=9", "verbosity"},
	{"helper_wake=poll", "helper_wake"}, /* issue 15: predict or idle only */
	{"helper_wake=", "helper_wake"},
	{"live=2", "live"},
};

#define NBAD  (sizeof(bad_options) / sizeof(bad_options[0]))
#define NGOOD (sizeof(good_options) / sizeof(good_options[0]))

/*
 * Parameters are indices: criterion copies a parameter into the test's
 * own (re-executed) process, where a pointer from the runner means nothing.
 */
static int indices[64] = {
	0,  1,	2,  3,	4,  5,	6,  7,	8,  9,	10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
	22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43,
	44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63,
};

ParameterizedTestParameters(options, bad_option_stops_the_program)
{
	return cr_make_param_array(int, indices, NBAD);
}

ParameterizedTest(int *i, options, bad_option_stops_the_program, .timeout = TEST_TIMEOUT)
{
	const struct bad *b = &bad_options[*i];
	char *argv[] = {(char *)rto_probe_path(), "api", NULL};
	struct proc p;

	run_with_options(argv, b->options, &p);
	cr_assert(WIFEXITED(p.status), "'%s': killed, status %#x", b->options, p.status);
	cr_expect_eq(WEXITSTATUS(p.status), EXIT_CONFIG, "'%s': exit %d", b->options,
		     WEXITSTATUS(p.status));
	cr_expect_eq(p.out[0], '\0', "'%s': main() ran: %s", b->options, p.out);
	cr_expect_eq(count_lines(p.err), 1, "'%s': not one line: %s", b->options, p.err);
	cr_expect_eq(p.err[strlen(p.err) - 1], '\n');
	cr_expect_not_null(strstr(p.err, b->key), "'%s': the message does not name '%s': %s",
			   b->options, b->key, p.err);
}

/* Not only programs that know the library: anything preloaded stops. */
Test(options, bad_option_stops_true, .timeout = TEST_TIMEOUT)
{
	char *argv[] = {"true", NULL};
	struct proc p;

	run_with_options(argv, "workers=many", &p);
	cr_assert(WIFEXITED(p.status) && WEXITSTATUS(p.status) == EXIT_CONFIG, "status %#x",
		  p.status);
	cr_expect_eq(count_lines(p.err), 1, "%s", p.err);
	cr_expect_not_null(strstr(p.err, "workers"), "%s", p.err);
	/* And the same program runs when the option is right. */
	run_with_options(argv, "workers=3", &p);
	cr_expect(WIFEXITED(p.status) && WEXITSTATUS(p.status) == 0, "status %#x", p.status);
}

/* ---- good options --------------------------------------------------------- */

static const char *const good_options[] = {
	"",
	"::",
	"workers=1",
	"workers=64",
	"workers=2:spin_ns=0:helper_idle_us=0",
	"spin_ns=10000000000:helper_idle_us=10000000",
	"mode=offload",
	"helper_cpus=0",
	"rt_cpus=1:helper_cpus=0",
	"rt_cpus=0-1",
	"helper_priority=none",
	"helper_priority=inherit",
	"stats=0:verbosity=0",
	"verbosity=2",
	"workers=1:workers=2", /* a repeated key: the last wins */
	"helper_wake=predict",
	"helper_wake=idle:helper_idle_us=0",
	"live=0",
	"live=1",
};

_Static_assert(NBAD <= 64 && NGOOD <= 64, "more options than indices");

ParameterizedTestParameters(options, good_options_run)
{
	return cr_make_param_array(int, indices, NGOOD);
}

/* The program runs, and the library works under these options. */
ParameterizedTest(int *i, options, good_options_run, .timeout = TEST_TIMEOUT)
{
	const char *const *opt = &good_options[*i];
	char *argv[] = {(char *)rto_probe_path(), "api", NULL};
	struct proc p;

	run_with_options(argv, *opt, &p);
	cr_assert(WIFEXITED(p.status) && WEXITSTATUS(p.status) == 0, "'%s': status %#x: %s", *opt,
		  p.status, p.err);
	cr_expect_eq(kv(p.out, "available", 0), 1, "'%s': %s", *opt, p.out);
	cr_expect_eq(kv(p.out, "marked", 0), 1, "'%s': %s", *opt, p.out);
	cr_expect_eq(kv(p.out, "wrote", 0), 1, "'%s': %s", *opt, p.out);
	cr_expect_geq(kv(p.out, "offloaded", 0), 2, "'%s': %s", *opt, p.out);
	cr_expect_eq(kv(p.out, "offloaded", 0) + kv(p.out, "local", 0), 3, "'%s': %s", *opt, p.out);
}

/* stats_file: %p is the pid; the JSON has the totals and the calls. */
Test(options, stats_file_json, .timeout = TEST_TIMEOUT)
{
	char dir[PATH_MAX], opts[PATH_MAX + 64], path[PATH_MAX];
	char *argv[] = {(char *)rto_probe_path(), "api", NULL};
	struct proc p;
	struct dirent *e;
	int found = 0;

	tmp_make(dir);
	pathf(opts, "stats_file=%s/s.%%p.json", dir);
	run_with_options(argv, opts, &p);
	cr_assert(WIFEXITED(p.status) && WEXITSTATUS(p.status) == 0, "%s", p.err);
	DIR *d = opendir(dir);
	cr_assert_not_null(d);
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, "s.", 2) != 0)
			continue;
		found++;
		pathf(path, "%s/%s", dir, e->d_name);
		char *json = slurp(path, NULL);
		cr_assert_not_null(json);
		cr_expect_eq(atoi(e->d_name + 2) > 1, 1, "no pid in %s", e->d_name);
		cr_expect_not_null(strstr(json, "\"totals\":{\"offloaded\":"), "%s", json);
		cr_expect_not_null(strstr(json, "\"name\":\"open\""), "%s", json);
		free(json);
	}
	closedir(d);
	cr_expect_eq(found, 1, "stats files: %d", found);
	tmp_remove(dir);
}
