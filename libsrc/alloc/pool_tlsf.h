/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Two-level segregated fit (TLSF): O(1) malloc and free over one region
 * of memory, no system call, no lock.
 *
 * Concurrency: none here: one thread uses a region at a time (pool.c
 * gives each region to one marked thread; other threads' frees reach it
 * through the pool's return queue).  rto_tlsf_usable() reads only the
 * block's own header.
 *
 * M. Masmano, I. Ripoll, A. Crespo, J. Real, "TLSF: a New Dynamic Memory
 * Allocator for Real-Time Systems", ECRTS 2004.  First level: the power
 * of two of a free block's size; second level: 32 linear steps inside it;
 * a bitmap per level, so finding a fitting free list is two find-first-set
 * instructions, whatever the number of blocks.
 */
#ifndef RTO_POOL_TLSF_H
#define RTO_POOL_TLSF_H

#include <stddef.h>
#include <stdint.h>

#define RTO_TLSF_ALIGN	  16 /* every block and payload: malloc's alignment on x86-64 */
#define RTO_TLSF_SL_LOG2  5  /* 32 second-level lists per power of two */
#define RTO_TLSF_FL_SHIFT 9  /* sizes below 512 B: one linear first level (16 B steps) */
#define RTO_TLSF_FL_MAX	  33 /* regions below 8 GiB */
#define RTO_TLSF_FL_COUNT (RTO_TLSF_FL_MAX - RTO_TLSF_FL_SHIFT + 1)
#define RTO_TLSF_SL_COUNT (1 << RTO_TLSF_SL_LOG2)

#define RTO_TLSF_API __attribute__((visibility("hidden")))

struct rto_tlsf_block;

struct rto_tlsf {
	uint32_t fl_bitmap;
	uint32_t sl_bitmap[RTO_TLSF_FL_COUNT];
	struct rto_tlsf_block *free[RTO_TLSF_FL_COUNT][RTO_TLSF_SL_COUNT];
	size_t used;  /* payload bytes of blocks in use, headers included */
	size_t high;  /* the most `used` ever was */
	size_t total; /* bytes the region holds for blocks */
};

/* t manages [mem, mem + len): mem aligned to RTO_TLSF_ALIGN. */
RTO_TLSF_API void rto_tlsf_init(struct rto_tlsf *t, void *mem, size_t len);
/* NULL when no free block fits. */
RTO_TLSF_API void *rto_tlsf_malloc(struct rto_tlsf *t, size_t size);
/* align: a power of two. */
RTO_TLSF_API void *rto_tlsf_memalign(struct rto_tlsf *t, size_t align, size_t size);
RTO_TLSF_API void rto_tlsf_free(struct rto_tlsf *t, void *p);
/* Grows or shrinks in place when it can (O(1)); NULL, p untouched, when it cannot. */
RTO_TLSF_API void *rto_tlsf_resize(struct rto_tlsf *t, void *p, size_t size);
RTO_TLSF_API size_t rto_tlsf_usable(const void *p);
/* The largest request that can still succeed (walks nothing: O(1)). */
RTO_TLSF_API size_t rto_tlsf_largest(const struct rto_tlsf *t);

#endif
