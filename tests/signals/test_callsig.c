/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Signals raised by an offloaded call itself (issue 6): a write to a pipe
 * whose read end is closed raises SIGPIPE, a write past RLIMIT_FSIZE raises
 * SIGXFSZ, at the thread that made the call.  The helper that really made
 * it must not keep the signal (it blocks everything: it would stay pending
 * for ever) and the caller must get it, with EPIPE / EFBIG:
 *  - with a handler, the handler runs on the calling thread;
 *  - blocked in the caller, the signal stays pending on the caller;
 *  - with the default action, the process dies of that signal.
 * fd_local=none (this file's options) makes pipe writes offloaded.
 */
#include "harness.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static _Atomic pid_t handler_tid;
static _Atomic int handler_runs;

static void on_signal(int sig)
{
	(void)sig;
	atomic_store(&handler_tid, tid_self());
	atomic_fetch_add(&handler_runs, 1);
}

static void install(int sig, void (*h)(int))
{
	struct sigaction sa = {.sa_handler = h};

	sigemptyset(&sa.sa_mask);
	cr_assert_eq(sigaction(sig, &sa, NULL), 0);
	atomic_store(&handler_tid, 0);
	atomic_store(&handler_runs, 0);
}

/* No criterion: scenarios count too. */
static uint64_t offloaded_count(void)
{
	struct rt_offload_stats s;

	rt_offload_get_stats(&s);
	return s.offloaded;
}

/* Is sig pending anywhere in this process: shared, or on any thread? */
static int pending_anywhere(int sig)
{
	char path[64];
	pid_t tids[64];
	int n = helper_tids(tids, 64);

	if (status_has_signal("/proc/self/status", "ShdPnd:", sig) == 1)
		return 1;
	for (int i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "/proc/self/task/%d/status", (int)tids[i]);
		if (status_has_signal(path, "SigPnd:", sig) == 1)
			return 1;
	}
	return 0;
}

/* ---- SIGPIPE ------------------------------------------------------------------ */

struct broken_pipe {
	int block; /* block SIGPIPE in the caller first */
	_Atomic pid_t tid;
	ssize_t ret;
	int err;
	int pending_here; /* SIGPIPE pending on the caller afterwards */
};

static void broken_pipe_job(void *arg)
{
	struct broken_pipe *b = arg;
	sigset_t set, pend;
	int p[2];

	atomic_store(&b->tid, tid_self());
	sigemptyset(&set);
	sigaddset(&set, SIGPIPE);
	if (b->block)
		pthread_sigmask(SIG_BLOCK, &set, NULL);
	if (pipe2(p, O_CLOEXEC) != 0) {
		b->ret = -2;
		return;
	}
	close(p[0]);
	b->ret = write(p[1], "x", 1);
	b->err = errno;
	close(p[1]);
	sigpending(&pend);
	b->pending_here = sigismember(&pend, SIGPIPE);
	if (b->pending_here) /* take it, so that the thread can end cleanly */
		sigwaitinfo(&set, NULL);
}

static void broken_pipe(int marked, int block, struct broken_pipe *b)
{
	memset(b, 0, sizeof(*b));
	b->block = block;
	cr_assert_eq(thread_run(broken_pipe_job, b, marked ? TH_MARK | TH_PIN_RT : 0, 0), 0);
}

Test(callsig, sigpipe_goes_to_the_caller_with_epipe, .timeout = TEST_TIMEOUT)
{
	struct broken_pipe d, m;

	install(SIGPIPE, on_signal);
	broken_pipe(0, 0, &d);
	cr_expect_eq(atomic_load(&handler_tid), atomic_load(&d.tid));
	cr_expect_eq(atomic_load(&handler_runs), 1);

	install(SIGPIPE, on_signal);
	uint64_t before = offloaded_count();
	broken_pipe(1, 0, &m);
	cr_expect_geq(offloaded_count() - before, 4, "pipe2/close/write/close were not offloaded");
	cr_expect(m.ret == -1 && m.err == EPIPE, "write: %zd errno %d (want -1 EPIPE)", m.ret,
		  m.err);
	cr_expect_eq(atomic_load(&handler_runs), 1, "SIGPIPE handled %d times",
		     atomic_load(&handler_runs));
	cr_expect_eq(atomic_load(&handler_tid), atomic_load(&m.tid),
		     "SIGPIPE's handler ran on thread %d, the caller is %d",
		     (int)atomic_load(&handler_tid), (int)atomic_load(&m.tid));
	cr_expect_not(pending_anywhere(SIGPIPE), "a SIGPIPE stays pending in the process");
}

