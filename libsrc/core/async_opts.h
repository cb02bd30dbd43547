/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * async_opts.c: the async writes' options (async_ring_kb=, async_full=,
 * async_path=), copied once at load (rto_async_configure, init.c), before
 * any write is queued; async.c and async_path.c read them here rather
 * than the library's whole option struct.
 *
 * Concurrency: written once at load, read-only afterwards: any thread.
 */
#ifndef RTO_ASYNC_OPTS_H
#define RTO_ASYNC_OPTS_H

#include "rto_base.h"

struct rto_options;

RTO_HIDDEN void rto_async_configure(const struct rto_options *o);
/* async_ring_kb=: each thread's ring. */
RTO_HIDDEN unsigned rto_async_ring_kb(void);
/* async_full=sync: a write that finds its ring full runs as a plain offloaded call. */
RTO_HIDDEN int rto_async_full_sync(void);
/* async_path=: the prefixes as given, comma-separated ("" for none). */
RTO_HIDDEN const char *rto_async_path_list(void);

#endif /* RTO_ASYNC_OPTS_H */
