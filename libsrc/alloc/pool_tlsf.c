/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * TLSF (Masmano, Ripoll, Crespo, Real, ECRTS 2004): every operation is a
 * constant number of steps.  A block is a 16-byte header (the previous
 * physical block when that one is free, and this block's payload size
 * with two flag bits) followed by its payload; a free block's payload
 * holds its free-list links.  Free neighbours are merged at once, so two
 * free blocks are never adjacent.  A zero-sized used block ends the region.
 */
#include "rto_base.h"
#include "pool_tlsf.h"

#include <string.h>

#define BLOCK_FREE	((size_t)1)
#define BLOCK_PREV_FREE ((size_t)2)
#define BLOCK_FLAGS	(BLOCK_FREE | BLOCK_PREV_FREE)
#define HDR		((size_t)16)
#define MIN_PAYLOAD	((size_t)16) /* the two free-list links */
#define SMALL		((size_t)1 << RTO_TLSF_FL_SHIFT)
#define MAX_REQUEST	(((size_t)1 << (RTO_TLSF_FL_MAX - 1)) - 1)

struct rto_tlsf_block {
	struct rto_tlsf_block *prev_phys; /* valid when BLOCK_PREV_FREE */
	size_t size;			  /* payload bytes | flags */
	/* Payload; while free: */
	struct rto_tlsf_block *next_free, *prev_free;
};

static size_t bsize(const struct rto_tlsf_block *b)
{
	return b->size & ~BLOCK_FLAGS;
}

static void *payload(struct rto_tlsf_block *b)
{
	return (char *)b + HDR;
}

static struct rto_tlsf_block *of_payload(const void *p)
{
	return (struct rto_tlsf_block *)((char *)p - HDR);
}

static struct rto_tlsf_block *next_phys(struct rto_tlsf_block *b)
{
	return (struct rto_tlsf_block *)((char *)b + HDR + bsize(b));
}

static int fls_size(size_t x) /* index of the highest set bit; x != 0 */
{
	return 63 - __builtin_clzl(x);
}

/* The list a free block of this size belongs to (rounding down). */
static void mapping_insert(size_t size, int *fl, int *sl)
{
	if (size < SMALL) {
		*fl = 0;
		*sl = (int)(size / RTO_TLSF_ALIGN);
		return;
	}
	int f = fls_size(size);
	*sl = (int)((size >> (f - RTO_TLSF_SL_LOG2)) ^ ((size_t)1 << RTO_TLSF_SL_LOG2));
	*fl = f - (RTO_TLSF_FL_SHIFT - 1);
}

/* The first list whose every block fits size (rounding up). */
static void mapping_search(size_t size, int *fl, int *sl)
{
	if (size >= SMALL)
		size += ((size_t)1 << (fls_size(size) - RTO_TLSF_SL_LOG2)) - 1;
	mapping_insert(size, fl, sl);
}

static struct rto_tlsf_block *find_suitable(struct rto_tlsf *t, int *fl, int *sl)
{
	if (*fl >= RTO_TLSF_FL_COUNT)
		return NULL;
	uint32_t sl_map = t->sl_bitmap[*fl] & (~UINT32_C(0) << *sl);
	if (!sl_map) {
		uint32_t fl_map = *fl + 1 < 32 ? t->fl_bitmap & (~UINT32_C(0) << (*fl + 1)) : 0;
		if (!fl_map)
			return NULL;
		*fl = __builtin_ctz(fl_map);
		sl_map = t->sl_bitmap[*fl];
	}
	*sl = __builtin_ctz(sl_map);
	return t->free[*fl][*sl];
}

static void remove_free(struct rto_tlsf *t, struct rto_tlsf_block *b, int fl, int sl)
{
	struct rto_tlsf_block *prev = b->prev_free, *next = b->next_free;

	if (next)
		next->prev_free = prev;
	if (prev)
		prev->next_free = next;
	if (t->free[fl][sl] == b) {
		t->free[fl][sl] = next;
		if (!next) {
			t->sl_bitmap[fl] &= ~(UINT32_C(1) << sl);
			if (!t->sl_bitmap[fl])
				t->fl_bitmap &= ~(UINT32_C(1) << fl);
		}
	}
}