Test(callsig, sigpipe_blocked_in_the_caller_stays_pending_on_the_caller, .timeout = TEST_TIMEOUT)
{
	struct broken_pipe d, m;

	install(SIGPIPE, on_signal);
	broken_pipe(0, 1, &d);
	broken_pipe(1, 1, &m);
	cr_expect(d.ret == -1 && d.err == EPIPE);
	cr_expect(m.ret == -1 && m.err == EPIPE, "write: %zd errno %d", m.ret, m.err);
	cr_expect(d.pending_here, "direct: no SIGPIPE pending on the caller");
	cr_expect(m.pending_here, "offloaded: no SIGPIPE pending on the caller");
	cr_expect_eq(atomic_load(&handler_runs), 0);
	cr_expect_not(pending_anywhere(SIGPIPE), "a SIGPIPE is pending elsewhere");
}

Test(callsig, sigpipe_ignored_is_only_epipe, .timeout = TEST_TIMEOUT)
{
	struct broken_pipe m;

	cr_assert_neq(signal(SIGPIPE, SIG_IGN), SIG_ERR);
	broken_pipe(1, 0, &m);
	cr_expect(m.ret == -1 && m.err == EPIPE, "write: %zd errno %d", m.ret, m.err);
	cr_expect_not(m.pending_here);
	cr_expect_not(pending_anywhere(SIGPIPE));
}

/* ---- the default action kills the process: in a child ------------------------- */

static void noop_job(void *arg)
{
	(void)arg;
}

#ifdef __SANITIZE_THREAD__
#define TSAN 1
#else
#define TSAN 0
#endif
/* ThreadSanitizer: the child as a scenario of this program (below). */
static int scenario_dies_of(int marked, const char *job, const char *path);
static const char *too_big_path(void *arg);

/* A child that makes the call from a (marked) thread; how it ended. */
static int child_dies_of(int marked, void (*job)(void *), void *arg, int sig)
{
	if (TSAN && job == broken_pipe_job)
		return scenario_dies_of(marked, "pipe", NULL);
	if (TSAN)
		return scenario_dies_of(marked, "big", too_big_path(arg));
	fflush(NULL);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		struct rlimit no_core = {0, 0};
		setrlimit(RLIMIT_CORE, &no_core);
		signal(sig, SIG_DFL);
		thread_run(job, arg, marked ? TH_MARK | TH_PIN_RT : 0, 0);
		_exit(0); /* survived: the signal was lost */
	}
	return reap_code(pid);
}

Test(callsig, sigpipe_default_action_kills_the_process, .timeout = TEST_TIMEOUT)
{
	struct broken_pipe b = {0};

	thread_run(noop_job, NULL, TH_MARK, 0); /* helpers exist before the fork */
	int d = child_dies_of(0, broken_pipe_job, &b, SIGPIPE);
	int m = child_dies_of(1, broken_pipe_job, &b, SIGPIPE);
	cr_expect_eq(d, -SIGPIPE, "direct child: %d", d);
	cr_expect_eq(m, -SIGPIPE, "offloaded child: %d (want killed by SIGPIPE)", m);
}

/* ---- SIGXFSZ ------------------------------------------------------------------ */

#define LIMIT 1000

struct too_big {
	const char *path;
	_Atomic pid_t tid;
	ssize_t partial, past, ppast;
	int err, perr;
};

static void too_big_job(void *arg)
{
	struct too_big *t = arg;
	static char buf[2 * LIMIT];
	int fd = open(t->path, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0600);

	atomic_store(&t->tid, tid_self());
	if (fd < 0) {
		t->partial = -2;
		return;
	}
	memset(buf, 'z', sizeof(buf));
	t->partial = write(fd, buf, sizeof(buf)); /* up to the limit, no signal */
	t->past = write(fd, buf, 1);		  /* at the limit: EFBIG + SIGXFSZ */
	t->err = errno;
	t->ppast = pwrite(fd, buf, 1, 5 * LIMIT);
	t->perr = errno;
	close(fd);
}

static void too_big(int marked, const char *dir, struct too_big *t)
{
	char path[PATH_MAX];
	struct rlimit old, lim;

	path_join(path, dir, marked ? "marked" : "direct");
	memset(t, 0, sizeof(*t));
	t->path = path;
	cr_assert_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = (struct rlimit){LIMIT, old.rlim_max};
	cr_assert_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
	int rc = thread_run(too_big_job, t, marked ? TH_MARK | TH_PIN_RT : 0, 0);
	setrlimit(RLIMIT_FSIZE, &old);
	cr_assert_eq(rc, 0);
}

