/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libsrc/alloc/pool_tlsf.c on its own: a random mix of malloc, memalign, resize
 * and free over one region, every live block's bytes checked, alignment
 * and usable sizes kept, used/high accounted; once all is freed the
 * neighbours have merged back into one block.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pool_tlsf.h"

#define REGION (8u << 20)
#define LIVE   2048

static struct rto_tlsf t;
static void *p[LIVE];
static size_t sz[LIVE];
static unsigned char tag[LIVE];
static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static int intact(int i)
{
	const unsigned char *q = p[i];
	for (size_t k = 0; k < sz[i]; k += 1 + sz[i] / 8)
		if (q[k] != tag[i])
			return 0;
	return q[sz[i] - 1] == tag[i];
}

Test(tlsf, random_mix_keeps_every_block)
{
	char *mem = aligned_alloc(4096, REGION);
	cr_assert_not_null(mem);
	rto_tlsf_init(&t, mem, REGION);
	size_t total = t.total;
	cr_assert_gt(total, REGION - 64);
	long served = 0, refused = 0;

	for (long it = 0; it < 400000; it++) {
		int i = (int)(rnd() % LIVE);
		if (p[i]) {
			cr_assert(intact(i), "block %d lost its bytes at step %ld", i, it);
			if (rnd() % 2) {
				rto_tlsf_free(&t, p[i]);
				p[i] = NULL;
				continue;
			}
			size_t n = 1 + rnd() % 8192;
			void *r = rto_tlsf_resize(&t, p[i], n);
			if (r) {
				cr_assert_eq(r, p[i]);
				cr_assert_geq(rto_tlsf_usable(r), n);
				if (n > sz[i])
					memset((char *)r + sz[i], tag[i], n - sz[i]);
				sz[i] = n;
			}
			continue;
		}
		size_t n = 1 + rnd() % (rnd() % 8 ? 1024 : 65536);
		size_t align = rnd() % 4 == 0 ? (size_t)1 << (4 + rnd() % 10) : 0;
		void *r = align ? rto_tlsf_memalign(&t, align, n) : rto_tlsf_malloc(&t, n);
		if (!r) {
			refused++;
			continue;
		}
		served++;
		cr_assert_eq((uintptr_t)r % (align ? align : 16), 0, "alignment %zu", align);
		cr_assert((char *)r >= mem && (char *)r + n <= mem + REGION);
		cr_assert_geq(rto_tlsf_usable(r), n);
		p[i] = r;
		sz[i] = n;
		tag[i] = (unsigned char)rnd();
		memset(r, tag[i], n);
		cr_assert_leq(t.used, total);
		cr_assert_leq(t.used, t.high);
	}
	for (int i = 0; i < LIVE; i++)
		if (p[i]) {
			cr_assert(intact(i));
			rto_tlsf_free(&t, p[i]);
			p[i] = NULL;
		}
	cr_expect_gt(served, 100000);
	cr_expect_eq(t.used, 0, "bytes still accounted as used: %zu", t.used);
	/* Merged back: a block of most of the region fits again. */
	void *big = rto_tlsf_malloc(&t, total - total / 8);
	cr_expect_not_null(big, "the free neighbours did not merge");
	cr_expect_eq(rto_tlsf_malloc(&t, total), NULL, "more than the region");
	(void)refused;
	free(mem);
}
