/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sanitizer.c: a sanitizer runtime first in the load order.
 *
 * Concurrency: Set at load (rto_sanitizer_init), read-only afterwards.
 */
#ifndef RTO_SANITIZER_H
#define RTO_SANITIZER_H

#include "rto_base.h"

/* sanitizer.c: a sanitizer runtime (ASan, TSan) first in the load order. */
RTO_HIDDEN void rto_sanitizer_init(void);
/* Its pthread_create interceptor, or NULL without one. */
RTO_HIDDEN void *rto_sanitizer_pthread_create(void);
/* 1: that runtime is ThreadSanitizer's. */
RTO_HIDDEN int rto_sanitizer_is_tsan(void);
/* 1: pc is in that runtime (its interceptors).  Async-signal-safe: two compares. */
RTO_HIDDEN int rto_sanitizer_pc(const void *pc);
/* 1: pthread_create(attr) called from caller is the sanitizer runtime's own thread. */
RTO_HIDDEN int rto_sanitizer_own_thread(const pthread_attr_t *attr, void *caller);
/* Under TSan, start fn(arg) with ours(ours_arg) run after the runtime's start: 1 if done. */
RTO_HIDDEN int rto_sanitizer_chain_start(void *(*fn)(void *), void *arg, void *(*ours)(void *),
					 void *ours_arg, void *(**user_fn)(void *),
					 void **user_arg);
/* 1: a call given callbacks must run on the caller (the runtime's wrappers of them). */
RTO_HIDDEN int rto_sanitizer_callbacks_here(void);

#endif /* RTO_SANITIZER_H */
