/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A sanitizer runtime (ASan, TSan) first in the load order, as -fsanitize
 * and the sanitizer presets put it: what the library does differently.
 *
 *  - Its pthread_create interceptor must see the helper threads: a thread
 *    started behind its back has no sanitizer state (automark.c starts
 *    them through it).
 *  - Its interceptors sit between the program and our wrappers: a call
 *    site report skips their frames like ours (callsite.c).
 *  - ThreadSanitizer starts a thread of its own (its background thread,
 *    again in a forked child) with libc's pthread_create as it found it:
 *    ours.  That thread must not run our instrumented thread start
 *    (mark=): rto_sanitizer_own_thread() tells it apart.
 *  - A program's thread reaches our pthread_create (mark=) through
 *    ThreadSanitizer's interceptor, with the runtime's start function,
 *    which gives the thread its state: instrumented code that runs before
 *    it crashes.  So our start goes in after it (rto_sanitizer_chain_start).
 *  - Its interceptors of calls that take callbacks (scandir's filter and
 *    compar) give the wrappers they pass down their targets in
 *    thread-local variables of the calling thread: on a helper the
 *    wrapper would call NULL.  Such calls run on the caller
 *    (rto_call_here), like the allow-listed ones.
 *
 * Found once, at load (or at the first wrapped call before it): never on a
 * marked thread's path.
 */
#include "sanitizer.h"

#include <dlfcn.h>
#include <link.h>

static void *icpt_pthread_create;
/*
 * The addresses the runtime's loaded segments span, where it is first:
 * rto_sanitizer_pc() runs in the SIGSYS handler, which may interrupt
 * anything (the dynamic linker's lock held, or half taken), so it
 * compares addresses and calls nothing.  dladdr() there took that lock,
 * and a trap inside a trap (glibc's setxid signal, whose handler makes a
 * system call, arriving in the first trap's dladdr) waited for ever.
 */
static uintptr_t runtime_lo, runtime_hi;
static int is_tsan;
static int found;

/* dl_iterate_phdr: the object whose loaded segments hold *arg's address. */
static int find_runtime(struct dl_phdr_info *info, size_t size, void *arg)
{
	uintptr_t at = (uintptr_t)arg, lo = UINTPTR_MAX, hi = 0;

	(void)size;
	for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t start = info->dlpi_addr + ph->p_vaddr, end = start + ph->p_memsz;
		lo = start < lo ? start : lo;
		hi = end > hi ? end : hi;
	}
	if (at < lo || at >= hi)
		return 0;
	runtime_lo = lo;
	runtime_hi = hi;
	return 1;
}

void rto_sanitizer_init(void)
{
	if (found)
		return;
	void *icpt = dlsym(RTLD_DEFAULT, "__interceptor_pthread_create");
	/* First: what the program's own pthread_create reference binds to. */
	if (icpt && icpt == dlsym(RTLD_DEFAULT, "pthread_create")) {
		icpt_pthread_create = icpt;
		dl_iterate_phdr(find_runtime, icpt);
		is_tsan = dlsym(RTLD_DEFAULT, "__tsan_init") != NULL;
	}
	found = 1;
}

RTO_UNINSTRUMENTED int rto_sanitizer_pc(const void *pc)
{
	return (uintptr_t)pc >= runtime_lo && (uintptr_t)pc < runtime_hi;
}

int rto_sanitizer_is_tsan(void)
{
	return is_tsan;
}

int rto_sanitizer_own_thread(const pthread_attr_t *attr, void *caller)
{
	/* Its interceptor always passes an attr of its own; its internal start, NULL. */
	rto_sanitizer_init();
	return is_tsan && !attr && rto_sanitizer_pc(caller);
}

void *rto_sanitizer_pthread_create(void)
{
	rto_sanitizer_init();
	return icpt_pthread_create;
}

/*
 * ThreadSanitizer's start argument begins with the program's start
 * function and its argument (struct ThreadParam in tsan_interceptors_posix,
 * so since 2012): ours takes their place and runs them after the runtime
 * has set the thread up.  1 when chained (*user_fn, *user_arg the program's).
 */
struct tsan_thread_param {
	void *(*callback)(void *);
	void *param;
};

int rto_sanitizer_chain_start(void *(*fn)(void *), void *arg, void *(*ours)(void *), void *ours_arg,
			      void *(**user_fn)(void *), void **user_arg)
{
	struct tsan_thread_param *p = arg;

	if (!is_tsan || !rto_sanitizer_pc((const void *)fn) || !p)
		return 0;
	*user_fn = p->callback;
	*user_arg = p->param;
	p->callback = ours;
	p->param = ours_arg;
	return 1;
}

int rto_sanitizer_callbacks_here(void)
{
	return icpt_pthread_create != NULL;
}
