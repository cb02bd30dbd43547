/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Cancellation and the interrupt kick (issue 6, "Cancellation"):
 *  - pthread_cancel() of a thread waiting for an offloaded read cancels it:
 *    its cleanup handlers run, pthread_join() says PTHREAD_CANCELED, and the
 *    worker's read is abandoned (it consumes nothing written later, and the
 *    only worker is free for the next call);
 *  - a cancellation already pending acts before the call (no byte written);
 *  - with cancellation disabled the call goes on and returns its data;
 *  - the signal that interrupts a worker's call never lands in the next call
 *    the worker runs for another thread (no spurious EINTR).
 * Every case runs marked and unmarked; both must agree.  workers=1 (the
 * CMake options): a worker left inside the abandoned read would hang the
 * next offloaded call, and criterion's timeout would fail the test.
 */
#include "harness.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

struct reader {
	int fd, marked, disable_cancel;
	_Atomic pid_t tid;
	_Atomic int cleanup_ran;
	ssize_t ret;
	int err;
	char buf[16];
	struct flag started, returned;
};

static void cleanup(void *arg)
{
	struct reader *r = arg;
	atomic_store(&r->cleanup_ran, 1);
}

static void *reader_main(void *arg)
{
	struct reader *volatile r = arg; /* kept across pthread_cleanup_push's setjmp */

	pin_cpu(RT_CPU);
	if (r->marked && rt_offload_mark_thread() != 0)
		return NULL;
	if (r->disable_cancel)
		pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	atomic_store(&r->tid, tid_self());
	flag_set(&r->started);
	pthread_cleanup_push(cleanup, r);
	r->ret = read(r->fd, r->buf, sizeof(r->buf));
	r->err = errno;
	flag_set(&r->returned);
	pthread_cleanup_pop(0);
	if (r->disable_cancel) {
		pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
		pthread_testcancel(); /* the cancel of the test thread acts here */
	}
	return (void *)r;
}

/* Where the read blocks: on a helper (marked) or in the thread itself. */
static void wait_read_blocked(struct reader *r)
{
	cr_assert(flag_wait_s(&r->started, WAIT_S));
	if (r->marked)
		cr_assert_neq(wait_helper_in_syscall(SYS_read, r->fd), 0,
			      "the read is not blocked on a helper");
	else
		cr_assert(wait_task_in_syscall(atomic_load(&r->tid), SYS_read, r->fd),
			  "the read is not blocked in its thread");
}

/* A marked thread's offloaded write, after the cancel: the worker is free. */
static void *writer_main(void *arg)
{
	int *fd = arg;

	pin_cpu(RT_CPU);
	if (rt_offload_mark_thread() != 0)
		return NULL;
	ssize_t n = write(*fd, "after", 5);
	rt_offload_unmark_thread();
	return (void *)(intptr_t)n;
}

static void cancel_blocked_read(int marked)
{
	int p[2];
	struct reader r = {.marked = marked};
	pthread_t t;
	void *res;

	cr_assert_eq(pipe(p), 0);
	r.fd = p[0];
	cr_assert_eq(pthread_create(&t, NULL, reader_main, &r), 0);
	wait_read_blocked(&r);
	cr_assert_eq(pthread_cancel(t), 0);
	cr_assert_eq(pthread_join(t, &res), 0);
	cr_expect_eq(res, PTHREAD_CANCELED, "the thread was not cancelled");
	cr_expect(atomic_load(&r.cleanup_ran), "its cleanup handler did not run");
	cr_expect_not(flag_is_set(&r.returned), "read() returned to the cancelled thread");

	/* Nobody reads any more: what is written now stays in the pipe. */
	pthread_t w;
	void *wrote;
	cr_assert_eq(pthread_create(&w, NULL, writer_main, &p[1]), 0);
	cr_assert_eq(pthread_join(w, &wrote), 0);
	cr_expect_eq((intptr_t)wrote, 5, "the marked write after the cancel failed");
	char buf[16] = {0};
	cr_expect_eq(read(p[0], buf, sizeof(buf)), 5, "the abandoned read took bytes");
	cr_expect_str_eq(buf, "after");
	close(p[0]);
	close(p[1]);
}

Test(cancel, blocked_offloaded_read_is_cancelled, .timeout = TEST_TIMEOUT)
{
	cancel_blocked_read(1);
}

Test(cancel, blocked_direct_read_is_cancelled, .timeout = TEST_TIMEOUT)
{
	cancel_blocked_read(0);
}

/* ---- a cancellation pending at the call acts before it ------------------- */

struct pending {
	const char *path;
	int marked;
	ssize_t ret;
};

static void close_fd(void *arg)
{
	close((int)(intptr_t)arg);
}

