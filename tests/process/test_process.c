/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fork, raw clone, vfork, posix_spawn, exec and exit (issue 6):
 *  - fork from a marked thread while another marked thread's call blocks a
 *    helper: the child (no helper threads, the queue in whatever state)
 *    marks and offloads;
 *  - a raw clone() child (no atfork handler runs) offloads a write that
 *    lands;
 *  - a vfork() child's close/dup2 act on the child's descriptors, never on
 *    the parent's (they must not run on the parent's helpers);
 *  - posix_spawn() from a marked thread works and the child inherits the
 *    caller's signal mask;
 *  - exec keeps every descriptor without FD_CLOEXEC (and no other);
 *  - exit() while a worker is blocked in a long call neither hangs nor
 *    crashes, and loses no queued async write.
 * A child never calls criterion: it reports through its exit status (0, or
 * the number of the check that failed) or key=value lines.
 */
#include "harness.h"
#include "raw_clone.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static int file_is(const char *path, const char *want)
{
	char *s = slurp(path, NULL);
	int same = s && strcmp(s, want) == 0;

	free(s);
	return same;
}

/* ---- a FIFO open that blocks one helper ---------------------------------------- */

struct blocker {
	const char *fifo;
	int ret, err;
	struct flag done;
};

static void blocker_job(void *arg)
{
	struct blocker *b = arg;

	b->ret = open(b->fifo, O_RDONLY | O_CLOEXEC);
	b->err = errno;
	flag_set(&b->done);
}

static void release_fifo(const char *fifo)
{
	int w = open(fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC);

	if (w >= 0)
		close(w);
}

/* ---- fork while another marked thread waits in a long call --------------------- */

static const char *const fork_checks[] = {
	"ok",
	"the forking thread is not marked in the child",
	"the statistics did not restart from zero in the child",
	"open failed in the child",
	"write failed in the child",
	"fsync failed in the child",
	"close failed in the child",
	"the calls were not offloaded in the child",
	"no helper thread in the child",
	"a new thread could not mark or offload in the child",
	"the bytes are not in the file",
	"marking in the child did not fail with EAGAIN (ThreadSanitizer)",
};

/*
 * Under ThreadSanitizer the child of a multi-threaded fork cannot start
 * threads: the library marks nothing and starts no helper there
 * (libsrc/core/fork.c), so the child's calls run on it and it makes no thread.
 */
#ifdef __SANITIZE_THREAD__
#define FORK_CHILD_DIRECT 1
#else
#define FORK_CHILD_DIRECT 0
#endif

struct writer {
	const char *path;
	const char *text;
	int code;
};

/* open/write/fsync/close; offloaded when the thread is marked. */
static void write_file_job(void *arg)
{
	struct writer *w = arg;
	size_t n = strlen(w->text);
	int fd = open(w->path, O_CREAT | O_WRONLY | O_APPEND | O_CLOEXEC, 0600);

	if (fd < 0) {
		w->code = 3;
		return;
	}
	if (write(fd, w->text, n) != (ssize_t)n)
		w->code = 4;
	else if (fsync(fd) != 0)
		w->code = 5;
	if (close(fd) != 0 && !w->code)
		w->code = 6;
}

