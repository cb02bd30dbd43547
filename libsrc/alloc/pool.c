/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * malloc=pool: one pool per marked thread, reserved, prefaulted and locked
 * when the thread is first marked, never returned to the kernel.
 *
 * Why per thread: the owner allocates and frees with no lock and no atomic
 * operation, so a marked thread never waits for anybody (a shared pool
 * needs a lock, and a lock shared with an unmarked thread is a priority
 * inversion).  Every pool is a slot of one address range reserved at load
 * (PROT_NONE, no memory), so "is this block a pool's, and whose?" is a
 * subtraction and a shift, for any thread.
 *
 * A block freed by another thread (or by the owner once it exited) goes on
 * its pool's return queue, liburcu's wait-free queue: enqueue is one
 * exchange and one store, whoever the freeing thread is.  The owner takes
 * a few blocks back at each allocation (bounded work) and all of them
 * before it calls its pool full.
 *
 * A thread that exits gives its pool up (orphaned: blocks it handed out
 * stay valid and keep coming back through the queue); the next thread
 * marked without a pool adopts it.  A fork()ed child keeps the forking
 * thread's pool; the other threads' pools are orphaned there, or lost
 * (never reused) when their owner was inside an operation at the fork.
 */
#include "options.h"
#include "rto_fast.h"
#include "callsite.h"
#include "report.h"
#include "resolve.h"
#include "rto_malloc.h"
#include "pool_tlsf.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The real calls (shims.c), never our own wrappers. */
RTO_HIDDEN extern void *(*rto_real_mmap)(void *, size_t, int, int, int, off_t);
RTO_HIDDEN extern int (*rto_real_mlock)(const void *, size_t);

#define POOL_SLOTS 256 /* as many pools as the thread table has rows */
#define DRAIN_STEP 4   /* returned blocks taken back per allocation */

enum { SLOT_UNUSED, SLOT_CLAIMING, SLOT_OWNED, SLOT_ORPHANED, SLOT_LOST };

struct rto_pool {
	/* Written by the threads that return blocks. */
	struct __cds_wfcq_head rhead __attribute__((aligned(RTO_CACHELINE)));
	struct cds_wfcq_tail rtail __attribute__((aligned(RTO_CACHELINE)));
	/* The owner's alone. */
	int busy __attribute__((aligned(RTO_CACHELINE))); /* inside an operation: see fork */
	struct rto_tlsf tlsf;
};

uintptr_t rto_pool_base, rto_pool_span;
/*
 * malloc=, pool_kb=, pool_fork=: copied once at load (rto_pool_configure),
 * read-only afterwards.
 */
static struct {
	int malloc_mode;
	unsigned pool_kb;
	int pool_fork;
} opt;

void rto_pool_configure(const struct rto_options *o)
{
	opt.malloc_mode = o->malloc_mode;
	opt.pool_kb = o->pool_kb;
	opt.pool_fork = o->pool_fork;
}

static unsigned slot_shift;
static size_t pool_bytes, head_bytes; /* the TLSF region; the header before it */
static int32_t slots[POOL_SLOTS];     /* SLOT_* */
static pthread_key_t exit_key;
static int pools_on;

int rto_pool_on(void)
{
	return pools_on;
}

static struct rto_pool *slot_pool(unsigned i)
{
	return (struct rto_pool *)(rto_pool_base + ((uintptr_t)i << slot_shift));
}

static unsigned slot_of(const void *p)
{
	return (unsigned)(((uintptr_t)p - rto_pool_base) >> slot_shift);
}

/* ---- the return queue ----------------------------------------------------- */

/* A block is at least 16 bytes: its first word becomes the queue node. */
static void give_back(struct rto_pool *pool, void *p)
{
	struct cds_wfcq_node *n = p;

	cds_wfcq_node_init(n);
	cds_wfcq_enqueue(&pool->rhead, &pool->rtail, n); /* xchg on the tail: wait-free */
}

/*
 * Take up to max returned blocks (all: SIZE_MAX).  Non-blocking: a block
 * whose enqueue is half done stays for the next time.  Only the owner
 * dequeues, so the queue needs no dequeue lock.
 */
static void take_back(struct rto_pool *pool, size_t max)
{
	for (size_t i = 0; i < max; i++) {
		if (cds_wfcq_empty(&pool->rhead, &pool->rtail))
			return;
		struct cds_wfcq_node *n =
			__cds_wfcq_dequeue_nonblocking(&pool->rhead, &pool->rtail);
		if (!n || n == CDS_WFCQ_WOULDBLOCK)
			return;
		rto_tlsf_free(&pool->tlsf, n);
	}
}

/* ---- claiming a pool -------------------------------------------------------- */

static struct rto_pool *map_slot(unsigned i)
{
	struct rto_pool *pool = slot_pool(i);
	size_t len = head_bytes + pool_bytes;
	void *p = rto_real_mmap(pool, len, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_POPULATE, -1, 0);

