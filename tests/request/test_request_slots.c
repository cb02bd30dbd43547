/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A marked thread's calls travel by its request slot, a line the polling
 * helper watches (libsrc/slots.c), while it holds one; with every slot
 * held, by the queue.  Either way each thread gets its own results and
 * bytes, and the calls run on a helper.  A thread gives its slot back when
 * it exits: threads that come and go one after the other use one slot.
 * The exit report (stats=1) says how many slots were held at most.
 */
#include "harness.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define CALLS	 200
#define CROWD	 24 /* more threads than slots (16) */
#define SEQUENCE 40

struct job {
	const char *dir;
	int id, bad;
	uint64_t offloaded;
	struct flag *finish; /* NULL: end at once */
	_Atomic int *ready;
};

/* Write CALLS records to a file of its own through the helpers, read them back, check each. */
static void records(void *arg)
{
	struct job *j = arg;
	char path[PATH_MAX], rec[16], got[16];
	uint64_t before = stats_now().offloaded;

	snprintf(path, sizeof(path), "%s/t%d", j->dir, j->id);
	int fd = open(path, O_CREAT | O_RDWR | O_TRUNC | O_CLOEXEC, 0600);
	j->bad = fd < 0;
	for (int i = 0; fd >= 0 && i < CALLS; i++) {
		snprintf(rec, sizeof(rec), "%03d:%05d:....\n", j->id, i);
		j->bad += write(fd, rec, 16) != 16;
	}
	for (int i = 0; fd >= 0 && i < CALLS; i++) {
		snprintf(rec, sizeof(rec), "%03d:%05d:....\n", j->id, i);
		j->bad += pread(fd, got, 16, (off_t)i * 16) != 16 || memcmp(got, rec, 16) != 0;
	}
	if (fd >= 0)
		close(fd);
	j->offloaded = stats_now().offloaded - before;
	if (j->ready)
		atomic_fetch_add(j->ready, 1);
	if (j->finish)
		flag_wait(j->finish); /* hold the slot while the others run */
}

/* offloaded: the process-wide count moved by the thread's calls (alone: by them only). */
static int check(const struct job *j, uint64_t at_least)
{
	if (j->bad || j->offloaded < at_least) {
		say("thread%d_bad=%d", j->id, j->bad);
		say("thread%d_offloaded=%llu", j->id, (unsigned long long)j->offloaded);
		return 1;
	}
	return 0;
}

/* CROWD marked threads at once, each holding on until all are done. */
SCENARIO(slots_crowd)
{
	static struct job jobs[CROWD];
	static struct test_thread th[CROWD];
	static _Atomic int ready;
	static struct flag finish;
	const char *dir = getenv("SC_DIR");
	uint64_t before = offloaded_now();
	int failed = 0;

	for (int i = 0; i < CROWD; i++) {
		jobs[i] = (struct job){.dir = dir, .id = i, .finish = &finish, .ready = &ready};
		if (thread_start(&th[i], records, &jobs[i], TH_MARK, 0) != 0)
			return 100;
	}
	while (atomic_load(&ready) < CROWD)
		usleep(1000);
	flag_set(&finish);
	for (int i = 0; i < CROWD; i++) {
		failed += thread_join(&th[i]) != 0;
		failed += check(&jobs[i], 0);
	}
	uint64_t all = offloaded_now() - before;
	say("offloaded=%llu", (unsigned long long)all);
	return failed + (all < (uint64_t)CROWD * 2 * CALLS);
}

/* SEQUENCE marked threads, one after the other. */
SCENARIO(slots_sequence)
{
	const char *dir = getenv("SC_DIR");
	int failed = 0;

	for (int i = 0; i < SEQUENCE; i++) {
		struct job j = {.dir = dir, .id = i};
		failed += thread_run(records, &j, TH_MARK, 0) != 0;
		failed += check(&j, 2 * CALLS);
	}
	return failed;
}

static void run(const char *name, struct proc *p)
{
	char dir[PATH_MAX], env_dir[PATH_MAX + 8];

	tmp_make(dir);
	snprintf(env_dir, sizeof(env_dir), "SC_DIR=%s", dir);
	char *env[] = {env_dir, "RTOFFLOAD_OPTIONS=stats=1", NULL};
	cr_assert_eq(run_scenario(name, env, p), 0);
	tmp_remove(dir);
	cr_assert(WIFEXITED(p->status) && WEXITSTATUS(p->status) == 0, "status %#x\n%s\n%s",
		  p->status, p->out, p->err);
}

Test(slots, more_marked_threads_than_slots_each_get_their_own_results, .timeout = TEST_TIMEOUT)
{
	struct proc p;

	run("slots_crowd", &p);
	cr_expect_not_null(strstr(p.err, "request slots: 16 of 16 claimed at most"), "%s", p.err);
}

Test(slots, threads_that_come_and_go_use_one_slot, .timeout = TEST_TIMEOUT)
{
	struct proc p;

	run("slots_sequence", &p);
	cr_expect_not_null(strstr(p.err, "request slots: 1 of 16 claimed at most, 0 held at exit"),
			   "%s", p.err);
}
