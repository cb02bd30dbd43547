/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cpulist.c: CPU lists: parse, format, the online CPUs, the helpers' CPUs.
 *
 * Concurrency: Pure or sysfs reads; never on the caller's path (they read files).
 */
#ifndef RTO_CPULIST_H
#define RTO_CPULIST_H

#include "rto_base.h"
#include "options.h"

struct rto_options;

/* "1,4-7" into *set.  Returns 0 or -1 (syntax, or CPU >= CPU_SETSIZE). */
RTO_HIDDEN int rto_cpulist_parse(const char *s, cpu_set_t *set);
RTO_HIDDEN void rto_cpulist_format(const cpu_set_t *set, char *buf, size_t len);
/*
 * The CPUs the helpers run on: helper_cpus= if given, else online CPUs
 * minus isolated, minus rt_cpus, minus `avoid` (the CPUs marked threads
 * are pinned to), dropping those subtractions one by one while nothing
 * would remain.  Returns how many subtractions had to be dropped.
 */
RTO_HIDDEN int rto_helper_cpus(const cpu_set_t *avoid, cpu_set_t *out);
/* The same from the options o (options.c's rto_helper_cpus gives rto_opt). */
RTO_HIDDEN int rto_cpulist_helpers(const struct rto_options *o, const cpu_set_t *avoid,
				   cpu_set_t *out);
/* The online CPUs (sysfs; else the process's affinity; else CPU 0). */
RTO_HIDDEN void rto_cpus_online(cpu_set_t *set);

#endif /* RTO_CPULIST_H */