/* In the child of the fork: everything with exit codes, no criterion. */
static int fork_child(const char *path)
{
	struct rt_offload_stats s0, s1;
	struct writer w = {.path = path, .text = "forking thread\n"};
	struct writer w2 = {.path = path, .text = "new thread\n"};
	pid_t h[64];

	if (FORK_CHILD_DIRECT) {
		if (rt_offload_thread_is_marked())
			return 1;
		if (rt_offload_mark_thread() != -1 || errno != EAGAIN)
			return 11;
		write_file_job(&w);
		rt_offload_get_stats(&s1);
		if (w.code)
			return w.code;
		if (s1.offloaded)
			return 7;
		if (helper_tids(h, 64) != 0)
			return 8;
		return file_is(path, "forking thread\n") ? 0 : 10;
	}
	if (!rt_offload_thread_is_marked())
		return 1;
	if (rt_offload_get_stats(&s0) != 0 || s0.offloaded != 0)
		return 2;
	write_file_job(&w);
	if (w.code)
		return w.code;
	rt_offload_get_stats(&s1);
	if (s1.offloaded - s0.offloaded < 4)
		return 7;
	if (helper_tids(h, 64) < 1)
		return 8;
	if (thread_run(write_file_job, &w2, TH_MARK, 0) != 0 || w2.code)
		return 9;
	return file_is(path, "forking thread\nnew thread\n") ? 0 : 10;
}

struct forker {
	const char *path;
	int code;
};

static void forker_job(void *arg)
{
	struct forker *f = arg;
	pid_t pid = fork();

	if (pid == 0)
		_exit(fork_child(f->path));
	f->code = pid < 0 ? -1000 : reap_code(pid);
}

Test(process, fork_from_a_marked_thread_while_another_waits_in_a_fifo_open, .timeout = TEST_TIMEOUT)
{
	char dir[PATH_MAX], fifo[PATH_MAX], path[PATH_MAX];
	struct blocker b = {0};
	struct forker f = {0};
	struct test_thread tb;

	tmp_make(dir);
	path_join(fifo, dir, "fifo");
	path_join(path, dir, "child");
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	b.fifo = fifo;
	f.path = path;
	cr_assert_eq(thread_start(&tb, blocker_job, &b, TH_MARK | TH_PIN_RT, 0), 0);
	cr_assert_neq(wait_helper_in_syscall(SYS_openat, AT_FDCWD), 0,
		      "the FIFO open is not blocked on a helper");

	cr_assert_eq(thread_run(forker_job, &f, TH_MARK | TH_PIN_RT, 0), 0);
	const char *what = f.code >= 0 && f.code <= 11 ? fork_checks[f.code] : "killed";
	cr_expect_eq(f.code, 0, "child: %s (%d)", what, f.code);

	/* The parent's blocked call is still there, and completes. */
	cr_expect_not(flag_is_set(&b.done), "the blocked open ended by itself");
	release_fifo(fifo);
	cr_expect(flag_wait_s(&b.done, WAIT_S));
	thread_join(&tb);
	cr_expect_geq(b.ret, 0, "the parent's open: %d errno %d", b.ret, b.err);
	if (b.ret >= 0)
		close(b.ret);
	tmp_remove(dir);
}

/* ---- raw clone() ---------------------------------------------------------------- */

static int count_tasks(void)
{
	char path[64];
	int n = 0;

	/* Thread ids are the process's pid and above: probe a window. */
	for (pid_t t = getpid(); t < getpid() + 4096 && n < 64; t++) {
		snprintf(path, sizeof(path), "/proc/self/task/%d", (int)t);
		if (access(path, F_OK) == 0)
			n++;
	}
	return n;
}

/* The child of the raw clone: no atfork handler ran, the stats are the parent's. */
static int clone_child(const char *path)
{
	struct rt_offload_stats s0, s1;
	int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0600);

	if (!rt_offload_thread_is_marked())
		return 1;
	if (fd < 0)
		return 3;
	rt_offload_get_stats(&s0);
	if (write(fd, "clone\n", 6) != 6)
		return 4;
	rt_offload_get_stats(&s1);
	if (close(fd) != 0)
		return 6;
	/* Exactly the write, offloaded (the stats are the parent's: no reset). */
	if (s1.offloaded - s0.offloaded != 1 || s1.local != s0.local)
		return 7;
	if (count_tasks() < 2)
		return 8;
	return 0;
}

