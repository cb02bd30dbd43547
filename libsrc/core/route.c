/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What happens to a marked thread's wrapped call, as rto_decide() (decide.h)
 * says: run it here, refuse it (strict), or offload it; this file learns
 * the facts the decision asks for and carries it out.
 * This is the caller's realtime path: no malloc, no lock, no syscall.
 */
#include "options.h"
#include "rto_fast.h"
#include "self.h"
#include "fn.h"
#include "decide.h"
#include "callsite.h"
#include "route.h"
#include "fdclass.h"
#include "async_path.h"
#include "transport.h"
#include "predict.h" /* RTO_PRED_BURST_NS */
#include "dns_state.h"
#include "helper.h"
#include "stdio_lock.h"
#include "stdio_buffer.h"
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

/* report_offloads= and children=: copied once at load (rto_route_configure), read-only afterwards.
 */
static struct {
	int report_offloads;
	int children_caller;
} opt;

void rto_route_configure(const struct rto_options *o)
{
	opt.report_offloads = o->report_offloads;
	opt.children_caller = o->children == RTO_CHILDREN_CALLER;
}

static __attribute__((noinline)) int refuse(struct rto_fn *fn)
{
	rto_stats_denied(fn);
	rto_trace_point(RTO_TR_DENIED, fn);
	rto_callsite_event(RTO_EVENT_STRICT, fn, 0);
	errno = RT_OFFLOAD_STRICT_ERRNO;
	return -1;
}

static inline __attribute__((always_inline)) int run_here(struct rto_fn *fn, void *args)
{
	fn->run(args);
	rto_stats_local(fn);
	rto_trace_local(fn);
	return 0;
}

/* No helper could start (said once, helper.c): the call runs here, counted apart. */
static __attribute__((noinline)) void run_fallback(struct rto_fn *fn, void *args)
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
static __attribute__((noinline)) int start_helpers(void)
{
	/* The library's own work, also when the queue question starts them (outside rto_call). */
	unsigned char sel = rto_backstop_enter();
	unsigned char was = rto_route_go_direct();
	int ret = rto_helpers_start();
	rto_route_resume(was);
	rto_backstop_leave(sel);
	return ret;
}

/*
 * The route core's own per-thread state (not struct rto_thread, which
 * keeps what the fast path reads): the path of the call being routed
 * (route.h rto_path_arg), and when this thread's last offload returned
 * (the helpers learn its rhythm from the gaps).  Its own thread only.
 */
__thread const char *rto_call_path RTO_TLS;
static __thread uint64_t offload_end RTO_TLS;

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

/*
 * async.c's: a marked thread's call on a descriptor, a stream or a path
 * comes after the thread's own queued writes to it.  Stored once, when
 * the first ring is made (relaxed: a thread that reads it unset has no
 * ring, and nothing queued to come first).
 */
static void (*before_call)(int fd, FILE *stream, unsigned how);

void rto_route_before_call(void (*fn)(int fd, FILE *stream, unsigned how))
{
	CMM_STORE_SHARED(before_call, fn);
}

void rto_route_order(int fd, unsigned how)
{
	void (*before)(int, FILE *, unsigned) = CMM_LOAD_SHARED(before_call);

	if (RTO_UNLIKELY(before))
		before(fd, NULL, how);
}

/*
 * Offload and wait; the caller's errno becomes the call's.  Out of line: a
 * call that stays here pays none of its frame.
 */
static __attribute__((noinline)) void offload(struct rto_fn *fn, void *args, FILE *stream,
					      FILE *stream_owned)
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
	if (t0 - offload_end > RTO_PRED_BURST_NS) /* the helpers learn its rhythm */
		req.flags |= RTO_RQ_BURST;
	rto_offload(&req, t0);
	uint64_t end = rto_now_ns(), ns = end - t0;
	offload_end = end;
	if (size) /* the result, and whatever else the call wrote into its args */
		memcpy(args, req.inl, size);
	rto_route_resume(req.route);
	if (RTO_UNLIKELY(req.flags & RTO_RQ_TAKEN)) /* on_stall=local ran it here (transport.c) */
		rto_stats_fallback(fn);
	else
		rto_stats_offloaded(fn, ns);
	rto_trace_offload(fn, t0, end, req.flags & RTO_RQ_TAKEN, req.key); /* trace.c */
	if (RTO_UNLIKELY(opt.report_offloads) && !(fn->flags & RTO_F_INTERNAL))
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

/*
 * How many leading bytes of the call's path match prefix, read a byte at a
 * time and guarded (signals.c): a bad pointer is the kernel's EFAULT to
 * give, and no byte past the string's end is read.  Most paths differ within the first two bytes.
 */
