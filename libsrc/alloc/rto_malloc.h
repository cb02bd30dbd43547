/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * malloc=glibc|pool: the allocator interposers (malloc.c), the per-thread
 * pools they route a marked thread's allocations to (pool.c, over the
 * TLSF of pool_tlsf.c), and the glibc recipe for malloc=glibc (heap_recipe.c).
 *
 * Concurrency and ownership:
 *   a pool   its marked thread's alone: rto_pool_alloc/resize and a free
 *        of its own block take no lock and no atomic.  A block freed by
 *        any other thread (or after its owner exited) goes on the pool's
 *        return queue (liburcu's wfcqueue: wait-free enqueue), which only
 *        the owner dequeues.  rto_pool_for() runs at the first mark, by
 *        the thread itself or by the thread that marked it (mark=); a
 *        pool of an exited thread is adopted by the next one marked
 *        without a pool.  rto_pool_owns()/rto_pool_of(): arithmetic on a
 *        range fixed at load (rto_pool_init), any thread
 *   free_defer.c   a glibc block freed by a pool thread: a wait-free
 *        enqueue on the caller's path; one drainer at a time (worker 0
 *        when idle, the destructor, a fork()ed child), by a
 *        compare-and-swap flag nobody waits for
 *   pool_events.c   the realtime side claims a slot with a
 *        compare-and-swap and counts with an atomic add; one reporting
 *        side at a time (worker 0 when idle, the destructor) names and
 *        reports them
 *   rto_malloc_init(), rto_pool_init(), rto_free_defer_init()   at load
 *   rto_pool_totals()   any thread, a snapshot of other threads' counts
 */
#ifndef RTO_MALLOC_H
#define RTO_MALLOC_H

#include "rto_fast.h" /* struct rto_thread, struct rto_pool */

#include <stddef.h>
#include <stdint.h>

/* malloc= and pool_full= values: RTO_MALLOC_*, RTO_POOL_FULL_*, pool_fork=: RTO_POOL_FORK_*
 * (options.h). */

/* malloc.c, at load: pools on or off (off when another malloc must win). */
RTO_HIDDEN void rto_malloc_init(void);
struct rto_options;
/* Their options (malloc=, pool_*, mlock=, prefault_heap_kb=), once at load (init.c). */
RTO_HIDDEN void rto_malloc_configure(const struct rto_options *o);
RTO_HIDDEN void rto_pool_configure(const struct rto_options *o);
RTO_HIDDEN void rto_heap_recipe_configure(const struct rto_options *o);
/* malloc=: RTO_MALLOC_*, as it stands after rto_malloc_init (glibc where pools cannot work). */
RTO_HIDDEN int rto_malloc_mode(void);
/*
 * The library's own allocations: the interposers themselves (a pool block
 * on a marked thread, the next allocator's elsewhere), reached without the
 * PLT, as the library never calls its exported names (real.h).
 */
RTO_HIDDEN void *rto_malloc(size_t n);
RTO_HIDDEN void rto_free(void *p);
/* The next allocator itself (glibc's), for the library's own use. */
RTO_HIDDEN void *rto_next_malloc(size_t n);
RTO_HIDDEN void rto_next_free(void *p);

/* ---- pool.c --------------------------------------------------------------- */

/* The address range every pool lies in: [base, base + span); span 0 without pools. */
RTO_HIDDEN extern uintptr_t rto_pool_base, rto_pool_span;

static inline int rto_pool_owns(const void *p)
{
	return (uintptr_t)p - rto_pool_base < rto_pool_span;
}

/* At load: reserve the range when malloc=pool is on (it is off under a sanitizer). */
RTO_HIDDEN void rto_pool_init(void);
/* 1: marked threads get pools. */
RTO_HIDDEN int rto_pool_on(void);
/* t (the caller's own state, or another thread's) is marked: give it a pool. */
RTO_HIDDEN void rto_pool_for(struct rto_thread *t);
/* The caller's pool: a block, NULL when none fits (other threads' frees taken first). */
RTO_HIDDEN void *rto_pool_alloc(struct rto_pool *pool, size_t align, size_t size);
/* In place, or NULL. */
RTO_HIDDEN void *rto_pool_resize(struct rto_pool *pool, void *p, size_t size);
/* p (rto_pool_owns) from any thread: to its pool, or onto that pool's return queue. */
RTO_HIDDEN void rto_pool_free(void *p);
RTO_HIDDEN size_t rto_pool_usable(const void *p);
/* The pool p (rto_pool_owns) belongs to, whichever thread owns it: a shift, any thread. */
RTO_HIDDEN struct rto_pool *rto_pool_of(const void *p);
/* Every pool: bytes held, in use, free (mallinfo2, malloc_stats). */
RTO_HIDDEN void rto_pool_totals(size_t *pools, size_t *total, size_t *used, size_t *high);

/* ---- free_defer.c --------------------------------------------------------- */

/* A marked thread with a pool frees a next-allocator block: queued, wait-free. */
RTO_HIDDEN void rto_free_defer(void *p);
/* At load, malloc.c: the next allocator's free, for the drains. */
RTO_HIDDEN void rto_free_defer_init(void (*next_free)(void *p));
/* Blocks queued? */
RTO_HIDDEN int rto_free_defer_pending(void);
/* Not a realtime thread: free up to max queued blocks (0 when another drains). */
RTO_HIDDEN size_t rto_free_defer_drain(size_t max);
/* Blocks freed from the queue so far. */
RTO_HIDDEN uint64_t rto_free_defer_freed(void);
/* fork()ed child, forking thread: mend the copied queue and free its blocks. */
RTO_HIDDEN void rto_free_defer_after_fork(void);
/* The next allocator's free, never deferred (malloc.c). */
RTO_HIDDEN void rto_next_free_now(void *p);

/* ---- pool_events.c -------------------------------------------------------- */

enum {
	RTO_POOL_FN_MALLOC,
	RTO_POOL_FN_CALLOC,
	RTO_POOL_FN_REALLOC,
	RTO_POOL_FN_MEMALIGN,
	RTO_POOL_FN_COUNT
};
RTO_HIDDEN const char *rto_pool_fn_name(int fn);
/* Realtime side: fn (RTO_POOL_FN_*) found the pool full, called from ip. */
RTO_HIDDEN void rto_pool_event(int fn, const void *ip);
/* Reporting side: name, report and count the sites recorded since last time (wait: at exit). */
RTO_HIDDEN void rto_pool_events_flush(int wait);
RTO_HIDDEN void rto_pool_events_after_fork(void);
/* pool_events.c names the sites through callsite.c (rto_callsite_at_ip, callsite.h). */

/* ---- heap_recipe.c -------------------------------------------------------- */

/* malloc=glibc, mlock=1: the realtime wiki's recipe for the calling thread's arena. */
RTO_HIDDEN void rto_heap_recipe_at_mark(void);

#endif
