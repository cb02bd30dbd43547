/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The documented rules of how a marked thread's call runs (calls.tbl's
 * header, docs/ARCHITECTURE.md, docs/OPTIONS.md's mode=, fd_local=,
 * children=, async_path=), as properties of libsrc/core/decide.h's rto_decide():
 * what a verdict implies, what forces one, and which facts may be asked
 * for.  Not the decision written again: each rule is one sentence of the
 * documentation, checked on its own.  Shared by the table test
 * (test_decide.c, every combination) and the fuzz target
 * (tests/fuzz/fuzz_decide.c, random ones).
 *
 * rto_decide_walk() answers every question the decision asks with the
 * facts given (fact_bits: bit k set means "yes" to the k-th kind of
 * question, enum decide_fact), as route.c, backstop_trap.c, fdclass.c and
 * async.h do, and checks each step and the verdict.  It returns NULL, or
 * the name of the broken rule.
 */
#ifndef RTO_TEST_DECIDE_RULES_H
#define RTO_TEST_DECIDE_RULES_H

#include "decide.h"

#include <string.h>

enum decide_fact {
	FACT_FD,	 /* the descriptor's kernel path is short */
	FACT_HELPERS_UP, /* starting the helpers works */
	FACT_PATH_SELF,	 /* the path names the thread's own /proc entry */
	FACT_HELD,	 /* the caller holds the stream's lock */
	FACT_LENDING,	 /* a held lock may be lent */
	FACT_ASYNC_PATH, /* the descriptor's file lies under async_path= */
	FACT_STRICT,	 /* the thread's mode is strict */
	FACT_OWN_CTX,	 /* the thread has a kernel context of its own */
	FACT_BUFFERED,	 /* the stream's buffer holds what the read wants */
	FACT_KERNEL,	 /* the descriptor's file is a kernel interface's (/proc, /sys) */
	FACT_COUNT
};

static inline unsigned char decide_yes(unsigned bits, int f)
{
	return (bits >> f) & 1 ? RTO_YES : RTO_NO;
}

/* A stream read that its buffer may hold (calls.tbl's "buffered:"), of an offload row. */
static inline int decide_buffered_read(const struct rto_decide_in *in)
{
	return (in->how & RTO_CALL_BUFFERED) && in->stream && in->handling == RTO_OFFLOAD;
}

/*
 * Short and bounded, so run on the caller even by a strict thread: with
 * these arguments, on this descriptor (fd_local=), past its only slow first
 * use (calls.tbl's "first"), a read its stream's buffer holds.  A policy's
 * strict or warn still wins.
 */
static inline int decide_short(const struct rto_decide_in *in)
{
	int byfd = (in->flags & RTO_F_BYFD) || (in->how & RTO_CALL_BYFD);

	return in->handling == RTO_OFFLOAD &&
	       ((byfd && in->fd_local == RTO_YES) || (in->how & RTO_CALL_SHORT) ||
		((in->flags & RTO_F_FIRST) && in->first_done) ||
		(decide_buffered_read(in) && in->buffered == RTO_YES));
}

/*
 * A reason to run a call on its caller: short, or a helper would do it
 * wrong (calls.tbl's "caller", children=caller, a range a helper runs on,
 * the thread's own /proc entry, a stream lock it may not lend).  Only the
 * short ones are exempt from strict ("Strict still refuses it").
 */
static inline int decide_local_reason(const struct rto_decide_in *in)
{
	return decide_short(in) || (in->flags & RTO_F_CALLER) ||
	       ((in->flags & RTO_F_SPAWN) && in->children_caller) || (in->how & RTO_CALL_OWNMEM) ||
	       in->path_self == RTO_YES ||
	       (in->stream_held == RTO_YES &&
		(in->lending_ok != RTO_YES || (in->flags & RTO_F_TEARDOWN)));
}

/* The sanitizer's callbacks were given: they work on the caller only, whatever the policy. */
static inline int decide_callbacks(const struct rto_decide_in *in)
{
	return (in->how & RTO_CALL_CALLBACKS) && (in->flags & RTO_F_CALLBACKS) &&
	       in->callbacks_here;
}

