/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * seccomp(SECCOMP_SET_MODE_FILTER, 0, prog) without going through libc.
 * The library honours a filter a thread installs for itself through libc
 * by running that thread's calls locally (libsrc/seccomp.c); the tests'
 * witness filters must not be seen, so they are installed this way.
 */
#ifndef RTO_TEST_RAW_SECCOMP_H
#define RTO_TEST_RAW_SECCOMP_H

#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/syscall.h>

static inline long raw_seccomp_filter(const struct sock_fprog *prog)
{
	long ret;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"((long)SYS_seccomp), "D"((long)SECCOMP_SET_MODE_FILTER), "S"(0L),
			   "d"(prog)
			 : "rcx", "r11", "memory");
	if (ret < 0) {
		errno = (int)-ret;
		return -1;
	}
	return ret;
}

#endif
