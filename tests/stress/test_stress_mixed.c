/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Stress (issue 6): 16 marked threads make mixed calls (write, pwrite,
 * fsync, open, close, stat, fprintf) against 4 workers (this file's
 * options: workers=4:fd_local=none), while
 *  - a signaller sends SIGUSR1 (SA_RESTART handler that itself writes one
 *    byte with write()) to random marked threads;
 *  - a forker, itself marked, forks every few milliseconds; each child
 *    offloads one write (starting its own helpers) and exits;
 *  - a watchdog, on a hang, writes every thread's comm, state, wchan,
 *    system call and kernel stack to stderr (and a gdb backtrace of all
 *    threads when gdb is installed), then aborts: a failure, not a hung CI.
 * Then every call's result was right (each thread checks its own and
 * counts failures) and every byte is accounted for: each file is compared
 * with what its thread's sequence of calls must have produced.
 *
 * Calls per thread: 20000.  RTO_STRESS_LONG=1 in the environment makes it
 * 1000000 (16M calls: about 3 minutes here; the watchdog then allows a
 * day), RTO_STRESS_CALLS=N makes it N (200000: about 40 s here).  The
 * sequence of operations of a thread is a fixed pseudo-random function of
 * its number, so a failure replays.
 */
#include "harness.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define THREADS 16
#define REC	32 /* bytes of every write/pwrite record */
#define LINE	14 /* bytes of every fprintf line: "f NN NNNNNNNN\n" */

/* RTO_STRESS_LONG=1: 1M calls per thread; RTO_STRESS_CALLS=N: N. */
static long calls_per_thread(void)
{
	const char *l = getenv("RTO_STRESS_LONG"), *n = getenv("RTO_STRESS_CALLS");

	if (n && atol(n) > 0)
		return atol(n);
	return l && strcmp(l, "1") == 0 ? 1000000 : 20000;
}

/* RTO_STRESS_WATCHDOG_S=N: another watchdog delay (N=1 shows what a hang prints). */
static double watchdog_s(void)
{
	const char *w = getenv("RTO_STRESS_WATCHDOG_S");

	if (w && atof(w) > 0)
		return atof(w);
	return calls_per_thread() > 20000 ? 86400 : 150;
}

/* ---- one marked thread --------------------------------------------------------------- */

enum op { OP_WRITE, OP_PWRITE, OP_PRINTF, OP_OPENCLOSE, OP_STAT, OP_FSYNC };

/* The fixed mix: 35% write, 20% pwrite, 20% fprintf, 12% open+close, 12% stat, 1% fsync. */
static enum op pick(uint64_t *rng)
{
	*rng ^= *rng << 13;
	*rng ^= *rng >> 7;
	*rng ^= *rng << 17;
	unsigned r = (unsigned)(*rng % 100);
	return r < 35	? OP_WRITE
	       : r < 55 ? OP_PWRITE
	       : r < 75 ? OP_PRINTF
	       : r < 87 ? OP_OPENCLOSE
	       : r < 99 ? OP_STAT
			: OP_FSYNC;
}

struct worker {
	int index;
	long calls;
	char wpath[PATH_MAX], ppath[PATH_MAX], fpath[PATH_MAX], spath[PATH_MAX];
	int wfd, pfd;
	FILE *fp;
	long nwrite, npwrite, nprintf; /* records written, for the check */
	long failures;
	char first_failure[160];
	_Atomic long signals; /* handler runs on this thread */
	int sfd;	      /* the handler's file */
	struct flag done;     /* set at the end: the signaller must not kill a joined thread */
};

static __thread struct worker *self_worker;

/*
 * GCC 12's AddressSanitizer takes no lock of its allocator around fork():
 * a thread inside it at that moment leaves the child a lock held for ever,
 * and the child's first allocation (its helpers' start) hangs.  Under it
 * (the asan preset, tests/sanitizers/README.md) each fork is made at a
 * quiet point: the marked threads and the signaller park between calls and
 * the helpers fall asleep first.  Elsewhere (no sanitizer, TSan, whose
 * fork takes its locks) the forks land anywhere.
 */
#ifdef __SANITIZE_ADDRESS__
#define QUIET_FORKS 1
#else
#define QUIET_FORKS 0
#endif
static _Atomic int pause_req, parked;

static void park_if_asked(void)
{
	struct timespec ts = {0, 100000};

	if (!QUIET_FORKS || !atomic_load(&pause_req))
		return;
	atomic_fetch_add(&parked, 1);
	while (atomic_load(&pause_req))
		nanosleep(&ts, NULL);
	atomic_fetch_sub(&parked, 1);
}

