/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * More census workloads for the backstop (issue 12): what no wrapper can
 * catch.  Raw syscall()s of calls that are not wrapped, and libc's own
 * internal system calls: malloc's arena growth and trim (malloc=glibc),
 * pthread_create's stack, a thread's exit.  Without the backstop each of
 * these enters the kernel on the marked thread.
 */
#define _GNU_SOURCE
#include "workloads.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#define EXPECT(cond)                     \
	do {                             \
		if (!(cond))             \
			return __LINE__; \
	} while (0)

static int b_raw_getcwd(const struct census_fx *fx)
{
	char buf[PATH_MAX];
	(void)fx;
	EXPECT(syscall(SYS_getcwd, buf, sizeof(buf)) > 1 && buf[0] == '/');
	return 0;
}

static int b_raw_file(const struct census_fx *fx)
{
	char buf[8];
	long fd = syscall(SYS_openat, AT_FDCWD, fx->text, O_RDONLY | O_CLOEXEC);
	EXPECT(fd >= 0);
	long n = syscall(SYS_read, fd, buf, 5);
	long c = syscall(SYS_close, fd);
	EXPECT(n == 5 && c == 0 && !memcmp(buf, "alpha", 5));
	return 0;
}

static int b_raw_stat(const struct census_fx *fx)
{
	struct stat st;
	EXPECT(syscall(SYS_newfstatat, AT_FDCWD, fx->text, &st, 0) == 0 && st.st_size == 23);
	return 0;
}

static int b_raw_getdents(const struct census_fx *fx)
{
	char buf[1024];
	long fd = syscall(SYS_openat, AT_FDCWD, fx->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	EXPECT(fd >= 0);
	long n = syscall(SYS_getdents64, fd, buf, sizeof(buf));
	syscall(SYS_close, fd);
	EXPECT(n > 0);
	return 0;
}

static int b_raw_uname(const struct census_fx *fx)
{
	struct utsname u;
	(void)fx;
	EXPECT(syscall(SYS_uname, &u) == 0 && !strcmp(u.sysname, "Linux"));
	return 0;
}

/* 16 MiB in 64 KiB blocks: the thread's arena grows (mprotect), then trims (madvise). */
static int b_malloc_growth(const struct census_fx *fx)
{
	enum { N = 256, SZ = 64 * 1024 };
	static void *blocks[N];
	(void)fx;
	for (int i = 0; i < N; i++) {
		blocks[i] = malloc(SZ);
		EXPECT(blocks[i]);
		memset(blocks[i], i, SZ);
	}
	for (int i = 0; i < N; i++)
		free(blocks[i]);
	return 0;
}

/* Above the mmap threshold: mmap and munmap of its own. */
static int b_malloc_large(const struct census_fx *fx)
{
	(void)fx;
	char *volatile p = malloc(8 << 20);
	EXPECT(p);
	p[0] = 1;
	p[(8 << 20) - 1] = 2;
	free(p);
	return 0;
}

static void *nothing(void *arg)
{
	return arg;
}

/* Its stack (mmap, mprotect), the clone, the child's exit and the join. */
static int b_thread(const struct census_fx *fx)
{
	pthread_t t;
	void *ret = NULL;
	(void)fx;
	EXPECT(pthread_create(&t, NULL, nothing, (void *)fx) == 0);
	EXPECT(pthread_join(t, &ret) == 0 && ret == fx);
	return 0;
}

/* clang-format off */
const struct census_work census_backstop_works[] = {
	{"raw getcwd", "syscall(SYS_getcwd)", b_raw_getcwd, NULL},
	{"raw file", "syscall(SYS_openat) syscall(SYS_read) syscall(SYS_close)", b_raw_file, NULL},
	{"raw stat", "syscall(SYS_newfstatat)", b_raw_stat, NULL},
	{"raw directory", "syscall(SYS_openat) syscall(SYS_getdents64)", b_raw_getdents, NULL},
	{"raw uname", "syscall(SYS_uname)", b_raw_uname, NULL},
	{"malloc growth", "malloc free (16 MiB in 64 KiB blocks, malloc=glibc)", b_malloc_growth, NULL},
	{"malloc large", "malloc free (8 MiB: mmap, munmap)", b_malloc_large, NULL},
	{"start a thread", "pthread_create pthread_join", b_thread, NULL},
};
/* clang-format on */
const unsigned census_backstop_nworks =
	sizeof(census_backstop_works) / sizeof(census_backstop_works[0]);
