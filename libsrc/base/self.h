/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * self.c: whether the calling thread is a helper, and mode= (the thread's
 * mode is read inline: rto_thread_mode(), rto_fast.h).
 *
 * Concurrency: Caller's path: yes (TLS reads only; rto_mode_default is
 * set by rto_self_configure before any thread is marked).
 */
#ifndef RTO_SELF_H
#define RTO_SELF_H

#include "rto_base.h"

/* self.c: the calling thread is one of our helpers (set by helper.c on itself). */
RTO_HIDDEN int rto_helper_is_self(void);
struct rto_options;
/* mode= into rto_mode_default (rto_fast.h), at load. */
RTO_HIDDEN void rto_self_configure(const struct rto_options *o);
RTO_HIDDEN void rto_helper_set_self(void);

#endif /* RTO_SELF_H */