	if (p != (void *)pool)
		return NULL;
	/* pool_fork=drop: no child gets it (the forking thread's own: see fork below). */
	if (opt.pool_fork == RTO_POOL_FORK_DROP)
		rto_syscall(SYS_madvise, p, len, MADV_DONTFORK);
	if (rto_real_mlock(p, len) != 0)
		rto_say(1, "malloc=pool: mlock of a %zu KiB pool failed (%s): it may be paged out",
			len / 1024, strerror(errno));
	long page = getpagesize();
	for (size_t off = 0; off < len; off += (size_t)page)
		((volatile char *)p)[off] = 0; /* written: no copy-on-write fault left either */
	__cds_wfcq_init(&pool->rhead, &pool->rtail);
	rto_tlsf_init(&pool->tlsf, (char *)p + head_bytes, pool_bytes);
	return pool;
}

static struct rto_pool *claim(void)
{
	for (unsigned i = 0; i < POOL_SLOTS; i++) {
		if (uatomic_read(&slots[i]) == SLOT_ORPHANED &&
		    uatomic_cmpxchg(&slots[i], SLOT_ORPHANED, SLOT_OWNED) == SLOT_ORPHANED) {
			struct rto_pool *pool =
				slot_pool(i); /* the cmpxchg: the last owner's writes */
			take_back(pool, SIZE_MAX);
			return pool;
		}
	}
	for (unsigned i = 0; i < POOL_SLOTS; i++) {
		if (uatomic_read(&slots[i]) != SLOT_UNUSED ||
		    uatomic_cmpxchg(&slots[i], SLOT_UNUSED, SLOT_CLAIMING) != SLOT_UNUSED)
			continue;
		struct rto_pool *pool = map_slot(i);
		uatomic_set(&slots[i], pool ? SLOT_OWNED : SLOT_UNUSED);
		if (!pool)
			rto_say(1,
				"malloc=pool: cannot map a pool: this thread uses the next malloc");
		return pool;
	}
	rto_say(1, "malloc=pool: all %d pools are taken: this thread uses the next malloc",
		POOL_SLOTS);
	return NULL;
}

void rto_pool_for(struct rto_thread *t)
{
	if (!pools_on || CMM_LOAD_SHARED(t->pool))
		return;
	struct rto_pool *pool = claim();
	if (!pool)
		return;
	CMM_STORE_SHARED(t->pool, pool); /* before the route says marked: automark.c's cmpxchg */
	if (t == &rto_self) {
		pthread_setspecific(exit_key, pool);
		t->pool_keyed = 1;
	}
}

/* The owner exits: its pool is orphaned, its blocks keep coming back. */
static void owner_exits(void *arg)
{
	struct rto_pool *pool = arg;

	rto_self.pool = NULL; /* its own later frees (TLS destructors) go on the queue */
	cmm_smp_mb();	      /* the pool's state before the slot says orphaned */
	uatomic_set(&slots[slot_of(pool)], SLOT_ORPHANED);
}

/* ---- the owner's operations ----------------------------------------------- */

static void note_high(struct rto_pool *pool)
{
	if (pool->tlsf.used > rto_self.st.pool_high)
		__atomic_store_n(&rto_self.st.pool_high, pool->tlsf.used, __ATOMIC_RELAXED);
}

void *rto_pool_alloc(struct rto_pool *pool, size_t align, size_t size)
{
	void *p;

	if (RTO_UNLIKELY(!rto_self.pool_keyed)) { /* marked from another thread: key it here */
		rto_self.pool_keyed = 1; /* first: a key past glibc's first 32 callocs, back here */
		pthread_setspecific(exit_key, pool);
	}
	CMM_STORE_SHARED(pool->busy, 1);
	cmm_barrier();
	take_back(pool, DRAIN_STEP);
	p = rto_tlsf_memalign(&pool->tlsf, align, size);
	if (RTO_UNLIKELY(!p)) { /* full?  Not before every returned block is back */
		take_back(pool, SIZE_MAX);
		p = rto_tlsf_memalign(&pool->tlsf, align, size);
	}
	cmm_barrier();
	CMM_STORE_SHARED(pool->busy, 0);
	if (p)
		note_high(pool);
	return p;
}

void *rto_pool_resize(struct rto_pool *pool, void *p, size_t size)
{
	CMM_STORE_SHARED(pool->busy, 1);
	cmm_barrier();
	void *q = rto_tlsf_resize(&pool->tlsf, p, size);
	cmm_barrier();
	CMM_STORE_SHARED(pool->busy, 0);
	if (q)
		note_high(pool);
	return q;
}

void rto_pool_free(void *p)
{
	struct rto_pool *pool = slot_pool(slot_of(p));

	if (pool != rto_self.pool) {
		if (RTO_UNLIKELY(uatomic_read(&slots[slot_of(p)]) == SLOT_LOST))
			return; /* a fork()ed child's lost pool: maybe not even mapped */
		give_back(pool, p);
		return;
	}
	CMM_STORE_SHARED(pool->busy, 1);
	cmm_barrier();
	rto_tlsf_free(&pool->tlsf, p);
	cmm_barrier();
	CMM_STORE_SHARED(pool->busy, 0);
}

