/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * CPU lists in the kernel's format ("0-3,6", as in
 * /sys/devices/system/cpu/online and isolcpus=), and the choice of the
 * CPUs the helpers run on.
 */
#include "cpulist.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define SYSFS_CPU "/sys/devices/system/cpu/"

long (*rto_common_syscall)(long number, ...); /* the program sets it (rto_common.h) */

/* One CPU number.  Returns the end of it, or NULL. */
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

int rto_cpulist_parse(const char *s, cpu_set_t *set)
{
	cpu_set_t tmp; /* *set is left alone on error */
	unsigned lo, hi;

	if (!s)
		return -1;
	CPU_ZERO(&tmp);
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
			CPU_SET(c, &tmp);
		if (*s == '\0')
			break;
		if (*s++ != ',')
			return -1;
	}
	*set = tmp;
	return 0;
}

/* The next run of CPUs at or after `from`: 1 and [*lo, *hi], or 0. */
static int next_run(const cpu_set_t *set, int from, int *lo, int *hi)
{
	int c = from;

	while (c < CPU_SETSIZE && !CPU_ISSET(c, set))
		c++;
	if (c >= CPU_SETSIZE)
		return 0;
	*lo = c;
	while (c + 1 < CPU_SETSIZE && CPU_ISSET(c + 1, set))
		c++;
	*hi = c;
	return 1;
}

static size_t put_uint(char *p, unsigned v)
{
	char tmp[12];
	size_t n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (size_t i = 0; i < n; i++)
		p[i] = tmp[n - 1 - i];
	return n;
}

/* ",lo-hi" (no comma for the first run): at most 10 characters. */
static size_t put_run(char *p, int lo, int hi, int first)
{
	size_t n = 0;

	if (!first)
		p[n++] = ',';
	n += put_uint(p + n, (unsigned)lo);
	if (hi > lo) {
		p[n++] = '-';
		n += put_uint(p + n, (unsigned)hi);
	}
	return n;
}

/* Copies what fits of s, always terminated. */
static void put_trunc(char *buf, size_t len, const char *s)
{
	size_t n = strlen(s);

	if (n >= len)
		n = len - 1;
	memcpy(buf, s, n);
	buf[n] = '\0';
}

/*
 * A list that does not fit ends in "..." after the last whole run, never
 * in a cut number: "0-3,1" must not stand for "0-3,12-15".  So every run
 * but the last is written only if "..." still fits after it.
 */
void rto_cpulist_format(const cpu_set_t *set, char *buf, size_t len)
{
	char run[16];
	size_t pos = 0, n;
	int lo, hi, more;

	if (len == 0)
		return;
	more = next_run(set, 0, &lo, &hi);
	if (!more) {
		put_trunc(buf, len, "(none)");
		return;
	}
	while (more) {
		n = put_run(run, lo, hi, pos == 0);
		more = next_run(set, hi + 1, &lo, &hi);
		if (pos + n + (more ? 3 : 0) >= len) {
			put_trunc(buf + pos, len - pos, "...");
			return;
		}
		memcpy(buf + pos, run, n);
		pos += n;
	}
	buf[pos] = '\0';
}

/*
 * Raw system calls: in the library open() and read() are its own wrappers,
 * and this runs while the first thread is being marked.
 */
int rto_cpulist_read(const char *path, cpu_set_t *set)
{
	char buf[4096]; /* a sysfs file is at most a page; 1024 CPUs need 2 KB */
	size_t len = 0;
	long fd, r = 0;

	fd = rto_common_syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while (len < sizeof(buf) - 1) {
		r = rto_common_syscall(SYS_read, fd, buf + len, sizeof(buf) - 1 - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	rto_common_syscall(SYS_close, fd);
	if (r < 0 || len == sizeof(buf) - 1) /* an error, or a list cut short */
		return -1;
	while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == ' '))
		len--;
	buf[len] = '\0';
	if (len == 0) {
		CPU_ZERO(set);
		return 0;
	}
	return rto_cpulist_parse(buf, set);
}

void rto_cpus_online(cpu_set_t *set)
{
	if (rto_cpulist_read(SYSFS_CPU "online", set) == 0 && CPU_COUNT(set) > 0)
		return;
	/*
	 * No sysfs (some containers): the process's affinity, read from the
	 * main thread, since the caller may already be pinned to its own CPU.
	 * The raw call fills only the kernel's mask size, hence the zeroing.
	 */
	CPU_ZERO(set);
	if (rto_common_syscall(SYS_sched_getaffinity, getpid(), sizeof(*set), set) > 0 &&
	    CPU_COUNT(set) > 0)
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

/*
 * The subtractions go from the one that matters most to the one that
 * matters least, each skipped if it would leave nothing: a helper on the
 * CPU of a realtime thread it serves defeats the purpose, one on a CPU
 * merely reserved (rt_cpus) less so, and one on an isolated CPU that no
 * marked thread uses costs nothing but the isolation.
 */
int rto_cpus_for_helpers(const struct rto_options *o, const cpu_set_t *avoid, cpu_set_t *out)
{
	int saved = errno; /* the library's caller is rt_offload_mark_thread() */
	int skipped = 0;
	cpu_set_t isolated;

	if (o->helper_cpus_set) {
		*out = o->helper_cpus;
		return 0;
	}
	rto_cpus_online(out);
	if (avoid)
		skipped += subtract(out, avoid);
	if (o->rt_cpus_set)
		skipped += subtract(out, &o->rt_cpus);
	if (rto_cpulist_read(SYSFS_CPU "isolated", &isolated) == 0)
		skipped += subtract(out, &isolated);
	errno = saved;
	return skipped;
}
