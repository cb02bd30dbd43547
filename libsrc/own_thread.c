/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * How the library starts its own threads (helpers, the live view's
 * publisher): through a sanitizer's interceptor when one is first.  Below
 * helper.c and live.c, which start them, and automark.c, which lets them by.
 */
#include "rto_fast.h"
#include "own_thread.h"
#include "sanitizer.h"
#include "real.h"

#include <pthread.h>

typedef int pthread_create_fn(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

static __thread int creating_internal RTO_TLS; /* rto_create_own_thread() is on the stack */

int rto_own_thread_starting(void)
{
	return creating_internal;
}

/*
 * The library's own threads (the helpers).  When a sanitizer runtime is
 * first in the lookup order, through its pthread_create interceptor
 * (sanitizer.c), which ends in our wrapper (automark.c): creating_internal sends
 * these threads straight to libc there, so a helper never passes through
 * mark=.  Otherwise (no sanitizer, or an instrumented library preloaded
 * into a plain program) libc's directly.
 */
int rto_create_own_thread(pthread_t *thread, const pthread_attr_t *attr, void *(*fn)(void *),
			  void *arg)
{
	pthread_create_fn *create = (pthread_create_fn *)rto_sanitizer_pthread_create();

	if (!create)
		return rto_real_pthread_create(thread, attr, fn, arg);
	creating_internal = 1;
	int err = create(thread, attr, fn, arg);
	creating_internal = 0;
	return err;
}