struct rto_pool *rto_pool_of(const void *p)
{
	return slot_pool(slot_of(p));
}

size_t rto_pool_usable(const void *p)
{
	return rto_tlsf_usable(p);
}

void rto_pool_totals(size_t *pools, size_t *total, size_t *used, size_t *high)
{
	*pools = *total = *used = *high = 0;
	for (unsigned i = 0; i < POOL_SLOTS; i++) {
		int s = uatomic_read(&slots[i]);
		if (s != SLOT_OWNED && s != SLOT_ORPHANED)
			continue;
		struct rto_tlsf *t = &slot_pool(i)->tlsf;
		(*pools)++;
		*total += __atomic_load_n(&t->total, __ATOMIC_RELAXED);
		*used += __atomic_load_n(&t->used, __ATOMIC_RELAXED);
		*high += __atomic_load_n(&t->high, __ATOMIC_RELAXED);
	}
}

/* ---- fork ----------------------------------------------------------------------- */

/*
 * pool_fork=drop: every pool is MADV_DONTFORK, so that a fork leaves the
 * parent's marked threads no copy-on-write page (a write to a shared page
 * after a fork is a page fault, and a page copy, on the realtime CPU).
 * The forking thread's own pool goes to the child: DOFORK around the fork.
 */
static void own_pool_forks(int advice)
{
	if (opt.pool_fork == RTO_POOL_FORK_DROP && rto_self.pool)
		rto_syscall(SYS_madvise, rto_self.pool, head_bytes + pool_bytes, advice);
}

static void before_fork(void)
{
	own_pool_forks(MADV_DOFORK);
}

static void parent_after_fork(void)
{
	own_pool_forks(MADV_DONTFORK);
}

/*
 * In the child only the forking thread lives: its pool stays its own (and
 * locked again: locks are not inherited); the others are orphaned, or lost
 * when their owner was inside an operation (their lists may be half
 * changed).  Return queues are emptied: a block another thread was putting
 * back at the fork is not the child's to free.  pool_fork=drop: the others
 * were not copied; their range is reserved again (nothing else may be
 * mapped where rto_pool_owns looks) and they are lost.
 */
static void child_after_fork(void)
{
	for (unsigned i = 0; i < POOL_SLOTS; i++) {
		int s = slots[i];
		struct rto_pool *pool = slot_pool(i);
		if (s == SLOT_UNUSED)
			continue;
		if (opt.pool_fork == RTO_POOL_FORK_DROP && pool != rto_self.pool) {
			rto_real_mmap(pool, head_bytes + pool_bytes, PROT_NONE,
				      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1,
				      0);
			slots[i] = SLOT_LOST;
			continue;
		}
		if (s == SLOT_CLAIMING)
			slots[i] = SLOT_LOST;
		if (s != SLOT_OWNED && s != SLOT_ORPHANED)
			continue;
		__cds_wfcq_init(&pool->rhead, &pool->rtail);
		if (pool == rto_self.pool) {
			rto_real_mlock(pool, head_bytes + pool_bytes);
			continue;
		}
		slots[i] = pool->busy ? SLOT_LOST : SLOT_ORPHANED;
	}
	rto_free_defer_after_fork();
	rto_pool_events_after_fork();
}

/* ---- load ------------------------------------------------------------------------- */

void rto_pool_init(void)
{
	if (opt.malloc_mode != RTO_MALLOC_POOL)
		return;
	long page = getpagesize();
	head_bytes = (sizeof(struct rto_pool) + (size_t)page - 1) & ~((size_t)page - 1);
	pool_bytes = (size_t)opt.pool_kb * 1024;
	slot_shift = 12;
	while (((size_t)1 << slot_shift) < head_bytes + pool_bytes)
		slot_shift++;
	size_t span = (size_t)POOL_SLOTS << slot_shift;
	/* Address space only: PROT_NONE, no swap reserved.  Aligned to a slot. */
	void *r = rto_real_mmap(NULL, span + ((size_t)1 << slot_shift), PROT_NONE,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (r == MAP_FAILED) {
		rto_say(0, "malloc=pool: cannot reserve %zu MiB of address space: pools off",
			span >> 20);
		return;
	}
	uintptr_t base = ((uintptr_t)r + ((uintptr_t)1 << slot_shift) - 1) &
			 ~(((uintptr_t)1 << slot_shift) - 1);
	pthread_key_create(&exit_key, owner_exits);
	pthread_atfork(before_fork, parent_after_fork, child_after_fork);
	rto_pool_base = base;
	rto_pool_span = span;
	pools_on = 1;
	rto_say(1, "malloc=pool: %u KiB per marked thread, up to %d pools", opt.pool_kb,
		POOL_SLOTS);
}
