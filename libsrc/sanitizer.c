/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A sanitizer runtime (ASan, TSan) first in the load order, as -fsanitize
 * and the sanitizer presets put it: what the library does differently.
 *
 *  - Its pthread_create interceptor must see the helper threads: a thread
 *    started behind its back has no sanitizer state (automark.c starts
 *    them through it).
 *  - ThreadSanitizer starts a thread of its own (its background thread,
 *    again in a forked child) with libc's pthread_create as it found it:
 *    ours.  That thread must not run our instrumented thread start
 *    (mark=): rto_sanitizer_own_thread() tells it apart.
 *  - Its interceptors of calls that take callbacks (scandir's filter and
 *    compar) give the wrappers they pass down their targets in
 *    thread-local variables of the calling thread: on a helper the
 *    wrapper would call NULL.  Such calls run on the caller
 *    (rto_call_here), like the allow-listed ones.
 *
 * Found once, at load (or at the first wrapped call before it): never on a
 * marked thread's path.
 */
#include "rto.h"

#include <dlfcn.h>

static void *icpt_pthread_create;
static void *tsan_base; /* ThreadSanitizer's runtime, where it is first */
static int found;

void rto_sanitizer_init(void)
{
	Dl_info info;

	if (found)
		return;
	void *icpt = dlsym(RTLD_DEFAULT, "__interceptor_pthread_create");
	/* First: what the program's own pthread_create reference binds to. */
	if (icpt && icpt == dlsym(RTLD_DEFAULT, "pthread_create")) {
		icpt_pthread_create = icpt;
		if (dlsym(RTLD_DEFAULT, "__tsan_init") && dladdr(icpt, &info))
			tsan_base = info.dli_fbase;
	}
	found = 1;
}

int rto_sanitizer_own_thread(const pthread_attr_t *attr, void *caller)
{
	Dl_info info;

	/* Its interceptor always passes an attr of its own; its internal start, NULL. */
	rto_sanitizer_init();
	return tsan_base && !attr && dladdr(caller, &info) && info.dli_fbase == tsan_base;
}

void *rto_sanitizer_pthread_create(void)
{
	rto_sanitizer_init();
	return icpt_pthread_create;
}

int rto_sanitizer_callbacks_here(int has_callbacks)
{
	return has_callbacks && icpt_pthread_create != NULL;
}

int rto_call_here(struct rto_fn *fn, void *args)
{
	fn->run(args);
	rto_stats_local(fn);
	return 0;
}
