/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * dns_state.c: a DNS call's worker takes the caller's resolver state.
 *
 * Concurrency: rto_resolver_of_caller() on the caller's path (a TLS address); the rest
 * on the worker, while the caller waits.
 */
#ifndef RTO_DNS_STATE_H
#define RTO_DNS_STATE_H

#include "rto_base.h"

/* dns_state.c: the caller's resolver state (_res) moves to the worker for a DNS call. */
struct __res_state;
RTO_HIDDEN void *rto_resolver_of_caller(void);
RTO_HIDDEN void rto_resolver_take(void *caller, struct __res_state *own);
RTO_HIDDEN void rto_resolver_give_back(void *caller, const struct __res_state *own);

#endif /* RTO_DNS_STATE_H */
