/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A strict thread makes no request at all, not even to learn what a
 * descriptor is.  Its descriptors are classified when it becomes strict
 * and marked (off its call path), those born later by unmarked threads
 * where they are born; one it still does not know (opened behind the
 * library's back) is not local: the call is refused and reported.
 *
 * The witness (child_strict.c): the only helper is held, spin_ns=0, and
 * the strict thread's own seccomp filter kills the process on FUTEX_WAIT: a
 * request enqueued by the strict thread would never be served and its
 * wait would kill the process.  The same scenario fails with a library
 * that classifies an unknown descriptor with a helper's fstat.
 */
#include "harness.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "rtoffload.h"

TestSuite(strict, .init = child_setup, .fini = child_teardown, .timeout = 120);

#define BASE "workers=1:spin_ns=0:fd_local=socket,anon,tmpfs,chr"

/* "name=R/E" in out: R and E. */
static void result(const struct run *r, const char *name, long *ret, long *err)
{
	char key[32];
	const char *p;

	snprintf(key, sizeof(key), " %s=", name);
	p = strstr(r->out, key);
	if (!p && !strncmp(r->out, key + 1, strlen(key) - 1))
		p = r->out - 1;
	cr_assert_not_null(p, "no %s in: %s", name, r->out);
	cr_assert_eq(sscanf(p + strlen(key), "%ld/%ld", ret, err), 2);
}

static void expect_ran(const struct run *r, const char *name)
{
	long ret, err;

	result(r, name, &ret, &err);
	cr_expect_eq(ret, 1, "%s: ran locally, wrote 1 byte; got %ld errno %ld", name, ret, err);
}

static void expect_refused(const struct run *r, const char *name)
{
	long ret, err;

	result(r, name, &ret, &err);
	cr_expect(ret == -1 && err == RT_OFFLOAD_STRICT_ERRNO, "%s: refused; got %ld errno %ld",
		  name, ret, err);
}

static void strict_fd(const char *how, const char *opts)
{
	char all[256], head[128];
	struct run r;

	NEED_DISK();
	snprintf(all, sizeof(all), "%s%s", BASE, opts);
	RUN_CHILD(&r, all, "strict_fd", how, child_dir);
	cr_assert(!WIFSIGNALED(r.status) || WTERMSIG(r.status) != SIGSYS,
		  "%s: the strict thread made a futex call (it enqueued a request):\n%s", how,
		  r.err);
	assert_child_exit0(&r);
	expect_ran(&r, "sock");	     /* a socket: its kind known where it was born */
	expect_ran(&r, "null");	     /* /dev/null open before the mark: classified at mark */
	expect_refused(&r, "disk");  /* a disk file: offload, so refused */
	expect_ran(&r, "null2");     /* opened after the mark: classified where born */
	expect_refused(&r, "disk2"); /* same, a disk file */
	expect_refused(&r, "raw");   /* opened behind our back: unknown, so not local */
	expect_refused(&r, "fsync");
	/* nothing asked of a helper for the strict thread, nor for anyone else here */
	cr_expect_eq(json_count(&r, "fd_classify", "offloaded"), 0);
	cr_expect_eq(json_thread(&r, "strict", "offloaded"), 0);
	cr_expect_eq(json_thread(&r, "strict", "local"), 5); /* 3 writes, 2 barrier waits */
	cr_expect_eq(json_thread(&r, "strict", "denied"), 4);
	snprintf(head, sizeof(head),
		 "==%d==rtoffload: strict 'write' from realtime thread 'strict'", r.pid);
	cr_expect_not_null(strstr(r.err, head), "the refusals are reported:\n%s", r.err);
	run_free(&r);
}

Test(strict, strict_before_the_mark_makes_no_request)
{
	strict_fd("api", "");
}

Test(strict, strict_after_the_mark_makes_no_request)
{
	strict_fd("after", "");
}

Test(strict, mode_option_makes_no_request)
{
	strict_fd("option", ":mode=strict");
}
