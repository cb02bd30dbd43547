/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * malloc=glibc with mlock=1: the realtime wiki's recipe, applied where it
 * matters, in the marked thread itself at mark time.  glibc gives each
 * thread an arena of its own, so a prefault made by main() warms main's
 * arena only; the marked thread's arena is the one it will allocate from.
 *
 *  - M_TRIM_THRESHOLD -1: freed memory is never given back (no madvise or
 *    shrink of a heap later, no fault to take it again);
 *  - M_MMAP_MAX 0: no allocation is an mmap of its own (nor a munmap);
 *  - prefault_heap_kb=N: N KiB allocated, written and freed in this thread:
 *    its arena grows now, under mlockall's MCL_FUTURE, and keeps the pages.
 * mallopt's settings are the process's, as glibc has them.
 */
#include "options.h"
#include "report.h"
#include "rto_malloc.h"

#include <malloc.h>
#include <string.h>

/*
 * mlock=, prefault_heap_kb=: copied once at load
 * (rto_heap_recipe_configure), read-only afterwards.
 */
static struct {
	int mlock;
	unsigned prefault_heap_kb;
} opt;

void rto_heap_recipe_configure(const struct rto_options *o)
{
	opt.mlock = o->mlock;
	opt.prefault_heap_kb = o->prefault_heap_kb;
}

void rto_heap_recipe_at_mark(void)
{
	static int tuned;

	if (rto_malloc_mode() != RTO_MALLOC_GLIBC || !opt.mlock)
		return;
	if (!CMM_LOAD_SHARED(tuned)) {
		mallopt(M_TRIM_THRESHOLD, -1);
		mallopt(M_MMAP_MAX, 0);
		CMM_STORE_SHARED(tuned, 1);
	}
	size_t bytes = (size_t)opt.prefault_heap_kb * 1024;
	if (!bytes)
		return;
	char *p = rto_next_malloc(bytes);
	if (!p) {
		rto_say(1, "prefault_heap_kb=%u: the thread's arena cannot grow that much",
			opt.prefault_heap_kb);
		return;
	}
	memset(p, 0x5a, bytes); /* written: every page is present and locked */
	rto_next_free(p);
}