static void *pending_main(void *arg)
{
	struct pending *volatile pc = arg; /* kept across pthread_cleanup_push's setjmp */
	int fd = open(pc->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	pin_cpu(RT_CPU);
	if (fd < 0 || (pc->marked && rt_offload_mark_thread() != 0))
		return NULL;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	pthread_cancel(pthread_self());
	pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
	pthread_cleanup_push(close_fd, (void *)(intptr_t)fd);
	pc->ret = write(fd, "lost", 4); /* a cancellation point: never runs */
	pthread_cleanup_pop(1);
	return (void *)pc;
}

static void pending_cancel(int marked)
{
	char dir[PATH_MAX], path[PATH_MAX];
	struct pending pc = {.marked = marked, .ret = -2};
	struct stat st;
	pthread_t t;
	void *res;

	tmp_make(dir);
	cr_assert(dir[0]);
	path_join(path, dir, "file");
	pc.path = path;
	cr_assert_eq(pthread_create(&t, NULL, pending_main, &pc), 0);
	cr_assert_eq(pthread_join(t, &res), 0);
	cr_expect_eq(res, PTHREAD_CANCELED, "the pending cancellation did not act");
	cr_expect_eq(pc.ret, -2, "write() returned to the cancelled thread");
	cr_assert_eq(stat(path, &st), 0);
	cr_expect_eq(st.st_size, 0, "the write ran before the cancellation acted");
	tmp_remove(dir);
}

Test(cancel, pending_cancel_acts_before_offloaded_write, .timeout = TEST_TIMEOUT)
{
	pending_cancel(1);
}

Test(cancel, pending_cancel_acts_before_direct_write, .timeout = TEST_TIMEOUT)
{
	pending_cancel(0);
}

/* ---- cancellation disabled: the call goes on ------------------------------ */

static void disabled_cancel(int marked)
{
	int p[2];
	struct reader r = {.marked = marked, .disable_cancel = 1};
	pthread_t t;
	void *res;

	cr_assert_eq(pipe(p), 0);
	r.fd = p[0];
	cr_assert_eq(pthread_create(&t, NULL, reader_main, &r), 0);
	wait_read_blocked(&r);
	cr_assert_eq(pthread_cancel(t), 0);
	/* Still reading: the bytes go to it. */
	wait_read_blocked(&r);
	cr_assert_eq(write(p[1], "data", 4), 4);
	cr_assert_eq(pthread_join(t, &res), 0);
	cr_expect_eq(res, PTHREAD_CANCELED, "the cancellation did not act when enabled");
	cr_expect_eq(r.ret, 4, "read returned %zd (errno %d)", r.ret, r.err);
	cr_expect_eq(memcmp(r.buf, "data", 4), 0);
	close(p[0]);
	close(p[1]);
}

Test(cancel, disabled_cancel_lets_offloaded_read_finish, .timeout = TEST_TIMEOUT)
{
	disabled_cancel(1);
}

Test(cancel, disabled_cancel_lets_direct_read_finish, .timeout = TEST_TIMEOUT)
{
	disabled_cancel(0);
}

/* ---- the kick that interrupts one call spares the next ------------------ */

static void on_usr1(int sig)
{
	(void)sig;
}

/*
 * A interrupts its blocking read with a signal (EINTR through a kick of the
 * only worker); B's blocking read, on the same worker right after, must
 * take the bytes written to it, never a stray EINTR.  Many rounds: the
 * window the kick protocol closes is short.
 */
Test(cancel, interrupt_kick_never_hits_the_next_call, .timeout = 120.0)
{
	struct sigaction sa = {.sa_handler = on_usr1}; /* no SA_RESTART: EINTR */

	sigemptyset(&sa.sa_mask);
	cr_assert_eq(sigaction(SIGUSR1, &sa, NULL), 0);
	for (int round = 0; round < 50; round++) {
		int pa[2], pb[2];
		struct reader a = {.marked = 1}, b = {.marked = 1};
		pthread_t ta, tb;

		cr_assert_eq(pipe(pa), 0);
		cr_assert_eq(pipe(pb), 0);
		a.fd = pa[0];
		b.fd = pb[0];
		cr_assert_eq(pthread_create(&ta, NULL, reader_main, &a), 0);
		wait_read_blocked(&a);
		cr_assert_eq(pthread_create(&tb, NULL, reader_main, &b), 0);
		cr_assert(flag_wait_s(&b.started, WAIT_S));
		cr_assert_eq(pthread_kill(ta, SIGUSR1), 0);
		cr_assert(flag_wait_s(&a.returned, WAIT_S), "A's read was not interrupted");
		wait_read_blocked(&b);
		cr_assert_eq(write(pb[1], "b", 1), 1);
		cr_assert_eq(pthread_join(ta, NULL), 0);
		cr_assert_eq(pthread_join(tb, NULL), 0);
		cr_expect_eq(a.ret, -1);
		cr_expect_eq(a.err, EINTR, "A: errno %d", a.err);
		cr_assert_eq(b.ret, 1, "round %d: B's read returned %zd, errno %d", round, b.ret,
			     b.err);
		close(pa[0]);
		close(pa[1]);
		close(pb[0]);
		close(pb[1]);
	}
}