/* A question asked on the way: may it be asked now? */
static inline const char *decide_check_ask(const struct rto_decide_in *in, int need)
{
	int byfd = (in->flags & RTO_F_BYFD) || (in->how & RTO_CALL_BYFD);
	if (need == RTO_NEED_SELF)
		return in->self_known ? "the thread's state is asked for once" : NULL;
	if (in->sigsys && need == RTO_NEED_HELPERS)
		return "a SIGSYS handler never starts helpers";
	if ((in->strict || in->own_ctx) && need == RTO_NEED_HELPERS)
		return "a thread that may not hand work off never starts helpers";
	if (in->queue && need == RTO_NEED_HELPERS)
		return in->helpers == RTO_HELPERS_READY || in->helpers == RTO_HELPERS_FAILED
			       ? "helpers known to run or to have failed are not asked for again"
			       : NULL;
	if (in->queue)
		return (need == RTO_NEED_ASYNC_PATH && in->async_paths &&
			in->handling != RTO_ASYNC) ||
				       need == RTO_NEED_FD_KERNEL
			       ? NULL
			       : "the async question asks only whether the file is under "
				 "async_path=, whether it is a kernel interface's, and for helpers";
	if (need == RTO_NEED_ASYNC_PATH || need == RTO_NEED_FD_KERNEL)
		return "only the async question asks about async_path= and kernel files";
	if (in->flags & RTO_F_INTERNAL)
		return need == RTO_NEED_HELPERS ? NULL
						: "the library's own request asks only for helpers";
	if (need == RTO_NEED_FD) {
		if (!byfd || in->handling != RTO_OFFLOAD)
			return "only an offload row decided by its descriptor asks about it";
		if (in->sigsys && in->helpers != RTO_HELPERS_READY && !in->strict)
			return "a SIGSYS handler with no helper asks no descriptor's class";
	}
	if (need == RTO_NEED_BUFFER)
		return decide_buffered_read(in) && in->stream_held != RTO_UNASKED
			       ? NULL
			       : "only a buffered stream read asks about its buffer, under its "
				 "lock";
	if (need == RTO_NEED_STREAM && decide_buffered_read(in))
		return NULL; /* its buffer is looked at under the lock, whatever the thread */
	if ((need == RTO_NEED_PATH || need == RTO_NEED_STREAM) &&
	    (in->helpers != RTO_HELPERS_READY || in->strict || in->own_ctx))
		return "the path and the stream are looked at only on the way to a helper";
	if (need == RTO_NEED_PATH && !(in->how & RTO_CALL_PATH))
		return "only a call with a path asks about it";
	if (need == RTO_NEED_STREAM && !in->stream)
		return "only a call on a stream asks about its lock";
	return NULL;
}

/* The verdict for the input, every question answered. */
static inline const char *decide_check_verdict(const struct rto_decide_in *in, int v)
{
	int run = v & RTO_VERDICT_MASK;
	int cb = decide_callbacks(in);
	int offloads = in->handling == RTO_OFFLOAD || in->handling == RTO_ASYNC;

	if (v & ~(RTO_VERDICT_MASK | RTO_WHY_WARN))
		return "a verdict is a run and reasons, nothing else";
	if (run > RTO_RUN_FALLBACK)
		return "every question answered, the decision is made";
	if (in->strict &&
	    (run == RTO_RUN_OFFLOAD || run == RTO_RUN_FALLBACK || run == RTO_RUN_ASYNC))
		return "strict: nothing leaves the thread, and nothing falls back";
	if (in->own_ctx && !in->strict && run != RTO_RUN_LOCAL &&
	    (in->handling != RTO_STRICT || in->queue || (in->flags & RTO_F_INTERNAL)))
		return "a thread with a kernel context of its own runs its calls itself";
	if (in->queue) {
		int wanted =
			in->handling == RTO_ASYNC || (in->async_paths && in->fd_async == RTO_YES);
		if ((run == RTO_RUN_ASYNC) != (wanted && in->fd_kernel != RTO_YES && !in->strict &&
					       !in->own_ctx && in->helpers == RTO_HELPERS_READY))
			return "queued: an async row or a file under async_path=, not a kernel "
			       "interface's, from a thread that may hand off, with a helper to "
			       "write it";
		return NULL;
	}
	if (run == RTO_RUN_ASYNC)
		return "only the async question queues";
	if (in->flags & RTO_F_INTERNAL) {
		int want = in->strict			      ? RTO_RUN_REFUSE
			   : in->own_ctx		      ? RTO_RUN_LOCAL
			   : in->helpers == RTO_HELPERS_READY ? RTO_RUN_OFFLOAD
							      : RTO_RUN_FALLBACK;
		return v == want ? NULL
				 : "the library's own request is a helper's, never a policy's";
	}
	if ((v & RTO_WHY_WARN) != (in->handling == RTO_WARN && !cb ? RTO_WHY_WARN : 0))
		return "warn: run on the caller and reported; nothing else is reported as warn";
	if (cb && run != RTO_RUN_LOCAL)
		return "callbacks a sanitizer wrapped run on the caller";
	if ((in->handling == RTO_LOCAL || in->handling == RTO_WARN) && run != RTO_RUN_LOCAL)
		return "local and warn rows run on the caller";
	if (in->handling == RTO_STRICT && !cb && run != RTO_RUN_REFUSE)
		return "a strict row is refused";
	if (run == RTO_RUN_REFUSE && !in->strict && in->handling != RTO_STRICT)
		return "only strict refuses";
	if (in->strict && offloads && !cb && !decide_short(in) && run != RTO_RUN_REFUSE)
		return "strict: a call that is not short is refused, wherever it would run";
	if (in->strict && offloads && !cb && decide_short(in) && run != RTO_RUN_LOCAL)
		return "strict: a call short with its arguments or descriptor runs on the caller";
	if (run == RTO_RUN_OFFLOAD &&
	    (!offloads || cb || decide_local_reason(in) || in->helpers != RTO_HELPERS_READY))
		return "offloaded: an offload row, no reason to stay, helpers up";
	if (run == RTO_RUN_FALLBACK && (!offloads || cb || in->helpers == RTO_HELPERS_READY ||
					(in->helpers != RTO_HELPERS_FAILED && !in->sigsys)))
		return "fallback: no helper could start, or a signal handler found none";
	if (!in->strict && !in->own_ctx && offloads && !cb && !decide_local_reason(in) &&
	    run != (in->helpers == RTO_HELPERS_READY ? RTO_RUN_OFFLOAD : RTO_RUN_FALLBACK))
		return "an offload call with no reason to stay goes to a helper";
	return NULL;
}

