/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fork.c: fork and raw clone(): fresh helpers in the child.
 *
 * Concurrency: rto_fork_init() once, in the constructor (init.c), before
 * any helper starts: it maps the queue (MADV_WIPEONFORK) and registers
 * the atfork handlers and stats.c's reset.  The prepare handler runs on
 * the forking thread and waits, a bounded while, for every helper to
 * reach its loop (the queue's counters, read with CMM_LOAD_SHARED); the
 * child handler runs in the child, single-threaded.
 * rto_fork_no_threads is set there and only read afterwards, by the
 * child's own threads.
 */
#ifndef RTO_FORK_H
#define RTO_FORK_H

#include "rto_base.h"

/* fork.c */
/* At load: the queue mapping and the fork handlers; child_stats_reset runs in a child. */
RTO_HIDDEN int rto_fork_init(void (*child_stats_reset)(void));
/* At load (stall.c): its counts' reset, which runs in a child after the statistics'. */
RTO_HIDDEN void rto_fork_on_child(void (*reset)(void));
/*
 * The queue and the helpers' bookkeeping zeroed, as a forked child sees
 * them: a fork child's handler, and alone.c once none of the library's
 * threads is left to read them.
 */
RTO_HIDDEN void rto_fork_wipe_queue(void);
/* 1 in the child of a multi-threaded fork under ThreadSanitizer: nothing is marked there. */
RTO_HIDDEN extern int rto_fork_no_threads;

struct rto_options;
/* workers=, once at load (init.c), before anything here runs. */
RTO_HIDDEN void rto_fork_configure(const struct rto_options *o);

#endif /* RTO_FORK_H */
