/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The calling thread's own state (rto_self, initial-exec TLS) and what is
 * read from it everywhere: whether it is one of our helpers (its mode and
 * its part of a decision are inline, self.h: the marked path reads them).
 * The bottom of the per-thread layer: every module reads it, it calls none.
 */
#include "rto_fast.h"
#include "options.h"
#include "self.h"

__thread struct rto_thread rto_self RTO_TLS;

int rto_mode_default; /* RT_OFFLOAD_MODE_OFFLOAD until configured: 0 */

void rto_self_configure(const struct rto_options *o)
{
	rto_mode_default = o->mode;
}

/* Set once by a helper on itself (helper.c), before it serves a call. */
static __thread int rto_is_helper RTO_TLS;

int rto_helper_is_self(void)
{
	return rto_is_helper;
}

void rto_helper_set_self(void)
{
	rto_is_helper = 1;
}