static void cloner_job(void *arg)
{
	struct forker *f = arg;
	long pid = raw_clone_fork();

	if (pid == 0)
		syscall(SYS_exit_group, clone_child(f->path)); /* no atexit: not ours */
	f->code = pid < 0 ? -1000 : reap_code((pid_t)pid);
}

Test(process, raw_clone_child_of_a_marked_thread_offloads_a_write, .timeout = TEST_TIMEOUT)
{
	char dir[PATH_MAX], path[PATH_MAX];
	struct forker f = {0};
	struct writer after = {0};

	tmp_make(dir);
	/*
	 * A raw clone copies every lock another thread holds at that moment,
	 * held for ever in the child: the helpers, still starting when the
	 * first mark returns, allocate (malloc's locks, a sanitizer
	 * allocator's).  So they are started first and left to fall asleep.
	 */
	path_join(path, dir, "warm");
	after.path = path;
	after.text = "warm\n";
	cr_assert_eq(thread_run(write_file_job, &after, TH_MARK, 0), 0);
	pid_t helpers[64];
	int n = helper_tids(helpers, 64);
	cr_assert_gt(n, 0, "no helper thread");
	for (int i = 0; i < n; i++)
		cr_assert(wait_task_in_syscall(helpers[i], SYS_futex, -1),
			  "helper %d never went to sleep", (int)helpers[i]);
	path_join(path, dir, "clone");
	f.path = path;
	cr_assert_eq(thread_run(cloner_job, &f, TH_MARK | TH_PIN_RT, 0), 0);
	cr_expect_eq(f.code, 0, "clone child: check %d failed (%s)", f.code,
		     f.code > 0 && f.code <= 10 ? fork_checks[f.code] : "killed");
	cr_expect(file_is(path, "clone\n"), "the clone child's write did not land");

	/* The parent's helpers still serve. */
	path_join(path, dir, "after");
	after.path = path;
	after.text = "after\n";
	cr_assert_eq(thread_run(write_file_job, &after, TH_MARK, 0), 0);
	cr_expect_eq(after.code, 0);
	cr_expect(file_is(path, "after\n"));
	tmp_remove(dir);
}

/* ---- vfork() --------------------------------------------------------------------- */

struct vforker {
	const char *keep_path, *out_path;
	int keep, out;
	int status;
	int keep_open_after, out_open_after;
	struct stat stdout_before, stdout_after;
	uint64_t offloaded_after; /* by a write once the parent resumed */
};

/* The child closes `keep` and makes `out` its stdout, then execs echo. */
static pid_t vfork_echo(int keep, int out)
{
	pid_t pid = vfork();

	if (pid == 0) {
		close(keep);
		dup2(out, 1);
		execl("/bin/echo", "echo", "from the vfork child", (char *)NULL);
		_exit(127);
	}
	return pid;
}

static void vforker_job(void *arg)
{
	struct vforker *v = arg;
	struct rt_offload_stats s0, s1;

	v->keep = open(v->keep_path, O_RDONLY | O_CLOEXEC);
	v->out = open(v->out_path, O_CREAT | O_WRONLY | O_TRUNC, 0600);
	fstat(1, &v->stdout_before);
	pid_t pid = vfork_echo(v->keep, v->out);
	if (pid > 0)
		waitpid(pid, &v->status, 0);
	v->keep_open_after = fcntl(v->keep, F_GETFD) != -1;
	v->out_open_after = fcntl(v->out, F_GETFD) != -1;
	fstat(1, &v->stdout_after);
	rt_offload_get_stats(&s0);
	write(v->out, "parent\n", 7);
	rt_offload_get_stats(&s1);
	v->offloaded_after = s1.offloaded - s0.offloaded;
	close(v->keep);
	close(v->out);
}

