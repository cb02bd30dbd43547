/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * CPU lists in the kernel's format ("0-3,6"), checked by the same rules as
 * the library's parser (libsrc/cpulist.c), so a list the launcher accepts
 * is never refused later with exit 78 inside the program.
 */
#include "launcher.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define SYSFS_CPU "/sys/devices/system/cpu/"

static const char *parse_cpu(const char *s, unsigned *cpu)
{
	const char *p = s;
	unsigned v = 0;

	for (; *p >= '0' && *p <= '9'; p++) {
		v = v * 10 + (unsigned)(*p - '0');
		if (v >= CPU_SETSIZE) /* also stops any overflow */
			return NULL;
	}
	if (p == s)
		return NULL;
	*cpu = v;
	return p;
}

int cpus_parse(const char *s, cpu_set_t *set)
{
	unsigned lo, hi;

	CPU_ZERO(set);
	for (;;) {
		s = parse_cpu(s, &lo);
		if (!s)
			return -1;
		hi = lo;
		if (*s == '-') {
			s = parse_cpu(s + 1, &hi);
			if (!s || hi < lo)
				return -1;
		}
		for (unsigned c = lo; c <= hi; c++)
			CPU_SET(c, set);
		if (*s == '\0')
			return 0;
		if (*s++ != ',')
			return -1;
	}
}

void cpus_format(const cpu_set_t *set, char *buf, size_t len)
{
	size_t pos = 0;
	int n;

	buf[0] = '\0';
	for (int c = 0; c < CPU_SETSIZE; c++) {
		int hi = c;

		if (!CPU_ISSET(c, set))
			continue;
		while (hi + 1 < CPU_SETSIZE && CPU_ISSET(hi + 1, set))
			hi++;
		n = hi > c ? snprintf(buf + pos, len - pos, "%s%d-%d", pos ? "," : "", c, hi)
			   : snprintf(buf + pos, len - pos, "%s%d", pos ? "," : "", c);
		if (n < 0 || (size_t)n >= len - pos)
			return; /* cut: the report's buffers hold any real machine */
		pos += (size_t)n;
		c = hi;
	}
	if (pos == 0)
		snprintf(buf, len, "(none)");
}

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

/* *cpus minus *sub, unless that leaves nothing.  Returns 1 if skipped. */
static int subtract(cpu_set_t *cpus, const cpu_set_t *sub)
{
	cpu_set_t common, rest;

	CPU_AND(&common, cpus, sub);
	CPU_XOR(&rest, cpus, &common);
	if (CPU_COUNT(&rest) == 0)
		return CPU_COUNT(&common) > 0;
	*cpus = rest;
	return 0;
}

/* Same order as rto_helper_cpus(), without the CPUs of marked threads. */
int cpus_helpers(const cpu_set_t *rt, cpu_set_t *out)
{
	cpu_set_t isolated;
	int skipped = 0;

	cpus_online(out);
	if (rt)
		skipped += subtract(out, rt);
	if (cpus_read(SYSFS_CPU "isolated", &isolated) == 0)
		skipped += subtract(out, &isolated);
	return skipped;
}
