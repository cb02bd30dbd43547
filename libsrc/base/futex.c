/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* futex(2) and the clock: the only kernel entries of the caller's path. */
#include "resolve.h"
#include "futex.h"
#include "real.h"

#include <errno.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

void rto_futex_wait_ns(uint32_t *addr, uint32_t val, long ns)
{
	struct timespec ts = {ns / 1000000000, ns % 1000000000};
	int saved = errno;
	rto_syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, val, &ts, NULL, 0);
	errno = saved;
}

/* Returns on a wake, a signal, or spuriously: callers re-check their condition. */
void rto_futex_wait(uint32_t *addr, uint32_t val)
{
#ifdef __SANITIZE_THREAD__
	/*
	 * ThreadSanitizer runs a signal's handler only in a call it knows
	 * blocks or at an interceptor's exit, and a raw futex wait is neither:
	 * a handler would wait for the end of the wait (and an offloaded call
	 * its interruption, signals.c, for ever).  So it waits in slices of a
	 * millisecond, each ended by clock_gettime, one of its interceptors.
	 */
	rto_futex_wait_ns(addr, val, 1000000);
	(void)rto_now_ns();
#else
	int saved = errno;
	rto_syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
	errno = saved;
#endif
}

void rto_futex_wake(uint32_t *addr, int n)
{
	int saved = errno;
	/*
	 * FUTEX_WAKE reads nothing at addr (the kernel hashes the address),
	 * which may lie in the frame of a caller that has returned already
	 * (helper.c's publish); memcheck checks the word for any operation.
	 */
	RTO_VG_NO_ERRORS(rto_syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0));
	errno = saved;
}

/* CLOCK_MONOTONIC through the vDSO: no syscall where the clocksource allows (tsc). */
uint64_t rto_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