static size_t path_matches(const char *prefix, size_t n)
{
	size_t i = 0;
	char c;

	while (i < n && rto_signal_copy_guarded(&c, rto_call_path + i, 1) == 0 && c == prefix[i])
		i++;
	return i;
}

/*
 * The call's path names the calling thread's own /proc entry
 * (/proc/thread-self/...).  A thread that opens its LSM attributes for
 * writing (fscreate, exec...) gives itself a context the helpers do not
 * have.
 */
static __attribute__((noinline)) int names_self(unsigned how)
{
	static const char attr[] = "/proc/thread-self/attr/";
	const size_t self = sizeof("/proc/thread-self") - 1;
	char next;

	if (path_matches(attr, self) != self ||
	    rto_signal_copy_guarded(&next, rto_call_path + self, 1) != 0 ||
	    (next != '/' && next != '\0'))
		return 0;
	if ((how & RTO_CALL_WRITES) && path_matches(attr, sizeof(attr) - 1) == sizeof(attr) - 1)
		rto_ctx_set(RTO_CTX_LSM);
	return 1;
}

/*
 * What rto_decide() needs to know at once: the row, the options, the
 * thread's state and the facts that cost a load or two (each question
 * asked is one more pass of the decision).  The rest it asks for.
 */
static inline __attribute__((always_inline)) void decide_in(struct rto_decide_in *in,
							    const struct rto_fn *fn, FILE *stream,
							    unsigned how, int fd_local)
{
	*in = (struct rto_decide_in){
		.handling = fn->handling,
		.flags = fn->flags,
		.how = (unsigned char)how,
		.stream = stream != NULL,
		.fd_local = (unsigned char)fd_local,
		.children_caller = opt.children_caller,
		/*
		 * first_done is set only after an offloaded call returned: the
		 * helper's initialisation (libc's own, under libc's lock)
		 * happened before the futex wake that ended that wait, and a
		 * thread that reads it set runs the call under that same libc
		 * lock, which orders the rest.
		 */
		.first_done = (fn->flags & RTO_F_FIRST) && CMM_LOAD_SHARED(fn->first_done),
	};
}

/*
 * The thread's facts, learnt when the call's half of the decision settles
 * nothing (RTO_DECIDE_ON), or when a later ask needs them (RTO_NEED_SELF):
 * a call that its row or descriptor settles pays none of the loads.
 */
static inline __attribute__((always_inline)) void decide_thread(struct rto_decide_in *in)
{
	rto_decide_self(in);
	in->helpers =
		RTO_LIKELY(CMM_LOAD_SHARED(rto_q->ready)) ? RTO_HELPERS_READY : RTO_HELPERS_DOWN;
}

static unsigned char fact(int yes)
{
	return yes ? RTO_YES : RTO_NO;
}

/* After an offload: an RTO_F_FIRST call went the helpers' way, its first use is behind us. */
static inline __attribute__((always_inline)) void offloaded(struct rto_fn *fn)
{
	if (RTO_UNLIKELY(fn->flags & RTO_F_FIRST) && fn->handling == RTO_OFFLOAD)
		CMM_STORE_SHARED(fn->first_done, 1);
}

/*
 * The decision asked for a fact: learn it (the only side effects on the
 * way to a verdict), ask again, and carry the verdict out.  Out of line,
 * and given the input by value: the first ask, which settles most calls,
 * keeps its facts in registers.  *taken: the call's stream lock, taken here.
 */
static __attribute__((noinline)) int asked(struct rto_fn *fn, void *args, int fd, FILE *stream,
					   unsigned how, int *taken, struct rto_decide_in in, int v)
{
	for (;; v = rto_decide(&in)) {
		switch (v & RTO_VERDICT_MASK) {
		case RTO_NEED_FD:
			in.fd_local = fact(rto_fd_runs_local(fd));
			continue;
		case RTO_NEED_SELF:
			decide_thread(&in);
			continue;
		case RTO_NEED_HELPERS:
			/* After a failed start, one load of rto_q->failed: no retry, no syscall. */
			in.helpers = start_helpers() == 0 ? RTO_HELPERS_READY : RTO_HELPERS_FAILED;
			continue;
		case RTO_NEED_PATH:
			in.path_self = fact(names_self(how));
			continue;
		case RTO_NEED_STREAM:
			/* Its lock, taken as the call would have on its own thread, to lend. */
			*taken = (fn->flags & RTO_F_LOCK) && rto_stream_lock_for_call(stream);
			in.stream_held = fact(rto_stream_owner_if_self(stream) != NULL);
			in.lending_ok = fact(in.stream_held == RTO_YES && rto_stream_lending_ok());
			continue;
		case RTO_NEED_BUFFER:
			/* Seen under the stream's lock, or where the call takes none. */
			in.buffered = fact(rto_stream_buffer_holds(
				stream, how,
				in.stream_held == RTO_YES || !(fn->flags & RTO_F_LOCK)));
			continue;
		case RTO_RUN_OFFLOAD:
			offload(fn, args, stream, in.stream_held == RTO_YES ? stream : NULL);
			offloaded(fn);
			return 0;
		case RTO_RUN_REFUSE:
			return refuse(fn);
		case RTO_RUN_FALLBACK:
			run_fallback(fn, args);
			offloaded(fn);
			return 0;
		default: /* RTO_RUN_LOCAL; RTO_RUN_ASYNC is the queue question's only */
			if (v & RTO_WHY_WARN)
				rto_callsite_event(RTO_EVENT_WARN, fn, 0);
			return run_here(fn, args);
		}
	}
}

