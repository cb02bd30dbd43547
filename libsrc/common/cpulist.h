/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * CPU lists in the kernel's format, the online CPUs, and the rule that
 * places the helpers (cpulist.c, part of rto_common: rto_common.h).
 *
 * Concurrency: no state; parse and format are pure, the rest read sysfs
 * through rto_common_syscall (system calls: never the caller's path).
 * The library places the helpers with it on the thread that starts them
 * (helper.c), whose errno it leaves alone.
 */
#ifndef RTO_CPULIST_H
#define RTO_CPULIST_H

#include "options.h"
#include "rto_common.h"

#include <sched.h>
#include <stddef.h>

/* "1,4-7" into *set.  Returns 0 or -1 (syntax, or CPU >= CPU_SETSIZE). */
RTO_HIDDEN int rto_cpulist_parse(const char *s, cpu_set_t *set);
RTO_HIDDEN void rto_cpulist_format(const cpu_set_t *set, char *buf, size_t len);
/* A CPU list file of sysfs; an empty file (no isolated CPUs) is the empty set.  0 or -1. */
RTO_HIDDEN int rto_cpulist_read(const char *path, cpu_set_t *set);
/*
 * The CPUs the helpers run on, as o says: helper_cpus= if given, else the
 * online CPUs minus isolated, minus rt_cpus, minus `avoid` (the CPUs marked
 * threads are pinned to; may be NULL), dropping those subtractions one by
 * one while nothing would remain.  Returns how many had to be dropped.
 * errno is left as it was (the library calls it while marking a thread).
 */
RTO_HIDDEN int rto_cpus_for_helpers(const struct rto_options *o, const cpu_set_t *avoid,
				    cpu_set_t *out);
/* The online CPUs (sysfs; else the process's affinity; else CPU 0). */
RTO_HIDDEN void rto_cpus_online(cpu_set_t *set);

#endif /* RTO_CPULIST_H */
