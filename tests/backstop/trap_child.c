/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * For test_backstop's report and statistics checks: a marked thread makes
 * the same raw getcwd system call three times from one call site and one
 * raw sysinfo (policy=SYS_sysinfo:strict refuses it), then prints
 * trapped=N (rt_offload_get_stats) and exits; the options
 * (report_traps=1, stats_file=) come from the test.  The calls are
 * syscall instructions of this program's own text, as a JIT makes them:
 * the library's syscall() decides without a trap (issue 30).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include "raw_syscall_asm.h" /* libsrc's: the backstop's raw call is the same text */
#include "rtoffload.h"

/* A system call from this program's text, behind every wrapper's back: -errno on failure. */
__asm__(".pushsection .text\n" RTO_RAW_SYSCALL6_ASM(trap_syscall6) ".popsection\n");
long trap_syscall6(long nr, long a, long b, long c, long d, long e, long f);

static __attribute__((noinline)) long raw_getcwd_site(void)
{
	char buf[PATH_MAX];
	return trap_syscall6(SYS_getcwd, (long)buf, sizeof(buf), 0, 0, 0, 0);
}

static void *marked(void *arg)
{
	long *ok = arg;
	struct sysinfo si;
	struct rt_offload_stats st;

	if (rt_offload_mark_thread() != 0)
		return NULL;
	for (int i = 0; i < 3; i++)
		*ok += raw_getcwd_site() > 1;
	*ok += trap_syscall6(SYS_sysinfo, (long)&si, 0, 0, 0, 0, 0) == -RT_OFFLOAD_STRICT_ERRNO;
	rt_offload_get_stats(&st);
	rt_offload_unmark_thread();
	printf("ok=%ld trapped=%lu\n", *ok, (unsigned long)st.trapped);
	return NULL;
}

int main(void)
{
	pthread_t t;
	long ok = 0;

	if (pthread_create(&t, NULL, marked, &ok) != 0 || pthread_join(t, NULL) != 0)
		return 2;
	return ok == 4 ? 0 : 1;
}