static void unlink_block(struct rto_tlsf *t, struct rto_tlsf_block *b)
{
	int fl, sl;

	mapping_insert(bsize(b), &fl, &sl);
	remove_free(t, b, fl, sl);
}

static void insert_block(struct rto_tlsf *t, struct rto_tlsf_block *b)
{
	int fl, sl;

	mapping_insert(bsize(b), &fl, &sl);
	struct rto_tlsf_block *head = t->free[fl][sl];
	b->next_free = head;
	b->prev_free = NULL;
	if (head)
		head->prev_free = b;
	t->free[fl][sl] = b;
	t->fl_bitmap |= UINT32_C(1) << fl;
	t->sl_bitmap[fl] |= UINT32_C(1) << sl;
}

/* b is free (not in a list) or used: say so to its physical successor. */
static void set_free(struct rto_tlsf_block *b, int is_free)
{
	struct rto_tlsf_block *n = next_phys(b);

	if (is_free) {
		b->size |= BLOCK_FREE;
		n->size |= BLOCK_PREV_FREE;
		n->prev_phys = b;
	} else {
		b->size &= ~BLOCK_FREE;
		n->size &= ~BLOCK_PREV_FREE;
	}
}

/* Cut b (used) to `size` bytes of payload; the rest becomes a free block, merged forward. */
static void trim(struct rto_tlsf *t, struct rto_tlsf_block *b, size_t size)
{
	size_t have = bsize(b);

	if (have < size + HDR + MIN_PAYLOAD)
		return;
	struct rto_tlsf_block *rest = (struct rto_tlsf_block *)((char *)b + HDR + size);
	rest->size = (have - size - HDR) | BLOCK_FREE; /* prev (b) is used */
	b->size = size | (b->size & BLOCK_FLAGS);
	struct rto_tlsf_block *n = next_phys(rest);
	if (n->size & BLOCK_FREE) { /* merge: two free blocks are never neighbours */
		unlink_block(t, n);
		rest->size += HDR + bsize(n);
	}
	set_free(rest, 1);
	insert_block(t, rest);
	t->used -= have - size;
}

static size_t adjust(size_t size)
{
	if (size > MAX_REQUEST)
		return 0;
	size = (size + RTO_TLSF_ALIGN - 1) & ~(size_t)(RTO_TLSF_ALIGN - 1);
	return size < MIN_PAYLOAD ? MIN_PAYLOAD : size;
}

/* After an operation, once the block is cut to size. */
static void note_high(struct rto_tlsf *t)
{
	if (t->used > t->high)
		t->high = t->used;
}

void rto_tlsf_init(struct rto_tlsf *t, void *mem, size_t len)
{
	memset(t, 0, sizeof(*t));
	len &= ~(size_t)(RTO_TLSF_ALIGN - 1);
	if (len < 2 * HDR + MIN_PAYLOAD)
		return;
	if (len > ((size_t)1 << (RTO_TLSF_FL_MAX - 1)))
		len = (size_t)1 << (RTO_TLSF_FL_MAX - 1); /* every block fits the first level */
	struct rto_tlsf_block *b = mem;
	b->size = len - 2 * HDR; /* prev: none, so not free */
	struct rto_tlsf_block *end = next_phys(b);
	end->size = 0; /* the sentinel: used, empty */
	set_free(b, 1);
	insert_block(t, b);
	t->total = len - HDR;
}

static struct rto_tlsf_block *take(struct rto_tlsf *t, size_t adj)
{
	int fl, sl;

	mapping_search(adj, &fl, &sl);
	struct rto_tlsf_block *b = find_suitable(t, &fl, &sl);
	if (!b)
		return NULL;
	remove_free(t, b, fl, sl);
	set_free(b, 0);
	t->used += HDR + bsize(b);
	return b;
}

