/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * random_short.c: getrandom's short form.  Up to 256 bytes from the
 * kernel's pool once it is ready is a short, bounded call (a few ChaCha
 * blocks under a per-CPU lock; getrandom(2): such a request is never
 * interrupted and always returns all its bytes), as /dev/urandom's read,
 * a character device's, already is: a marked thread makes it itself.  A
 * longer one, GRND_RANDOM, and any that could wait for the pool (flags
 * without GRND_NONBLOCK or GRND_INSECURE before the pool is known ready)
 * go to a helper as before.
 *
 * Concurrency: rto_random_ready goes from 0 to 1 once (a relaxed store:
 * the pool, once ready, stays so; a thread that still reads 0 offloads the
 * call, as before).  rto_random_short_arg() is the wrappers' and the
 * SIGSYS handler's: one load, no system call.  rto_random_learn() is the
 * library's own work at a thread's mark (mark.c), selector open.
 */
#ifndef RTO_RANDOM_SHORT_H
#define RTO_RANDOM_SHORT_H

#include "rto_base.h"
#include "decide.h" /* RTO_CALL_SHORT */

#include <stddef.h>
#include <sys/random.h> /* GRND_* (GRND_INSECURE: glibc 2.33, Linux 5.6) */

#define RTO_RANDOM_SHORT_MAX 256

RTO_HIDDEN extern int rto_random_ready;

/* Asks the kernel, without waiting, whether its pool is ready (until it is). */
RTO_HIDDEN void rto_random_learn(void);

/* A wrapper's or the trap's how for getrandom(len, flags) (calls.tbl "short:random="). */
static inline unsigned rto_random_short_arg(size_t len, unsigned flags)
{
	if (len > RTO_RANDOM_SHORT_MAX || (flags & GRND_RANDOM))
		return 0;
	if ((flags & (GRND_NONBLOCK | GRND_INSECURE)) ||
	    __atomic_load_n(&rto_random_ready, __ATOMIC_RELAXED))
		return RTO_CALL_SHORT;
	return 0;
}

#endif /* RTO_RANDOM_SHORT_H */
