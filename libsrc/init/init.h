/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * init.c: the constructor.
 *
 * Concurrency: rto_init_once() runs the load-time setup once, on the
 * loading thread, before the program's constructors (or earlier, from a
 * mark made in a constructor that ran before ours: mark_api.c).  It is
 * not locked: only one thread runs at load, and every other thread is
 * started after it (pthread_create orders its stores before them).  What
 * it sets (options, the real functions, the queue mapping, the hooks
 * between modules) is read-only afterwards.  The destructor runs on the
 * exiting thread, with the helpers still alive.
 */
#ifndef RTO_INIT_H
#define RTO_INIT_H

#include "rto_base.h"

/* init.c: what the constructor does, for a mark that comes before it. */
RTO_HIDDEN void rto_init_once(void);

#endif /* RTO_INIT_H */
