/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer target for the decision (libsrc/core/decide.h's rto_decide()): the
 * input's bytes are a struct rto_decide_in, field by field and any value,
 * not only the ones the library passes (a handling past the enum, flag
 * bits no row has, facts already answered), and the answers to the
 * questions the decision asks.  Checked at every step, as the table test
 * checks every combination of the values the library passes
 * (tests/routing/test_decide.c, the same rules: decide_rules.h):
 *
 *   it ends: each fact is asked for once, then a verdict;
 *   pure: the same input gives the same answer and is left untouched;
 *   strict never runs a call on a helper, never queues it, never falls back;
 *   a SIGSYS handler's input never asks for helpers to be started;
 *   for the values the library passes, every documented rule holds.
 *
 * Build and run: tests/fuzz/run_fuzz.sh [seconds] (every target).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decide_rules.h"

#define CHECK(cond, what)                                                   \
	do {                                                                \
		if (!(cond)) {                                              \
			fprintf(stderr, "fuzz_decide: broken: %s\n", what); \
			abort();                                            \
		}                                                           \
	} while (0)

/* The input's values, as the library makes them: 0/1 flags, facts within enum rto_fact. */
static int library_values(const struct rto_decide_in *in)
{
	return in->handling <= RTO_ASYNC && in->helpers <= RTO_HELPERS_FAILED && in->stream <= 1 &&
	       in->queue <= 1 && in->sigsys <= 1 && in->strict <= 1 && in->own_ctx <= 1 &&
	       in->self_known <= 1 && (in->self_known || (!in->strict && !in->own_ctx)) &&
	       !(in->sigsys && in->helpers == RTO_HELPERS_UNASKED) && in->children_caller <= 1 &&
	       in->async_paths <= 1 && in->callbacks_here <= 1 && in->first_done <= 1 &&
	       in->fd_local == RTO_UNASKED && in->fd_async == RTO_UNASKED &&
	       in->path_self == RTO_UNASKED && in->stream_held == RTO_UNASKED &&
	       in->lending_ok == RTO_UNASKED && in->buffered == RTO_UNASKED &&
	       in->fd_kernel == RTO_UNASKED && !(in->flags & ~(unsigned)(RTO_F_SPAWN * 2 - 1));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rto_decide_in in;
	unsigned facts = 0;

	if (size < sizeof(in))
		return 0;
	memcpy(&in, data, sizeof(in));
	if (size > sizeof(in)) /* the answers: two bytes, FACT_COUNT bits */
		facts = data[sizeof(in)];
	if (size > sizeof(in) + 1)
		facts |= (unsigned)data[sizeof(in) + 1] << 8;
	int documented = library_values(&in);
	int sigsys = in.sigsys;
	unsigned asked = 0;
	int v;

	for (int step = 0;; step++) {
		struct rto_decide_in copy = in;
		v = rto_decide(&in);
		CHECK(rto_decide(&copy) == v && memcmp(&copy, &in, sizeof(in)) == 0,
		      "the decision is pure");
		if (v <= RTO_RUN_FALLBACK || (v & RTO_WHY_WARN))
			break;
		CHECK(step <= FACT_COUNT && v <= RTO_NEED_FD_KERNEL && !(asked & (1u << v)),
		      "each fact is asked for once, then a verdict");
		asked |= 1u << v;
		CHECK(!(sigsys && v == RTO_NEED_HELPERS), "a SIGSYS handler never starts helpers");
		CHECK(!(in.self_known && in.strict && v == RTO_NEED_HELPERS),
		      "a strict thread never starts helpers");
		if (documented) {
			const char *why = decide_check_ask(&in, v);
			CHECK(why == NULL, why);
		}
		switch (v) {
		case RTO_NEED_FD:
			in.fd_local = decide_yes(facts, FACT_FD);
			break;
		case RTO_NEED_HELPERS:
			in.helpers = (facts >> FACT_HELPERS_UP) & 1 ? RTO_HELPERS_READY
								    : RTO_HELPERS_FAILED;
			break;
		case RTO_NEED_PATH:
			in.path_self = decide_yes(facts, FACT_PATH_SELF);
			break;
		case RTO_NEED_STREAM:
			in.stream_held = decide_yes(facts, FACT_HELD);
			in.lending_ok = decide_yes(facts, FACT_LENDING);
			break;
		case RTO_NEED_ASYNC_PATH:
			in.fd_async = decide_yes(facts, FACT_ASYNC_PATH);
			break;
		case RTO_NEED_BUFFER:
			in.buffered = decide_yes(facts, FACT_BUFFERED);
			break;
		case RTO_NEED_FD_KERNEL:
			in.fd_kernel = decide_yes(facts, FACT_KERNEL);
			break;
		case RTO_NEED_SELF:
			in.self_known = 1;
			in.strict = (facts >> FACT_STRICT) & 1;
			in.own_ctx = (facts >> FACT_OWN_CTX) & 1;
			break;
		}
	}
	int run = v & RTO_VERDICT_MASK;
	CHECK(!(in.strict &&
		(run == RTO_RUN_OFFLOAD || run == RTO_RUN_ASYNC || run == RTO_RUN_FALLBACK)),
	      "strict: nothing leaves the thread, nothing falls back");
	CHECK(!(run == RTO_RUN_ASYNC && !in.queue), "only the async question queues");
	if (documented) {
		const char *why = decide_check_verdict(&in, v);
		CHECK(why == NULL, why);
	}
	return 0;
}
