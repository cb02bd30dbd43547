/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Faults (issue 6): an offloaded call handed a bad pointer must not crash
 * the helper or hang the caller.  Where the kernel answers EFAULT, the
 * caller gets EFAULT, exactly as a direct call; the helpers are the same
 * threads afterwards and serve the next call.  Where libc itself would
 * crash (stdio reading a bad string), the crash must happen in the caller's
 * thread, so that the program's own SIGSEGV handler runs there.
 */
#include "harness.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Through a volatile, so the compiler neither warns nor proves anything. */
static void *volatile bad_ptr = (void *)1;

enum { C_WRITE, C_READ, C_PWRITE, C_PREAD, C_WRITEV, C_READV, C_STAT, C_FSTAT, C_OPEN, NCALLS };
static const char *const names[NCALLS] = {"write", "read", "pwrite", "pread", "writev",
					  "readv", "stat", "fstat",  "open"};

struct faults {
	const char *path;
	long ret[NCALLS];
	int err[NCALLS];
	ssize_t after_w, after_r; /* a normal write and read afterwards */
	char buf[8];
};

static void bad_calls(struct faults *f, int fd)
{
	struct iovec iov = {bad_ptr, 16};

	f->ret[C_WRITE] = write(fd, bad_ptr, 16);
	f->err[C_WRITE] = errno;
	f->ret[C_READ] = read(fd, bad_ptr, 16);
	f->err[C_READ] = errno;
	f->ret[C_PWRITE] = pwrite(fd, bad_ptr, 16, 0);
	f->err[C_PWRITE] = errno;
	f->ret[C_PREAD] = pread(fd, bad_ptr, 16, 0);
	f->err[C_PREAD] = errno;
	f->ret[C_WRITEV] = writev(fd, &iov, 1);
	f->err[C_WRITEV] = errno;
	f->ret[C_READV] = preadv(fd, &iov, 1, 0);
	f->err[C_READV] = errno;
	f->ret[C_STAT] = stat(f->path, bad_ptr);
	f->err[C_STAT] = errno;
	f->ret[C_FSTAT] = fstat(fd, bad_ptr);
	f->err[C_FSTAT] = errno;
	f->ret[C_OPEN] = open(bad_ptr, O_RDONLY);
	f->err[C_OPEN] = errno;
}

static void faults_job(void *arg)
{
	struct faults *f = arg;
	int fd = open(f->path, O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		f->after_w = -2;
		return;
	}
	bad_calls(f, fd);
	f->after_w = pwrite(fd, "after", 5, 0);
	f->after_r = pread(fd, f->buf, 5, 0);
	close(fd);
}

static void run_faults(int marked, const char *path, struct faults *f)
{
	memset(f, 0, sizeof(*f));
	f->path = path;
	cr_assert_eq(thread_run(faults_job, f, marked ? TH_MARK | TH_PIN_RT : 0, 0), 0);
}

Test(faults, bad_buffers_give_efault_and_the_helpers_survive, .timeout = TEST_TIMEOUT)
{
	char dir[PATH_MAX], path[PATH_MAX];
	struct faults d, m;
	struct rt_offload_stats s0, s1;
	pid_t h0[64], h1[64];

	tmp_make(dir);
	path_join(path, dir, "data");
	int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, "0123456789abcdefghij", 20), 20); /* reads have data to copy */
	close(fd);

	run_faults(0, path, &d);
	rt_offload_get_stats(&s0);
	run_faults(1, path, &m);
	rt_offload_get_stats(&s1);
	int n0 = helper_tids(h0, 64);

	for (int i = 0; i < NCALLS; i++) {
		cr_expect_eq(d.ret[i], -1, "direct %s: %ld", names[i], d.ret[i]);
		cr_expect_eq(d.err[i], EFAULT, "direct %s: errno %d", names[i], d.err[i]);
		cr_expect_eq(m.ret[i], -1, "offloaded %s: %ld", names[i], m.ret[i]);
		cr_expect_eq(m.err[i], EFAULT, "offloaded %s: errno %d (want EFAULT)", names[i],
			     m.err[i]);
	}
	cr_expect_geq(s1.offloaded - s0.offloaded, NCALLS, "the bad calls were not offloaded");
	cr_expect(m.after_w == 5 && m.after_r == 5 && memcmp(m.buf, "after", 5) == 0,
		  "calls after the faults: write %zd read %zd", m.after_w, m.after_r);

	/* The same helper threads, still serving. */
	cr_assert_eq(thread_run(faults_job, &m, TH_MARK, 0), 0);
	int n1 = helper_tids(h1, 64);
	cr_expect_geq(n0, 1);
	cr_expect_eq(n1, n0, "helpers before %d, after %d", n0, n1);
	for (int i = 0; i < n0 && i < n1; i++)
		cr_expect_eq(h1[i], h0[i], "helper %d changed: %d -> %d", i, (int)h0[i],
			     (int)h1[i]);
	tmp_remove(dir);
}

