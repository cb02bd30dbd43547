/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * AT_SECURE: in a set-user-ID program run by another user the caller chose
 * the environment, not the program's owner.  The options that name a file
 * (here stats_file=) are dropped, said at verbosity=1, and no live segment
 * is made (it would be a file in the program's name).  A root-owned
 * set-user-ID copy of secure_child run as nobody (setpriv) gets AT_SECURE;
 * the same copy run by root does not, and must then do both: that run
 * shows the test can fail.  Skips without root, or where the copy gets no
 * AT_SECURE (a nosuid /tmp).
 */
#include "harness.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define DROPPED "stats_file= ignored in a set-user-ID or capability program"

static void run(char *const argv[], const char *dir, struct proc *p)
{
	char opts[PATH_MAX + 128];

	snprintf(opts, sizeof(opts),
		 "RTOFFLOAD_OPTIONS=mark=main:fd_local=none:live=1:verbosity=1:stats_file=%s/stats",
		 dir);
	char *env[] = {opts, NULL};
	cr_assert_eq(run_proc(argv, env, p), 0);
	cr_assert(WIFEXITED(p->status) && WEXITSTATUS(p->status) == 0, "status %#x\n%s\n%s",
		  p->status, p->out, p->err);
	cr_assert_eq(kv(p->out, "open", -2), 0, "%s", p->out);
}

Test(secure, file_options_dropped_and_no_live_segment, .timeout = TEST_TIMEOUT)
{
	char dir[PATH_MAX], copy[PATH_MAX], stats[PATH_MAX];
	struct proc p;
	size_t len = 0;

	if (geteuid() != 0)
		cr_skip_test("needs root to make a set-user-ID copy and run it as nobody");
	tmp_make(dir);
	cr_assert_eq(chmod(dir, 0755), 0);
	pathf(copy, "%s/secure_child", dir);
	pathf(stats, "%s/stats", dir);
	char *bytes = slurp(SECURE_CHILD, &len);
	cr_assert_not_null(bytes);
	cr_assert_eq(spit(copy, bytes, len), 0);
	free(bytes);
	cr_assert_eq(chown(copy, 0, 0), 0);
	cr_assert_eq(chmod(copy, 04755), 0);

	char *as_nobody[] = {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", copy,
			     NULL};
	run(as_nobody, dir, &p);
	if (kv(p.out, "secure", -1) != 1) {
		tmp_remove(dir);
		cr_skip_test("the set-user-ID copy got no AT_SECURE here (nosuid mount?): %s",
			     p.out);
	}
	cr_expect_eq(kv(p.out, "seg", -1), 0, "a live segment under AT_SECURE: %s", p.out);
	cr_expect_neq(access(stats, F_OK), 0, "stats_file= was written under AT_SECURE");
	cr_expect_not_null(strstr(p.err, DROPPED), "stderr:\n%s", p.err);

	/* The same copy run by its owner: no AT_SECURE, so both happen. */
	char *as_root[] = {copy, NULL};
	run(as_root, dir, &p);
	cr_expect_eq(kv(p.out, "secure", -1), 0, "%s", p.out);
	cr_expect_eq(kv(p.out, "seg", -1), 1, "no live segment without AT_SECURE: %s", p.out);
	cr_expect_eq(access(stats, F_OK), 0, "no stats file without AT_SECURE");
	cr_expect_null(strstr(p.err, DROPPED), "stderr:\n%s", p.err);
	tmp_remove(dir);
}
