/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Per-thread state and the public mark/mode API. */
#include "rto.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>

#include "rtoffload.h"

__thread struct rto_thread rto_self RTO_TLS;

int rto_thread_mode(void)
{
	return rto_self.mode ? rto_self.mode - 1 : rto_opt.mode;
}

/*
 * What the helper needs to act for this thread: its realtime priority
 * (request order, helper_priority=inherit) and its signal mask (children
 * started by system()/posix_spawn() inherit the mask of the thread that
 * spawns them).  Two short syscalls, at mark time, never per call.
 */
void rto_thread_capture(struct rto_thread *t)
{
	struct sched_param sp;
	int policy;
	sigset_t mask;

	t->prio = 0;
	if (pthread_getschedparam(pthread_self(), &policy, &sp) == 0 &&
	    (policy == SCHED_FIFO || policy == SCHED_RR))
		t->prio = sp.sched_priority;
	if (pthread_sigmask(SIG_BLOCK, NULL, &mask) == 0)
		memcpy(&t->sigmask, &mask, sizeof(t->sigmask));
	rto_helpers_raise_ceiling(t->prio);
}

RTO_EXPORT int rt_offload_mark_thread(void)
{
	int saved = errno;

	if (rto_helper_is_self()) {
		errno = EPERM; /* a helper serving itself would deadlock */
		return -1;
	}
	if (rto_helpers_start() != 0)
		return -1;
	rto_thread_capture(&rto_self);
	rto_self.by_policy = 0;
	rto_self.route = RTO_ROUTE_MARKED;
	errno = saved;
	return 0;
}

RTO_EXPORT int rt_offload_unmark_thread(void)
{
	rto_self.by_policy = 0;
	rto_self.route = RTO_ROUTE_DIRECT;
	return 0;
}

RTO_EXPORT int rt_offload_thread_is_marked(void)
{
	return rto_self.route != RTO_ROUTE_DIRECT;
}

RTO_EXPORT int rt_offload_set_thread_mode(int mode)
{
	if (mode != RT_OFFLOAD_MODE_OFFLOAD && mode != RT_OFFLOAD_MODE_STRICT) {
		errno = EINVAL;
		return -1;
	}
	rto_self.mode = (unsigned char)(mode + 1);
	return 0;
}
