/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A CPU's steal ticks from the text of /proc/stat (proc_stat.h). */
#include "proc_stat.h"

#include <stddef.h>

/* The number at *p (spaces skipped first); the end of it, or NULL. */
static const char *number(const char *p, const char *end, uint64_t *v)
{
	while (p < end && *p == ' ')
		p++;
	if (p == end || *p < '0' || *p > '9')
		return NULL;
	for (*v = 0; p < end && *p >= '0' && *p <= '9'; p++)
		*v = *v * 10 + (uint64_t)(*p - '0');
	return p;
}

/* 1 if the line at p starts with "cpu<cpu> ". */
static int is_cpu_line(const char *p, const char *end, int cpu)
{
	uint64_t n;

	if (end - p < 4 || p[0] != 'c' || p[1] != 'p' || p[2] != 'u')
		return 0;
	const char *q = number(p + 3, end, &n);
	return q && p[3] != ' ' && q < end && *q == ' ' && n == (uint64_t)cpu;
}

int rto_proc_stat_steal(const char *text, long len, int cpu, uint64_t *ticks)
{
	const char *p = text, *end = text + (len > 0 ? len : 0);

	while (p < end) {
		const char *eol = p;
		while (eol < end && *eol != '\n')
			eol++;
		if (is_cpu_line(p, eol, cpu)) {
			const char *q = p + 3;
			uint64_t v = 0;
			/* The CPU's number, then user nice system idle iowait irq softirq steal. */
			for (int i = 0; i < 9 && q; i++)
				q = number(q, eol, &v);
			if (!q)
				return -1;
			*ticks = v;
			return 0;
		}
		p = eol + 1;
	}
	return -1;
}
