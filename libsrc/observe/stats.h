/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * stats.c: counters per function and per marked thread, the exit report.
 *
 * Concurrency: rto_stats_offloaded/local/denied/async/fallback run on the caller's path:
 * atomics on the descriptor's counters and plain stores into its own TLS.
 */
#ifndef RTO_STATS_H
#define RTO_STATS_H

#include "rto_base.h"
#include "rto_fast.h"

struct rto_fn;

RTO_HIDDEN void rto_stats_offloaded(struct rto_fn *fn, uint64_t ns);
RTO_HIDDEN void rto_stats_local(struct rto_fn *fn);
RTO_HIDDEN void rto_stats_denied(struct rto_fn *fn);
/* A write was queued (one more queued, stats_async_full: a ring was full). */
RTO_HIDDEN void rto_stats_async(struct rto_fn *fn);
RTO_HIDDEN void rto_stats_async_full(void);
RTO_HIDDEN void rto_stats_async_counts(uint64_t *queued, uint64_t *full);
RTO_HIDDEN void rto_stats_fallback(struct rto_fn *fn);
RTO_HIDDEN void rto_stats_reset(void);
/* After rto_stats_reset(), fn (thread.c: the forking thread's row afresh).  Set at load. */
RTO_HIDDEN void rto_stats_on_reset(void (*fn)(void));
/* rt_offload_get_stats(), for the library's own use. */
struct rt_offload_stats;
RTO_HIDDEN int rto_stats_get(struct rt_offload_stats *out);
RTO_HIDDEN void rto_stats_at_exit(void);
/*
 * The thread table: a row per marked thread (claimed at its first mark,
 * off the call path), kept after it exits; past THREAD_ROWS threads, one
 * "other threads" row.  Called when a marked interval of t begins; tid:
 * the thread's (0: the caller's own).
 */
RTO_HIDDEN void rto_stats_thread_marked(struct rto_thread *t, pid_t tid);
/* A thread of the table is done: its counts go into its row (or "other"). */
RTO_HIDDEN void rto_stats_thread_fold(void);
/* A finished marked interval of a thread beyond the table (time, faults). */
RTO_HIDDEN void rto_stats_other_interval(uint64_t ns, uint64_t minor, uint64_t major);
/* A row of the thread table, as the reports show it. */
struct rto_thread_row {
	char name[17];
	pid_t tid;
	int exited;
	struct rto_thread_stats st;
};
/* The row after *i (start at 0): 1 and *out, or 0 at the end.  Lock-free; finished marked intervals
 * only. */
RTO_HIDDEN int rto_stats_thread_next(unsigned *i, struct rto_thread_row *out);
/* The table has a free row (a thread beyond it counts with shared atomics). */
RTO_HIDDEN int rto_stats_table_has_room(void);
/* How many marked threads did not fit in the table. */
RTO_HIDDEN uint64_t rto_stats_other_threads(void);

#endif /* RTO_STATS_H */
