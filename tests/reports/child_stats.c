/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Scenarios for the exit statistics' per-thread rows.  Run with
 * policy=fsync:strict,fwrite:async (thread_rows, remote_rows).
 *
 *   thread_rows DIR
 *     Three marked threads, one after the other:
 *       rows-a  marks itself, makes 4 local calls (3 writes to /dev/null,
 *               and the nanosleep below: calls.tbl's rtsafe rows), 2
 *               offloaded (mkdir), 4 refused (fsync: strict) and 5 queued
 *               (fwrite: async), sleeps 20 ms and touches 32 fresh pages,
 *               unmarks, exits.  Prints
 *                 rows-a outer_ns=N inner_ns=N outer_minor=N outer_major=N
 *               outer: from before its mark to after its unmark (its own
 *               clock and getrusage), inner: from after the mark to before
 *               the unmark.
 *       rows-b  marked twice, one offloaded call (access) each time, and
 *               one call in between, unmarked: not counted.
 *       rows-live  marked, 2 local calls, then blocks (still marked)
 * until the process exits: its row is read live.
 *
 *   overflow N
 *     N threads one after the other, each marked for one local call
 *     (write to /dev/null) and one offloaded call (access), then exits.
 *
 *   remote_rows
 *     With mark=name:auto*: the main thread renames a waiting thread to
 *     "auto2" (marking it from outside), the thread makes 2 offloaded
 *     calls, the main thread renames it "done" (unmarking it), it exits.
 */
#include "child.h"

#include <fcntl.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void thread_faults(long *minor, long *major)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru) != 0)
		fail("getrusage");
	*minor = ru.ru_minflt;
	*major = ru.ru_majflt;
}

static void mark(void)
{
	if (rt_offload_mark_thread() != 0)
		fail("rt_offload_mark_thread");
}

/* ---- thread_rows --------------------------------------------------------------------- */

struct rows {
	char dir[PATH_MAX];
	int null_fd, sync_fd;
	FILE *log;
	volatile char *pages;
	long outer_ns, inner_ns, outer_minor, outer_major;
	int failed;
	/*
	 * rows-live is up: an atomic, not a barrier, since a barrier wait is
	 * a local call, counted after it returns, while the exit report reads
	 * the counts.
	 */
	atomic_int live;
};

static void rows_a(void *arg)
{
	struct rows *r = arg;
	char path[PATH_MAX];
	long mi0, ma0, mi1, ma1;

	path_join(path, r->dir, "rows.dir");
	thread_faults(&mi0, &ma0);
	uint64_t t0 = mono_ns();
	mark();
	uint64_t t1 = mono_ns();
	for (int i = 0; i < 3; i++)
		r->failed += write(r->null_fd, "x", 1) != 1;
	for (int i = 0; i < 2; i++)
		r->failed += mkdir(path, 0755) != 0 && errno != EEXIST;
	for (int i = 0; i < 4; i++)
		r->failed += fsync(r->sync_fd) != -1; /* refused */
	for (int i = 0; i < 5; i++)
		r->failed += fwrite("line\n", 1, 5, r->log) != 5;
	struct timespec nap = {0, 20 * 1000 * 1000};
	nanosleep(&nap, NULL);
	for (int i = 0; i < 32; i++)
		r->pages[i * PAGE] = 1;
	uint64_t t2 = mono_ns();
	rt_offload_unmark_thread();
	uint64_t t3 = mono_ns();
	thread_faults(&mi1, &ma1);
	r->outer_ns = (long)(t3 - t0);
	r->inner_ns = (long)(t2 - t1);
	r->outer_minor = mi1 - mi0;
	r->outer_major = ma1 - ma0;
}

static void rows_b(void *arg)
{
	struct rows *r = arg;

	for (int round = 0; round < 2; round++) {
		mark();
		r->failed += access(r->dir, F_OK) != 0;
		rt_offload_unmark_thread();
		r->failed += access(r->dir, F_OK) != 0; /* unmarked: not counted */
	}
}

