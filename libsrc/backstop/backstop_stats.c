/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The backstop's counts per system call: trapped, and what became of the
 * trapped call (offloaded, local, denied), for the exit report and the
 * JSON (stats.c).  Counted from the SIGSYS handler with relaxed atomic
 * adds: a trap costs microseconds already, and any thread may trap.
 */
#include "rto_base.h"
#include "backstop.h"

#include <string.h>

static uint64_t counts[RTO_SYSENT_COUNT][RTO_BS_NCOUNT];

RTO_UNINSTRUMENTED void rto_backstop_count(long nr, int what)
{
	if (nr >= 0 && nr < RTO_SYSENT_COUNT)
		__atomic_fetch_add(&counts[nr][what], 1, __ATOMIC_RELAXED);
}

int rto_backstop_next(unsigned *pos, struct rto_sys_row *row)
{
	for (; *pos < RTO_SYSENT_COUNT; (*pos)++) {
		unsigned nr = *pos;
		if (!rto_sysent[nr].name ||
		    !__atomic_load_n(&counts[nr][RTO_BS_TRAPPED], __ATOMIC_RELAXED))
			continue;
		row->name = rto_sysent[nr].name;
		for (int i = 0; i < RTO_BS_NCOUNT; i++)
			row->n[i] = __atomic_load_n(&counts[nr][i], __ATOMIC_RELAXED);
		(*pos)++;
		return 1;
	}
	return 0;
}

void rto_backstop_stats_reset(void)
{
	memset(counts, 0, sizeof(counts));
}