Test(process, vfork_child_acts_on_its_own_descriptors, .timeout = TEST_TIMEOUT)
{
	char dir[PATH_MAX], keep[PATH_MAX], out[PATH_MAX], st[32];
	struct vforker v = {0};

	tmp_make(dir);
	path_join(keep, dir, "keep");
	path_join(out, dir, "out");
	cr_assert_eq(close(open(keep, O_CREAT | O_WRONLY, 0600)), 0);
	v.keep_path = keep;
	v.out_path = out;
	cr_assert_eq(thread_run(vforker_job, &v, TH_MARK | TH_PIN_RT, 0), 0);
	cr_assert_geq(v.keep, 0);
	cr_assert_geq(v.out, 0);
	cr_expect(WIFEXITED(v.status) && WEXITSTATUS(v.status) == 0, "vfork child: %s",
		  status_str(v.status, st, sizeof(st)));
	cr_expect(v.keep_open_after, "the child's close() closed the parent's descriptor");
	cr_expect(v.out_open_after);
	cr_expect(v.stdout_before.st_ino == v.stdout_after.st_ino &&
			  v.stdout_before.st_dev == v.stdout_after.st_dev,
		  "the child's dup2() replaced the parent's stdout");
	cr_expect(file_is(out, "from the vfork child\nparent\n"), "the child's echo went astray");
	/* At least the write (its descriptor may be classified first, also offloaded). */
	cr_expect_geq(v.offloaded_after, 1, "the parent is not marked after vfork");
	tmp_remove(dir);
}

/* ---- posix_spawn() and the signal mask -------------------------------------------- */

struct spawner {
	int block_after_mark; /* SIGUSR2, blocked by the thread after it was marked */
	int rc, status;
	unsigned long long sigblk;
};

