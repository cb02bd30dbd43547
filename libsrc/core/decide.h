/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The one decision: how a marked thread's call runs.  Here (LOCAL), on a
 * helper (OFFLOAD), not at all (REFUSE, strict), queued into the thread's
 * ring (ASYNC), or here because no helper could start (FALLBACK).  Every
 * caller asks it: the wrappers (route.c), the SIGSYS handler and syscall()
 * (backstop_trap.c), the async writes (route.c's rto_async_wanted(), the
 * async barrier in async.c) and the descriptor classes (fdclass.c).  What differs between them on
 * purpose is an input (sigsys: a signal handler starts no thread; queue: the async question), never
 * a second copy of a rule.
 *
 * rto_decide() is pure: it reads its input and nothing else, and changes
 * nothing (no counter, no helper started, no report).  A fact that costs
 * something to learn (the descriptor's class, a round trip the first time;
 * starting the helpers; reading the call's path; taking a stream's lock;
 * looking into its buffer;
 * the thread's own state, a load or two) is learnt only when the
 * decision needs it: the input says RTO_UNASKED, and rto_decide() answers
 * RTO_NEED_*, which the caller learns and asks again.  So the decision
 * takes the order of its rules from one place, and the caller pays for no
 * fact a rule before it settled.
 *
 * Concurrency: none; inline, so that a caller's constant inputs fold and
 * the marked path pays no call.  tests/routing/test_decide.c runs it as a
 * table against the documented rules, tests/fuzz/fuzz_decide.c fuzzes it.
 */
#ifndef RTO_DECIDE_H
#define RTO_DECIDE_H

#include "fn.h"
#include "rto_fast.h"

#include "rtoffload.h"

/* What a wrapper knows of one call from its arguments (rto_call's how). */
enum rto_call_how {
	RTO_CALL_BYFD = 1 << 0,	     /* decided by its descriptor, like an RTO_F_BYFD row */
	RTO_CALL_SHORT = 1 << 1,     /* short and bounded with these arguments (fcntl(F_GETFL),
					sysconf(_SC_PAGESIZE)): here unless a policy says strict/warn */
	RTO_CALL_CALLBACKS = 1 << 2, /* a callback was given (RTO_F_CALLBACKS) */
	RTO_CALL_PATH = 1 << 3,	     /* rto_call_path is its path (rto_path_arg) */
	RTO_CALL_WRITES = 1 << 4,    /* opens its path for writing */
	RTO_CALL_OWNMEM = 1 << 5,    /* its range touches memory a helper runs on (own_memory.c) */
	/*
	 * A stream read or write that its buffer may serve (calls.tbl's
	 * "buffered:"); how's bits from RTO_CALL_WANT_SHIFT up say how many
	 * bytes, and which (route.h rto_buffered_arg).
	 */
	RTO_CALL_BUFFERED = 1 << 6,
	RTO_CALL_BUFLINE = 1 << 7, /* ... or fewer, up to a newline (fgets) */
};

enum rto_verdict {
	RTO_RUN_LOCAL,	  /* on the caller */
	RTO_RUN_OFFLOAD,  /* on a helper, the caller waiting */
	RTO_RUN_REFUSE,	  /* not at all: RT_OFFLOAD_STRICT_ERRNO, reported */
	RTO_RUN_ASYNC,	  /* queue it (the queue question only) */
	RTO_RUN_FALLBACK, /* would be offloaded; no helper runs: on the caller, counted apart */
	/* Not a verdict yet: learn the fact, put it in the input, ask again. */
	RTO_NEED_FD,	     /* fd_local: is the descriptor's kernel path short (fdclass.c) */
	RTO_NEED_SELF,	     /* strict, own_ctx: the thread's state (self.h rto_decide_self) */
	RTO_NEED_HELPERS,    /* helpers: running, or start them: READY or FAILED */
	RTO_NEED_PATH,	     /* path_self: does the path name the thread's own /proc entry */
	RTO_NEED_STREAM,     /* stream_held, lending_ok: take the call's lock, is it ours */
	RTO_NEED_ASYNC_PATH, /* fd_async: is the descriptor's file under async_path= */
	RTO_NEED_BUFFER,     /* buffered: does the stream's buffer serve the read or write */
	RTO_NEED_FD_KERNEL,  /* fd_kernel: is the descriptor's file a kernel interface's */
	RTO_VERDICT_MASK = 15,
	/* A reason the caller acts on besides the verdict. */
	RTO_WHY_WARN = 16, /* handling warn: report the call site (LOCAL) */
};

/* A fact learnt on demand. */
enum rto_fact { RTO_UNASKED = 0, RTO_NO = 1, RTO_YES = 2 };

enum rto_helpers_state {
	RTO_HELPERS_UNASKED, /* not looked at: RTO_NEED_HELPERS looks, and starts them */
	RTO_HELPERS_DOWN,    /* none started yet: the first offload starts them */
	RTO_HELPERS_READY,   /* running */
	RTO_HELPERS_FAILED,  /* none could start (said once): never tried again */
};

struct rto_decide_in {
	/* The call: its row (fn->handling and fn->flags, or syscalls.tbl's) and how. */
	unsigned char handling; /* enum rto_handling */
	unsigned short flags;	/* enum rto_fn_flag */
	unsigned char how;	/* enum rto_call_how */
	unsigned char stream;	/* it works on a stream (RTO_NEED_STREAM asks about it) */
	unsigned char queue;	/* the question is "queue this write?" (async), not "how to run" */
	/*
	 * The caller.  sigsys: the SIGSYS handler or syscall(); it starts no
	 * helper, and it says what the helpers are (never UNASKED).
	 */
	unsigned char sigsys;
	unsigned char self_known; /* strict and own_ctx are set (else RTO_NEED_SELF) */
	unsigned char strict;	  /* the thread's mode is strict: nothing leaves it */
	unsigned char own_ctx;	  /* a kernel context of its own (context.c): its calls run on it */
	unsigned char helpers;	  /* enum rto_helpers_state */
	/* Options and cheap facts. */
	unsigned char children_caller; /* children=caller */
	unsigned char async_paths;     /* async_path= is set */
	unsigned char callbacks_here;  /* a sanitizer's callbacks work on the caller only */
	unsigned char first_done;      /* RTO_F_FIRST: its first use is behind us */
	/* Facts learnt on demand (enum rto_fact). */
	unsigned char fd_local, fd_async, path_self;
	unsigned char stream_held; /* the caller holds the stream's lock (RTO_UNASKED: not asked) */
	unsigned char lending_ok;  /* a held lock may be lent to a helper (stdio_lock.c) */
	unsigned char buffered;	   /* the stream's buffer serves the call, seen under its lock */
	unsigned char fd_kernel;   /* the file is a kernel interface's (/proc, /sys, cgroups) */
};

/*
 * May this thread hand work off at all?  This is the only place the question
 * is asked.  Strict: nothing leaves the thread (REFUSE).  A kernel
 * context of its own (seccomp filter, fs ids, namespace...): a helper would
 * run its call in the wrong one (LOCAL).  Else OFFLOAD.
 */
static inline __attribute__((always_inline)) int rto_decide_hand_off(const struct rto_decide_in *in)
{
	if (!in->self_known)
		return RTO_NEED_SELF;
	if (in->strict)
		return RTO_RUN_REFUSE;
	if (in->own_ctx)
		return RTO_RUN_LOCAL;
	return RTO_RUN_OFFLOAD;
}

/* Helpers to hand it to: OFFLOAD, or start them first, or FALLBACK. */
static inline __attribute__((always_inline)) int rto_decide_helpers(const struct rto_decide_in *in)
{
	if (RTO_LIKELY(in->helpers == RTO_HELPERS_READY))
		return RTO_RUN_OFFLOAD;
	if (in->helpers == RTO_HELPERS_FAILED || in->sigsys)
		return RTO_RUN_FALLBACK; /* starting threads is no work for a signal handler */
	return RTO_NEED_HELPERS;	 /* DOWN (the start is the caller's), or not looked at */
}

/*
 * The async question: queue this write (ASYNC), or make the call (anything
 * else).  Queued only with a helper to write it: one asks RTO_NEED_HELPERS.
 */
static inline __attribute__((always_inline)) int rto_decide_queue(const struct rto_decide_in *in)
{
	if (in->handling != RTO_ASYNC) {
		if (RTO_LIKELY(!in->async_paths))
			return RTO_RUN_LOCAL;
		if (in->fd_async == RTO_UNASKED)
			return RTO_NEED_ASYNC_PATH;
		if (in->fd_async != RTO_YES)
			return RTO_RUN_LOCAL;
	}
	/* A write to a kernel interface's file is a command: made, its error the call's. */
	if (in->fd_kernel == RTO_UNASKED)
		return RTO_NEED_FD_KERNEL;
	if (in->fd_kernel == RTO_YES)
		return RTO_RUN_LOCAL;
	int v = rto_decide_hand_off(in); /* queued bytes leave the thread too */
	if (v != RTO_RUN_OFFLOAD)
		return v; /* or RTO_NEED_SELF */
	/* And a helper writes them: started first, or none could be (make the call). */
	v = rto_decide_helpers(in);
	return v == RTO_RUN_OFFLOAD ? RTO_RUN_ASYNC : v;
}

/*
 * The decision is two halves in one order: what the call's row and
 * arguments settle (rto_decide_call), and, when they settle nothing, what
 * the thread settles (rto_decide_thread).  rto_decide() is both; a caller
 * that learns the thread's facts only when the first half leaves the
 * question open (route.c) asks the halves itself, so that its second
 * question starts where the first stopped.  RTO_DECIDE_ON: the first
 * half's "go on", never an answer of rto_decide().
 */
#define RTO_DECIDE_ON RTO_VERDICT_MASK

static inline __attribute__((always_inline)) int rto_decide_call(const struct rto_decide_in *in)
{
	int v;

	if (RTO_UNLIKELY(in->queue))
		return rto_decide_queue(in);
	/*
	 * The library's own request (an async drain, a descriptor's class, a
	 * trapped system call): always a helper's, never a policy's.  Its
	 * makers ask first and make none when this says REFUSE or LOCAL.
	 */
	if (RTO_UNLIKELY(in->flags & RTO_F_INTERNAL)) {
		v = rto_decide_hand_off(in);
		return v == RTO_RUN_OFFLOAD ? rto_decide_helpers(in) : v; /* or RTO_NEED_SELF */
	}
	/* Under a sanitizer, the callbacks given are its wrappers: they work here only. */
	if (RTO_UNLIKELY(in->how & RTO_CALL_CALLBACKS) && (in->flags & RTO_F_CALLBACKS) &&
	    in->callbacks_here)
		return RTO_RUN_LOCAL;
	/*
	 * Short and bounded on this descriptor: deterministic, so here.  Not
	 * asked by a signal handler that would run the call here anyway (no
	 * helper, not strict): learning it may take a helper's round trip.
	 */
	if (((in->flags & RTO_F_BYFD) || (in->how & RTO_CALL_BYFD)) &&
	    in->handling == RTO_OFFLOAD) {
		int asks = 1;
		if (in->sigsys && in->helpers != RTO_HELPERS_READY) {
			int h = rto_decide_hand_off(in);
			if (h == RTO_NEED_SELF)
				return h;
			asks = h == RTO_RUN_REFUSE; /* strict: refused unless short here */
		}
		if (asks && in->fd_local == RTO_UNASKED)
			return RTO_NEED_FD;
		if (asks && in->fd_local == RTO_YES)
			return RTO_RUN_LOCAL;
	}
	/*
	 * A stream read that its buffer already holds, a write that its
	 * buffer has room for, is glibc's own fast path: a copy, no kernel
	 * entry.  Short, so here (strict too), under the stream's lock taken
	 * as the call takes it (RTO_NEED_STREAM, which then serves the
	 * thread's half as well).
	 */
	if ((in->how & RTO_CALL_BUFFERED) && in->stream && in->handling == RTO_OFFLOAD) {
		if (in->stream_held == RTO_UNASKED)
			return RTO_NEED_STREAM;
		if (in->buffered == RTO_UNASKED)
			return RTO_NEED_BUFFER;
		if (in->buffered == RTO_YES)
			return RTO_RUN_LOCAL;
	}
	/*
	 * Short with these arguments, or past the only slow first use of an
	 * RTO_F_FIRST call: here, unless a policy made the call strict or warn.
	 */
	if ((in->handling == RTO_OFFLOAD || in->handling == RTO_LOCAL) &&
	    ((in->how & RTO_CALL_SHORT) || ((in->flags & RTO_F_FIRST) && in->first_done)))
		return RTO_RUN_LOCAL;
	if (in->handling == RTO_LOCAL)
		return RTO_RUN_LOCAL;
	if (in->handling == RTO_WARN)
		return RTO_RUN_LOCAL | RTO_WHY_WARN;
	if (in->handling == RTO_STRICT)
		return RTO_RUN_REFUSE;
	return RTO_DECIDE_ON;
}

static inline __attribute__((always_inline)) int rto_decide_thread(const struct rto_decide_in *in)
{
	int v = rto_decide_hand_off(in);
	if (v != RTO_RUN_OFFLOAD)
		return v;
	/*
	 * A new program or child starts with the state of the thread that
	 * made it (affinity, scheduling, signal mask, credentials): a
	 * helper's would be the wrong one.
	 */
	if ((in->flags & RTO_F_CALLER) || ((in->flags & RTO_F_SPAWN) && in->children_caller))
		return RTO_RUN_LOCAL;
	/* It would unmap or protect what a helper runs on (route.h: rto_range_arg). */
	if (in->how & RTO_CALL_OWNMEM)
		return RTO_RUN_LOCAL;
	v = rto_decide_helpers(in);
	if (v != RTO_RUN_OFFLOAD)
		return v;
	/* Its path names the thread's own /proc entry: a helper's would be the helper's. */
	if (in->how & RTO_CALL_PATH) {
		if (in->path_self == RTO_UNASKED)
			return RTO_NEED_PATH;
		if (in->path_self == RTO_YES)
			return RTO_RUN_LOCAL;
	}
	/* Holding the stream's lock (flockfile): lent to the worker, unless it may not be. */
	if (in->stream) {
		if (in->stream_held == RTO_UNASKED)
			return RTO_NEED_STREAM;
		if (in->stream_held == RTO_YES &&
		    (in->lending_ok != RTO_YES || (in->flags & RTO_F_TEARDOWN)))
			return RTO_RUN_LOCAL; /* the call frees the lock we would take back */
	}
	return RTO_RUN_OFFLOAD;
}

static inline __attribute__((always_inline)) int rto_decide(const struct rto_decide_in *in)
{
	int v = rto_decide_call(in);
	return v == RTO_DECIDE_ON ? rto_decide_thread(in) : v;
}

/*
 * ---- the calling thread's part of the input ----------------------------------
 * Not pure: it reads the thread (TLS: its mode, rto_fast.h).  Here, beside
 * the decision, because the marked path reads it.
 */

/* Its answer to RTO_NEED_SELF. */
static inline __attribute__((always_inline)) void rto_decide_self(struct rto_decide_in *in)
{
	in->self_known = 1;
	in->strict = rto_thread_mode() == RT_OFFLOAD_MODE_STRICT;
	in->own_ctx = rto_self.own_ctx != 0;
}

#endif /* RTO_DECIDE_H */
