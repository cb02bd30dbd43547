/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Helpers that cannot be started (thread creation fails: here a seccomp
 * filter in opt_child.c makes every clone fail with EAGAIN and counts the
 * attempts).  The process says so in one line, once; offload-mode calls
 * run on their caller and are counted as fallback; strict threads refuse
 * as usual; and no later call tries to create a thread again.
 */
#include "harness.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#define WRITES 50

static int count(const char *s, const char *what)
{
	int n = 0;

	for (const char *p = s; (p = strstr(p, what)); p++)
		n++;
	return n;
}

static void run_child(const char *scenario, const char *dir, struct proc *p)
{
	char *argv[] = {OPT_CHILD, (char *)scenario, (char *)dir, NULL};
	/*
	 * The strict child talks to its supervisor with raw syscall()s, which
	 * must not count: with the backstop (issue 12) a strict thread's raw
	 * write to a pipe it made by raw pipe2 is refused like any unknown
	 * descriptor's, so that scenario runs without it.
	 */
	char *env[] = {strcmp(scenario, "strict") == 0
			       ? "RTOFFLOAD_OPTIONS=mark=main:fd_local=none:stats=1:backstop=off"
			       : "RTOFFLOAD_OPTIONS=mark=main:fd_local=none:stats=1",
		       NULL};

	cr_assert_eq(run_proc(argv, env, p), 0);
	cr_assert(WIFEXITED(p->status) && WEXITSTATUS(p->status) == 0, "status %#x\n%s\n%s",
		  p->status, p->out, p->err);
}

Test(fallback, calls_run_on_the_caller_counted_once_said_once, .timeout = TEST_TIMEOUT)
{
	char dir[PATH_MAX], file[PATH_MAX];
	struct proc p;
	size_t len = 0;

	tmp_make(dir);
	run_child("fallback", dir, &p);
	/* The first offloaded call (the open) tried to start the helpers: once. */
	cr_expect_eq(kv(p.out, "open", -1), 1, "%s", p.out);
	cr_expect_geq(kv(p.out, "clones_first", -1), 1, "%s", p.out);
	cr_expect_eq(kv(p.out, "clones_loop", -1), kv(p.out, "clones_first", -2),
		     "the writes tried to start helpers again: %s", p.out);
	cr_expect_eq(kv(p.out, "clones_after", -1), kv(p.out, "clones_first", -2),
		     "a mark tried to start helpers again: %s", p.out);
	cr_expect_eq(kv(p.out, "mark", 0), -1, "%s", p.out);
	cr_expect_eq(kv(p.out, "mark_errno", 0), EAGAIN, "%s", p.out);
	/* The calls ran, here, and say so. */
	cr_expect_eq(kv(p.out, "failed", -1), 0, "%s", p.out);
	cr_expect_eq(kv(p.out, "fallback", -1), WRITES, "%s", p.out);
	cr_expect_eq(kv(p.out, "offloaded", -1), 0, "%s", p.out);
	cr_expect_eq(kv(p.out, "local", -1), 0, "%s", p.out);
	pathf(file, "%s/f", dir);
	char *bytes = slurp(file, &len);
	cr_expect_eq(len, WRITES, "%zu bytes on disk", len);
	free(bytes);
	/* One line about it, and the exit table has the column and the line. */
	cr_expect_eq(count(p.err, "cannot start helper threads"), 1, "%s", p.err);
	char line[64];
	snprintf(line, sizeof(line), "\nfallback: %d calls ran on their caller", WRITES + 1);
	cr_expect_not_null(strstr(p.err, line), "no '%s' (the open, the writes):\n%s", line + 1,
			   p.err);
	tmp_remove(dir);
}

Test(fallback, strict_threads_refuse_and_start_nothing, .timeout = TEST_TIMEOUT)
{
	char dir[PATH_MAX];
	struct proc p;

	tmp_make(dir);
	run_child("strict", dir, &p);
	cr_expect_eq(kv(p.out, "open", -1), 0, "%s", p.out);
	cr_expect_eq(kv(p.out, "clones_loop", -1), 0, "a strict thread started helpers: %s", p.out);
	cr_expect_eq(kv(p.out, "eperm", -1), WRITES, "%s", p.out);
	cr_expect_eq(kv(p.out, "denied", -1), WRITES, "%s", p.out);
	cr_expect_eq(kv(p.out, "fallback", -1), 0, "%s", p.out);
	cr_expect_null(strstr(p.err, "cannot start helper threads"), "%s", p.err);
	tmp_remove(dir);
}
