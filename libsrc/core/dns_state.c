/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The resolver state travels with the DNS calls.  glibc keeps it per
 * thread (_res, that is *__res_state()): a program that changed its own
 * (res_init(), then _res.nsaddr_list, options, retry...) expects its
 * lookups to follow it, and its h_errno to be its own (route.c carries
 * that).  While a marked thread waits for its DNS call, the worker takes
 * the caller's state in place of its own and gives it back after the call,
 * changes included (a reload of resolv.conf, a reopened TCP socket): the
 * state moves, it is never used by two threads at once.  A caller whose
 * state was never initialised needs nothing: the worker's own is the same
 * defaults, read from the same resolv.conf.
 */
#include "dns_state.h"

#include <resolv.h>

/* Caller side, no system call: its state when a DNS call must carry it. */
void *rto_resolver_of_caller(void)
{
	struct __res_state *res = __res_state(); /* a TLS address */

	return (res->options & RES_INIT) ? res : NULL;
}

/* Worker side, around the call: *own keeps the worker's state meanwhile. */
void rto_resolver_take(void *caller, struct __res_state *own)
{
	struct __res_state *mine = __res_state();

	*own = *mine;
	*mine = *(struct __res_state *)caller;
}

void rto_resolver_give_back(void *caller, const struct __res_state *own)
{
	struct __res_state *mine = __res_state();

	*(struct __res_state *)caller = *mine;
	*mine = *own;
}
