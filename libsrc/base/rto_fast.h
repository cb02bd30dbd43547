/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mark.c / self.c: the fast path every wrapper runs first (like liburcu's urcu/static/):
 * the per-thread state in initial-exec TLS and the inline route check.
 *
 * Concurrency: rto_direct() is one TLS load and a branch, always inline, safe in an
 * uninstrumented wrapper before a sanitizer is up.  rto_self is written by
 * its own thread only, except route (route_state.h) and the counters that
 * other threads read relaxed (rto_read64/rto_own_add).
 */
#ifndef RTO_FAST_H
#define RTO_FAST_H

#include "rto_base.h"

struct rto_pool;

enum rto_route {
	RTO_ROUTE_DIRECT = 0, /* unmarked: call libc */
	RTO_ROUTE_MARKED = 1, /* marked and not already inside an offload */
	RTO_ROUTE_BUSY = 3,   /* marked, waiting for an offload: nested calls go direct */
};

/*
 * A thread's own statistics (stats.c): written by the thread only, read by
 * the exit report.  Calls are counted on the caller's path, into TLS.
 */
struct rto_thread_stats {
	uint64_t offloaded, local, denied, async;
	uint64_t fallback;     /* offload-mode calls run here: no helper could start */
	uint64_t marked_ns;    /* finished marked intervals */
	uint64_t marked_at;    /* rto_now_ns() when the current one began */
	uint64_t minor, major; /* page faults of the finished marked intervals */
	uint64_t pool_high;    /* malloc=pool: the most bytes its pool held (pool.c) */
	uint64_t pool_fallbacks, pool_failures; /* pool_full= events (malloc.c) */
};

struct rto_thread {
	unsigned char route;	      /* the only field the unmarked fast path reads */
	unsigned char mode;	      /* RT_OFFLOAD_MODE_* + 1; 0: not set, use mode= */
	int prio;		      /* SCHED_FIFO/RR priority at mark time, 0 if other */
	unsigned char by_policy;      /* marked by mark=, not by the API */
	unsigned char traits;	      /* RTO_MARK_* bits this thread has now (automark.c) */
	uint64_t sigmask;	      /* signal mask at mark time, for process-class calls */
	uint64_t minflt, majflt;      /* the thread's fault counts when it was marked */
	int signal_seen;	      /* the last signal whose handler ran here (signals.c) */
	unsigned char identity_known; /* prio and sigmask captured (mark.c) */
	unsigned char tls_shared;   /* it made a clone whose child shares this TLS (shared_tls.c) */
	int tls_owner;		    /* then: its own tid */
	unsigned short own_ctx;	    /* RTO_CTX_*: a kernel context of its own: calls run here */
	char *dlerror;		    /* an offloaded dlopen/dlclose's error, for dlerror() */
	unsigned char vforking;	    /* a vfork() child runs on this state: not our descriptors */
	unsigned char exited;	    /* mark.c: its exit was accounted */
	int row;		    /* stats.c: 1 + its row in the thread table; -1: table full */
	struct rto_pool *pool;	    /* malloc=pool: its own pool (pool.c), kept across unmarks */
	unsigned char pool_keyed;   /* its exit will give the pool up (pool.c) */
	struct rto_thread_stats st; /* stats.c */
};

RTO_HIDDEN extern __thread struct rto_thread rto_self RTO_TLS;

/*
 * A counter written by one thread and read by others (the exit report):
 * relaxed atomics, plain loads and stores on every target we build for.
 */
static inline uint64_t rto_read64(const uint64_t *c)
{
	return __atomic_load_n(c, __ATOMIC_RELAXED);
}
static inline void rto_own_add(uint64_t *c, uint64_t n)
{
	__atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + n, __ATOMIC_RELAXED);
}

/*
 * shared_tls.c: this thread made a clone(CLONE_VM) without CLONE_SETTLS,
 * whose child reads this rto_self as its own: a call of that child is
 * rto_foreign_task() (one system call, for such a thread only).
 */
RTO_HIDDEN int rto_foreign_slow(void);
RTO_HIDDEN void rto_note_clone(uint64_t flags);
RTO_HIDDEN void rto_note_clone_args(long nr, const long *a);
static inline int rto_foreign_task(void)
{
	return RTO_UNLIKELY(rto_self.tls_shared) && rto_foreign_slow();
}

/*
 * The route state's moves into and out of BUSY (route_state.h says the
 * rest of the state machine and why these are compare-and-swaps): here,
 * beside the byte, as every offload makes them.
 */
/* Enter a stretch of the library's own work; returns what resume() needs. */
static inline unsigned char rto_route_go_direct(void)
{
	unsigned char was = CMM_LOAD_SHARED(rto_self.route);

	/* Compare-and-swap: another thread's mark= unmarking it meanwhile is not lost. */
	if (was == RTO_ROUTE_MARKED &&
	    uatomic_cmpxchg(&rto_self.route, RTO_ROUTE_MARKED, RTO_ROUTE_BUSY) != was)
		was = CMM_LOAD_SHARED(rto_self.route);
	return was;
}

/* Leave it: back to what it was, unless a handler unmarked the thread meanwhile. */
static inline void rto_route_resume(unsigned char was)
{
	if (CMM_LOAD_SHARED(rto_self.route) == RTO_ROUTE_BUSY)
		uatomic_cmpxchg(&rto_self.route, RTO_ROUTE_BUSY, was);
}

/* The mode= option, a thread's mode until it sets its own (self.c: rto_self_configure). */
RTO_HIDDEN extern int rto_mode_default;

/* The calling thread's mode (RT_OFFLOAD_MODE_*): its own, else the mode= option. */
static inline int rto_thread_mode(void)
{
	return rto_self.mode ? rto_self.mode - 1 : rto_mode_default;
}

/*
 * One TLS load and a branch: true for every unmarked thread.  Always
 * inline: it runs in the uninstrumented wrappers, before a sanitizer is up.
 */
static inline __attribute__((always_inline)) int rto_direct(void)
{
	return RTO_LIKELY(rto_self.route != RTO_ROUTE_MARKED);
}

#endif /* RTO_FAST_H */
