/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The default fd_local= (this file runs with RTOFFLOAD_OPTIONS empty; the
 * rest of the suite uses fd_local=none): a marked thread's read/write on a
 * pipe, a socket, an eventfd or a character device runs on the caller (a
 * short bounded kernel path, or a wait for an outside event); on a disk
 * file it is offloaded, on a tmpfs file local.  The class is per descriptor
 * generation: a number reused for another kind of file is asked again.
 */
#include "harness.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/statfs.h>
#include <unistd.h>

struct one_write {
	int fd;
	ssize_t n;
	uint64_t offloaded, local;
};

static void write_twice_job(void *arg)
{
	struct one_write *w = arg;
	uint64_t v = 1;

	/* The first call may ask the helper for the kind: count the second. */
	w->n = write(w->fd, &v, sizeof(v));
	struct rt_offload_stats a, b;
	rt_offload_get_stats(&a);
	w->n += write(w->fd, &v, sizeof(v));
	rt_offload_get_stats(&b);
	w->offloaded = b.offloaded - a.offloaded;
	w->local = b.local - a.local;
}

/* 1: the second write ran locally, 0: it was offloaded. */
static int second_write_local(int fd)
{
	struct one_write w = {.fd = fd};

	run_marked(write_twice_job, &w);
	cr_assert_eq(w.n, 16, "writes on fd %d failed", fd);
	cr_assert_eq(w.offloaded + w.local, 1, "the write was counted %lu+%lu times", w.offloaded,
		     w.local);
	return w.local == 1;
}

Test(fdlocal, event_descriptors_run_locally, .timeout = TEST_TIMEOUT)
{
	int p[2], s[2];

	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, s), 0);
	int efd = eventfd(0, EFD_CLOEXEC);
	int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	cr_assert(efd >= 0 && null >= 0);
	cr_expect(second_write_local(p[1]), "pipe write offloaded");
	cr_expect(second_write_local(s[0]), "socket write offloaded");
	cr_expect(second_write_local(efd), "eventfd write offloaded");
	cr_expect(second_write_local(null), "/dev/null write offloaded");
	close(p[0]);
	close(p[1]);
	close(s[0]);
	close(s[1]);
	close(efd);
	close(null);
}

static int on_tmpfs(const char *dir)
{
	struct statfs sf;

	cr_assert_eq(statfs(dir, &sf), 0);
	return sf.f_type == TMPFS_MAGIC || sf.f_type == RAMFS_MAGIC;
}

Test(fdlocal, file_follows_its_file_system_and_reused_numbers_are_asked_again,
     .timeout = TEST_TIMEOUT)
{
	char dir[PATH_MAX], path[PATH_MAX];
	int p[2];

	tmp_make(dir);
	pathf(path, "%s/f", dir);
	int tmpfs = on_tmpfs(dir);
	cr_log_info("%s is %s", dir, tmpfs ? "tmpfs: file writes are local" : "not tmpfs");

	/* A pipe's number, learnt as local, then reused for the file. */
	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	int num = p[1];
	cr_expect(second_write_local(num));
	close(p[1]);
	int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	cr_assert_eq(fd, num, "the number was not reused (%d, %d): cannot check", fd, num);
	cr_expect_eq(second_write_local(fd), tmpfs, "a reused number kept the pipe's class");
	close(fd);
	close(p[0]);
	tmp_remove(dir);
}