/*
 * Ask the decision, carry out what it settled at once (most calls: here,
 * or offloaded), and leave the rest to asked().
 */
static inline __attribute__((always_inline)) int route(struct rto_fn *fn, void *args, int fd,
						       FILE *stream, unsigned how, int *taken)
{
	struct rto_decide_in in;
	/*
	 * The question most calls ask, answered from the cache first (a
	 * descriptor's class once known), before any other fact is live:
	 * nothing is kept across a call, and the decision is asked once.
	 */
	int fd_local = rto_fd_local_known(fd);

	decide_in(&in, fn, stream, how, fd_local);
	/* Under a sanitizer, the callbacks given are its wrappers (one call, when given). */
	if (RTO_UNLIKELY(how & RTO_CALL_CALLBACKS) && (fn->flags & RTO_F_CALLBACKS))
		in.callbacks_here = (unsigned char)rto_sanitizer_callbacks_here();
	/* The call's half first: the thread's facts only when it settles nothing. */
	int v = rto_decide_call(&in);
	if (RTO_LIKELY(v == RTO_RUN_LOCAL))
		return run_here(fn, args);
	if (RTO_LIKELY(v == RTO_DECIDE_ON)) {
		decide_thread(&in);
		v = rto_decide_thread(&in);
	}
	if (RTO_LIKELY(v == RTO_RUN_OFFLOAD)) {
		offload(fn, args, stream, NULL); /* a stream's verdict came after RTO_NEED_STREAM */
		offloaded(fn);
		return 0;
	}
	return asked(fn, args, fd, stream, how, taken, in, v);
}

/* The queue question (async.h): a write queued into the thread's ring, or made. */
/* The queue question's further facts: out of line, most writes never ask. */
static __attribute__((noinline)) int queue_asked(struct rto_decide_in in, int v, int fd, FILE *f)
{
	for (;; v = rto_decide(&in)) {
		if (v == RTO_NEED_SELF)
			rto_decide_self(&in);
		else if (v == RTO_NEED_ASYNC_PATH)
			in.fd_async = fact(rto_fd_async_path(f ? rto_fd_of_file(f) : fd));
		else if (v == RTO_NEED_FD_KERNEL) /* known from its birth, else learnt now */
			in.fd_kernel = fact(rto_fd_kernel_file(f ? rto_fd_of_file(f) : fd));
		else if (v == RTO_NEED_HELPERS) /* the first queued write of a mark=all thread */
			in.helpers = CMM_LOAD_SHARED(rto_q->ready) || start_helpers() == 0
					     ? RTO_HELPERS_READY
					     : RTO_HELPERS_FAILED;
		else
			return v == RTO_RUN_ASYNC;
	}
}

int rto_async_wanted(const struct rto_fn *fn, int fd, FILE *f)
{
	struct rto_decide_in in = {
		.handling = fn->handling,
		.flags = fn->flags,
		.queue = 1,
		.async_paths = rto_async_paths != 0,
	};
	int v = rto_decide(&in);

	/* Most writes: no async row, no async_path=, decided from the loads above. */
	if (RTO_LIKELY(v == RTO_RUN_LOCAL))
		return 0;
	return queue_asked(in, v, fd, f);
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
	/* The library's own work too: what it writes there is not trapped as the program's. */
	void (*before)(int, FILE *, unsigned) = CMM_LOAD_SHARED(before_call);
	if (RTO_UNLIKELY(before) && !(fn->flags & RTO_F_INTERNAL))
		before(fd, stream, how);
	rto_trace_call_fd(fd); /* trace.c: its offload's events carry it */
	int taken = 0;
	int ret = route(fn, args, fd, stream, how, &taken);
	if (taken)
		rto_stream_unlock_after_call(stream);
	rto_backstop_leave(sel);
	return ret;
}