Test(callsig, sigxfsz_goes_to_the_caller_with_efbig, .timeout = TEST_TIMEOUT)
{
	char dir[PATH_MAX];
	struct too_big d, m;

	tmp_make(dir);
	install(SIGXFSZ, on_signal);
	too_big(0, dir, &d);
	cr_expect_eq(atomic_load(&handler_runs), 2);
	cr_expect_eq(atomic_load(&handler_tid), atomic_load(&d.tid));

	install(SIGXFSZ, on_signal);
	too_big(1, dir, &m);
	cr_expect_eq(m.partial, d.partial, "partial write: %zd, direct %zd", m.partial, d.partial);
	cr_expect_eq(m.partial, LIMIT);
	cr_expect(m.past == -1 && m.err == EFBIG, "write: %zd errno %d (want -1 EFBIG)", m.past,
		  m.err);
	cr_expect(m.ppast == -1 && m.perr == EFBIG, "pwrite: %zd errno %d", m.ppast, m.perr);
	cr_expect_eq(atomic_load(&handler_runs), 2, "SIGXFSZ handled %d times (want 2)",
		     atomic_load(&handler_runs));
	cr_expect_eq(atomic_load(&handler_tid), atomic_load(&m.tid),
		     "SIGXFSZ's handler ran on thread %d, the caller is %d",
		     (int)atomic_load(&handler_tid), (int)atomic_load(&m.tid));
	cr_expect_not(pending_anywhere(SIGXFSZ), "a SIGXFSZ stays pending in the process");
	tmp_remove(dir);
}

Test(callsig, sigxfsz_default_action_kills_the_process, .timeout = TEST_TIMEOUT)
{
	char dir[PATH_MAX], path[PATH_MAX];
	struct too_big t = {0};
	struct rlimit lim = {LIMIT, RLIM_INFINITY};

	tmp_make(dir);
	path_join(path, dir, "big");
	t.path = path;
	thread_run(noop_job, NULL, TH_MARK, 0);
	cr_assert_eq(setrlimit(RLIMIT_FSIZE, &lim), 0); /* this test's process only */
	int d = child_dies_of(0, too_big_job, &t, SIGXFSZ);
	int m = child_dies_of(1, too_big_job, &t, SIGXFSZ);
	cr_expect_eq(d, -SIGXFSZ, "direct child: %d", d);
	cr_expect_eq(m, -SIGXFSZ, "offloaded child: %d (want killed by SIGXFSZ)", m);
	tmp_remove(dir);
}

/*
 * ThreadSanitizer cannot start threads in the child of a multi-threaded
 * fork (a criterion test process always is one): there the child is a
 * fresh process, this program run as a scenario (SC_JOB: pipe or big),
 * so the fork itself is not part of the test under it.
 */
SCENARIO(dies_of)
{
	const char *job = getenv("SC_JOB"), *path = getenv("SC_PATH");
	int marked = getenv("SC_MARKED") != NULL;
	struct broken_pipe b = {0};
	struct too_big t = {.path = path};
	struct rlimit no_core = {0, 0};

	if (!job || (strcmp(job, "pipe") && !path))
		return 100;
	setrlimit(RLIMIT_CORE, &no_core);
	if (strcmp(job, "big") == 0) { /* here, not inherited: criterion's start writes more */
		struct rlimit lim = {LIMIT, RLIM_INFINITY};
		setrlimit(RLIMIT_FSIZE, &lim);
	}
	signal(strcmp(job, "pipe") ? SIGXFSZ : SIGPIPE, SIG_DFL);
	if (strcmp(job, "pipe") == 0)
		thread_run(broken_pipe_job, &b, marked ? TH_MARK | TH_PIN_RT : 0, 0);
	else
		thread_run(too_big_job, &t, marked ? TH_MARK | TH_PIN_RT : 0, 0);
	return 0; /* survived: the signal was lost */
}

static int scenario_dies_of(int marked, const char *job, const char *path)
{
	char ejob[32], epath[PATH_MAX + 16];
	struct proc p;

	snprintf(ejob, sizeof(ejob), "SC_JOB=%s", job);
	snprintf(epath, sizeof(epath), "SC_PATH=%s", path ? path : "");
	char *env[] = {ejob, epath, marked ? "SC_MARKED=1" : "SC_MARKED", NULL};
	struct rlimit old, none = {RLIM_INFINITY, RLIM_INFINITY};
	cr_assert_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
	setrlimit(RLIMIT_FSIZE, &none); /* the scenario sets its own */
	int rc = run_scenario("dies_of", env, &p);
	setrlimit(RLIMIT_FSIZE, &old);
	cr_assert_eq(rc, 0);
	if (WIFSIGNALED(p.status))
		return -WTERMSIG(p.status);
	return WIFEXITED(p.status) ? WEXITSTATUS(p.status) : -1000;
}

static const char *too_big_path(void *arg)
{
	return ((struct too_big *)arg)->path;
}
