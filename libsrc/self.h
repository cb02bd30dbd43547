/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * self.c: the calling thread's mode, what it brings to a decision, and
 * whether it is a helper.
 *
 * Concurrency: Caller's path: yes (TLS reads only; rto_opt is set before
 * any thread is marked).
 */
#ifndef RTO_SELF_H
#define RTO_SELF_H

#include "rto_base.h"
#include "rto_fast.h"
#include "options_load.h"
#include "decide.h"

#include "rtoffload.h"

/* The calling thread's mode: its own, else the mode= option. */
static inline int rto_thread_mode(void)
{
	return rto_self.mode ? rto_self.mode - 1 : rto_opt.mode;
}

/* The calling thread's part of a decision's input (decide.h): strict, its own context. */
static inline __attribute__((always_inline)) void rto_decide_self(struct rto_decide_in *in)
{
	in->self_known = 1;
	in->strict = rto_thread_mode() == RT_OFFLOAD_MODE_STRICT;
	in->own_ctx = rto_self.own_ctx != 0;
}

/* self.c: the calling thread is one of our helpers (set by helper.c on itself). */
RTO_HIDDEN int rto_helper_is_self(void);
RTO_HIDDEN void rto_helper_set_self(void);

#endif /* RTO_SELF_H */
