/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* live.c: the live view's segment, kept current for rtoffload stat/top. */
#ifndef RTO_LIVE_H
#define RTO_LIVE_H

#include "rto_base.h"

/* The helpers started on cpus (workers of them): start the publisher. */
RTO_HIDDEN void rto_live_start(const cpu_set_t *cpus, unsigned workers);
/* Exit: the segment goes (only this process's, not a parent's). */
RTO_HIDDEN void rto_live_at_exit(void);

#endif /* RTO_LIVE_H */