static void rows_live(void *arg)
{
	struct rows *r = arg;

	mark();
	for (int i = 0; i < 2; i++)
		r->failed += write(r->null_fd, "x", 1) != 1;
	atomic_store(&r->live, 1);
	for (;;)
		pause(); /* still marked when the process exits */
}

int sc_thread_rows(int argc, char **argv)
{
	static struct rows r;
	char path[PATH_MAX];

	if (argc < 1)
		fail("usage: thread_rows DIR");
	snprintf(r.dir, sizeof(r.dir), "%s", argv[0]);
	r.null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	path_join(path, r.dir, "rows.sync");
	r.sync_fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	path_join(path, r.dir, "rows.log");
	r.log = fopen(path, "w");
	r.pages = mmap(NULL, 32 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r.null_fd < 0 || r.sync_fd < 0 || !r.log || r.pages == MAP_FAILED ||
	    madvise((void *)r.pages, 32 * PAGE, MADV_NOHUGEPAGE) != 0)
		fail("setup");
	on_thread("rows-a", 0, rows_a, &r);
	on_thread("rows-b", 0, rows_b, &r);
	struct thread live = {.name = "rows-live", .fn = rows_live, .arg = &r};
	thread_start(&live);
	while (!atomic_load(&r.live))
		sched_yield();
	say("rows-a outer_ns=%ld inner_ns=%ld outer_minor=%ld outer_major=%ld failed=%d",
	    r.outer_ns, r.inner_ns, r.outer_minor, r.outer_major, r.failed);
	fclose(r.log);
	return 0; /* rows-live is still marked: exit reads its row live */
}

/* ---- overflow ------------------------------------------------------------------------- */

static int null_fd;
static int overflow_failed;

static void one_of_many(void *arg)
{
	(void)arg;
	mark();
	overflow_failed += write(null_fd, "x", 1) != 1;
	overflow_failed += access("/", F_OK) != 0;
	rt_offload_unmark_thread();
}

int sc_overflow(int argc, char **argv)
{
	char name[16];

	if (argc < 1)
		fail("usage: overflow N");
	null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (null_fd < 0)
		fail("open /dev/null");
	int n = atoi(argv[0]);
	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "many%d", i);
		on_thread(name, 0, one_of_many, NULL);
	}
	say("failed=%d", overflow_failed);
	return 0;
}

/* ---- remote_rows ------------------------------------------------------------------------- */

struct remote {
	pthread_barrier_t b;
	int failed;
};

static void renamed_from_outside(void *arg)
{
	struct remote *r = arg;

	pthread_barrier_wait(&r->b); /* main renames us: marked */
	pthread_barrier_wait(&r->b);
	r->failed += !rt_offload_thread_is_marked();
	for (int i = 0; i < 2; i++)
		r->failed += access("/", F_OK) != 0;
	pthread_barrier_wait(&r->b); /* main renames us again: unmarked */
	pthread_barrier_wait(&r->b);
	r->failed += rt_offload_thread_is_marked();
	r->failed += access("/", F_OK) != 0; /* not counted */
}

int sc_remote_rows(int argc, char **argv)
{
	static struct remote r;

	(void)argc;
	(void)argv;
	pthread_barrier_init(&r.b, NULL, 2);
	struct thread t = {.name = "waiting", .fn = renamed_from_outside, .arg = &r};
	thread_start(&t);
	pthread_barrier_wait(&r.b);
	if (pthread_setname_np(t.handle, "auto2") != 0)
		fail("pthread_setname_np");
	pthread_barrier_wait(&r.b);
	pthread_barrier_wait(&r.b);
	if (pthread_setname_np(t.handle, "done") != 0)
		fail("pthread_setname_np");
	pthread_barrier_wait(&r.b);
	thread_join(&t);
	say("failed=%d", r.failed);
	return 0;
}
