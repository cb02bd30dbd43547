/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * own_memory.c: the memory a helper runs on (the modules loaded at start,
 * the library's threads' stacks).
 *
 * Concurrency: rto_own_memory_init() in the constructor, before any
 * helper; rto_own_memory_overlaps() from any thread, a caller's realtime
 * path included: a bounded loop over fixed tables, no lock, no system call.
 */
#ifndef RTO_OWN_MEMORY_H
#define RTO_OWN_MEMORY_H

#include "rto_base.h"

#include <stddef.h>

RTO_HIDDEN void rto_own_memory_init(void);
/* 1: [addr, addr + len) touches that memory. */
RTO_HIDDEN int rto_own_memory_overlaps(const void *addr, size_t len);

#endif /* RTO_OWN_MEMORY_H */
