/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * An offloaded call's arguments and result travel inside the request when
 * they fit (32 bytes: write, read, lseek, stat) and through a pointer to
 * the caller's when they do not (pwrite, pread, mmap, getaddrinfo): either
 * way a marked thread sees the same results, bytes and errno as an
 * unmarked one, and the calls did run on a helper.
 */
#include "harness.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <unistd.h>

struct outcome {
	const char *dir;
	/* inline: write, lseek, read, stat */
	ssize_t w, rd;
	off_t seek, seek_bad;
	int w_errno, seek_errno, st_ok;
	off_t st_size;
	char rbuf[8];
	/* through a pointer: pwrite, pread, mmap, getaddrinfo */
	ssize_t pw, pr, pw_bad;
	int pw_errno, pw_bad_errno;
	char pbuf[8];
	int map_ok, map_bad_errno;
	char mbuf[16];
	int gai, gai_family, gai_port, gai_bad, gai_errno;
};

static void calls(void *arg)
{
	struct outcome *o = arg;
	char path[PATH_MAX + 16];

	snprintf(path, sizeof(path), "%s/f%d", o->dir, rt_offload_thread_is_marked());
	int fd = open(path, O_CREAT | O_RDWR | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	errno = EINTR; /* a successful call leaves it */
	o->w = write(fd, "abcdefgh", 8);
	o->w_errno = errno;
	o->seek = lseek(fd, 3, SEEK_SET);
	o->rd = read(fd, o->rbuf, 4);
	o->seek_bad = lseek(-1, 0, SEEK_SET);
	o->seek_errno = errno;
	struct stat st;
	o->st_ok = stat(path, &st) == 0;
	o->st_size = st.st_size;

	errno = EINTR;
	o->pw = pwrite(fd, "XYZ", 3, 100);
	o->pw_errno = errno;
	o->pr = pread(fd, o->pbuf, 3, 100);
	o->pw_bad = pwrite(-1, "XYZ", 3, 100);
	o->pw_bad_errno = errno;

	void *p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	o->map_ok = p != MAP_FAILED;
	if (o->map_ok) {
		memcpy(o->mbuf, p, 8);
		memcpy(o->mbuf + 8, (char *)p + 100, 3);
		munmap(p, 4096);
	}
	errno = 0;
	o->map_bad_errno = mmap(NULL, 4096, PROT_READ, MAP_SHARED, -1, 0) == MAP_FAILED ? errno : 0;

	struct addrinfo hints = {.ai_family = AF_INET,
				 .ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV},
			*res = NULL;
	o->gai = getaddrinfo("127.0.0.1", "8080", &hints, &res);
	if (o->gai == 0 && res) {
		o->gai_family = res->ai_family;
		o->gai_port = ntohs(((struct sockaddr_in *)res->ai_addr)->sin_port);
		freeaddrinfo(res);
	}
	hints.ai_flags = 0x7fff0000; /* no such flags */
	errno = EINTR;
	o->gai_bad = getaddrinfo("127.0.0.1", "8080", &hints, &res);
	o->gai_errno = errno;
	close(fd);
	unlink(path);
}

Test(request, arguments_inline_or_not_give_the_same_results, .timeout = TEST_TIMEOUT)
{
	char dir[PATH_MAX];
	struct outcome d = {0}, m = {0};

	tmp_make(dir);
	d.dir = m.dir = dir;
	run_unmarked(calls, &d);
	uint64_t before = offloaded_now();
	run_marked(calls, &m);
	uint64_t offloaded = offloaded_now() - before;
	tmp_remove(dir);

	/* The direct run is what libc does; the marked one must match it. */
	cr_assert_eq(d.w, 8);
	cr_assert_eq(d.rd, 4);
	cr_assert_eq(d.seek_bad, -1);
	cr_assert_eq(d.seek_errno, EBADF);
	cr_assert_eq(d.pw, 3);
	cr_assert(d.map_ok);
	cr_assert_eq(d.gai, 0);
	cr_assert_eq(d.gai_bad, EAI_BADFLAGS);

	cr_expect_eq(m.w, d.w);
	cr_expect_eq(m.w_errno, EINTR, "a successful write changed errno to %d", m.w_errno);
	cr_expect_eq(m.seek, 3);
	cr_expect_eq(m.rd, d.rd);
	cr_expect_arr_eq(m.rbuf, "defg", 4, "read gave '%.4s'", m.rbuf);
	cr_expect_eq(m.seek_bad, -1);
	cr_expect_eq(m.seek_errno, EBADF, "lseek(-1): errno %d", m.seek_errno);
	cr_expect(m.st_ok);
	cr_expect_eq(m.st_size, d.st_size);

	cr_expect_eq(m.pw, 3);
	cr_expect_eq(m.pw_errno, EINTR, "a successful pwrite changed errno to %d", m.pw_errno);
	cr_expect_eq(m.pr, 3);
	cr_expect_arr_eq(m.pbuf, "XYZ", 3, "pread gave '%.3s'", m.pbuf);
	cr_expect_eq(m.pw_bad, -1);
	cr_expect_eq(m.pw_bad_errno, d.pw_bad_errno, "pwrite(-1): errno %d", m.pw_bad_errno);

	cr_expect(m.map_ok, "mmap of the file failed");
	cr_expect_arr_eq(m.mbuf, d.mbuf, 11, "mapped bytes '%.11s', direct '%.11s'", m.mbuf,
			 d.mbuf);
	cr_expect_eq(m.map_bad_errno, d.map_bad_errno, "mmap(fd -1): errno %d, direct %d",
		     m.map_bad_errno, d.map_bad_errno);

	cr_expect_eq(m.gai, 0, "getaddrinfo: %d", m.gai);
	cr_expect_eq(m.gai_family, AF_INET);
	cr_expect_eq(m.gai_port, 8080);
	cr_expect_eq(m.gai_bad, EAI_BADFLAGS, "getaddrinfo, bad flags: %d", m.gai_bad);

	/* open write lseek read lseek stat pwrite pread pwrite mmap munmap mmap getaddrinfo x2
	 * close unlink: the marked run's calls went to a helper. */
	cr_expect_geq(offloaded, 14, "only %lu calls offloaded", (unsigned long)offloaded);
}
