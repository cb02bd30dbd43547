/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What happens to a marked thread's wrapped call: run it here (the call's
 * handling says it is realtime-safe), refuse it (strict), or offload it.
 * This is the caller's realtime path: no malloc, no lock, no syscall.
 */
#include "options_load.h"
#include "rto_fast.h"
#include "self.h"
#include "fn.h"
#include "callsite.h"
#include "route.h"
#include "fdclass.h"
#include "transport.h"
#include "dns_state.h"
#include "helper.h"
#include "stdio_lock.h"
#include "sanitizer.h"
#include "futex.h"
#include "stats.h"
#include "route_state.h"
#include "signals.h"
#include "context.h"
#include "trace.h"

#include <errno.h>
#include <locale.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>

#include "rtoffload.h"
#include "shims_prelude.h" /* rto_fn_fclose */

static int refuse(struct rto_fn *fn)
{
	rto_stats_denied(fn);
	rto_trace_point(RTO_TR_DENIED, fn);
	rto_callsite_event(RTO_EVENT_STRICT, fn, 0);
	errno = RT_OFFLOAD_STRICT_ERRNO;
	return -1;
}

static int run_here(struct rto_fn *fn, void *args)
{
	fn->run(args);
	rto_stats_local(fn);
	rto_trace_local(fn);
	return 0;
}

/* No helper could start (said once, helper.c): the call runs here, counted apart. */
static void run_fallback(struct rto_fn *fn, void *args)
{
	fn->run(args);
	rto_stats_fallback(fn);
	rto_trace_point(RTO_TR_FALLBACK, fn);
}

/*
 * No helper yet: the thread was marked by mark= (helpers start with the
 * first offload, not in the constructor) or this is a forked child (even of
 * a raw clone).  A one-time cost; BUSY so that the mmap and clone done by
 * pthread_create run directly instead of coming back here.
 */
static int start_helpers(void)
{
	unsigned char was = rto_route_go_direct();
	int ret = rto_helpers_start();
	rto_route_resume(was);
	return ret;
}

/*
 * Where an offloaded dlopen's error goes (init.c: wrap_misc.c's dlerror()),
 * from above us.  Stored in the constructor, before any thread is marked;
 * only a marked thread's offload reads it.
 */
static void (*dlerror_set)(char *msg);

void rto_route_on_dlerror(void (*fn)(char *msg))
{
	dlerror_set = fn;
}

/* Offload and wait; the caller's errno becomes the call's. */
static void offload(struct rto_fn *fn, void *args, FILE *stream, FILE *stream_owned)
{
	locale_t loc = uselocale((locale_t)0); /* reads TLS: no syscall */
	unsigned size = fn->args_size;
	struct rto_req req = {
		.file = stream,
		.fn = fn,
		.args = args,
		.stream = stream_owned,
		.flags = (unsigned char)((stream_owned ? RTO_RQ_LENT : 0) |
					 (loc != LC_GLOBAL_LOCALE ? RTO_RQ_LOCALE : 0) |
					 (size ? RTO_RQ_INLINE : 0)),
		.owner = stream_owned ? rto_stream_owner_if_self(stream_owned) : NULL,
		.prio = rto_self.prio,
		.sigmask = rto_self.sigmask,
		.locale = loc,
		.h_err = (fn->flags & RTO_F_RESOLVER) ? h_errno : 0, /* a call: theirs only */
		.res = (fn->flags & RTO_F_RESOLVER) ? rto_resolver_of_caller() : NULL,
	};
	if (size) /* a fixed-size copy of at most 32 bytes: inlined, no call */
		memcpy(req.inl, args, size);
	/* A cancellation already pending acts before the call, as in libc. */
	if (fn->flags & RTO_F_CANCEL)
		pthread_testcancel();
	/* A signal handler's wrapped call during the wait runs directly. */
	req.route = rto_route_go_direct();
	uint64_t t0 = rto_now_ns();
	if (t0 - rto_self.offload_end > RTO_REQ_BURST_NS) /* the helpers learn its rhythm */
		req.flags |= RTO_RQ_BURST;
	rto_trace_request(fn, t0, rto_req_key(&rto_self)); /* trace=lttng */
	rto_offload(&req, t0);
	uint64_t end = rto_now_ns(), ns = end - t0;
	rto_self.offload_end = end;
	if (size) /* the result, and whatever else the call wrote into its args */
		memcpy(args, req.inl, size);
	rto_route_resume(req.route);
	if (RTO_UNLIKELY(req.flags & RTO_RQ_TAKEN)) /* on_stall=local ran it here (transport.c) */
		rto_stats_fallback(fn);
	else
		rto_stats_offloaded(fn, ns);
	rto_trace_offload(fn, t0, end, req.flags & RTO_RQ_TAKEN, req.key); /* trace.c */
	if (RTO_UNLIKELY(rto_opt.report_offloads) && !(fn->flags & RTO_F_INTERNAL))
		rto_callsite_event(RTO_EVENT_OFFLOAD, fn, ns);
	if (RTO_UNLIKELY(req.flags &
			 RTO_RQ_FAULTED)) { /* it faulted on the worker: fault here instead */
		fn->run(args);
		return;
	}
	if (RTO_UNLIKELY(req.signo)) /* as the kernel would have: at the caller */
		pthread_kill(pthread_self(), req.signo);
	if (fn->flags & RTO_F_RESOLVER)
		h_errno = req.h_err;
	if (RTO_UNLIKELY(req.dlerror))
		dlerror_set(req.dlerror);
	errno = req.err;
}

