/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * futex.c: futex wait/wake and the clock.
 *
 * Concurrency: Raw system calls through rto_real_syscall: callable on the caller's path.
 */
#ifndef RTO_FUTEX_H
#define RTO_FUTEX_H

#include "rto_base.h"

/* futex.c */
RTO_HIDDEN void rto_futex_wait(uint32_t *addr, uint32_t val);
RTO_HIDDEN void rto_futex_wait_ns(uint32_t *addr, uint32_t val, long ns);
RTO_HIDDEN void rto_futex_wake(uint32_t *addr, int n);
RTO_HIDDEN uint64_t rto_now_ns(void);

#endif /* RTO_FUTEX_H */