/* Spawn "grep SigBlk /proc/self/status" with stdout into a pipe. */
static void spawner_job(void *arg)
{
	struct spawner *s = arg;
	posix_spawn_file_actions_t fa;
	char *argv[] = {"grep", "SigBlk", "/proc/self/status", NULL};
	char buf[256] = "";
	int p[2];
	pid_t pid;

	if (s->block_after_mark) {
		sigset_t set;
		sigemptyset(&set);
		sigaddset(&set, SIGUSR2);
		pthread_sigmask(SIG_BLOCK, &set, NULL);
	}
	if (pipe2(p, O_CLOEXEC) != 0) {
		s->rc = -1;
		return;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[1], 1);
	s->rc = posix_spawnp(&pid, "grep", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(p[1]);
	ssize_t n = s->rc == 0 ? read(p[0], buf, sizeof(buf) - 1) : 0;
	buf[n > 0 ? n : 0] = '\0';
	close(p[0]);
	if (s->rc == 0)
		waitpid(pid, &s->status, 0);
	char *v = strchr(buf, ':');
	s->sigblk = v ? strtoull(v + 1, NULL, 16) : ~0ull;
}

static void spawn_with_mask(int marked, int after, struct spawner *s)
{
	sigset_t usr1, old;

	memset(s, 0, sizeof(*s));
	s->block_after_mark = after;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	/* Blocked before the thread starts: it inherits the mask, then marks. */
	pthread_sigmask(SIG_BLOCK, &usr1, &old);
	int rc = thread_run(spawner_job, s, marked ? TH_MARK | TH_PIN_RT : 0, 0);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	cr_assert_eq(rc, 0);
	cr_assert_eq(s->rc, 0, "posix_spawnp: %d", s->rc);
	cr_assert(WIFEXITED(s->status) && WEXITSTATUS(s->status) == 0);
}

#define BIT(sig) (1ull << ((sig)-1))

Test(process, posix_spawn_child_inherits_the_callers_signal_mask, .timeout = TEST_TIMEOUT)
{
	struct spawner d, m;

	spawn_with_mask(0, 0, &d);
	spawn_with_mask(1, 0, &m);
	cr_expect(d.sigblk & BIT(SIGUSR1));
	cr_expect(m.sigblk & BIT(SIGUSR1), "the spawned child's SigBlk is %llx: no SIGUSR1",
		  m.sigblk);
	cr_expect_eq(m.sigblk, d.sigblk, "SigBlk %llx, direct %llx", m.sigblk, d.sigblk);
}

Test(process, posix_spawn_child_sees_a_mask_changed_after_marking, .timeout = TEST_TIMEOUT)
{
	struct spawner d, m;

	spawn_with_mask(0, 1, &d);
	spawn_with_mask(1, 1, &m);
	cr_expect(d.sigblk & BIT(SIGUSR2));
	cr_expect(m.sigblk & BIT(SIGUSR2),
		  "SigBlk %llx: SIGUSR2, blocked after marking, is not blocked in the child "
		  "(direct: %llx)",
		  m.sigblk, d.sigblk);
	cr_expect_eq(m.sigblk, d.sigblk);
}

/* ---- exec keeps what it should ----------------------------------------------------- */

/*
 * In a child: mark (or not), open one file without and one with
 * O_CLOEXEC, then exec a shell that prints the first, says whether the
 * second is open, and lists its own descriptors.
 */
SCENARIO(exec_fds)
{
	char path[PATH_MAX], cmd[512];
	const char *dir = getenv("SC_DIR");

	if (!dir)
		return 100;
	if (getenv("TH_MARK") && rt_offload_mark_thread() != 0)
		return 101;
	path_join(path, dir, "kept");
	int keep = open(path, O_RDONLY);
	int cloexec = open(path, O_RDONLY | O_CLOEXEC);
	if (keep < 0 || cloexec < 0)
		return 102;
	snprintf(cmd, sizeof(cmd),
		 "cat /dev/fd/%d; [ -e /dev/fd/%d ] && echo leaked; "
		 "echo fds: $(ls /proc/$$/fd | sort -n)",
		 keep, cloexec);
	execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
	return 103;
}

Test(process, exec_from_a_marked_thread_keeps_descriptors_without_cloexec, .timeout = TEST_TIMEOUT)
{
	char dir[PATH_MAX], path[PATH_MAX], envdir[PATH_MAX + 8];
	struct proc d, m;

	tmp_make(dir);
	path_join(path, dir, "kept");
	FILE *f = fopen(path, "w");
	cr_assert(f);
	fputs("kept content\n", f);
	fclose(f);
	snprintf(envdir, sizeof(envdir), "SC_DIR=%s", dir);
	char *env_d[] = {envdir, NULL};
	char *env_m[] = {envdir, "TH_MARK=1", NULL};
	/*
	 * The new program's descriptor list is compared whole.  Another
	 * thread of the old one (a sanitizer runtime's) may hold a descriptor
	 * without O_CLOEXEC for a moment, and it then lands in either list
	 * (under ThreadSanitizer and load: "fds: ... 6" in the unmarked run
	 * once in 80).  So a pair that differs is run once more: a
	 * descriptor of the library's that survived exec would be in both.
	 */
	for (int pair = 0; pair < 2; pair++) {
		cr_assert_eq(run_scenario("exec_fds", env_d, &d), 0);
		cr_assert_eq(run_scenario("exec_fds", env_m, &m), 0);
		if (strcmp(m.out, d.out) == 0)
			break;
	}
	cr_expect(WIFEXITED(m.status) && WEXITSTATUS(m.status) == 0, "marked: %s", m.err);
	cr_expect(strncmp(m.out, "kept content\n", 13) == 0,
		  "the kept descriptor is not readable after exec: '%s'", m.out);
	cr_expect_null(strstr(m.out, "leaked"), "an O_CLOEXEC descriptor survived exec");
	cr_expect_str_eq(m.out, d.out,
			 "marked and unmarked exec differ: marked '%s', unmarked '%s'", m.out,
			 d.out);
	tmp_remove(dir);
}

/* ---- exit() while a worker is blocked ---------------------------------------------- */

#define ASYNC_LINES 2000

struct async_writer {
	const char *path;
	struct flag opened, go;
};

/* Open first (a synchronous call), then queue the lines once told to. */
static void async_writer_job(void *arg)
{
	struct async_writer *a = arg;
	int fd = open(a->path, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0600);
	char line[32];

	flag_set(&a->opened);
	flag_wait(&a->go);
	for (int i = 0; fd >= 0 && i < ASYNC_LINES; i++) {
		int n = snprintf(line, sizeof(line), "line %04d\n", i);
		if (write(fd, line, (size_t)n) != n)
			say("short_write=%d", i);
	}
	/* No close: what is queued must be written by exit. */
}

/*
 * A marked thread blocks a helper in a FIFO open; with SC_ASYNC another
 * marked thread, which opened its file before, then queues async writes;
 * then exit(7) from the initial thread.
 */
SCENARIO(exit_while_blocked)
{
	const char *dir = getenv("SC_DIR");
	char fifo[PATH_MAX], path[PATH_MAX];
	struct blocker b = {0};
	struct async_writer a = {.path = path};
	struct test_thread tb, ta;
	int async = getenv("SC_ASYNC") != NULL;

	if (!dir)
		return 100;
	path_join(fifo, dir, "fifo");
	path_join(path, dir, "async");
	b.fifo = fifo;
	if (async && (thread_start(&ta, async_writer_job, &a, TH_MARK, 0) != 0 ||
		      !flag_wait_s(&a.opened, WAIT_S)))
		return 101;
	if (thread_start(&tb, blocker_job, &b, TH_MARK | TH_PIN_RT, 0) != 0)
		return 102;
	if (!wait_helper_in_syscall(SYS_openat, AT_FDCWD))
		return 103;
	if (async) {
		flag_set(&a.go);
		if (thread_join(&ta) != 0)
			return 104;
	}
	say("exiting=1");
	exit(7);
}

static void exit_case(const char *options, int async)
{
	char dir[PATH_MAX], fifo[PATH_MAX], path[PATH_MAX], envdir[PATH_MAX + 8], opts[256];
	char st[64];
	struct proc p;

	tmp_make(dir);
	path_join(fifo, dir, "fifo");
	path_join(path, dir, "async");
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	snprintf(envdir, sizeof(envdir), "SC_DIR=%s", dir);
	snprintf(opts, sizeof(opts), "RTOFFLOAD_OPTIONS=%s", options);
	char *env[] = {envdir, opts, async ? "SC_ASYNC=1" : "SC_SYNC", NULL};
	cr_assert_eq(run_scenario("exit_while_blocked", env, &p), 0);
	cr_expect_not(p.timed_out, "%s: exit() hung", options);
	cr_expect(WIFEXITED(p.status) && WEXITSTATUS(p.status) == 7, "%s: the child %s; %s",
		  options, status_str(p.status, st, sizeof(st)), p.err);
	cr_expect_eq(kv(p.out, "exiting", 0), 1, "%s: the scenario did not get to exit", options);
	if (async) {
		size_t len = 0;
		char *s = slurp(path, &len);
		cr_expect_eq(len, (size_t)ASYNC_LINES * 10, "%s: %zu of %d bytes written", options,
			     len, ASYNC_LINES * 10);
		cr_expect(s && strncmp(s + len - 10, "line 1999\n", 10) == 0);
		free(s);
	}
	tmp_remove(dir);
}

Test(process, exit_while_a_worker_is_blocked_neither_hangs_nor_crashes, .timeout = TEST_TIMEOUT)
{
	exit_case("fd_local=none", 0);
	exit_case("fd_local=none:workers=1", 0);
}

Test(process, exit_while_a_worker_is_blocked_writes_every_queued_async_byte,
     .timeout = TEST_TIMEOUT)
{
	exit_case("fd_local=none:policy=write:async", 1);
	exit_case("fd_local=none:policy=write:async:workers=1", 1);
}
