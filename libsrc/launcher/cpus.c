/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * CPU lists.  Parsing, formatting and the helpers' CPUs are the library's
 * own code (libsrc/cpulist.c, compiled in), so a list the launcher accepts
 * is never refused later with exit 78 inside the program.
 */
#include "launcher.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define SYSFS_CPU "/sys/devices/system/cpu/"

int cpus_read(const char *path, cpu_set_t *set)
{
	char buf[4096]; /* a sysfs file is at most a page */
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		n--;
	buf[n] = '\0';
	if (n == 0) {
		CPU_ZERO(set);
		return 0;
	}
	return cpus_parse(buf, set);
}

void cpus_online(cpu_set_t *set)
{
	if (cpus_read(SYSFS_CPU "online", set) == 0 && CPU_COUNT(set) > 0)
		return;
	/* No sysfs (some containers): the CPUs this process may use. */
	if (sched_getaffinity(0, sizeof(*set), set) == 0 && CPU_COUNT(set) > 0)
		return;
	CPU_ZERO(set);
	CPU_SET(0, set);
}

/* The library's own rule (libsrc/cpulist.c), without the CPUs of marked threads. */
int cpus_helpers(const cpu_set_t *rt, cpu_set_t *out)
{
	rto_options_defaults(&rto_opt);
	if (rt) {
		rto_opt.rt_cpus = *rt;
		rto_opt.rt_cpus_set = 1;
	}
	return rto_helper_cpus(NULL, out);
}
