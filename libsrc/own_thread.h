/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * own_thread.c: how the library starts its own threads.
 *
 * Concurrency: Not on the caller's path (pthread_create).
 */
#ifndef RTO_OWN_THREAD_H
#define RTO_OWN_THREAD_H

#include "rto_base.h"

/* own_thread.c: how the library starts its own threads: through a sanitizer's interceptor when one
 * is first. */
RTO_HIDDEN int rto_create_own_thread(pthread_t *thread, const pthread_attr_t *attr,
				     void *(*fn)(void *), void *arg);
/* own_thread.c: 1 while rto_create_own_thread() runs on this thread (automark lets it by). */
RTO_HIDDEN int rto_own_thread_starting(void);

#endif /* RTO_OWN_THREAD_H */
