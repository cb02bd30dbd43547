/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * thread_faults.c: page faults of marked threads: counters and totals.
 *
 * Concurrency: Totals are atomics; the per-thread counters are read with a system call:
 * never on the caller's path.
 */
#ifndef RTO_THREAD_FAULTS_H
#define RTO_THREAD_FAULTS_H

#include "rto_base.h"

/* thread_faults.c: the totals of finished marked intervals, plus the caller's current one. */
RTO_HIDDEN void rto_thread_faults(uint64_t *minor, uint64_t *major);
RTO_HIDDEN void rto_thread_faults_add(uint64_t minor, uint64_t major);
RTO_HIDDEN void rto_thread_faults_reset(void);
/* thread_faults.c: faults and marked time are counted (stats=1 or stats_file=). */
RTO_HIDDEN int rto_thread_counting(void);
/* thread_faults.c: the fault counters of thread tid (0: the caller): 0, or -1. */
RTO_HIDDEN int rto_thread_fault_counts(pid_t tid, uint64_t *minor, uint64_t *major);

#endif /* RTO_THREAD_FAULTS_H */
