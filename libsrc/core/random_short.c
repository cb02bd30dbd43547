/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* getrandom's short form: is the kernel's pool ready (random_short.h). */
#include "random_short.h"
#include "real.h"

#include <errno.h>
#include <sys/syscall.h>

int rto_random_ready;

void rto_random_learn(void)
{
	unsigned char byte;
	int saved = errno;

	/*
	 * A flag that only ever goes from 0 to 1, read relaxed: a reader that
	 * sees 0 offloads its call, as before (Helgrind sees no atomics).
	 */
	RTO_HG_BENIGN_RACE(&rto_random_ready, sizeof(rto_random_ready));
	if (__atomic_load_n(&rto_random_ready, __ATOMIC_RELAXED))
		return;
	/* One byte, never waiting: it succeeds only once the pool is ready, and then always. */
	if (rto_syscall(SYS_getrandom, &byte, 1, GRND_NONBLOCK, 0, 0, 0) == 1)
		__atomic_store_n(&rto_random_ready, 1, __ATOMIC_RELAXED);
	errno = saved;
}
