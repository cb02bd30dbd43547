/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A signal handler that makes a wrapped call while its thread waits for an
 * offload: the handler's call must run directly (no nested offload, no
 * deadlock), and the interrupted call must end as it would have without
 * the library: with SA_RESTART it goes on and returns its data, without it
 * the blocking read fails with EINTR.  Each case runs on a marked thread
 * (the read blocks on a helper) and on an unmarked one (the read blocks in
 * the thread itself), and both must agree.
 */
#include "harness.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* What the handler saw; it runs on the reading thread. */
static int handler_fd;
static ssize_t handler_ret;
static int handler_err;
static pid_t handler_tid;
static struct flag handler_done;

static void on_usr1(int sig)
{
	int saved = errno;

	(void)sig;
	handler_tid = tid_self();
	handler_ret = write(handler_fd, "from the handler\n", 17);
	handler_err = errno;
	flag_set(&handler_done);
	errno = saved;
}

struct reader {
	int fd;
	pid_t tid;
	struct flag started, finished;
	ssize_t n;
	int err;
	char buf[32];
};

/* A read of an empty pipe, interrupted by a signal. */
static void reader_job(void *arg)
{
	struct reader *r = arg;

	r->tid = tid_self();
	flag_set(&r->started);
	errno = EDOM; /* a sentinel: a successful read must leave it */
	r->n = read(r->fd, r->buf, sizeof(r->buf));
	r->err = errno;
	flag_set(&r->finished);
}

struct outcome {
	struct reader r;
	pid_t handler_tid;
	ssize_t handler_ret;
	char handler_bytes[64];
	uint64_t counted_by_handler; /* offloaded + local while the handler ran */
	uint64_t offloaded;	     /* in all */
};

/* Where the read blocks: in a helper (marked) or in the thread itself. */
static void wait_until_blocked(struct reader *r, int marked)
{
	if (marked)
		cr_assert_neq(wait_helper_in_syscall(SYS_read, r->fd), 0,
			      "the read is not blocked on a helper");
	else
		cr_assert(wait_task_in_syscall(r->tid, SYS_read, r->fd),
			  "the read is not blocked in its thread");
}

static void signal_during_read(int marked, int restart, struct outcome *o)
{
	char dir[PATH_MAX], path[PATH_MAX];
	struct sigaction sa = {.sa_handler = on_usr1, .sa_flags = restart ? SA_RESTART : 0};
	int p[2];
	struct bg b;

	memset(o, 0, sizeof(*o));
	tmp_make(dir);
	pathf(path, "%s/handler", dir);
	handler_fd = open(path, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);
	cr_assert_geq(handler_fd, 0);
	atomic_store(&handler_done.v, 0);
	sigemptyset(&sa.sa_mask);
	cr_assert_eq(sigaction(SIGUSR1, &sa, NULL), 0);
	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	o->r.fd = p[0];
	start_helpers();
	struct rt_offload_stats s0 = stats_now();

	bg_start(&b, reader_job, &o->r, marked ? BG_MARK | BG_PIN : 0);
	cr_assert(flag_wait_timeout(&o->r.started));
	wait_until_blocked(&o->r, marked);
	struct rt_offload_stats s1 = stats_now();
	cr_assert_eq(pthread_kill(b.thread, SIGUSR1), 0);
	int fed = 0;
#ifdef __SANITIZE_THREAD__
	/*
	 * ThreadSanitizer itself (library or not) runs the SA_RESTART handler
	 * of a thread blocked in read() only once the read returns: the
	 * unmarked read gets its data first (tests/sanitizers/README.md).
	 */
	if (restart && !marked) {
		cr_assert_eq(write(p[1], "data", 4), 4);
		fed = 1;
	}
#endif
	cr_assert(flag_wait_timeout(&handler_done), "the handler never finished: deadlock?");
	struct rt_offload_stats s2 = stats_now();
	if (restart && !fed) {
		/* The read goes on: it still waits for data, then gets it. */
		wait_until_blocked(&o->r, marked);
		cr_assert_eq(write(p[1], "data", 4), 4);
	} else if (!restart) {
		/* The read ends by itself, with no data ever written... */
		int ended = flag_wait_timeout(&o->r.finished);
		if (!ended)
			cr_assert_eq(write(p[1], "data", 4), 4); /* ...or unblock it */
		cr_expect(ended, "the interrupted read did not end");
	}
	bg_join(&b);

	o->handler_tid = handler_tid;
	o->handler_ret = handler_ret;
	/* Only with SA_RESTART is the read itself sure to be still running (not
	 * yet counted) when the handler is done: then the window is the handler's. */
	if (restart)
		o->counted_by_handler = (s2.offloaded - s1.offloaded) + (s2.local - s1.local);
	o->offloaded = stats_now().offloaded - s0.offloaded;
	char *s = slurp(path, NULL);
	snprintf(o->handler_bytes, sizeof(o->handler_bytes), "%s", s ? s : "");
	free(s);
	close(handler_fd);
	close(p[0]);
	close(p[1]);
	tmp_remove(dir);
}

