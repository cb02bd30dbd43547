/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * async_path.c: async_path=: which files' writes go through the async ring.
 *
 * Concurrency: Set once at load (rto_async_path_init), read-only afterwards: callable
 * from any thread, the caller's path included.
 */
#ifndef RTO_ASYNC_PATH_H
#define RTO_ASYNC_PATH_H

#include "rto_base.h"

/* async_path.c: is this path (absolute, as /proc/self/fd shows it) under a prefix? */
RTO_HIDDEN int rto_async_path_match(const char *path);
RTO_HIDDEN extern int rto_async_paths; /* async_path= was given */
RTO_HIDDEN void rto_async_path_init(void);

#endif /* RTO_ASYNC_PATH_H */
