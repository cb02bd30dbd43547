/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fork.c: fork and raw clone(): fresh helpers in the child.
 */
#ifndef RTO_FORK_H
#define RTO_FORK_H

#include "rto_base.h"

/* fork.c */
/* At load: the queue mapping and the fork handlers; child_stats_reset runs in a child. */
RTO_HIDDEN int rto_fork_init(void (*child_stats_reset)(void));
/* 1 in the child of a multi-threaded fork under ThreadSanitizer: nothing is marked there. */
RTO_HIDDEN extern int rto_fork_no_threads;
RTO_HIDDEN void rto_fork_check(void);

#endif /* RTO_FORK_H */
