/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * own_thread.c: how the library starts its own threads.
 *
 * Concurrency: Not on the caller's path (pthread_create).  The list of
 * running library threads is a table of words changed by compare-and-swap
 * and plain atomic stores; readers see each row whole, the set may be a
 * moment old.
 */
#ifndef RTO_OWN_THREAD_H
#define RTO_OWN_THREAD_H

#include "rto_base.h"

#include <stdint.h>

/* own_thread.c: how the library starts its own threads: through a sanitizer's interceptor when one
 * is first. */
RTO_HIDDEN int rto_create_own_thread(pthread_t *thread, const pthread_attr_t *attr,
				     void *(*fn)(void *), void *arg);
/* own_thread.c: 1 while rto_create_own_thread() runs on this thread (automark lets it by). */
RTO_HIDDEN int rto_own_thread_starting(void);
/* The tids of the library's threads now running (at most max): any thread, no lock. */
RTO_HIDDEN int rto_own_threads(int32_t *out, int max);
/* 1: tid is one of the library's threads. */
RTO_HIDDEN int rto_own_thread_is(int32_t tid);
/* 1: [lo, hi) touches a running library thread's stack: no lock, no system call. */
RTO_HIDDEN int rto_own_stacks_overlap(uintptr_t lo, uintptr_t hi);
/*
 * How many of them run or are being born (0: each one's start routine has
 * returned, and what it did is ordered before the caller's next loads).
 */
RTO_HIDDEN int rto_own_threads_running(void);
/* In a fork child: none of the parent's threads is there. */
RTO_HIDDEN void rto_own_threads_after_fork(void);
/*
 * How many of them are between pthread_create and their own start routine
 * (their row still -1): a thread runtime's start code (a sanitizer's, which
 * takes its thread registry's lock) may be running in them.  fork.c waits
 * for 0 before a fork.  Any thread; reads the rows only.
 */
RTO_HIDDEN int rto_own_threads_being_born(void);

#endif /* RTO_OWN_THREAD_H */