static void fail(struct worker *w, long seq, const char *what, long ret)
{
	if (!w->failures++)
		snprintf(w->first_failure, sizeof(w->first_failure),
			 "thread %d call %ld: %s returned %ld, errno %d", w->index, seq, what, ret,
			 errno);
}

static void record(char *buf, char kind, int index, long n)
{
	snprintf(buf, REC + 1, "%c %02d %026ld\n", kind, index, n);
}

static void one_call(struct worker *w, enum op op, long seq)
{
	char rec[REC + 1];
	struct stat st;
	long r;

	switch (op) {
	case OP_WRITE:
		record(rec, 'w', w->index, w->nwrite);
		if ((r = write(w->wfd, rec, REC)) != REC)
			fail(w, seq, "write", r);
		w->nwrite++;
		break;
	case OP_PWRITE:
		record(rec, 'p', w->index, w->npwrite);
		if ((r = pwrite(w->pfd, rec, REC, (off_t)w->npwrite * REC)) != REC)
			fail(w, seq, "pwrite", r);
		w->npwrite++;
		break;
	case OP_PRINTF:
		if ((r = fprintf(w->fp, "f %02d %08ld\n", w->index, w->nprintf)) != LINE)
			fail(w, seq, "fprintf", r);
		w->nprintf++;
		break;
	case OP_OPENCLOSE:
		r = open(w->wpath, O_RDONLY | O_CLOEXEC);
		if (r < 0 || close((int)r) != 0)
			fail(w, seq, "open/close", r);
		break;
	case OP_STAT:
		if ((r = stat(w->wpath, &st)) != 0 || st.st_size != w->nwrite * REC)
			fail(w, seq, "stat (or its size)", r ? r : (long)st.st_size);
		break;
	case OP_FSYNC:
		if ((r = fsync(w->wfd)) != 0)
			fail(w, seq, "fsync", r);
		break;
	}
}

static void worker_job(void *arg)
{
	struct worker *w = arg;
	uint64_t rng = 0x9e3779b97f4a7c15ull * (uint64_t)(w->index + 1);

	self_worker = w;
	w->wfd = open(w->wpath, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0600);
	w->pfd = open(w->ppath, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0600);
	w->sfd = open(w->spath, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0600);
	w->fp = fopen(w->fpath, "w");
	if (w->wfd < 0 || w->pfd < 0 || w->sfd < 0 || !w->fp) {
		fail(w, -1, "open", -1);
		flag_set(&w->done);
		return;
	}
	for (long seq = 0; seq < w->calls; seq++) {
		park_if_asked();
		one_call(w, pick(&rng), seq);
	}
	if (fclose(w->fp) != 0)
		fail(w, w->calls, "fclose", -1);
	self_worker = NULL; /* no more handler writes: the file is final */
	close(w->wfd);
	close(w->pfd);
	close(w->sfd);
	flag_set(&w->done);
}

/* SA_RESTART; its own wrapped write runs directly or is offloaded, never lost. */
static void on_usr1(int sig)
{
	struct worker *w = self_worker;
	int saved = errno;

	(void)sig;
	if (w && write(w->sfd, "s", 1) == 1)
		atomic_fetch_add(&w->signals, 1);
	errno = saved;
}

/* ---- signaller, forker, watchdog -------------------------------------------------------- */

struct stress {
	struct worker w[THREADS];
	struct test_thread t[THREADS];
	_Atomic int stop;
	char fork_path[PATH_MAX];
	long forks, fork_failures, fork_first_status;
	long kills;
	struct flag finished;
	double watchdog_s;
};

static void nap_us(long us)
{
	struct timespec ts = {0, us * 1000};

	nanosleep(&ts, NULL);
}

static void signaller_job(void *arg)
{
	struct stress *s = arg;
	unsigned seed = 1;

	while (!atomic_load(&s->stop)) {
		park_if_asked();
		int i = rand_r(&seed) % THREADS;
		if (pthread_kill(s->t[i].thread, SIGUSR1) == 0)
			s->kills++;
		nap_us(200);
	}
}

/*
 * The child of a fork: one offloaded write from the (marked) forking
 * thread.  Under ThreadSanitizer, which cannot follow threads started in
 * the child of a multi-threaded fork, the library marks nothing there
 * (libsrc/core/fork.c): the write is made directly.
 */
#ifdef __SANITIZE_THREAD__
#define FORK_CHILD_DIRECT 1
#else
#define FORK_CHILD_DIRECT 0
#endif

