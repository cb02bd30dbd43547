/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What happens to a marked thread's wrapped call: run it here (the call's
 * handling says it is realtime-safe), refuse it (strict), or offload it.
 * This is the caller's realtime path: no malloc, no lock, no syscall.
 */
#include "rto.h"

#include <errno.h>
#include <locale.h>
#include <netdb.h>
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

/* No helper could start (said once, helper.c): the call runs here, counted apart. */
static void run_fallback(struct rto_fn *fn, void *args)
{
	fn->run(args);
	rto_stats_fallback(fn);
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

/* Offload and wait; the caller's errno becomes the call's. */
static void offload(struct rto_fn *fn, void *args, FILE *stream, FILE *stream_owned)
{
	struct rto_req req = {
		.file = stream,
		.fn = fn,
		.args = args,
		.stream = stream_owned,
		.lent = stream_owned != NULL,
		.owner = stream_owned ? rto_stream_owner_if_self(stream_owned) : NULL,
		.prio = rto_self.prio,
		.sigmask = rto_self.sigmask,
		.locale = uselocale((locale_t)0), /* reads TLS: no syscall */
		.h_err = h_errno,
		.res = fn->cls == RTO_CLASS_DNS ? rto_resolver_of_caller() : NULL,
	};
	/* A cancellation already pending acts before the call, as in libc. */
	if (fn->cancel)
		pthread_testcancel();
	/* A signal handler's wrapped call during the wait runs directly. */
	unsigned char route = rto_self.route;
	req.route = route;
	rto_self.route = RTO_ROUTE_BUSY;
	uint64_t t0 = rto_now_ns();
	rto_offload(&req, t0);
	uint64_t ns = rto_now_ns() - t0;
	if (rto_self.route == RTO_ROUTE_BUSY) /* a handler may have unmarked us */
		rto_self.route = route;
	rto_stats_offloaded(fn, ns);
	if (RTO_UNLIKELY(rto_opt.report_offloads) && fn != &rto_fn_fd_classify)
		rto_callsite_event(RTO_EVENT_OFFLOAD, fn, ns);
	if (RTO_UNLIKELY(req.faulted)) { /* it faulted on the worker: fault here instead */
		fn->run(args);
		return;
	}
	if (RTO_UNLIKELY(req.signo)) /* as the kernel would have: at the caller */
		pthread_kill(pthread_self(), req.signo);
	if (fn->cls == RTO_CLASS_DNS)
		h_errno = req.h_err;
	if (RTO_UNLIKELY(req.dlerror))
		rto_dlerror_set(req.dlerror);
	errno = req.err;
}

void rto_offload_internal(struct rto_fn *fn, void *args)
{
	if (RTO_UNLIKELY(!CMM_LOAD_SHARED(rto_q->ready)) && start_helpers() != 0) {
		run_fallback(fn, args);
		return;
	}
	offload(fn, args, NULL, NULL);
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
	if (RTO_UNLIKELY(rto_self.own_filter)) {
		run_here(fn, args); /* its own seccomp filter must see it */
		return 0;
	}
	/* After a failed start, one load of rto_q->failed: no retry, no syscall. */
	if (RTO_UNLIKELY(!CMM_LOAD_SHARED(rto_q->ready)) && start_helpers() != 0) {
		run_fallback(fn, args);
		return 0;
	}
	/* Holding the stream's lock (flockfile): lend it to the worker. */
	FILE *owned = stream && rto_stream_owner_if_self(stream) ? stream : NULL;
	if (owned && (!rto_stream_lending_ok() || fn == &rto_fn_fclose)) {
		/* fclose() frees the lock we would take back: run it here. */
		run_here(fn, args);
		return 0;
	}
	offload(fn, args, stream, owned);
	return 0;
}

int rto_call_fd(struct rto_fn *fn, void *args, int fd)
{
	/* Short and bounded on this descriptor: deterministic, so run it here. */
	if (fn->handling == RTO_OFFLOAD && rto_fd_runs_local(fd)) {
		run_here(fn, args);
		return 0;
	}
	return rto_call(fn, args, NULL);
}