/*
 * Ask rto_decide() about *in, answering its questions from fact_bits, and
 * check every step.  *v: the verdict.  NULL, or the broken rule.
 */
static inline const char *rto_decide_walk(struct rto_decide_in *in, unsigned fact_bits, int *v)
{
	unsigned asked = 0;

	for (int step = 0;; step++) {
		struct rto_decide_in copy = *in;
		int need = rto_decide(in);
		if (rto_decide(&copy) != need || memcmp(&copy, in, sizeof(copy)) != 0)
			return "the decision is pure: same input, same answer, input untouched";
		if (need <= RTO_RUN_FALLBACK || (need & RTO_WHY_WARN)) {
			*v = need;
			return decide_check_verdict(in, need);
		}
		if (step > FACT_COUNT || (asked & (1u << need)))
			return "each fact is asked for once";
		asked |= 1u << need;
		const char *why = decide_check_ask(in, need);
		if (why)
			return why;
		switch (need) {
		case RTO_NEED_FD:
			in->fd_local = decide_yes(fact_bits, FACT_FD);
			break;
		case RTO_NEED_HELPERS:
			in->helpers = decide_yes(fact_bits, FACT_HELPERS_UP) == RTO_YES
					      ? RTO_HELPERS_READY
					      : RTO_HELPERS_FAILED;
			break;
		case RTO_NEED_PATH:
			in->path_self = decide_yes(fact_bits, FACT_PATH_SELF);
			break;
		case RTO_NEED_STREAM:
			in->stream_held = decide_yes(fact_bits, FACT_HELD);
			in->lending_ok = in->stream_held == RTO_YES
						 ? decide_yes(fact_bits, FACT_LENDING)
						 : RTO_NO;
			break;
		case RTO_NEED_ASYNC_PATH:
			in->fd_async = decide_yes(fact_bits, FACT_ASYNC_PATH);
			break;
		case RTO_NEED_BUFFER:
			in->buffered = decide_yes(fact_bits, FACT_BUFFERED);
			break;
		case RTO_NEED_FD_KERNEL:
			in->fd_kernel = decide_yes(fact_bits, FACT_KERNEL);
			break;
		case RTO_NEED_SELF:
			in->self_known = 1;
			in->strict = (fact_bits >> FACT_STRICT) & 1;
			in->own_ctx = (fact_bits >> FACT_OWN_CTX) & 1;
			break;
		default:
			*v = need;
			return "no such answer";
		}
	}
}

#endif /* RTO_TEST_DECIDE_RULES_H */
