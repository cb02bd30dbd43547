/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Page faults of marked threads: whether they are counted, a thread's own
 * counters (getrusage, /proc/self/task/TID/stat), and the totals of the
 * finished marked intervals.  Below mark.c, stats.c and callsite.c,
 * which all read them; it calls none of them.
 */
#include "options.h"
#include "procfs.h"
#include "rto_fast.h"
#include "fault_count.h"
#include "resolve.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

/*
 * stats=, stats_file=: copied once at load (rto_thread_faults_configure),
 * read-only afterwards.
 */
static struct {
	int counting; /* stats=1 or stats_file=: marked time and faults are counted */
} opt;

void rto_thread_faults_configure(const struct rto_options *o)
{
	opt.counting = o->stats || o->stats_file[0];
}

static uint64_t faults_minor, faults_major; /* finished marked intervals, every thread */

/*
 * Faults and marked time are counted when stats were asked for (stats=1,
 * stats_file=): then a mark and an unmark each cost one getrusage() and a
 * thread's first mark claims its row in the thread table (stats.c).
 * Otherwise a mark is a flag flip.
 */
int rto_thread_counting(void)
{
	return opt.counting;
}

/* Fields 10 (minflt) and 12 (majflt) of /proc/self/task/TID/stat. */
static int proc_faults(pid_t tid, uint64_t *minor, uint64_t *major)
{
	char buf[1024];
	const char *mi, *ma;

	if (rto_procfs_task(0, tid, "stat", buf, sizeof(buf)) <= 0 ||
	    !(mi = rto_procfs_stat_field(buf, 10)) || !(ma = rto_procfs_stat_field(buf, 12)))
		return -1;
	*minor = strtoull(mi, NULL, 10);
	*major = strtoull(ma, NULL, 10);
	return 0;
}

int rto_thread_fault_counts(pid_t tid, uint64_t *minor, uint64_t *major)
{
	struct rusage ru;
	int saved = errno;

	*minor = *major = 0;
	if (tid) {
		int ret = proc_faults(tid, minor, major);
		errno = saved;
		return ret;
	}
	if (getrusage(RUSAGE_THREAD, &ru) != 0) {
		errno = saved;
		return -1;
	}
	*minor = (uint64_t)ru.ru_minflt;
	*major = (uint64_t)ru.ru_majflt;
	return 0;
}

static uint64_t since(uint64_t now, uint64_t then)
{
	return now > then ? now - then : 0;
}

/* A marked interval ended (mark.c): its faults join the totals. */
void rto_thread_faults_add(uint64_t minor, uint64_t major)
{
	uatomic_add(&faults_minor, minor);
	uatomic_add(&faults_major, major);
}

/* A forked child: the totals are its parent's. */
void rto_thread_faults_reset(void)
{
	faults_minor = faults_major = 0;
}

/* Totals, plus what the calling thread has taken so far if it is marked. */
void rto_thread_faults(uint64_t *minor, uint64_t *major)
{
	*minor = CMM_LOAD_SHARED(faults_minor);
	*major = CMM_LOAD_SHARED(faults_major);
	if (rto_self.route != RTO_ROUTE_DIRECT && rto_thread_counting() && rto_self.row) {
		uint64_t mi, ma;
		if (rto_thread_fault_counts(0, &mi, &ma) == 0) {
			*minor += since(mi, rto_self.minflt);
			*major += since(ma, rto_self.majflt);
		}
	}
}