void *rto_tlsf_malloc(struct rto_tlsf *t, size_t size)
{
	size_t adj = adjust(size);
	if (!adj)
		return NULL;
	struct rto_tlsf_block *b = take(t, adj);
	if (!b)
		return NULL;
	trim(t, b, adj);
	note_high(t);
	return payload(b);
}

void *rto_tlsf_memalign(struct rto_tlsf *t, size_t align, size_t size)
{
	if (align <= RTO_TLSF_ALIGN)
		return rto_tlsf_malloc(t, size);
	size_t adj = adjust(size);
	if (!adj || align > MAX_REQUEST / 2 || adj + align + HDR + MIN_PAYLOAD > MAX_REQUEST)
		return NULL;
	/* Room for the alignment gap, which must itself hold a free block. */
	struct rto_tlsf_block *b = take(t, adj + align + HDR + MIN_PAYLOAD);
	if (!b)
		return NULL;
	uintptr_t p = (uintptr_t)payload(b);
	uintptr_t a = (p + align - 1) & ~(uintptr_t)(align - 1);
	if (a != p && a - p < HDR + MIN_PAYLOAD)
		a = (p + HDR + MIN_PAYLOAD + align - 1) & ~(uintptr_t)(align - 1);
	if (a != p) {
		/* The gap in front becomes a free block; its predecessor is used (merged). */
		size_t gap = a - p, whole = bsize(b);
		struct rto_tlsf_block *front = b;
		b = of_payload((void *)a);
		b->size = whole - gap; /* used */
		front->size = gap - HDR;
		set_free(front, 1); /* b: BLOCK_PREV_FREE, prev_phys = front */
		insert_block(t, front);
		t->used -= gap;
	}
	trim(t, b, adj);
	note_high(t);
	return payload(b);
}

void rto_tlsf_free(struct rto_tlsf *t, void *p)
{
	struct rto_tlsf_block *b = of_payload(p);

	t->used -= HDR + bsize(b);
	if (b->size & BLOCK_PREV_FREE) {
		struct rto_tlsf_block *prev = b->prev_phys;
		unlink_block(t, prev);
		prev->size += HDR + bsize(b);
		b = prev;
	}
	struct rto_tlsf_block *n = next_phys(b);
	if (n->size & BLOCK_FREE) {
		unlink_block(t, n);
		b->size += HDR + bsize(n);
	}
	set_free(b, 1);
	insert_block(t, b);
}

void *rto_tlsf_resize(struct rto_tlsf *t, void *p, size_t size)
{
	struct rto_tlsf_block *b = of_payload(p);
	size_t adj = adjust(size), have = bsize(b);

	if (!adj)
		return NULL;
	if (adj > have) {
		struct rto_tlsf_block *n = next_phys(b);
		if (!(n->size & BLOCK_FREE) || have + HDR + bsize(n) < adj)
			return NULL;
		unlink_block(t, n);
		size_t grown = HDR + bsize(n);
		b->size += grown;
		next_phys(b)->size &= ~BLOCK_PREV_FREE;
		t->used += grown;
	}
	trim(t, b, adj);
	note_high(t);
	return p;
}

size_t rto_tlsf_usable(const void *p)
{
	return bsize(of_payload(p));
}

size_t rto_tlsf_largest(const struct rto_tlsf *t)
{
	if (!t->fl_bitmap)
		return 0;
	int fl = 31 - __builtin_clz(t->fl_bitmap);
	int sl = 31 - __builtin_clz(t->sl_bitmap[fl]);
	/* The lower bound of that list: every block there is at least this big. */
	if (fl == 0)
		return (size_t)sl * RTO_TLSF_ALIGN;
	int f = fl + RTO_TLSF_FL_SHIFT - 1;
	return ((size_t)1 << f) + ((size_t)sl << (f - RTO_TLSF_SL_LOG2));
}
