/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Stalls (issue 29): a call no helper takes within stall_us, or that runs
 * on one longer than that, is said on stderr once and counted; with
 * on_stall=local a call no helper took is run by its caller; when every
 * worker is stuck inside a call, another starts.  Event order and lines,
 * no timing:
 *
 *  - blocked_workers: two marked threads each open a FIFO nobody writes
 *    (both offloaded: the two default workers block in openat), then a
 *    third marked thread writes to a disk file.  Its write returns while
 *    the two opens still block (a third worker started), and the stall
 *    line names the blocked calls;
 *  - hog: a SCHED_FIFO 99 busy thread of the test holds the helpers' CPU
 *    (helper_cpus=HK_CPU).  A marked caller's write stalls; one stall line
 *    names the busy thread, its policy and priority; the write returns
 *    only after the test released the busy thread (on_stall=wait);
 *  - hog with on_stall=local: the write returns while the busy thread still
 *    runs, counted as fallback, not offloaded;
 *  - a strict thread under the hog with on_stall=local: nothing runs on the
 *    caller (its call is refused as ever, no fallback).
 *
 *  - waits for input, with the defaults (stall_us=10000): a realtime
 *    thread's open of a FIFO nobody writes waits on a helper exactly as
 *    it would on the thread; counted as such (input_waits), and not said
 *    on stderr (issue 28: what the program sees does not change);
 *  - a read of a pipe that waited for input, then was starved on the
 *    helpers' CPU by the busy thread once its input came: said then;
 *  - a fork child after a stall under the busy thread counts none of its
 *    parent's.
 *
 * Each needs other options than the others, so they run as scenarios.
 * Only on_stall=local sets stall_us; the others run with its default.
 */
#include "harness.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rtoffload.h"

#define CALLER_PRIO 50
#define HOG_PRIO    99

/* ---- two workers blocked in FIFO opens, a third call ------------------------------------- */

struct opener {
	const char *path;
	_Atomic int fd;
};

static void open_fifo_job(void *arg)
{
	struct opener *o = arg;

	/* No writer yet: blocks, on a helper.  Atomic: the main thread looks at it meanwhile. */
	atomic_store(&o->fd, open(o->path, O_RDONLY | O_CLOEXEC));
}

/* dir/fifo made, and o set to open it: 0, or -1. */
static int fifo_opener(const char *dir, char *fifo, struct opener *o)
{
	snprintf(fifo, PATH_MAX, "%s/fifo", dir);
	o->path = fifo;
	atomic_init(&o->fd, -1);
	return mkfifo(fifo, 0600);
}

/* The writer the open on t waits for comes; says whether it opened, and the counts. */
static void fifo_writer_comes(struct opener *o, struct test_thread *t)
{
	int wr = open(o->path, O_RDWR | O_CLOEXEC);

	thread_join(t);
	say("opened=%d", atomic_load(&o->fd) >= 0);
	close(wr);
	close(atomic_load(&o->fd));
	struct rt_offload_stats s = stats_now();
	say("input_waits=%lu\nstalled=%lu", (unsigned long)s.input_waits, (unsigned long)s.stalled);
}

struct writer {
	int fd;
	ssize_t n;
	struct flag done;
};

static void write_job(void *arg)
{
	struct writer *w = arg;

	w->n = write(w->fd, "x", 1);
	flag_set(&w->done);
}

/* Both workers blocked in openat (/proc: their syscall files). */
static int two_helpers_in_openat(void)
{
	for (int tries = 0; tries < (int)(WAIT_S * 1000); tries++) {
		pid_t h[64];
		int n = helper_tids(h, 64), in = 0;
		for (int i = 0; i < n; i++) {
			long nr = -1, a0, a1;
			in += task_syscall(h[i], &nr, &a0, &a1) == 0 && nr == SYS_openat;
		}
		if (in >= 2)
			return 1;
		struct timespec ms = {0, 1000000};
		nanosleep(&ms, NULL);
	}
	return 0;
}

/*
 * The library's stall watchdog has said all it saw: its thread
 * (rtoffload-stall) asleep in futex, and no scan thread (rtoffload-scan)
 * of its.  1, or 0 after WAIT_S.  Used once the stalled call returned:
 * the watchdog saw its note before that (it started the worker that
 * served it), so its line is written then.
 */
