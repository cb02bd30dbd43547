/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * automark.c: mark=: marks threads by policy.
 *
 * Concurrency: rto_automark_init() once, in the constructor (init.c), on
 * the loading thread.  Afterwards the module runs inside the wrappers of
 * the thread calls it watches (pthread_create's start routine,
 * sched_set*, pthread_setschedparam, *setaffinity*, pthread_setname_np,
 * prctl(PR_SET_NAME)), on the thread that made the call, after the real
 * call ran there: these are thread-identity calls, never offloaded, and
 * they may take a lock as libc's own do.  A thread's traits and by_policy
 * are written by the thread itself, or by another thread changing it
 * under registry_lock, which also keeps the target from exiting meanwhile
 * (its registry slot goes in a thread-specific-data destructor, under the
 * same lock); its mark changes through route_state.h, which another
 * thread's fast path reads at any moment.  After fork() the child's
 * registry holds the forking thread only (an atfork handler).
 */
#ifndef RTO_AUTOMARK_H
#define RTO_AUTOMARK_H

#include "rto_base.h"

/* automark.c: mark= for programs that cannot call the API. */
RTO_HIDDEN void rto_automark_init(void);

struct rto_options;
/* mark= and rt_cpus=, once at load (init.c), before anything here runs. */
RTO_HIDDEN void rto_automark_configure(const struct rto_options *o);

#endif /* RTO_AUTOMARK_H */
