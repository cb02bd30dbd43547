/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Criterion under ThreadSanitizer (the tsan preset).  Criterion's sandbox
 * (BoxFort, inside libcriterion) maps its inheritable arena at a random
 * address from 0x200000000000 up, MAP_FIXED, drawn with rand_r().  Under
 * ThreadSanitizer most of that range is its shadow and meta memory, where
 * its mmap interceptor refuses MAP_FIXED mappings: criterion aborts with
 * "Could not initialize inheritable arena" (Snaipe/Criterion#274).  Linked
 * into every criterion test program of a ThreadSanitizer build, this
 * rand_r() keeps BoxFort's draws inside the one application range there
 * (0x550000000000-0x568000000000, ThreadSanitizer's x86-64 layout): still
 * pseudo-random, from libc's own rand_r.  The test programs themselves do
 * not use rand_r; nothing else changes.
 */
#if defined(__SANITIZE_THREAD__) && defined(__x86_64__)
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>

/* BoxFort: base = 0x200000000000 + (rand_r(&seed) & 0x3fffff) * 16 MiB. */
#define ARENA_FIRST 0x350000 /* (0x550000000000 - 0x200000000000) >> 24 */
#define ARENA_SPAN  0x018000 /* up to 0x568000000000 */

int rand_r(unsigned *seed)
{
	static int (*real)(unsigned *);

	if (!real)
		real = (int (*)(unsigned *))dlsym(RTLD_NEXT, "rand_r");
	return ARENA_FIRST + real(seed) % ARENA_SPAN;
}
#else
typedef int rto_criterion_arena_unused; /* nothing to do in this build */
#endif
