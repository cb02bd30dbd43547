/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * proc_stat.c: a CPU's steal time from the text of /proc/stat.
 *
 * Steal is the time the hypervisor ran something else while this virtual
 * CPU had work (proc(5), the eighth number of a "cpuN" line, in USER_HZ
 * ticks).  Inside a virtual machine, a helper that took a call late
 * although no task held its CPU was most often not run at all: the stall
 * line (core/stall.c) says how much the host took.
 *
 * Concurrency: no state; a pure function of its input, any thread.
 */
#ifndef RTO_PROC_STAT_H
#define RTO_PROC_STAT_H

#include "rto_common.h"

#include <stdint.h>

/*
 * The next "cpuN" line from *p on (before end), the sum's line left out:
 * 1 with N and its steal ticks, *p moved past it; 0 at the end.  A line
 * without a steal column (a kernel before 2.6.11) is left out too, and so
 * is a last line without its newline (text cut short inside it).
 */
RTO_HIDDEN int rto_proc_stat_next(const char **p, const char *end, int *cpu, uint64_t *ticks);
/*
 * The steal ticks of CPU cpu in text (len bytes of /proc/stat, not
 * necessarily all of it): 0 and *ticks, or -1 when the line is not there
 * or has no steal column (a kernel before 2.6.11).
 */
RTO_HIDDEN int rto_proc_stat_steal(const char *text, long len, int cpu, uint64_t *ticks);

#endif /* RTO_PROC_STAT_H */
