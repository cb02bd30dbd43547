/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unmarked threads are unaffected: their wrapped calls go straight to libc
 * (never counted, never shipped), marks are per thread, and a process that
 * never marks a thread gets no helper thread at all (helpers start lazily,
 * never in the constructor).
 */
#include "harness.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* A little of every class; returns a bit per failed step (0: all fine). */
static int wrapped_calls(const char *dir)
{
	char path[PATH_MAX + 16], c;
	struct stat st;
	struct addrinfo *ai = NULL;
	int bad = 0, step = 0;

#define STEP(ok) (bad |= (ok) ? 0 : 1 << step, step++)
	snprintf(path, sizeof(path), "%s/f", dir);
	int fd = open(path, O_CREAT | O_RDWR | O_TRUNC | O_CLOEXEC, 0644);
	STEP(fd >= 0);
	STEP(write(fd, "abc", 3) == 3);
	STEP(fsync(fd) == 0);
	STEP(pread(fd, &c, 1, 0) == 1);
	STEP(close(fd) == 0);
	STEP(stat(dir, &st) == 0);
	FILE *f = fopen(path, "a");
	STEP(f && fprintf(f, "%d\n", 42) == 3 && fclose(f) == 0);
	DIR *d = opendir(dir);
	STEP(d && readdir(d) && closedir(d) == 0);
	STEP(getaddrinfo("localhost", NULL, NULL, &ai) == 0);
	if (ai)
		freeaddrinfo(ai);
	void *p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	STEP(p != MAP_FAILED && munmap(p, 4096) == 0);
#undef STEP
	return bad;
}

struct job_dir {
	const char *dir;
	int bad;
};

static void calls_job(void *arg)
{
	struct job_dir *j = arg;

	j->bad = wrapped_calls(j->dir);
}

static int same_stats(struct rt_offload_stats a, struct rt_offload_stats b)
{
	return a.offloaded == b.offloaded && a.local == b.local && a.denied == b.denied;
}

Test(unmarked, calls_are_not_counted, .timeout = TEST_TIMEOUT)
{
	char dir[PATH_MAX];
	struct job_dir j;

	tmp_make(dir);
	j.dir = dir;
	start_helpers(); /* helpers exist: unmarked calls must still not use them */
	struct rt_offload_stats a = stats_now();
	run_unmarked(calls_job, &j);
	cr_expect_eq(j.bad, 0, "failed steps %#x", j.bad);
	int bad = wrapped_calls(dir); /* the main thread too */
	cr_expect_eq(bad, 0, "failed steps %#x", bad);
	struct rt_offload_stats b = stats_now();
	cr_expect(same_stats(a, b), "unmarked calls changed the stats: offloaded %lu local %lu",
		  b.offloaded - a.offloaded, b.local - a.local);
	tmp_remove(dir);
}

/* A marked thread (waiting on a flag) does not mark anyone else. */
struct parked {
	struct flag ready, release;
	int marked;
};

static void parked_job(void *arg)
{
	struct parked *p = arg;

	p->marked = rt_offload_thread_is_marked();
	flag_set(&p->ready);
	flag_wait(&p->release);
}

Test(unmarked, marks_are_per_thread, .timeout = TEST_TIMEOUT)
{
	char dir[PATH_MAX];
	struct parked p = {0};
	struct bg b;

	tmp_make(dir);
	bg_start(&b, parked_job, &p, BG_MARK | BG_PIN);
	cr_assert(flag_wait_timeout(&p.ready));
	cr_expect_eq(p.marked, 1);
	cr_expect_eq(rt_offload_thread_is_marked(), 0);
	struct rt_offload_stats s0 = stats_now();
	cr_expect_eq(wrapped_calls(dir), 0);
	cr_expect(same_stats(s0, stats_now()), "the main thread's calls were counted");
	flag_set(&p.release);
	bg_join(&b);
	tmp_remove(dir);
}

Test(unmarked, never_marking_starts_no_thread, .timeout = TEST_TIMEOUT)
{
	char dir[PATH_MAX];
	pid_t helpers[8];

	tmp_make(dir);
	int before = task_count();
	cr_expect_eq(wrapped_calls(dir), 0);
	struct rt_offload_stats s = stats_now();
	cr_expect_eq(task_count(), before, "a wrapped call started a thread");
	cr_expect_eq(helper_tids(helpers, 8), 0);
	cr_expect(s.offloaded == 0 && s.local == 0 && s.denied == 0);
	tmp_remove(dir);
}

/* The same in a plain preloaded process, where nothing else starts threads. */
Test(unmarked, preloaded_process_keeps_one_thread, .timeout = TEST_TIMEOUT)
{
	char preload[2 * PATH_MAX];
	struct proc p;

	pathf(preload, "LD_PRELOAD=%s", rto_preload());
	char *argv[] = {(char *)rto_probe_path(), "threads", NULL};
	char *env[] = {preload, "RTOFFLOAD_OPTIONS=", NULL};
	cr_assert_eq(run_proc(argv, env, &p), 0);
	cr_assert(WIFEXITED(p.status) && WEXITSTATUS(p.status) == 0, "%s", p.err);
	cr_expect_eq(kv(p.out, "before", -1), 1, "%s", p.out);
	cr_expect_eq(kv(p.out, "after", -1), 1, "%s", p.out);
	cr_expect_eq(kv(p.out, "offloaded", -1), 0, "%s", p.out);
}
