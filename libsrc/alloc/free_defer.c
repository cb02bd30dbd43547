/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * malloc=pool: a block of the next allocator (glibc's) freed by a marked
 * thread that has a pool is not freed there.  glibc's free takes the lock
 * of the block's arena, which unmarked threads share, and may trim or
 * unmap (brk, munmap, madvise): a priority inversion and system calls on
 * the realtime CPU.  The block goes on one process-wide queue instead and
 * helper worker 0 frees it when it has nothing else to do.
 *
 * The block itself is the queue node: its first word becomes the link (a
 * glibc block has at least 24 usable bytes, any malloc's at least one
 * pointer), so deferring allocates nothing.  Enqueue is liburcu's wfcqueue
 * enqueue: one exchange on the tail and one store, wait-free, whoever else
 * enqueues.  Dequeue needs one consumer at a time: a flag taken with a
 * compare-and-swap (worker 0, the library's destructor, a fork()ed child),
 * never waited for: a drainer that finds it taken goes away.
 */
#include "rto_malloc.h"

struct defer_queue {
	struct __cds_wfcq_head head __attribute__((aligned(RTO_CACHELINE)));
	/* Written by every deferring thread. */
	struct cds_wfcq_tail tail __attribute__((aligned(RTO_CACHELINE)));
	/* The drainers'. */
	int32_t draining __attribute__((aligned(RTO_CACHELINE)));
	int32_t in_dequeue; /* a dequeue of `taking` is under way: see fork */
	struct cds_wfcq_node *taking;
	uint64_t freed; /* blocks freed from the queue */
};

static struct defer_queue dq = {
	.head = {.node = {NULL}},
	.tail = {.p = &dq.head.node},
};

void rto_free_defer(void *p)
{
	struct cds_wfcq_node *n = p;

	cds_wfcq_node_init(n);
	cds_wfcq_enqueue(&dq.head, &dq.tail, n); /* the node's bytes before the link: release */
}

int rto_free_defer_pending(void)
{
	return !cds_wfcq_empty(&dq.head, &dq.tail);
}

/*
 * Free up to max queued blocks with the next allocator; the number freed.
 * Non-blocking: a block whose enqueue is half done stays for next time.
 */
/*
 * The next allocator's free, registered by malloc.c (above us: it queues
 * here) in the constructor, before any thread is marked or a helper
 * starts; pthread_create orders that store before the drainers' loads.
 */
static void (*free_now)(void *p);

void rto_free_defer_init(void (*next_free)(void *p))
{
	free_now = next_free;
}

size_t rto_free_defer_drain(size_t max)
{
	size_t n = 0;

	if (!rto_free_defer_pending() || uatomic_cmpxchg(&dq.draining, 0, 1) != 0)
		return 0;
	for (; n < max; n++) {
		/* Non-NULL, only a drainer changes it again: it is the node dequeued. */
		struct cds_wfcq_node *first = CMM_LOAD_SHARED(dq.head.node.next);
		if (!first)
			break;
		CMM_STORE_SHARED(dq.taking, first);
		cmm_barrier(); /* program order is what a fork()ed child sees a prefix of */
		CMM_STORE_SHARED(dq.in_dequeue, 1);
		cmm_barrier();
		struct cds_wfcq_node *node = __cds_wfcq_dequeue_nonblocking(&dq.head, &dq.tail);
		cmm_barrier();
		CMM_STORE_SHARED(dq.in_dequeue, 0);
		if (!node || node == CDS_WFCQ_WOULDBLOCK)
			break;
		free_now(node);
	}
	__atomic_store_n(&dq.freed, dq.freed + n, __ATOMIC_RELAXED);
	cmm_smp_mb(); /* the queue's state before the flag says free */
	uatomic_set(&dq.draining, 0);
	return n;
}

uint64_t rto_free_defer_freed(void)
{
	return __atomic_load_n(&dq.freed, __ATOMIC_RELAXED);
}

/*
 * In a fork()ed child, in the forking thread, before anything else runs
 * (glibc has reset its malloc locks before the fork handlers): the queue
 * is a copy and so are its blocks, the child's to free.  The copy holds a
 * prefix, in program order, of what each other thread of the parent was
 * writing at the fork (a thread that writes a page fork() has already
 * write-protected waits until the fork is over), so:
 *  - an enqueue may be half done (tail exchanged, link not yet stored):
 *    the queue ends where the links from the head end, and the blocks past
 *    the break stay unfreed in the child, never freed twice;
 *  - a drain may be inside a dequeue (in_dequeue): whatever of it is done,
 *    `taking` is still linked to the rest, so it goes back at the head;
 *  - a block dequeued but not yet freed stays unfreed in the child.
 * The queue is then freed at once: the child may never start a helper.
 */
void rto_free_defer_after_fork(void)
{
	if (dq.draining && dq.in_dequeue)
		dq.head.node.next = dq.taking;
	dq.draining = 0;
	dq.in_dequeue = 0;
	struct cds_wfcq_node *last = &dq.head.node;
	while (last->next)
		last = last->next;
	dq.tail.p = last;
	rto_free_defer_drain(SIZE_MAX);
}
