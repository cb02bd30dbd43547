/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fork(): the child has no helper threads, whatever the
 * parent's were doing, and must get working offloads anyway (fresh helpers,
 * a reset queue).  The hardest case is a fork while a helper is busy in a
 * long call: the child inherits the queue and its lock words in that state.
 *
 * A child never calls criterion: it reports through its exit status (0, or
 * the number of the check that failed) and the parent asserts.  The raw
 * clone() child (no atfork handler runs) is test_process.c's.
 */
#include "harness.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *const child_checks[] = {
	"ok",
	"the child's statistics did not start from zero",
	"could not mark a thread in the child",
	"open failed in the child",
	"write failed in the child",
	"fsync failed in the child",
	"close failed in the child",
	"the calls were not offloaded in the child",
	"no helper thread in the child",
	"the forking thread is not marked in the child",
	"the bytes are not in the file",
	"marking in the child did not fail with EAGAIN (ThreadSanitizer)",
};

static void expect_child_ok(int code)
{
	const char *what = code > 0 && code < (int)(sizeof(child_checks) / sizeof(child_checks[0]))
				   ? child_checks[code]
				   : "killed or unknown";
	cr_expect_eq(code, 0, "child: %s (%d)", what, code);
}

/* ---- what a child does: offloaded file I/O from a marked thread --------- */

struct child_io {
	const char *path;
	int code;
};

static void child_io_job(void *arg)
{
	struct child_io *c = arg;
	struct rt_offload_stats a, b;

	rt_offload_get_stats(&a);
	int fd = open(c->path, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		c->code = 3;
		return;
	}
	if (write(fd, "child\n", 6) != 6)
		c->code = 4;
	else if (fsync(fd) != 0)
		c->code = 5;
	if (close(fd) != 0 && !c->code)
		c->code = 6;
	rt_offload_get_stats(&b);
	if (!c->code && (b.offloaded - a.offloaded != 4 || b.local != a.local))
		c->code = 7;
}

static int file_is(const char *path, const char *want)
{
	char *s = slurp(path, NULL);
	int same = s && strcmp(s, want) == 0;

	free(s);
	return same;
}

/* The child's file: open, write, close; 0, or the code of the step that failed. */
static int write_child_file(const char *path)
{
	int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return 3;
	if (write(fd, "child\n", 6) != 6)
		return 4;
	return close(fd) != 0 ? 6 : 0;
}

/*
 * RTO_FORK_CHILD_DIRECT (ThreadSanitizer): the child cannot start threads;
 * marking fails with EAGAIN, its calls run here, no helper appears.
 */
static int direct_child(const char *path)
{
	struct rt_offload_stats a, b;
	pid_t helpers[64];

	if (rt_offload_thread_is_marked())
		return 9;
	if (rt_offload_mark_thread() != -1 || errno != EAGAIN)
		return 11;
	if (rt_offload_get_stats(&a) != 0 || a.offloaded)
		return 1;
	int err = write_child_file(path);
	if (err)
		return err;
	rt_offload_get_stats(&b);
	if (b.offloaded)
		return 7;
	if (helper_tids(helpers, 64) != 0)
		return 8;
	return file_is(path, "child\n") ? 0 : 10;
}

/* In the child of a fork: a new marked thread offloads, helpers appear. */
static int child_after_fork(const char *path)
{
	struct rt_offload_stats s;
	struct child_io c = {.path = path};
	pid_t helpers[64];
	struct bg b;

	if (RTO_FORK_CHILD_DIRECT)
		return direct_child(path);
	if (rt_offload_get_stats(&s) != 0 || s.offloaded || s.local || s.denied)
		return 1;
	if (bg_spawn(&b, child_io_job, &c, BG_MARK) != 0 || bg_wait(&b) != 0)
		return 2;
	if (c.code)
		return c.code;
	if (helper_tids(helpers, 64) < 1)
		return 8;
	return file_is(path, "child\n") ? 0 : 10;
}

/* ---- fork while a helper is busy ------------------------------------------ */

struct reader {
	int fd;
	ssize_t n;
	int err;
	char buf[16];
};

