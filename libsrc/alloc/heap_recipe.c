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
#include "options_load.h"
#include "report.h"
#include "rto_malloc.h"

#include <malloc.h>
#include <string.h>

void rto_heap_recipe_at_mark(void)
{
	static int tuned;

	if (rto_opt.malloc_mode != RTO_MALLOC_GLIBC || !rto_opt.mlock)
		return;
	if (!CMM_LOAD_SHARED(tuned)) {
		mallopt(M_TRIM_THRESHOLD, -1);
		mallopt(M_MMAP_MAX, 0);
		CMM_STORE_SHARED(tuned, 1);
	}
	size_t bytes = (size_t)rto_opt.prefault_heap_kb * 1024;
	if (!bytes)
		return;
	char *p = rto_next_malloc(bytes);
	if (!p) {
		rto_say(1, "prefault_heap_kb=%u: the thread's arena cannot grow that much",
			rto_opt.prefault_heap_kb);
		return;
	}
	memset(p, 0x5a, bytes); /* written: every page is present and locked */
	rto_next_free(p);
}
