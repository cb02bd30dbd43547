/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * self.c: the calling thread's mode and whether it is a helper.
 *
 * Concurrency: Caller's path: yes (TLS reads only).
 */
#ifndef RTO_SELF_H
#define RTO_SELF_H

#include "rto_base.h"

/* self.c: the calling thread's mode: its own, else the mode= option. */
RTO_HIDDEN int rto_thread_mode(void);
/* self.c: the calling thread is one of our helpers (set by helper.c on itself). */
RTO_HIDDEN int rto_helper_is_self(void);
RTO_HIDDEN void rto_helper_set_self(void);

#endif /* RTO_SELF_H */