/* The library's own request (async drain, descriptor class): always a helper's. */
static int internal(struct rto_fn *fn, void *args)
{
	if (RTO_UNLIKELY(!CMM_LOAD_SHARED(rto_q->ready)) && start_helpers() != 0)
		run_fallback(fn, args);
	else
		offload(fn, args, NULL, NULL);
	return 0;
}

/*
 * How many leading bytes of the call's path match prefix, read a byte at a
 * time and guarded (a helper is up, so its fault trampolines are): a bad
 * pointer is the kernel's EFAULT to give, and no byte past the string's
 * end is read.  Most paths differ within the first two bytes.
 */
static size_t path_matches(const char *prefix, size_t n)
{
	size_t i = 0;
	char c;

	while (i < n && rto_signal_copy_guarded(&c, rto_self.path + i, 1) == 0 && c == prefix[i])
		i++;
	return i;
}

/*
 * The call's path names the calling thread's own /proc entry
 * (/proc/thread-self/...).  A thread that opens its LSM attributes for
 * writing (fscreate, exec...) gives itself a context the helpers do not
 * have.
 */
static int names_self(unsigned how)
{
	static const char attr[] = "/proc/thread-self/attr/";
	const size_t self = sizeof("/proc/thread-self") - 1;
	char next;

	if (path_matches(attr, self) != self ||
	    rto_signal_copy_guarded(&next, rto_self.path + self, 1) != 0 ||
	    (next != '/' && next != '\0'))
		return 0;
	if ((how & RTO_CALL_WRITES) && path_matches(attr, sizeof(attr) - 1) == sizeof(attr) - 1)
		rto_ctx_set(RTO_CTX_LSM);
	return 1;
}

