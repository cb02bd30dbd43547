/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fault_count.c: page faults of marked threads: counters and totals.
 *
 * Concurrency: Totals are atomics; the per-thread counters are read with a system call:
 * never on the caller's path.
 */
#ifndef RTO_FAULT_COUNT_H
#define RTO_FAULT_COUNT_H

#include "rto_base.h"

/* fault_count.c: the totals of finished marked intervals, plus the caller's current one. */
RTO_HIDDEN void rto_thread_faults(uint64_t *minor, uint64_t *major);
RTO_HIDDEN void rto_thread_faults_add(uint64_t minor, uint64_t major);
RTO_HIDDEN void rto_thread_faults_reset(void);
/* fault_count.c: faults and marked time are counted (stats=1 or stats_file=). */
RTO_HIDDEN int rto_thread_counting(void);
/* fault_count.c: the fault counters of thread tid (0: the caller): 0, or -1. */
RTO_HIDDEN int rto_thread_fault_counts(pid_t tid, uint64_t *minor, uint64_t *major);

struct rto_options;
/* stats=, stats_file=, once at load (init.c), before anything here runs. */
RTO_HIDDEN void rto_thread_faults_configure(const struct rto_options *o);

#endif /* RTO_FAULT_COUNT_H */
