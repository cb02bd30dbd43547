/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One binary, with and without the library.  The probe is compiled with
 * include/rtoffload.h but not linked to librtoffload: on its own,
 * RT_OFFLOAD_AVAILABLE() is false and rt_offload_try_mark_thread() returns
 * 0 without calling anything; preloaded, the weak references resolve and
 * the same calls mark the thread and offload.
 */
#include "harness.h"

#include <criterion/criterion.h>
#include <sys/wait.h>

static void run_probe(int preload, struct proc *p)
{
	char env_preload[2 * PATH_MAX];
	char *argv[] = {(char *)rto_probe_path(), "api", NULL};
	char *env[] = {"LD_PRELOAD", "RTOFFLOAD_OPTIONS=", NULL}; /* unset LD_PRELOAD */

	if (preload) {
		pathf(env_preload, "LD_PRELOAD=%s", rto_preload());
		env[0] = env_preload;
	}
	cr_assert_eq(run_proc(argv, env, p), 0);
	cr_assert(WIFEXITED(p->status) && WEXITSTATUS(p->status) == 0, "status %#x: %s", p->status,
		  p->err);
}

Test(api, absent_library, .timeout = TEST_TIMEOUT)
{
	struct proc p;

	run_probe(0, &p);
	cr_expect_eq(kv(p.out, "available", -1), 0, "%s", p.out);
	cr_expect_eq(kv(p.out, "try_mark", -1), 0, "%s", p.out);
	cr_expect_eq(kv(p.out, "try_unmark", -1), 0, "%s", p.out);
	cr_expect_eq(kv(p.out, "marked", -1), 0, "%s", p.out);
	cr_expect_eq(kv(p.out, "wrote", -1), 1, "%s", p.out);
	cr_expect_eq(p.err[0], '\0', "%s", p.err);
}

Test(api, preloaded_library, .timeout = TEST_TIMEOUT)
{
	struct proc p;

	run_probe(1, &p);
	cr_expect_eq(kv(p.out, "available", -1), 1, "%s", p.out);
	cr_expect_eq(kv(p.out, "try_mark", -1), 0, "%s", p.out);
	cr_expect_eq(kv(p.out, "try_unmark", -1), 0, "%s", p.out);
	cr_expect_eq(kv(p.out, "marked", -1), 1, "%s", p.out);
	cr_expect_eq(kv(p.out, "wrote", -1), 1, "%s", p.out);
	/* open and close offloaded; the write to /dev/null by its kind (chr). */
	cr_expect_geq(kv(p.out, "offloaded", -1), 2, "%s", p.out);
	cr_expect_eq(kv(p.out, "offloaded", -1) + kv(p.out, "local", -1), 3, "%s", p.out);
}
