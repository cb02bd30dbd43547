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

/* The line [p, eol) is "cpuN ..." with a steal column: 1, N and the ticks. */
static int cpu_line(const char *p, const char *eol, int *cpu, uint64_t *ticks)
{
	uint64_t n, v = 0;

	if (eol - p < 4 || p[0] != 'c' || p[1] != 'p' || p[2] != 'u' || p[3] == ' ')
		return 0;
	const char *q = number(p + 3, eol, &n);
	if (!q || q == eol || *q != ' ' || n > 1u << 30)
		return 0;
	/* Then user nice system idle iowait irq softirq steal. */
	for (int i = 0; i < 8 && q; i++)
		q = number(q, eol, &v);
	if (!q)
		return 0;
	*cpu = (int)n;
	*ticks = v;
	return 1;
}

int rto_proc_stat_next(const char **p, const char *end, int *cpu, uint64_t *ticks)
{
	while (*p < end) {
		const char *line = *p, *eol = line;
		while (eol < end && *eol != '\n')
			eol++;
		if (eol == end) /* cut short (a read of a part): its numbers may be too */
			break;
		*p = eol + 1;
		if (cpu_line(line, eol, cpu, ticks))
			return 1;
	}
	return 0;
}

int rto_proc_stat_steal(const char *text, long len, int cpu, uint64_t *ticks)
{
	const char *p = text, *end = text + (len > 0 ? len : 0);
	uint64_t t;
	int c;

	while (rto_proc_stat_next(&p, end, &c, &t))
		if (c == cpu) {
			*ticks = t;
			return 0;
		}
	return -1;
}
