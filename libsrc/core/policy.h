/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * policy.c: policy= and policy_file=: handling per class or function.
 *
 * Concurrency: Applied at load, before any thread is marked; read-only afterwards.
 */
#ifndef RTO_POLICY_H
#define RTO_POLICY_H

#include "rto_base.h"

/* policy.c: does any call have the async handling (or async_path= some files)? */
RTO_HIDDEN int rto_policy_has_async(void);

/* policy.c: policy= and policy_file=, applied to the descriptors at load. */
struct rto_options;
RTO_HIDDEN void rto_policy_load(const struct rto_options *o);
/*
 * Apply one "name:handling" rule (name: a function or a class) to the
 * descriptors.  Returns 0, or -1 with a one-line reason in err.
 */
RTO_HIDDEN int rto_policy_rule(const char *rule, size_t n, char *err, size_t len);

#endif /* RTO_POLICY_H */