static int watchdog_done(void)
{
	for (int tries = 0; tries < (int)(WAIT_S * 1000); tries++) {
		DIR *d = opendir("/proc/self/task");
		struct dirent *e;
		int watchdogs = 0, asleep = 0;
		while (d && (e = readdir(d))) {
			char path[PATH_MAX], comm[32] = "";
			snprintf(path, sizeof(path), "/proc/self/task/%.32s/comm", e->d_name);
			FILE *f = fopen(path, "r");
			if (!f)
				continue;
			(void)!fgets(comm, sizeof(comm), f);
			fclose(f);
			if (strncmp(comm, "rtoffload-stall", 15) &&
			    strncmp(comm, "rtoffload-scan", 14))
				continue;
			watchdogs++;
			pid_t tid = (pid_t)atoi(e->d_name);
			char state;
			int policy, prio;
			long nr = -1, a0, a1;
			asleep = task_sched(tid, &state, &policy, &prio) == 0 && state == 'S' &&
				 task_syscall(tid, &nr, &a0, &a1) == 0 && nr == SYS_futex &&
				 !strncmp(comm, "rtoffload-stall", 15);
		}
		if (d)
			closedir(d);
		if (watchdogs == 1 && asleep)
			return 1;
		struct timespec ms = {0, 1000000};
		nanosleep(&ms, NULL);
	}
	return 0;
}

SCENARIO(blocked_workers)
{
	const char *dir = getenv("SC_DIR");
	char fifo[2][PATH_MAX], file[PATH_MAX];
	struct opener o[2];
	struct test_thread t[3];
	struct writer w = {.fd = -1};

	if (!dir)
		return 100;
	for (int i = 0; i < 2; i++) {
		snprintf(fifo[i], sizeof(fifo[i]), "%s/fifo%d", dir, i);
		if (mkfifo(fifo[i], 0600) != 0)
			return 101;
		o[i].path = fifo[i];
		atomic_init(&o[i].fd, -1);
	}
	snprintf(file, sizeof(file), "%s/file", dir);
	w.fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600); /* unmarked: here */
	if (w.fd < 0)
		return 102;
	start_helpers();
	for (int i = 0; i < 2; i++)
		if (thread_start(&t[i], open_fifo_job, &o[i], TH_MARK, 0) != 0)
			return 103;
	if (!two_helpers_in_openat())
		return 104;
	/* Realtime: a late call of a SCHED_OTHER thread is counted, not said (stall.c). */
	if (thread_start(&t[2], write_job, &w, TH_MARK, CALLER_PRIO) != 0)
		return 105;
	int returned = flag_wait_s(&w.done, 10.0);
	/* Were the two opens still blocked when the write returned?  Nobody opened for writing. */
	say("write_returned=%d\nwrite_n=%ld", returned, (long)w.n);
	say("opens_blocked_at_return=%d",
	    atomic_load(&o[0].fd) == -1 && atomic_load(&o[1].fd) == -1);
	say("watchdog_done=%d", returned && watchdog_done());
	/* Now let the opens through: a writer end for each FIFO. */
	int wr[2];
	for (int i = 0; i < 2; i++)
		wr[i] = open(fifo[i], O_RDWR | O_CLOEXEC); /* never blocks, and is a writer */
	for (int i = 0; i < 3; i++)
		thread_join(&t[i]);
	for (int i = 0; i < 2; i++) {
		close(wr[i]);
		close(atomic_load(&o[i].fd));
	}
	close(w.fd);
	struct rt_offload_stats s = stats_now();
	say("stalled=%lu\ninput_waits=%lu", (unsigned long)s.stalled, (unsigned long)s.input_waits);
	return 0;
}