static int fork_child(const char *path, long n)
{
	char rec[REC + 1];
	struct rt_offload_stats a, b;
	int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);

	if (fd < 0 || rt_offload_thread_is_marked() == FORK_CHILD_DIRECT)
		return 1;
	record(rec, 'k', 0, n);
	rt_offload_get_stats(&a);
	if (write(fd, rec, REC) != REC)
		return 2;
	rt_offload_get_stats(&b);
	return (b.offloaded > a.offloaded) != FORK_CHILD_DIRECT ? 0 : 3;
}

/* QUIET_FORKS: every other thread parked or done, every helper asleep. */
static void quiesce(struct stress *s)
{
	pid_t helpers[64];

	atomic_store(&pause_req, 1);
	for (;;) {
		int done = 0;
		for (int i = 0; i < THREADS; i++)
			done += flag_is_set(&s->w[i].done);
		if (atomic_load(&parked) + done >= THREADS + 1 || atomic_load(&s->stop))
			break; /* + 1: the signaller */
		nap_us(100);
	}
	int n = helper_tids(helpers, 64);
	for (int i = 0; i < n; i++)
		wait_task_in_syscall(helpers[i], SYS_futex, -1);
}

static void forker_job(void *arg)
{
	struct stress *s = arg;

	while (!atomic_load(&s->stop)) {
		if (QUIET_FORKS)
			quiesce(s);
		pid_t pid = fork();
		atomic_store(&pause_req, 0);
		if (pid == 0)
			_exit(fork_child(s->fork_path, s->forks));
		int code = pid < 0 ? -1000 : reap_code(pid);
		if (code != 0 && !s->fork_failures++)
			s->fork_first_status = code;
		s->forks++;
		nap_us(3000);
	}
}

static void watchdog_job(void *arg)
{
	struct stress *s = arg;

	if (flag_wait_s(&s->finished, s->watchdog_s))
		return;
	dump_threads(2);
	if (access("/usr/bin/gdb", X_OK) == 0) {
		char cmd[128];
		snprintf(cmd, sizeof(cmd),
			 "gdb -p %d -batch -ex 'thread apply all bt' </dev/null 1>&2 2>/dev/null",
			 (int)getpid());
		if (system(cmd) != 0)
			dprintf(2, "(gdb failed)\n");
	}
	dprintf(2, "watchdog: the stress test hung for %.0f s\n", s->watchdog_s);
	signal(SIGABRT, SIG_DFL); /* already reported: not through on_crash again */
	abort();
}

/* A crash: say where (this thread's backtrace, every thread's state), then die of it. */
static void on_crash(int sig)
{
	void *frames[64];
	int n = backtrace(frames, 64);

	dprintf(2, "crash: %s in thread %d\n", strsignal(sig), (int)tid_self());
	backtrace_symbols_fd(frames, n, 2);
	dump_threads(2);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void report_crashes(void)
{
	static const int sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
	void *warm[1];

	backtrace(warm, 1); /* loads libgcc now, not in the handler */
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		struct sigaction sa = {.sa_handler = on_crash, .sa_flags = SA_RESETHAND};
		sigemptyset(&sa.sa_mask);
		sigaction(sigs[i], &sa, NULL);
	}
}

/* ---- the checks ------------------------------------------------------------------------- */

/* The file holds exactly n records of the given kind, numbered 0..n-1. */
static void expect_records(const char *path, char kind, int index, long n)
{
	size_t len;
	char *s = slurp(path, &len);
	char rec[REC + 1];

	cr_assert(s, "%s unreadable", path);
	cr_expect_eq(len, (size_t)n * REC, "%s: %zu bytes, want %ld records", path, len, n);
	for (long i = 0; i < n && (size_t)(i + 1) * REC <= len; i++) {
		record(rec, kind, index, i);
		if (memcmp(s + i * REC, rec, REC) != 0) {
			cr_expect_fail("%s: record %ld is wrong", path, i);
			break;
		}
	}
	free(s);
}

static void expect_printf_lines(const char *path, int index, long n)
{
	size_t len;
	char *s = slurp(path, &len), line[32];

	cr_assert(s);
	cr_expect_eq(len, (size_t)n * LINE, "%s: %zu bytes, want %ld lines", path, len, n);
	for (long i = 0; i < n && (size_t)(i + 1) * LINE <= len; i++) {
		snprintf(line, sizeof(line), "f %02d %08ld\n", index, i);
		if (memcmp(s + i * LINE, line, LINE) != 0) {
			cr_expect_fail("%s: line %ld is wrong", path, i);
			break;
		}
	}
	free(s);
}