/* ---- a bad sleep time: the wake hint reads it, the kernel answers ------------ */

struct sleeps {
	int abs_mono, rel_real, nano, nano_err; /* clock_nanosleep returns the error */
	int ok;					/* a good sleep afterwards */
	int segv_blocked;			/* the fault's signal left blocked */
};

/*
 * A marked thread tells the helpers when its sleep ends (wake_hint.c),
 * which reads the timespec it was given: once the helpers run, so the
 * first call here starts them.
 */
static void sleeps_job(void *arg)
{
	struct sleeps *s = arg;
	struct stat st;
	struct timespec tiny = {0, 1000};
	sigset_t now;

	(void)stat("/", &st); /* offloaded: the helpers start */
	s->abs_mono = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, bad_ptr, NULL);
	s->rel_real = clock_nanosleep(CLOCK_REALTIME, 0, bad_ptr, NULL);
	s->nano = nanosleep(bad_ptr, NULL);
	s->nano_err = errno;
	s->ok = nanosleep(&tiny, NULL);
	pthread_sigmask(SIG_BLOCK, NULL, &now);
	s->segv_blocked = sigismember(&now, SIGSEGV);
}

Test(faults, a_bad_sleep_time_gives_efault_in_a_marked_thread, .timeout = TEST_TIMEOUT)
{
	struct sleeps d = {0}, m = {0};

	cr_assert_eq(thread_run(sleeps_job, &d, 0, 0), 0);
	cr_assert_eq(thread_run(sleeps_job, &m, TH_MARK | TH_PIN_RT, 0), 0);
	struct sleeps *both[2] = {&d, &m};
	for (int i = 0; i < 2; i++) {
		const char *who = i ? "marked" : "direct";
		cr_expect_eq(both[i]->abs_mono, EFAULT, "%s clock_nanosleep: %d", who,
			     both[i]->abs_mono);
		cr_expect_eq(both[i]->rel_real, EFAULT, "%s relative clock_nanosleep: %d", who,
			     both[i]->rel_real);
		cr_expect(both[i]->nano == -1 && both[i]->nano_err == EFAULT,
			  "%s nanosleep: %d errno %d", who, both[i]->nano, both[i]->nano_err);
		cr_expect_eq(both[i]->ok, 0, "%s: a good sleep afterwards", who);
		cr_expect_eq(both[i]->segv_blocked, 0, "%s: SIGSEGV left blocked", who);
	}
}

/* ---- a crash inside libc happens on the caller ------------------------------ */

static int report_fd = -1;

static void on_segv(int sig)
{
	pid_t tid = tid_self();

	(void)sig;
	syscall(SYS_write, report_fd, &tid, sizeof(tid));
	_exit(42);
}

struct crasher {
	const char *path;
};

static void crasher_job(void *arg)
{
	struct crasher *c = arg;
	pid_t tid = tid_self();

	/* First the caller's tid (the raw call: never offloaded), then the crash. */
	syscall(SYS_write, report_fd, &tid, sizeof(tid));
	FILE *f = fopen(c->path, "w");
	if (f)
		fputs(bad_ptr, f); /* strlen() of a bad pointer, inside libc */
}

/*
 * ThreadSanitizer cannot start threads in the child of a multi-threaded
 * fork (a criterion test process always is one): under it the child is a
 * fresh process, this program run as a scenario, which writes the two tids
 * to the file SC_REPORT instead of a pipe.
 */
#ifdef __SANITIZE_THREAD__
#define TSAN 1
#else
#define TSAN 0
#endif

SCENARIO(crash)
{
	const char *path = getenv("SC_PATH"), *rep = getenv("SC_REPORT");
	struct crasher c = {.path = path};
	struct sigaction sa = {.sa_handler = on_segv};

	if (!path || !rep)
		return 100;
	report_fd = open(rep, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0600);
	if (report_fd < 0)
		return 101;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, NULL);
	thread_run(crasher_job, &c, getenv("SC_MARKED") ? TH_MARK | TH_PIN_RT : 0, 0);
	return 0;
}

static pid_t crash_in_scenario(int marked, const char *path, int *how)
{
	char epath[PATH_MAX + 16], erep[2 * PATH_MAX], rep[PATH_MAX + 8];
	pid_t ids[2] = {-1, -1};
	struct proc p;

	snprintf(rep, sizeof(rep), "%s.tids", path);
	snprintf(epath, sizeof(epath), "SC_PATH=%s", path);
	snprintf(erep, sizeof(erep), "SC_REPORT=%s", rep);
	char *env[] = {epath, erep, marked ? "SC_MARKED=1" : "SC_MARKED", NULL};
	cr_assert_eq(run_scenario("crash", env, &p), 0);
	*how = WIFEXITED(p.status) ? WEXITSTATUS(p.status) : -WTERMSIG(p.status);
	size_t len = 0;
	char *s = slurp(rep, &len);
	if (s && len >= sizeof(ids))
		memcpy(ids, s, sizeof(ids));
	free(s);
	unlink(rep);
	return ids[1] < 0 ? -1 : ids[1] == ids[0] ? 0 : ids[1];
}