static void expect_handler_ran_directly(const struct outcome *o, const char *how)
{
	cr_expect_eq(o->handler_tid, o->r.tid, "%s: the handler ran on another thread", how);
	cr_expect_eq(o->handler_ret, 17, "%s: handler's write: %zd errno %d", how, o->handler_ret,
		     handler_err);
	cr_expect_str_eq(o->handler_bytes, "from the handler\n", "%s", how);
	/* Run directly: neither offloaded nor counted as a marked thread's call
	 * (measured in the SA_RESTART case, see signal_during_read). */
	cr_expect_eq(o->counted_by_handler, 0, "%s: the handler's write was counted", how);
}

Test(signals, sa_restart_handler_writes_and_the_read_goes_on, .timeout = TEST_TIMEOUT)
{
	struct outcome d, m;

	signal_during_read(0, 1, &d);
	signal_during_read(1, 1, &m);
	expect_handler_ran_directly(&m, "marked");
	expect_handler_ran_directly(&d, "unmarked");
	cr_expect(d.r.n == 4 && memcmp(d.r.buf, "data", 4) == 0, "direct read: %zd errno %d", d.r.n,
		  d.r.err);
	cr_expect(m.r.n == 4 && memcmp(m.r.buf, "data", 4) == 0, "offloaded read: %zd errno %d",
		  m.r.n, m.r.err);
	cr_expect_eq(m.r.err, EDOM, "a successful read changed errno to %d", m.r.err);
	cr_expect_eq(m.offloaded, 1, "the read was offloaded %lu times", m.offloaded);
	cr_expect_eq(d.offloaded, 0);
}

Test(signals, handler_without_sa_restart_interrupts_like_the_kernel, .timeout = TEST_TIMEOUT)
{
	struct outcome d, m;

	signal_during_read(0, 0, &d);
	signal_during_read(1, 0, &m);
	expect_handler_ran_directly(&m, "marked");
	expect_handler_ran_directly(&d, "unmarked");
	cr_expect(d.r.n == -1 && d.r.err == EINTR, "direct read: %zd errno %d", d.r.n, d.r.err);
	cr_expect_eq(m.r.n, d.r.n, "offloaded read returned %zd, direct %zd", m.r.n, d.r.n);
	cr_expect_eq(m.r.err, d.r.err, "offloaded read: errno %d, direct %d", m.r.err, d.r.err);
	cr_expect_eq(m.offloaded, 1, "the read was offloaded %lu times", m.offloaded);
}

/* After an interrupted offload the helpers serve the next calls. */
struct after {
	int fd[2];
	ssize_t w, r;
	char buf[8];
};

static void after_job(void *arg)
{
	struct after *a = arg;

	a->w = write(a->fd[1], "next", 4);
	a->r = read(a->fd[0], a->buf, sizeof(a->buf));
}

Test(signals, helpers_serve_calls_after_an_interruption, .timeout = TEST_TIMEOUT)
{
	struct outcome m;
	struct after a;

	signal_during_read(1, 0, &m);
	cr_assert_eq(pipe2(a.fd, O_CLOEXEC), 0);
	uint64_t before = offloaded_now();
	run_marked(after_job, &a);
	cr_expect(a.w == 4 && a.r == 4 && memcmp(a.buf, "next", 4) == 0);
	cr_expect_eq(offloaded_now() - before, 2);
	close(a.fd[0]);
	close(a.fd[1]);
}