/* Every fork child's record, each exactly once (they append in any order). */
static void expect_fork_records(const char *path, long forks)
{
	size_t len;
	char *s = slurp(path, &len);
	char *seen = calloc((size_t)forks + 1, 1);

	cr_assert(s && seen);
	cr_expect_eq(len, (size_t)forks * REC, "%zu bytes for %ld forks", len, forks);
	for (size_t off = 0; off + REC <= len; off += REC) {
		long n = strtol(s + off + 5, NULL, 10);
		cr_expect(n >= 0 && n < forks && !seen[n], "fork record %ld duplicated or bogus",
			  n);
		if (n >= 0 && n < forks)
			seen[n] = 1;
	}
	free(seen);
	free(s);
}

static void expect_worker_files(struct worker *w)
{
	size_t slen = 0;
	char *sig = slurp(w->spath, &slen);

	cr_expect_eq(w->failures, 0, "%ld failed calls; first: %s", w->failures, w->first_failure);
	expect_records(w->wpath, 'w', w->index, w->nwrite);
	expect_records(w->ppath, 'p', w->index, w->npwrite);
	expect_printf_lines(w->fpath, w->index, w->nprintf);
	cr_expect_eq((long)slen, atomic_load(&w->signals),
		     "thread %d: %ld handler writes counted, %zu bytes", w->index,
		     atomic_load(&w->signals), slen);
	free(sig);
}

/*
 * criterion's timeout must allow RTO_STRESS_LONG (it wins over --timeout):
 * in CI the watchdog (150 s) fails a hang first, and ctest's TIMEOUT backs it.
 */
Test(stress, sixteen_marked_threads_with_signals_and_forks_lose_nothing, .timeout = 90000)
{
	static struct stress s; /* large: not on the stack */
	char dir[PATH_MAX];
	struct test_thread sig, fork, dog;
	struct sigaction sa = {.sa_handler = on_usr1, .sa_flags = SA_RESTART};

	tmp_make(dir);
	cr_assert(dir[0]);
	report_crashes();
	sigemptyset(&sa.sa_mask);
	cr_assert_eq(sigaction(SIGUSR1, &sa, NULL), 0);
	s.watchdog_s = watchdog_s();
	path_join(s.fork_path, dir, "forks");
	cr_assert_eq(close(open(s.fork_path, O_CREAT | O_WRONLY | O_TRUNC, 0600)), 0);
	thread_start(&dog, watchdog_job, &s, 0, 0);

	for (int i = 0; i < THREADS; i++) {
		struct worker *w = &s.w[i];
		char name[32];
		w->index = i;
		w->calls = calls_per_thread();
		snprintf(name, sizeof(name), "w%02d", i);
		path_join(w->wpath, dir, name);
		name[0] = 'p';
		path_join(w->ppath, dir, name);
		name[0] = 'f';
		path_join(w->fpath, dir, name);
		name[0] = 's';
		path_join(w->spath, dir, name);
		cr_assert_eq(thread_start(&s.t[i], worker_job, w, TH_MARK, 0), 0);
	}
	cr_assert_eq(thread_start(&sig, signaller_job, &s, 0, 0), 0);
	cr_assert_eq(thread_start(&fork, forker_job, &s, TH_MARK, 0), 0);

	/* Stop the signaller before joining: it must not kill a joined thread. */
	for (int i = 0; i < THREADS; i++)
		flag_wait(&s.w[i].done);
	atomic_store(&s.stop, 1);
	thread_join(&sig);
	thread_join(&fork);
	for (int i = 0; i < THREADS; i++)
		cr_assert_eq(thread_join(&s.t[i]), 0, "thread %d was not marked", i);
	flag_set(&s.finished);
	thread_join(&dog);

	long signals = 0;
	for (int i = 0; i < THREADS; i++) {
		expect_worker_files(&s.w[i]);
		signals += atomic_load(&s.w[i].signals);
	}
	cr_expect_eq(s.fork_failures, 0, "%ld of %ld fork children failed; first: %ld",
		     s.fork_failures, s.forks, s.fork_first_status);
	cr_expect_gt(s.forks, 0);
	expect_fork_records(s.fork_path, s.forks);
	cr_expect_gt(signals, 0, "no signal reached a marked thread (%ld sent)", s.kills);
	cr_log_info("%ld calls per thread, %ld signals handled of %ld sent, %ld forks",
		    calls_per_thread(), signals, s.kills, s.forks);
	tmp_remove(dir);
}
