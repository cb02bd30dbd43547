/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libsrc/core/decide.h's rto_decide() as a table: every handling (the row's or
 * a policy's) x every flag and argument hint that matters to it x every
 * thread state (strict or not, a kernel context of its own or not, known
 * or asked for, the SIGSYS handler or a wrapper, helpers not looked at,
 * down, up or failed) x the options
 * that matter (children=, async_path=) x the cheap facts x both questions
 * (how to run, whether to queue), with every answer to every question the
 * decision asks.  Each verdict and each question is checked against the
 * documented rules (decide_rules.h), not against a second copy of the
 * decision.  White box: the header compiled in, no library.
 */
#include "decide_rules.h"

#include <criterion/criterion.h>
#include <stdio.h>

static const unsigned short flag_bits[] = {RTO_F_BYFD,	  RTO_F_FIRST,	   RTO_F_CALLER,
					   RTO_F_SPAWN,	  RTO_F_CALLBACKS, RTO_F_TEARDOWN,
					   RTO_F_INTERNAL};
static const unsigned char how_bits[] = {RTO_CALL_BYFD, RTO_CALL_SHORT,	 RTO_CALL_CALLBACKS,
					 RTO_CALL_PATH, RTO_CALL_OWNMEM, RTO_CALL_BUFFERED};
#define NFLAGS (sizeof(flag_bits) / sizeof(flag_bits[0]))
#define NHOW   (sizeof(how_bits) / sizeof(how_bits[0]))

static unsigned long walks, leaves;

/* The input's questions answered every way: each answer is a leaf checked on its own. */
static void explore(const struct rto_decide_in *in, unsigned asked)
{
	struct rto_decide_in copy = *in;
	int v = rto_decide(&copy);

	cr_assert(rto_decide(&copy) == v && memcmp(&copy, in, sizeof(copy)) == 0,
		  "the decision is pure");
	if (v <= RTO_RUN_FALLBACK || (v & RTO_WHY_WARN)) {
		const char *why = decide_check_verdict(in, v);
		leaves++;
		cr_assert(why == NULL,
			  "%s: handling %d flags %#x how %#x strict %d own %d sigsys %d helpers %d "
			  "queue %d stream %d cc %d ap %d cb %d first %d fd %d path %d held %d "
			  "lend %d async %d buffered %d kernel %d -> %#x",
			  why, in->handling, in->flags, in->how, in->strict, in->own_ctx,
			  in->sigsys, in->helpers, in->queue, in->stream, in->children_caller,
			  in->async_paths, in->callbacks_here, in->first_done, in->fd_local,
			  in->path_self, in->stream_held, in->lending_ok, in->fd_async,
			  in->buffered, in->fd_kernel, v);
		return;
	}
	cr_assert(!(asked & (1u << v)), "fact %d asked twice (flags %#x how %#x)", v, in->flags,
		  in->how);
	const char *why = decide_check_ask(in, v);
	cr_assert(why == NULL, "%s: asked %d, handling %d flags %#x how %#x strict %d sigsys %d",
		  why, v, in->handling, in->flags, in->how, in->strict, in->sigsys);
	if (v == RTO_NEED_SELF) {
		for (int state = 0; state < 4; state++) {
			struct rto_decide_in next = *in;
			next.self_known = 1;
			next.strict = state & 1;
			next.own_ctx = state >> 1;
			explore(&next, asked | (1u << v));
		}
		return;
	}
	for (int yes = 0; yes < 2; yes++) {
		struct rto_decide_in next = *in;
		unsigned char fact = yes ? RTO_YES : RTO_NO;
		switch (v) {
		case RTO_NEED_FD:
			next.fd_local = fact;
			break;
		case RTO_NEED_HELPERS:
			next.helpers = yes ? RTO_HELPERS_READY : RTO_HELPERS_FAILED;
			break;
		case RTO_NEED_PATH:
			next.path_self = fact;
			break;
		case RTO_NEED_STREAM:
			next.stream_held = fact;
			for (int lend = 0; lend < 2 && yes; lend++) {
				next.lending_ok = lend ? RTO_YES : RTO_NO;
				explore(&next, asked | (1u << v));
			}
			if (yes)
				continue;
			next.lending_ok = RTO_NO;
			break;
		case RTO_NEED_ASYNC_PATH:
			next.fd_async = fact;
			break;
		case RTO_NEED_BUFFER:
			next.buffered = fact;
			break;
		case RTO_NEED_FD_KERNEL:
			next.fd_kernel = fact;
			break;
		default:
			cr_assert_fail("no such answer: %d", v);
		}
		explore(&next, asked | (1u << v));
	}
}

/*
 * Input number (f, h, t, helpers) of the table: 0 when it is not one the
 * library can pass (the fuzz target tries those too).
 */
