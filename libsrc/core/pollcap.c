/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The realtime polling budget: a helper polling at SCHED_FIFO must never
 * be throttled by the kernel.  Realtime throttling (sched_rt_runtime_us of
 * every sched_rt_period_us, 950 ms of 1 s by default) stops all realtime
 * threads of a CPU for the rest of the period once they used their share,
 * which stalls every caller for up to 50 ms.
 *
 * So the poller counts the time it polls at a realtime priority in slices
 * of a tenth of the kernel's period, and once it used half of the kernel's
 * share in a slice it polls on at SCHED_OTHER until the slice ends
 * (helper.c).  Any period of the kernel then holds at most ~55% of
 * realtime polling; the other ~40% is left to the calls themselves and to
 * other realtime threads of the housekeeping CPU.  Polling at SCHED_OTHER
 * all the time would avoid throttling too, but then every call would pay
 * two sched_setscheduler() calls on the helper (up then down) and a
 * housekeeping task could preempt the poller; most polling (predictive
 * windows of tens of microseconds) stays far under the budget anyway.
 * Without throttling (sched_rt_runtime_us = -1) nothing is capped.
 */
#include "resolve.h"
#include "procfs.h"
#include "transport.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

static uint64_t slice_ns = 100000000; /* a tenth of the kernel's period */
static uint64_t budget_ns = 47500000; /* 0: no throttling, no cap */

/* A number from /proc/sys; raw system calls, as cpulist.c (our own open/read are wrappers). */
static int read_long(const char *path, long *out)
{
	char buf[32];

	if (rto_procfs_read(path, buf, sizeof(buf)) <= 0)
		return -1;
	char *end;
	errno = 0;
	*out = strtol(buf, &end, 10);
	return errno || end == buf ? -1 : 0;
}

void rto_pollcap_init(void)
{
	long period_us, runtime_us;
	int saved = errno;

	if (read_long("/proc/sys/kernel/sched_rt_period_us", &period_us) == 0 &&
	    read_long("/proc/sys/kernel/sched_rt_runtime_us", &runtime_us) == 0 && period_us > 0) {
		slice_ns = (uint64_t)period_us * 100; /* period / 10, in ns */
		budget_ns = runtime_us < 0 ? 0 : (uint64_t)runtime_us * 100 / 2;
		if (runtime_us >= 0 && budget_ns == 0)
			budget_ns = 1; /* no realtime runtime at all: never poll at FIFO */
	}
	errno = saved;
}

/*
 * rt_ns: realtime polling since the poller's last look.  Only the one
 * polling helper calls this (q->pollers hands the role over with full
 * barriers), so the fields need no lock.
 */
int rto_pollcap_allows(struct rto_predict *s, uint64_t now, uint64_t rt_ns)
{
	if (!budget_ns)
		return 1;
	if (now - s->cap_slice_at >= slice_ns) {
		s->cap_slice_at = now;
		s->cap_used_ns = 0;
	}
	s->cap_used_ns += rt_ns;
	return s->cap_used_ns < budget_ns;
}
