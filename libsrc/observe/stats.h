/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * stats.c: counters per function and per marked thread, and their
 * readers.  They are rendered elsewhere: the exit report and stats_file by
 * stats_report.c, the live view by live.c.
 *
 * Concurrency: rto_stats_offloaded/local/denied/async/fallback run on the caller's path:
 * atomics on the descriptor's counters and plain stores into its own TLS.
 * The readers run along (lock-free) from any thread, off the call path.
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
/* After rto_stats_reset(), fn (mark.c: the forking thread's row afresh).  Set at load. */
RTO_HIDDEN void rto_stats_on_reset(void (*fn)(void));
/* rt_offload_get_stats(), for the library's own use. */
struct rt_offload_stats;
RTO_HIDDEN int rto_stats_get(struct rt_offload_stats *out);
/* One function's counts, and its round trips' percentiles (ns). */
struct rto_stats_summary {
	uint64_t offloaded, local, denied, async, fallback, p50, p99, max;
};
RTO_HIDDEN void rto_stats_fn_summary(const struct rto_fn *fn, struct rto_stats_summary *s);
/* Rows of the thread table; the threads beyond them count in "other threads". */
#define RTO_STATS_THREAD_ROWS 256
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
/*
 * The row after *i (start at 0): 1 and *out, or 0 at the end.  Lock-free.
 * Finished marked intervals only, and no name for a live thread (the live
 * view: its reader names them), unless `current` (the exit report): then
 * a live thread's current interval counts too and its name is read, which
 * opens /proc and reads its route, a byte its owner writes (stats.c).
 */
RTO_HIDDEN int rto_stats_thread_next(unsigned *i, struct rto_thread_row *out, int current);
/* Some thread was ever marked (a row claimed, or "other threads"). */
RTO_HIDDEN int rto_stats_threads_seen(void);
/* The threads beyond the table: how many, how many marked now, their counts. */
struct rto_stats_other {
	uint64_t threads;
	int64_t marked_now;
	struct rto_thread_stats st; /* finished marked intervals */
};
RTO_HIDDEN void rto_stats_other_counts(struct rto_stats_other *o);
/* The table has a free row (a thread beyond it counts with shared atomics). */
RTO_HIDDEN int rto_stats_table_has_room(void);
/* How many marked threads did not fit in the table. */
RTO_HIDDEN uint64_t rto_stats_other_threads(void);

#endif /* RTO_STATS_H */
