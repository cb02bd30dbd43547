/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * How the library starts its own threads (helpers, the live view's
 * publisher): through a sanitizer's interceptor when one is first.  Below
 * helper.c and live.c, which start them, and automark.c, which lets them by.
 */
#include "rto_fast.h"
#include "own_thread.h"
#include "tsan_annot.h"
#include "sanitizer.h"
#include "real.h"

#include <pthread.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <urcu/uatomic.h>

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
/*
 * Who they are, while they run: a row each, claimed at the start (-1)
 * by compare-and-swap from 0, the tid once the thread runs, 0 again when
 * its start routine returns or it exits (the cleanup).  cred_mirror.c
 * signals each one.  A fork child keeps only the forking thread:
 * rto_own_threads_after_fork() frees the rows.
 */
#define OWN_MAX 64
static struct own_row {
	int32_t tid;
	void *(*fn)(void *);
	void *arg;
	uintptr_t stack_lo, stack_hi; /* its stack (and TLS), for own_memory.c; 0 while unknown */
} own[OWN_MAX];

static void unregister(void *p)
{
	struct own_row *row = p;

	RTO_TSAN_RELEASE(own); /* its work before rto_own_threads_running() sees it end */
	CMM_STORE_SHARED(row->stack_hi, 0);
	CMM_STORE_SHARED(row->tid, 0);
}

/* Where this thread's stack is (glibc's numbers; its TLS lies at the top). */
static void note_stack(struct own_row *row)
{
	pthread_attr_t attr;
	void *lo;
	size_t size;

	if (pthread_getattr_np(pthread_self(), &attr) != 0)
		return;
	if (pthread_attr_getstack(&attr, &lo, &size) == 0) {
		CMM_STORE_SHARED(row->stack_lo, (uintptr_t)lo);
		CMM_STORE_SHARED(row->stack_hi, (uintptr_t)lo + size);
	}
	pthread_attr_destroy(&attr);
}

static void *own_start(void *p)
{
	struct own_row *row = p;
	void *(*fn)(void *) = row->fn, *arg = row->arg, *ret;

	note_stack(row);
	CMM_STORE_SHARED(row->tid, (int32_t)rto_syscall(SYS_gettid));
	pthread_cleanup_push(unregister, row);
	ret = fn(arg);
	pthread_cleanup_pop(1);
	return ret;
}

int rto_own_threads(int32_t *out, int max)
{
	int n = 0;

	for (int i = 0; i < OWN_MAX && n < max; i++) {
		int32_t t = CMM_LOAD_SHARED(own[i].tid);
		if (t > 0)
			out[n++] = t;
	}
	return n;
}

int rto_own_thread_is(int32_t tid)
{
	for (int i = 0; i < OWN_MAX; i++)
		if (CMM_LOAD_SHARED(own[i].tid) == tid)
			return 1;
	return 0;
}

int rto_own_stacks_overlap(uintptr_t lo, uintptr_t hi)
{
	for (int i = 0; i < OWN_MAX; i++) {
		uintptr_t top = CMM_LOAD_SHARED(own[i].stack_hi);
		if (top && lo < top && CMM_LOAD_SHARED(own[i].stack_lo) < hi)
			return 1;
	}
	return 0;
}

int rto_own_threads_running(void)
{
	int n = 0;

	for (int i = 0; i < OWN_MAX; i++)
		n += CMM_LOAD_SHARED(own[i].tid) != 0;
	if (!n)
		RTO_TSAN_ACQUIRE(own);
	return n;
}

int rto_own_threads_being_born(void)
{
	int n = 0;

	for (int i = 0; i < OWN_MAX; i++)
		n += CMM_LOAD_SHARED(own[i].tid) == -1;
	return n;
}

void rto_own_threads_after_fork(void)
{
	for (int i = 0; i < OWN_MAX; i++) {
		own[i].tid = 0;
		own[i].stack_hi = 0;
	}
}

int rto_create_own_thread(pthread_t *thread, const pthread_attr_t *attr, void *(*fn)(void *),
			  void *arg)
{
	pthread_create_fn *create = (pthread_create_fn *)rto_sanitizer_pthread_create();
	struct own_row *row = NULL;
	int err;

	for (int i = 0; i < OWN_MAX && !row; i++)
		if (uatomic_cmpxchg(&own[i].tid, 0, -1) == 0)
			row = &own[i];
	if (!row) /* more than OWN_MAX at once: unlisted, not mirrored */
		return create ? create(thread, attr, fn, arg)
			      : rto_real_pthread_create(thread, attr, fn, arg);
	row->fn = fn; /* pthread_create orders these before the thread's loads */
	row->arg = arg;
	if (!create) {
		err = rto_real_pthread_create(thread, attr, own_start, row);
	} else {
		creating_internal = 1;
		err = create(thread, attr, own_start, row);
		creating_internal = 0;
	}
	if (err)
		CMM_STORE_SHARED(row->tid, 0);
	return err;
}
