/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A marked thread that holds flockfile(f) and calls fprintf(f): the helper
 * that runs the fprintf needs the stream's lock, which its own caller
 * holds.  The library lends the lock for the call; this checks that there
 * is no deadlock (the test's timeout), that the output is right, that the
 * calls really were offloaded, and that the lock still excludes another
 * thread for the whole flockfile..funlockfile region.
 */
#include "harness.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#define LOCKED_LINES 10

struct locker {
	FILE *f;
	struct flag locked, go;
	int rets[LOCKED_LINES];
	int puts_ret, fflush_ret;
	int still_owner; /* ftrylockfile succeeds for the owner: the lock came back */
};

/* Marked: lines A0..A9 under one flockfile, with a pause in the middle. */
static void locker_job(void *arg)
{
	struct locker *l = arg;

	flockfile(l->f);
	for (int i = 0; i < LOCKED_LINES / 2; i++)
		l->rets[i] = fprintf(l->f, "A%d\n", i);
	flag_set(&l->locked);
	flag_wait(&l->go); /* meanwhile another thread waits for the lock */
	for (int i = LOCKED_LINES / 2; i < LOCKED_LINES; i++)
		l->rets[i] = fprintf(l->f, "A%d\n", i);
	l->puts_ret = fputs("end of A\n", l->f);
	l->fflush_ret = fflush(l->f);
	l->still_owner = ftrylockfile(l->f) == 0; /* recursive: owner only */
	if (l->still_owner)
		funlockfile(l->f);
	funlockfile(l->f);
}

struct other {
	FILE *f;
	pid_t tid;
	struct flag ready;
	int ret;
};

/* Unmarked: one line, which must wait for the whole locked region. */
static void other_job(void *arg)
{
	struct other *o = arg;

	o->tid = tid_self();
	flag_set(&o->ready);
	o->ret = fprintf(o->f, "B\n");
	fflush(o->f);
}

Test(stdio, flockfile_then_fprintf_on_marked_thread, .timeout = TEST_TIMEOUT)
{
	char dir[PATH_MAX], path[PATH_MAX];
	struct locker l = {0};
	struct other o = {0};
	struct bg tl, to;

	tmp_make(dir);
	pathf(path, "%s/out", dir);
	l.f = o.f = fopen(path, "w");
	cr_assert_not_null(l.f);
	start_helpers();
	struct rt_offload_stats a = stats_now();

	bg_start(&tl, locker_job, &l, BG_MARK | BG_PIN);
	cr_assert(flag_wait_timeout(&l.locked), "the first fprintf calls never returned");
	bg_start(&to, other_job, &o, 0);
	cr_assert(flag_wait_timeout(&o.ready));
	/* The other thread is asleep on the stream's lock (a futex). */
	cr_assert(wait_task_in_syscall(o.tid, SYS_futex, -1),
		  "the other thread is not waiting for the lock");
	flag_set(&l.go);
	bg_join(&tl);
	bg_join(&to);
	struct rt_offload_stats b = stats_now();

	for (int i = 0; i < LOCKED_LINES; i++)
		cr_expect_eq(l.rets[i], 3, "fprintf #%d returned %d", i, l.rets[i]);
	cr_expect_geq(l.puts_ret, 0);
	cr_expect_eq(l.fflush_ret, 0);
	cr_expect(l.still_owner, "the caller no longer owned the lock after the offloads");
	cr_expect_eq(o.ret, 2);
	/* 10 fprintf + fputs + fflush, all on a helper. */
	cr_expect_eq(b.offloaded - a.offloaded, LOCKED_LINES + 2, "offloaded %lu",
		     b.offloaded - a.offloaded);
	cr_expect_eq(b.local - a.local, 0, "ran locally: %lu", b.local - a.local);
	fclose(l.f);

	char *s = slurp(path, NULL);
	cr_assert_not_null(s);
	cr_expect_str_eq(s, "A0\nA1\nA2\nA3\nA4\nA5\nA6\nA7\nA8\nA9\nend of A\nB\n",
			 "the locked region was interleaved or lost lines:\n%s", s);
	free(s);
	tmp_remove(dir);
}

/* The same with stdout (the stream printf uses), nested flockfile. */
struct nested {
	FILE *f;
	int r1, r2, r3;
};

static void nested_job(void *arg)
{
	struct nested *n = arg;

	flockfile(n->f);
	flockfile(n->f); /* the lock is recursive: count 2 */
	n->r1 = fprintf(n->f, "x=%d\n", 1);
	funlockfile(n->f);
	n->r2 = fprintf(n->f, "y=%s\n", "two");
	funlockfile(n->f);
	n->r3 = fprintf(n->f, "z\n"); /* not held any more: an ordinary offload */
}

Test(stdio, nested_flockfile, .timeout = TEST_TIMEOUT)
{
	char dir[PATH_MAX], path[PATH_MAX];
	struct nested n;

	tmp_make(dir);
	pathf(path, "%s/out", dir);
	n.f = fopen(path, "w");
	cr_assert_not_null(n.f);
	uint64_t before = offloaded_now();
	run_marked(nested_job, &n);
	cr_expect_eq(offloaded_now() - before, 3);
	cr_expect(n.r1 == 4 && n.r2 == 6 && n.r3 == 2);
	/* The lock is free again: this thread can take it. */
	cr_assert_eq(ftrylockfile(n.f), 0, "the stream's lock was left held");
	funlockfile(n.f);
	fclose(n.f);
	char *s = slurp(path, NULL);
	cr_expect_str_eq(s, "x=1\ny=two\nz\n");
	free(s);
	tmp_remove(dir);
}