/* In a child: which thread took the SIGSEGV; -1 if none; how the child ended. */
static pid_t crash_in_child(int marked, const char *path, int *how)
{
	struct crasher c = {.path = path};
	int r[2];
	pid_t tid = -1;

	if (TSAN)
		return crash_in_scenario(marked, path, how);
	cr_assert_eq(pipe2(r, O_CLOEXEC), 0);
	fflush(NULL);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		struct sigaction sa = {.sa_handler = on_segv};
		sigemptyset(&sa.sa_mask);
		report_fd = r[1];
		sigaction(SIGSEGV, &sa, NULL);
		thread_run(crasher_job, &c, marked ? TH_MARK | TH_PIN_RT : 0, 0);
		_exit(0);
	}
	close(r[1]);
	pid_t caller = -1;
	if (read(r[0], &caller, sizeof(caller)) != sizeof(caller) ||
	    read(r[0], &tid, sizeof(tid)) != sizeof(tid))
		tid = -1;
	close(r[0]);
	*how = reap_code(pid);
	return tid == caller ? 0 : tid < 0 ? -1 : tid;
}

Test(faults, libc_crash_on_a_bad_pointer_happens_on_the_caller, .timeout = TEST_TIMEOUT)
{
	char dir[PATH_MAX], path[PATH_MAX];
	int dhow, mhow;

	tmp_make(dir);
	path_join(path, dir, "out");
	pid_t d = crash_in_child(0, path, &dhow);
	pid_t m = crash_in_child(1, path, &mhow);
	cr_expect(d == 0 && dhow == 42, "direct: handler thread %d, child %d", (int)d, dhow);
	cr_expect(m == 0 && mhow == 42,
		  "offloaded: the program's SIGSEGV handler %s (child ended %d; 42 = handler ran)",
		  m == 0  ? "ran on the caller"
		  : m < 0 ? "never ran"
			  : "ran on another thread",
		  mhow);
	tmp_remove(dir);
}

/* ---- the first call after the mark ------------------------------------------ */

/*
 * rt_offload_mark_thread() starts the helpers; the calls right after it
 * read the program's pointers (a path's first bytes, a sleep time) before
 * any helper has run.  A bad one must give EFAULT there too: the guard is
 * in place when the mark returns, not when a helper gets to it.  A busy
 * SCHED_FIFO 99 thread holds the helpers' CPU, so that no helper runs
 * before those first calls; the main thread releases it after 100 ms.
 * Without the live view and the stall watchdog, no other library thread
 * starts then.
 */
static _Atomic int released;
static _Atomic int hog_running;

static void hog_job(void *arg)
{
	(void)arg;
	atomic_store(&hog_running, 1);
	while (!atomic_load(&released))
		;
}

static void first_call_job(void *arg)
{
	int *err = arg;

	errno = 0;
	*err = open(bad_ptr, O_RDONLY) == -1 ? errno : 0;
	if (*err == EFAULT)
		*err = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, bad_ptr, NULL);
}

SCENARIO(first_call)
{
	struct test_thread hog, caller;
	struct timespec wait = {0, 100 * 1000 * 1000};
	int err = -1;

	if (pin_cpu(RT_CPU) != 0)
		return 100; /* one CPU: the hog would hold the caller's */
	if (thread_start(&hog, hog_job, NULL, TH_PIN_HK, 99) != 0)
		return 101;
	while (!atomic_load(&hog_running))
		sched_yield();
	/* SCHED_OTHER, so that this thread gets the CPU back to release the hog. */
	if (thread_start(&caller, first_call_job, &err, TH_MARK | TH_PIN_RT, 0) != 0)
		return 102;
	nanosleep(&wait, NULL);
	atomic_store(&released, 1);
	thread_join(&caller);
	thread_join(&hog);
	return err == EFAULT ? 0 : 1;
}

Test(faults, a_bad_pointer_in_the_first_call_after_the_mark_gives_efault, .timeout = TEST_TIMEOUT)
{
	char *env[] = {"RTOFFLOAD_OPTIONS=stall_us=0:live=0", NULL};
	struct proc p;

	cr_assert_eq(run_scenario("first_call", env, &p), 0);
	if (WIFEXITED(p.status) && WEXITSTATUS(p.status) == 100)
		cr_skip_test("no second CPU to hold the helpers' while the caller runs");
	cr_expect(WIFEXITED(p.status), "the process died of signal %d\nstderr:\n%s",
		  WIFSIGNALED(p.status) ? WTERMSIG(p.status) : 0, p.err);
	cr_expect(WIFEXITED(p.status) && WEXITSTATUS(p.status) == 0,
		  "exit %d (1: another errno than EFAULT)\nstderr:\n%s",
		  WIFEXITED(p.status) ? WEXITSTATUS(p.status) : -1, p.err);
}
