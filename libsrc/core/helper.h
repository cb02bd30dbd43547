/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * helper.c: the helper threads: start, serve, idle.
 *
 * Concurrency: rto_helpers_configure() runs once at load, before any
 * worker starts.  rto_helpers_start() is idempotent and serialised (start_lock); the hooks
 * are set once at load, before any helper starts.
 */
#ifndef RTO_HELPER_H
#define RTO_HELPER_H

#include "rto_base.h"

struct rto_options;

/* The options the workers follow (helper_*, workers*, the CPUs): once, at load. */
RTO_HIDDEN void rto_helpers_configure(const struct rto_options *o);
/* helper.c: start the workers (idempotent).  0, or -1 with errno. */
RTO_HIDDEN int rto_helpers_start(void);
/* fn runs after helpers started (init.c: the live view's publisher, at load). */
RTO_HIDDEN void rto_helpers_on_start(void (*fn)(const cpu_set_t *cpus, unsigned workers));
/*
 * Idle workers ask stalled() and run retry() (async.c, at load, before
 * helpers start): a stalled drain (a helper gave up on a taken stream
 * lock) is retried at least every RTO_ASYNC_RETRY_NS.
 */
#define RTO_ASYNC_RETRY_NS (10 * 1000 * 1000)
RTO_HIDDEN void rto_helpers_on_idle(int (*stalled)(void), void (*retry)(void));
/*
 * The async rings (async.c, at load): queued() says lines wait, drain()
 * writes them.  The polling worker drains once per polling round, and a
 * worker about to sleep or nap drains instead when lines wait: a marked
 * thread queues no drain while a worker is awake (async.c's arm()).
 * look(), asked by worker 0 before it sleeps: sleep at most that many ns
 * (0: no limit), so that lines queued while every worker sleeps need no
 * FUTEX_WAKE from the thread that queues them.
 */
RTO_HIDDEN void rto_helpers_on_queued(int (*queued)(void), void (*drain)(void), long (*look)(void));
/* helper_priority=inherit: idle workers wait at the highest marked priority. */
RTO_HIDDEN void rto_helpers_raise_ceiling(int prio);
/* stall.c's watchdog: every worker is stuck in a call; start one more (0), up to workers_max. */
RTO_HIDDEN int rto_helpers_grow(void);
/*
 * stall.c's watchdog: worker tid is runnable on cpu, which another task
 * holds: move it to another of the helpers' CPUs (0), -1 if none.
 */
RTO_HIDDEN int rto_helpers_move_off(pid_t tid, int cpu);

#endif /* RTO_HELPER_H */