static int make_input(struct rto_decide_in *in, int handling, int queue, unsigned f, unsigned h,
		      unsigned t, int helpers)
{
	*in = (struct rto_decide_in){.handling = (unsigned char)handling,
				     .queue = (unsigned char)queue,
				     .helpers = (unsigned char)helpers};
	for (unsigned k = 0; k < NFLAGS; k++)
		if (f & (1u << k))
			in->flags |= flag_bits[k];
	for (unsigned k = 0; k < NHOW; k++)
		if (h & (1u << k))
			in->how |= how_bits[k];
	in->strict = t & 1;
	in->own_ctx = (t >> 1) & 1;
	in->sigsys = (t >> 2) & 1;
	in->stream = (t >> 3) & 1;
	in->children_caller = (t >> 4) & 1;
	in->async_paths = (t >> 5) & 1;
	in->callbacks_here = (t >> 6) & 1;
	in->first_done = (t >> 7) & 1;
	in->self_known = (t >> 8) & 1;
	/* The thread's state is known, or asked for (then strict and own_ctx are not set). */
	if (!in->self_known && (in->strict || in->own_ctx))
		return 0;
	/* A fact about a flag the row has not is never learnt. */
	if ((in->children_caller && !(in->flags & RTO_F_SPAWN)) ||
	    (in->first_done && !(in->flags & RTO_F_FIRST)) ||
	    (in->callbacks_here &&
	     !((in->flags & RTO_F_CALLBACKS) && (in->how & RTO_CALL_CALLBACKS))))
		return 0;
	/* A SIGSYS handler says what the helpers are. */
	return !(in->sigsys && helpers == RTO_HELPERS_UNASKED);
}

/* Every combination for one handling and one question. */
static void table(int handling, int queue)
{
	struct rto_decide_in in;

	for (unsigned f = 0; f < 1u << NFLAGS; f++)
		for (unsigned h = 0; h < 1u << NHOW; h++)
			for (unsigned t = 0; t < 1u << 9; t++)
				for (int helpers = 0; helpers < 4; helpers++)
					if (make_input(&in, handling, queue, f, h, t, helpers)) {
						walks++;
						explore(&in, 0);
					}
}

static const char *const names[] = {"offload", "local", "strict", "warn", "async"};

#define HANDLING_TEST(h)                                                                    \
	Test(decide, h##_run)                                                               \
	{                                                                                   \
		table(RTO_##h, 0);                                                          \
		cr_log_info("%s: %lu inputs, %lu verdicts", names[RTO_##h], walks, leaves); \
		cr_assert(leaves >= walks);                                                 \
	}                                                                                   \
	Test(decide, h##_queue)                                                             \
	{                                                                                   \
		table(RTO_##h, 1);                                                          \
		cr_assert(leaves >= walks);                                                 \
	}

HANDLING_TEST(OFFLOAD)
HANDLING_TEST(LOCAL)
HANDLING_TEST(STRICT)
HANDLING_TEST(WARN)
HANDLING_TEST(ASYNC)

/* The cases the issue names, spelt out: each must come out as documented. */
Test(decide, named_cases)
{
	struct rto_decide_in in = {.handling = RTO_OFFLOAD,
				   .flags = RTO_F_BYFD,
				   .sigsys = 1,
				   .self_known = 1,
				   .helpers = RTO_HELPERS_DOWN};
	int v;

	/* A trapped write with no helper yet: no descriptor asked, no helper started. */
	cr_assert_eq(rto_decide(&in), RTO_RUN_FALLBACK);
	/* The same from a wrapper: the descriptor first. */
	in.sigsys = 0;
	cr_assert_eq(rto_decide(&in), RTO_NEED_FD);
	in.fd_local = RTO_NO;
	cr_assert_eq(rto_decide(&in), RTO_NEED_HELPERS);
	in.helpers = RTO_HELPERS_READY;
	cr_assert_eq(rto_decide(&in), RTO_RUN_OFFLOAD);
	/* Strict: refused, unless its descriptor is short. */
	in.strict = 1;
	cr_assert_eq(rto_decide(&in), RTO_RUN_REFUSE);
	in.fd_local = RTO_YES;
	cr_assert_eq(rto_decide(&in), RTO_RUN_LOCAL);
	/* An exec is refused by strict and never offloaded. */
	in = (struct rto_decide_in){
		.handling = RTO_OFFLOAD, .flags = RTO_F_CALLER, .self_known = 1, .strict = 1};
	cr_assert_eq(rto_decide(&in), RTO_RUN_REFUSE);
	in.strict = 0;
	cr_assert_eq(rto_decide(&in), RTO_RUN_LOCAL);
	/* An async row from a thread under its own seccomp filter: the call, not the ring. */
	in = (struct rto_decide_in){
		.handling = RTO_ASYNC, .queue = 1, .self_known = 1, .own_ctx = 1};
	v = rto_decide(&in);
	cr_assert_neq(v, RTO_RUN_ASYNC);
	in.own_ctx = 0;
	/* Not a kernel interface's file (/proc, /sys): a write there is a command, made now. */
	cr_assert_eq(rto_decide(&in), RTO_NEED_FD_KERNEL);
	in.fd_kernel = RTO_NO;
	/* Queued only with a helper to write it: started first, or the call is made. */
	cr_assert_eq(rto_decide(&in), RTO_NEED_HELPERS);
	in.helpers = RTO_HELPERS_FAILED;
	cr_assert_neq(rto_decide(&in), RTO_RUN_ASYNC);
	in.helpers = RTO_HELPERS_READY;
	cr_assert_eq(rto_decide(&in), RTO_RUN_ASYNC);
	in.fd_kernel = RTO_YES;
	cr_assert_eq(rto_decide(&in), RTO_RUN_LOCAL);
	/* warn: here, and said. */
	in = (struct rto_decide_in){.handling = RTO_WARN, .self_known = 1, .strict = 1};
	cr_assert_eq(rto_decide(&in), RTO_RUN_LOCAL | RTO_WHY_WARN);
}
