/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What happens to a marked thread's wrapped call: run it here (the call's
 * handling says it is realtime-safe), refuse it (strict), or offload it.
 * This is the caller's realtime path: no malloc, no lock, no syscall.
 */
#include "rto.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>

#include "rtoffload.h"
#include "shims_prelude.h" /* rto_fn_fclose */

static int refuse(struct rto_fn *fn)
{
	rto_stats_denied(fn);
	rto_callsite_event(RTO_EVENT_STRICT, fn, 0);
	errno = RT_OFFLOAD_STRICT_ERRNO;
	return -1;
}

static void run_here(struct rto_fn *fn, void *args)
{
	fn->run(args);
	rto_stats_local(fn);
}

/*
 * No helper yet: the thread was marked by mark= (helpers start with the
 * first offload, not in the constructor) or this is a forked child (even of
 * a raw clone).  A one-time cost; BUSY so that the mmap and clone done by
 * pthread_create run directly instead of coming back here.
 */
static int start_helpers(void)
{
	rto_self.route = RTO_ROUTE_BUSY;
	int ret = rto_helpers_start();
	if (rto_self.route == RTO_ROUTE_BUSY)
		rto_self.route = RTO_ROUTE_MARKED;
	return ret;
}

int rto_call(struct rto_fn *fn, void *args, FILE *stream)
{
	if (fn->handling == RTO_LOCAL) {
		run_here(fn, args);
		return 0;
	}
	if (fn->handling == RTO_WARN) {
		rto_callsite_event(RTO_EVENT_WARN, fn, 0);
		run_here(fn, args);
		return 0;
	}
	if (fn->handling == RTO_STRICT || rto_thread_mode() == RT_OFFLOAD_MODE_STRICT)
		return refuse(fn);
	if (RTO_UNLIKELY(!CMM_LOAD_SHARED(rto_q->ready)) && start_helpers() != 0) {
		run_here(fn, args);
		return 0;
	}

	struct rto_req req = {
		.fn = fn,
		.args = args,
		.prio = rto_self.prio,
		.sigmask = rto_self.sigmask,
	};
	if (stream && (req.owner = rto_stream_owner_if_self(stream))) {
		/* fclose() frees the lock we would take back: run it here. */
		if (!rto_stream_lending_ok() || fn == &rto_fn_fclose) {
			run_here(fn, args);
			return 0;
		}
		req.stream = stream;
	}
	/* A signal handler's wrapped call during the wait runs directly. */
	rto_self.route = RTO_ROUTE_BUSY;
	uint64_t t0 = rto_now_ns();
	rto_offload(&req, t0);
	uint64_t ns = rto_now_ns() - t0;
	if (rto_self.route == RTO_ROUTE_BUSY) /* a handler may have unmarked us */
		rto_self.route = RTO_ROUTE_MARKED;
	rto_stats_offloaded(fn, ns);
	if (RTO_UNLIKELY(rto_opt.report_offloads))
		rto_callsite_event(RTO_EVENT_OFFLOAD, fn, ns);
	if (RTO_UNLIKELY(req.signo)) /* as the kernel would have: at the caller */
		pthread_kill(pthread_self(), req.signo);
	errno = req.err;
	return 0;
}
