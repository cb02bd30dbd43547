/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The route state of a thread (rto_self.route), and its transitions.
 *
 *          rto_route_mark()             rto_route_go_direct()
 *   DIRECT ----------------> MARKED ------------------------> BUSY
 *          <----------------        <------------------------
 *          rto_route_unmark()           rto_route_resume(was)
 *
 * DIRECT: unmarked, every wrapper calls libc (one TLS load and a branch).
 * MARKED: wrappers enter the routing core (route.c).
 * BUSY:   marked, but inside a stretch of the library's own work on this
 *         thread (waiting for an offload, starting helpers, unwinding a
 *         report, vfork, abort): wrapped calls made meanwhile, by a signal
 *         handler or by libc underneath us, run directly.
 *
 * Concurrency: only the thread itself writes its route, except mark=
 * marking another thread (automark.c), which moves it DIRECT <-> MARKED
 * with a compare-and-swap so that it never overwrites BUSY; the thread's own moves
 * into and out of BUSY are compare-and-swaps too, so that such an unmark is
 * never lost (and the exit report reads the byte of a running thread).  A
 * signal handler may unmark the thread while it is BUSY: resume() then
 * leaves it DIRECT.  Readers (the wrappers' rto_direct(), the backstop's
 * leave, the exit report) load the byte once, relaxed: a mark that comes
 * from another thread takes effect at the thread's next wrapped call.
 */
#ifndef RTO_ROUTE_STATE_H
#define RTO_ROUTE_STATE_H

#include "rto_fast.h"
#include "backstop.h"

/* rto_route_go_direct() and rto_route_resume(), on the offload path: rto_fast.h. */

/* The calling thread, by the API or by mark=: from now on its calls are routed. */
static inline void rto_route_mark(void)
{
	CMM_STORE_SHARED(rto_self.route, RTO_ROUTE_MARKED);
	if (RTO_UNLIKELY(rto_backstop_on))
		rto_backstop_marked_self(); /* last: from here on its system calls are decided */
}

/* The calling thread: its calls go to libc again. */
static inline void rto_route_unmark(void)
{
	rto_backstop_unmarked_self();
	CMM_STORE_SHARED(rto_self.route, RTO_ROUTE_DIRECT);
}

/* Another thread t (mark=), never overwriting its BUSY: see above. */
static inline void rto_route_mark_other(struct rto_thread *t, int on)
{
	if (on)
		uatomic_cmpxchg(&t->route, RTO_ROUTE_DIRECT, RTO_ROUTE_MARKED);
	else
		uatomic_cmpxchg(&t->route, RTO_ROUTE_MARKED, RTO_ROUTE_DIRECT);
}

#endif