/* Lines of text holding needle. */
static int lines_with(const char *text, const char *needle)
{
	int n = 0;

	for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static void run_sc(const char *name, const char *opts, const char *dir, struct proc *p)
{
	char o[512], d[PATH_MAX + 16], st[64];

	snprintf(o, sizeof(o), "RTOFFLOAD_OPTIONS=%s", opts);
	snprintf(d, sizeof(d), "SC_DIR=%s", dir);
	char *env[] = {o, d, NULL};
	cr_assert_eq(run_scenario(name, env, p), 0);
	cr_assert(WIFEXITED(p->status) && WEXITSTATUS(p->status) == 0,
		  "scenario %s: %s\nstdout:\n%s\nstderr:\n%s", name,
		  status_str(p->status, st, sizeof(st)), p->out, p->err);
}

Test(stall, a_call_behind_two_workers_blocked_in_fifo_opens_returns, .timeout = TEST_TIMEOUT)
{
	static struct proc p;
	char dir[PATH_MAX];

	/* A disk file (not tmpfs, whose writes run on the caller): under /var/tmp. */
	strcpy(dir, "/var/tmp/rtoffload-stall.XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	run_sc("blocked_workers", "workers=2", dir, &p); /* stall_us: its default */
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	(void)!system(cmd);
	cr_expect_eq(kv(p.out, "write_returned", -1), 1,
		     "the write never returned behind two blocked workers\n%s", p.err);
	cr_expect_eq(kv(p.out, "write_n", -1), 1);
	cr_expect_eq(kv(p.out, "opens_blocked_at_return", -1), 1,
		     "the write returned only once the opens were let through");
	cr_expect_geq(kv(p.out, "stalled", -1), 1, "the stall is not counted");
	cr_expect_eq(kv(p.out, "watchdog_done", -1), 1, "the watchdog did not finish");
	/*
	 * The opens wait for a writer, as they would on their threads: counted,
	 * not said.  The third thread's waiting call (the write, or the
	 * descriptor's class the library asks a helper for first; on a loaded
	 * machine both may stall) is said, and its line names the two opens.
	 */
	cr_expect_eq(lines_with(p.err, "stall: 'open' of"), 0, "stderr:\n%s", p.err);
	cr_expect_geq(kv(p.out, "input_waits", -1), 2, "the opens are not counted as waits\n%s",
		      p.err);
	int named = 0;
	for (const char *at = p.err; (at = strstr(at, "not taken by any helper")); at++) {
		const char *start = at, *end = at + strcspn(at, "\n");
		while (start > p.err && start[-1] != '\n')
			start--;
		char line[2048];
		snprintf(line, sizeof(line), "%.*s", (int)(end - start), start);
		named += lines_with(line, "in 'open") == 2;
	}
	cr_expect_geq(named, 1, "no waiting call's line names the two blocked opens:\n%s", p.err);
}

/* ---- a busy loop on the helpers' CPU ------------------------------------------------------- */

static _Atomic int released;
static struct flag hog_running;

static void hog_job(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "stallhog");
	flag_set(&hog_running);
	while (!atomic_load(&released))
		;
}

struct caller {
	int fd;
	int strict;
	ssize_t n;
	int err;
	int released_at_return;
	struct flag done;
};

static void caller_job(void *arg)
{
	struct caller *c = arg;

	if (c->strict)
		rt_offload_set_thread_mode(RT_OFFLOAD_MODE_STRICT);
	errno = 0;
	c->n = write(c->fd, "x", 1); /* fd_local=none: a helper's, if allowed at all */
	c->err = errno;
	c->released_at_return = atomic_load(&released);
	flag_set(&c->done);
}

/* The report file holds a stall line (the watchdog wrote it): 1, or 0 after 5 s. */
static int report_has_stall(const char *path)
{
	for (int tries = 0; tries < 5000; tries++) {
		char *text = slurp(path, NULL);
		int has = text && strstr(text, "rtoffload: stall") && strchr(text, '\n');
		free(text);
		if (has)
			return 1;
		struct timespec ms = {0, 1000000};
		nanosleep(&ms, NULL);
	}
	return 0;
}

/*
 * SC_MODE: wait (release once the stall line is written), local (release
 * once the call returned, or after WAIT_S), strict (as local, strict caller).
 */
SCENARIO(hog)
{
	const char *mode = getenv("SC_MODE"), *dir = getenv("SC_DIR");
	struct caller c = {.fd = -1, .strict = mode && !strcmp(mode, "strict")};
	struct test_thread hog, caller;
	char report[PATH_MAX];

	if (!mode || !dir || pin_cpu(RT_CPU) != 0)
		return 100;
	snprintf(report, sizeof(report), "%s/report", dir);
	c.fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	start_helpers();
	if (thread_start(&hog, hog_job, NULL, TH_PIN_HK, HOG_PRIO) != 0)
		return 101;
	flag_wait(&hog_running);
	if (thread_start(&caller, caller_job, &c, TH_MARK | TH_PIN_RT, CALLER_PRIO) != 0)
		return 102;
	if (!strcmp(mode, "wait")) {
		say("stall_said=%d", report_has_stall(report));
		say("returned_before_release=%d", flag_is_set(&c.done));
	} else {
		say("returned_under_hog=%d", flag_wait_s(&c.done, 5.0));
	}
	atomic_store(&released, 1);
	thread_join(&caller);
	thread_join(&hog);
	struct rt_offload_stats s = stats_now();
	say("n=%ld\nerr=%d\nreleased_at_return=%d", (long)c.n, c.err, c.released_at_return);
	say("fallback=%lu\nstalled=%lu\ndenied=%lu", (unsigned long)s.fallback,
	    (unsigned long)s.stalled, (unsigned long)s.denied);
	return 0;
}

static void run_hog(const char *mode, const char *opts, struct proc *p, char **report)
{
	char dir[PATH_MAX], all[PATH_MAX + 256], m[64], path[PATH_MAX + 16];

	tmp_make(dir);
	snprintf(path, sizeof(path), "%s/report", dir);
	snprintf(all, sizeof(all), "helper_cpus=%d:fd_local=none:report_path=%s%s%s", HK_CPU, path,
		 *opts ? ":" : "", opts);
	snprintf(m, sizeof(m), "SC_MODE=%s", mode);
	char o[PATH_MAX + 300], d[PATH_MAX + 16];
	snprintf(o, sizeof(o), "RTOFFLOAD_OPTIONS=%s", all);
	snprintf(d, sizeof(d), "SC_DIR=%s", dir);
	char *env[] = {o, d, m, NULL};
	char st[64];
	cr_assert_eq(run_scenario("hog", env, p), 0);
	cr_assert(WIFEXITED(p->status) && WEXITSTATUS(p->status) == 0,
		  "scenario hog %s: %s\nstdout:\n%s\nstderr:\n%s", mode,
		  status_str(p->status, st, sizeof(st)), p->out, p->err);
	*report = slurp(path, NULL);
	if (!*report)
		*report = strdup("");
}

/* CPU cpu's steal ticks since boot (/proc/stat), or -1. */
static long long steal_ticks(int cpu)
{
	char *text = slurp("/proc/stat", NULL), name[16];
	long long v[8], t = -1;

	snprintf(name, sizeof(name), "\ncpu%d ", cpu);
	char *l = text ? strstr(text, name) : NULL;
	if (l && sscanf(l + strlen(name), "%lld %lld %lld %lld %lld %lld %lld %lld", &v[0], &v[1],
			&v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) == 8)
		t = v[7];
	free(text);
	return t;
}

Test(stall, a_busy_loop_on_the_helpers_cpu_is_named_once, .timeout = TEST_TIMEOUT)
{
	static struct proc p;
	char *report;
	long long hk_steal = steal_ticks(HK_CPU), rt_steal = steal_ticks(RT_CPU);

	run_hog("wait", "", &p, &report); /* on_stall=wait and stall_us=10000, the defaults */
	cr_expect_eq(kv(p.out, "stall_said", -1), 1, "no stall line while the hog ran\n%s", report);
	cr_expect_eq(kv(p.out, "returned_before_release", -1), 0);
	cr_expect_eq(kv(p.out, "released_at_return", -1), 1, "on_stall=wait ran it elsewhere");
	cr_expect_eq(kv(p.out, "n", -1), 1);
	cr_expect_eq(lines_with(report, "rtoffload: stall"), 1, "report:\n%s", report);
	cr_expect(strstr(report, "'write'"), "the line does not name the call:\n%s", report);
	cr_expect(strstr(report, "(stall_us=10000)"), "not the default stall_us:\n%s", report);
	cr_expect(strstr(report, "'stallhog'") && strstr(report, "SCHED_FIFO 99"),
		  "the line does not name the busy loop:\n%s", report);
	/*
	 * The host's share: inside a virtual machine whose host has taken the
	 * helpers' CPU (steal since boot), the line says how much it took
	 * since the helpers started and since boot; on bare metal it says
	 * nothing of it.  (The caller's CPU is pinned: RT_CPU.)
	 */
	char took[64];
	snprintf(took, sizeof(took), "the hypervisor took CPU %d for", HK_CPU);
	if (hk_steal > 0)
		cr_expect(strstr(report, took) && strstr(report, "(steal; since boot:"),
			  "CPU %d has %lld ticks of steal; the line does not say:\n%s", HK_CPU,
			  hk_steal, report);
	else if (hk_steal == 0 && rt_steal == 0)
		cr_expect(!strstr(report, "the hypervisor took"),
			  "no steal on CPUs %d and %d, yet the line says some:\n%s", HK_CPU, RT_CPU,
			  report);
	cr_expect_geq(kv(p.out, "stalled", -1), 1);
	cr_expect_eq(kv(p.out, "fallback", -1), 0);
	free(report);
}

Test(stall, on_stall_local_runs_the_call_on_its_caller_under_the_hog, .timeout = TEST_TIMEOUT)
{
	static struct proc p;
	char *report;

	run_hog("local", "on_stall=local:stall_us=2000", &p, &report);
	cr_expect_eq(kv(p.out, "returned_under_hog", -1), 1, "the call waited for the hog\n%s",
		     report);
	cr_expect_eq(kv(p.out, "released_at_return", -1), 0);
	cr_expect_eq(kv(p.out, "n", -1), 1);
	cr_expect_eq(kv(p.out, "fallback", -1), 1, "not counted as fallback");
	cr_expect_geq(kv(p.out, "stalled", -1), 1);
	free(report);
}

Test(stall, a_strict_thread_never_runs_a_call_itself_under_on_stall_local, .timeout = TEST_TIMEOUT)
{
	static struct proc p;
	char *report;

	run_hog("strict", "on_stall=local:stall_us=2000", &p, &report);
	cr_expect_eq(kv(p.out, "n", -1), -1, "a strict thread's write ran");
	cr_expect_eq(kv(p.out, "err", -1), RT_OFFLOAD_STRICT_ERRNO);
	cr_expect_eq(kv(p.out, "fallback", -1), 0, "a strict thread's call ran on it");
	cr_expect_eq(kv(p.out, "denied", -1), 1);
	free(report);
}

/* ---- waits for input, with the defaults ------------------------------------------------------ */

struct pipe_reader {
	int fd;
	ssize_t n;
	struct flag done;
};

static void read_job(void *arg)
{
	struct pipe_reader *r = arg;
	char c;

	r->n = read(r->fd, &c, 1);
	flag_set(&r->done);
}

/* rt_offload_get_stats() counts a wait for input: 1, or 0 after WAIT_S. */
static int input_wait_counted(void)
{
	for (int tries = 0; tries < (int)(WAIT_S * 1000); tries++) {
		if (stats_now().input_waits >= 1)
			return 1;
		struct timespec ms = {0, 1000000};
		nanosleep(&ms, NULL);
	}
	return 0;
}

/* A realtime thread's open of a FIFO nobody writes: it waits on a helper, as on the thread. */
SCENARIO(input_wait)
{
	const char *dir = getenv("SC_DIR");
	char fifo[PATH_MAX];
	struct opener o;
	struct test_thread t;

	if (!dir)
		return 100;
	if (fifo_opener(dir, fifo, &o) != 0)
		return 101;
	start_helpers();
	if (thread_start(&t, open_fifo_job, &o, TH_MARK, CALLER_PRIO) != 0)
		return 102;
	say("counted=%d", input_wait_counted());
	fifo_writer_comes(&o, &t);
	return 0;
}

Test(stall, a_fifo_open_waiting_for_input_is_counted_and_not_said, .timeout = TEST_TIMEOUT)
{
	static struct proc p;
	char dir[PATH_MAX];

	tmp_make(dir);
	run_sc("input_wait", "", dir, &p); /* stall_us: its default, 10000 */
	tmp_remove(dir);
	cr_expect_eq(kv(p.out, "counted", -1), 1, "the wait is not counted\n%s", p.err);
	cr_expect_eq(kv(p.out, "opened", -1), 1);
	cr_expect_geq(kv(p.out, "input_waits", -1), 1);
	cr_expect_eq(lines_with(p.err, "rtoffload: stall"), 0,
		     "a wait for input was said on the program's stderr:\n%s", p.err);
}

/*
 * The other order: the busy thread holds the helpers' CPU first, so a
 * realtime thread's open of a FIFO nobody writes is said "not taken by
 * any helper"; once the busy thread ends, a worker takes the open and
 * waits for a writer, as the thread would have.  From then on it is a
 * wait for input, counted as one (it stays a stall in the counts).
 */
SCENARIO(hog_then_input)
{
	const char *dir = getenv("SC_DIR");
	struct test_thread hog, t;
	struct opener o;
	char fifo[PATH_MAX], report[PATH_MAX];

	if (!dir || pin_cpu(RT_CPU) != 0)
		return 100;
	snprintf(report, sizeof(report), "%s/report", dir);
	if (fifo_opener(dir, fifo, &o) != 0)
		return 101;
	start_helpers();
	if (thread_start(&hog, hog_job, NULL, TH_PIN_HK, HOG_PRIO) != 0)
		return 102;
	flag_wait(&hog_running);
	if (thread_start(&t, open_fifo_job, &o, TH_MARK | TH_PIN_RT, CALLER_PRIO) != 0)
		return 103;
	say("stall_said=%d", report_has_stall(report));
	atomic_store(&released, 1);
	thread_join(&hog);
	say("input_counted=%d", input_wait_counted());
	fifo_writer_comes(&o, &t);
	return 0;
}

Test(stall, a_fifo_open_said_unclaimed_then_waiting_for_input_is_counted_as_such,
     .timeout = TEST_TIMEOUT)
{
	static struct proc p;
	char dir[PATH_MAX], opts[PATH_MAX + 128];

	tmp_make(dir);
	snprintf(opts, sizeof(opts), "helper_cpus=%d:report_path=%s/report", HK_CPU, dir);
	run_sc("hog_then_input", opts, dir, &p);
	tmp_remove(dir);
	cr_expect_eq(kv(p.out, "stall_said", -1), 1, "no stall line while the hog ran\n%s", p.err);
	cr_expect_eq(kv(p.out, "input_counted", -1), 1,
		     "the open's wait for a writer, after the stall, is not counted\n%s", p.out);
	cr_expect_eq(kv(p.out, "opened", -1), 1);
	cr_expect_geq(kv(p.out, "stalled", -1), 1, "the stall itself is no longer counted");
}

/*
 * A realtime thread's read of a pipe (fd_local=none: on a helper) waits
 * for input; then the busy thread holds the helpers' CPU and the input
 * comes: the woken worker cannot run.  That is a stall again, and said.
 */
SCENARIO(input_then_hog)
{
	const char *dir = getenv("SC_DIR");
	struct test_thread hog, caller;
	struct pipe_reader r = {.fd = -1};
	char report[PATH_MAX];
	int p[2];

	if (!dir || pin_cpu(RT_CPU) != 0 || pipe2(p, O_CLOEXEC) != 0)
		return 100;
	snprintf(report, sizeof(report), "%s/report", dir);
	r.fd = p[0];
	start_helpers();
	if (thread_start(&caller, read_job, &r, TH_MARK | TH_PIN_RT, CALLER_PRIO) != 0)
		return 101;
	say("input_counted=%d", input_wait_counted());
	if (thread_start(&hog, hog_job, NULL, TH_PIN_HK, HOG_PRIO) != 0)
		return 102;
	flag_wait(&hog_running);
	if (write(p[1], "x", 1) != 1) /* unmarked: here */
		return 103;
	say("stall_said=%d", report_has_stall(report));
	say("returned_before_release=%d", flag_is_set(&r.done));
	atomic_store(&released, 1);
	thread_join(&caller);
	thread_join(&hog);
	close(p[0]);
	close(p[1]);
	struct rt_offload_stats s = stats_now();
	say("n=%ld\nstalled=%lu\ninput_waits=%lu", (long)r.n, (unsigned long)s.stalled,
	    (unsigned long)s.input_waits);
	return 0;
}

Test(stall, a_wait_for_input_starved_once_its_input_came_is_said, .timeout = TEST_TIMEOUT)
{
	static struct proc p;
	char dir[PATH_MAX], opts[PATH_MAX + 128];

	tmp_make(dir);
	snprintf(opts, sizeof(opts), "helper_cpus=%d:fd_local=none:report_path=%s/report", HK_CPU,
		 dir);
	run_sc("input_then_hog", opts, dir, &p);
	char path[PATH_MAX + 16];
	snprintf(path, sizeof(path), "%s/report", dir);
	char *report = slurp(path, NULL);
	tmp_remove(dir);
	if (!report)
		report = strdup("");
	cr_expect_eq(kv(p.out, "input_counted", -1), 1, "the read's wait is not counted\n%s",
		     report);
	cr_expect_eq(kv(p.out, "stall_said", -1), 1, "no stall line while the hog ran\n%s", report);
	cr_expect_eq(kv(p.out, "returned_before_release", -1), 0);
	cr_expect_eq(kv(p.out, "n", -1), 1);
	cr_expect_eq(lines_with(report, "rtoffload: stall"), 1, "report:\n%s", report);
	cr_expect(strstr(report, "'read'") && strstr(report, "running on helper"),
		  "the line does not name the read on its helper:\n%s", report);
	cr_expect(strstr(report, "'stallhog'") && strstr(report, "SCHED_FIFO 99"),
		  "the line does not name the busy loop:\n%s", report);
	cr_expect_geq(kv(p.out, "stalled", -1), 1);
	cr_expect_eq(kv(p.out, "input_waits", -1), 0, "still counted as a wait for input");
	free(report);
}

/* ---- a fork child's counts ----------------------------------------------------------- */

/* rt_offload_get_stats() counts a stall: 1, or 0 after WAIT_S. */
static int stall_counted(void)
{
	for (int tries = 0; tries < (int)(WAIT_S * 1000); tries++) {
		if (stats_now().stalled >= 1)
			return 1;
		struct timespec ms = {0, 1000000};
		nanosleep(&ms, NULL);
	}
	return 0;
}

/*
 * The parent's stalls are not its child's: after a stall was counted (a
 * marked caller's write under the busy thread, as in hog), a fork child's
 * statistics start from zero, as its other counters do (fork.c).  The
 * caller counts its own stall once its wait passed stall_us, so no
 * verdict of the watchdog is needed.  The child answers by its exit
 * status: bit 0 stalled, bit 1 input_waits, set when not zero.
 */
SCENARIO(stall_then_fork)
{
	struct caller c = {.fd = -1};
	struct test_thread hog, caller;
	int status;

	if (pin_cpu(RT_CPU) != 0)
		return 100;
	c.fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	start_helpers();
	if (thread_start(&hog, hog_job, NULL, TH_PIN_HK, HOG_PRIO) != 0)
		return 101;
	flag_wait(&hog_running);
	if (thread_start(&caller, caller_job, &c, TH_MARK | TH_PIN_RT, CALLER_PRIO) != 0)
		return 102;
	say("counted=%d", stall_counted());
	atomic_store(&released, 1);
	thread_join(&caller);
	thread_join(&hog);
	close(c.fd);
	pid_t pid = fork();
	if (pid == 0) {
		struct rt_offload_stats s = stats_now();
		_exit((s.stalled != 0) | (s.input_waits != 0) << 1);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return 103;
	say("parent_stalled=%lu", (unsigned long)stats_now().stalled);
	say("child_counts=%d", WEXITSTATUS(status));
	return 0;
}

Test(stall, a_fork_child_does_not_count_its_parents_stalls, .timeout = TEST_TIMEOUT)
{
	static struct proc p;
	char dir[PATH_MAX], opts[PATH_MAX + 128];

	tmp_make(dir);
	snprintf(opts, sizeof(opts), "helper_cpus=%d:fd_local=none:report_path=%s/report", HK_CPU,
		 dir);
	run_sc("stall_then_fork", opts, dir, &p);
	tmp_remove(dir);
	cr_assert_eq(kv(p.out, "counted", -1), 1, "the stall is not counted\n%s", p.err);
	cr_expect_geq(kv(p.out, "parent_stalled", -1), 1);
	cr_expect_eq(kv(p.out, "child_counts", -1), 0,
		     "the child counts its parent's stalls (1) or waits for input (2)\n%s", p.err);
}