/* Blocks on the helper until the parent writes the pipe. */
static void reader_job(void *arg)
{
	struct reader *r = arg;

	r->n = read(r->fd, r->buf, sizeof(r->buf));
	r->err = errno;
}

static void start_busy_reader(struct bg *b, struct reader *r, int pipefd)
{
	*r = (struct reader){.fd = pipefd};
	bg_start(b, reader_job, r, BG_MARK | BG_PIN);
	/* The read is in the kernel, on a helper: the helper is busy. */
	cr_assert_neq(wait_helper_in_syscall(SYS_read, pipefd), 0,
		      "no helper blocked in the offloaded read");
}

static void finish_busy_reader(struct bg *b, struct reader *r, int pipefd)
{
	cr_assert_eq(write(pipefd, "ping", 4), 4);
	bg_join(b);
	cr_expect(r->n == 4 && memcmp(r->buf, "ping", 4) == 0,
		  "the parent's offloaded read: %zd (errno %d)", r->n, r->err);
}

struct parent_io {
	const char *path;
	int ok;
};

static void parent_io_job(void *arg)
{
	struct parent_io *p = arg;
	int fd = open(p->path, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);

	p->ok = fd >= 0 && write(fd, "parent\n", 7) == 7 && fsync(fd) == 0 && close(fd) == 0;
}

Test(fork, fork_while_helper_busy, .timeout = TEST_TIMEOUT)
{
	char dir[PATH_MAX], cpath[PATH_MAX], ppath[PATH_MAX];
	int p[2];
	struct bg b;
	struct reader r;

	tmp_make(dir);
	pathf(cpath, "%s/child", dir);
	pathf(ppath, "%s/parent", dir);
	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	start_busy_reader(&b, &r, p[0]);

	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0)
		_exit(child_after_fork(cpath));
	expect_child_ok(reap_code(pid));
	cr_expect(file_is(cpath, "child\n"));

	/* The parent's busy helper finishes its call; the parent still offloads. */
	finish_busy_reader(&b, &r, p[1]);
	struct parent_io io = {.path = ppath};
	uint64_t before = offloaded_now();
	run_marked(parent_io_job, &io);
	cr_expect(io.ok, "offloaded I/O in the parent after the fork");
	cr_expect_eq(offloaded_now() - before, 4);
	cr_expect(file_is(ppath, "parent\n"));
	close(p[0]);
	close(p[1]);
	tmp_remove(dir);
}

/* ---- fork from a marked thread: the child's copy of it is marked ---------- */

struct forker {
	const char *path;
	int code;
};

static int marked_child(const char *path)
{
	struct rt_offload_stats a, b;
	pid_t helpers[64];

	if (RTO_FORK_CHILD_DIRECT)
		return direct_child(path);
	if (!rt_offload_thread_is_marked())
		return 9;
	if (rt_offload_get_stats(&a) != 0 || a.offloaded)
		return 1;
	int err = write_child_file(path);
	if (err)
		return err;
	rt_offload_get_stats(&b);
	if (b.offloaded != 3 || b.local)
		return 7;
	if (helper_tids(helpers, 64) < 1)
		return 8;
	return file_is(path, "child\n") ? 0 : 10;
}

static void forker_job(void *arg)
{
	struct forker *f = arg;
	pid_t pid = fork(); /* not wrapped: fork acts on the caller itself */

	if (pid == 0)
		_exit(marked_child(f->path));
	f->code = pid < 0 ? -1 : reap_code(pid);
}

Test(fork, fork_from_marked_thread_while_helper_busy, .timeout = TEST_TIMEOUT)
{
	char dir[PATH_MAX], path[PATH_MAX];
	int p[2];
	struct bg b;
	struct reader r;
	struct forker f;

	tmp_make(dir);
	pathf(path, "%s/child", dir);
	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	start_busy_reader(&b, &r, p[0]);
	f = (struct forker){.path = path};
	run_marked(forker_job, &f);
	expect_child_ok(f.code);
	finish_busy_reader(&b, &r, p[1]);
	close(p[0]);
	close(p[1]);
	tmp_remove(dir);
}