/* The call's handling, the thread's mode and the helpers decide. */
static int decide(struct rto_fn *fn, void *args, FILE *stream, unsigned how)
{
	if (fn->handling == RTO_LOCAL)
		return run_here(fn, args);
	if (fn->handling == RTO_WARN) {
		rto_callsite_event(RTO_EVENT_WARN, fn, 0);
		return run_here(fn, args);
	}
	if (fn->handling == RTO_STRICT || rto_thread_mode() == RT_OFFLOAD_MODE_STRICT)
		return refuse(fn);
	/*
	 * A new program or child starts with the state of the thread that
	 * made it (affinity, scheduling, signal mask, credentials): a
	 * helper's would be the wrong one.
	 */
	if ((fn->flags & RTO_F_CALLER) ||
	    ((fn->flags & RTO_F_SPAWN) && rto_opt.children == RTO_CHILDREN_CALLER))
		return run_here(fn, args);
	/* Its own fs ids, filter, namespace... (context.c). */
	if (RTO_UNLIKELY(rto_self.own_ctx))
		return run_here(fn, args);
	/* It would unmap or protect what a helper runs on (route.h: rto_range_arg). */
	if (how & RTO_CALL_OWNMEM)
		return run_here(fn, args);
	/* After a failed start, one load of rto_q->failed: no retry, no syscall. */
	if (RTO_UNLIKELY(!CMM_LOAD_SHARED(rto_q->ready)) && start_helpers() != 0) {
		run_fallback(fn, args);
		return 0;
	}
	if ((how & RTO_CALL_PATH) && names_self(how))
		return run_here(fn, args);
	/* Holding the stream's lock (flockfile): lend it to the worker. */
	FILE *owned = stream && rto_stream_owner_if_self(stream) ? stream : NULL;
	if (owned && (!rto_stream_lending_ok() || (fn->flags & RTO_F_TEARDOWN)))
		return run_here(fn, args); /* the call frees the lock we would take back */
	offload(fn, args, stream, owned);
	return 0;
}

/*
 * Short with these arguments (how), or past the only slow first use of an
 * RTO_F_FIRST call: here, unless a policy made the call strict or warn.
 */
static int is_short(const struct rto_fn *fn, unsigned how)
{
	if (fn->handling != RTO_OFFLOAD && fn->handling != RTO_LOCAL)
		return 0;
	/*
	 * first_done is set only after an offloaded call returned: the
	 * helper's initialisation (libc's own, under libc's lock) happened
	 * before the futex wake that ended that wait, and a thread that reads
	 * it set runs the call under that same libc lock, which orders the rest.
	 */
	return (how & RTO_CALL_SHORT) ||
	       ((fn->flags & RTO_F_FIRST) && CMM_LOAD_SHARED(fn->first_done));
}

/* An RTO_F_FIRST call ran on a helper: its first use is behind us. */
static void first_use_done(struct rto_fn *fn)
{
	if (fn->handling == RTO_OFFLOAD && !rto_self.own_ctx &&
	    rto_thread_mode() != RT_OFFLOAD_MODE_STRICT)
		CMM_STORE_SHARED(fn->first_done, 1);
}

static int route(struct rto_fn *fn, void *args, int fd, FILE *stream, unsigned how)
{
	if (RTO_UNLIKELY(fn->flags & RTO_F_INTERNAL))
		return internal(fn, args);
	/* Under a sanitizer, the callbacks given are its wrappers: they work here only. */
	if (RTO_UNLIKELY(how & RTO_CALL_CALLBACKS) && (fn->flags & RTO_F_CALLBACKS) &&
	    rto_sanitizer_callbacks_here())
		return run_here(fn, args);
	/* Short and bounded on this descriptor: deterministic, so run it here. */
	if (((fn->flags & RTO_F_BYFD) || (how & RTO_CALL_BYFD)) && fn->handling == RTO_OFFLOAD &&
	    rto_fd_runs_local(fd))
		return run_here(fn, args);
	if (is_short(fn, how))
		return run_here(fn, args);
	int taken = (fn->flags & RTO_F_LOCK) && rto_stream_lock_for_call(stream);
	int ret = decide(fn, args, stream, how); /* with a lock we took, to lend */
	if (taken)
		rto_stream_unlock_after_call(stream);
	if (RTO_UNLIKELY(fn->flags & RTO_F_FIRST) && ret == 0)
		first_use_done(fn);
	return ret;
}

/* The library's code runs from here to the return: the backstop's selector allows. */
int rto_call(struct rto_fn *fn, void *args, int fd, FILE *stream, unsigned how)
{
	/* A clone(CLONE_VM) child on the thread's TLS: its own descriptors, its call. */
	if (RTO_UNLIKELY(rto_foreign_task())) {
		fn->run(args);
		return 0;
	}
	unsigned char sel = rto_backstop_enter();
	int ret = route(fn, args, fd, stream, how);
	rto_backstop_leave(sel);
	return ret;
}
