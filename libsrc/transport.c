/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Caller side of an offload.  Realtime code: the request lives on the
 * caller's stack, enqueue is wait-free, the only syscalls are FUTEX_WAKE
 * (only when every worker sleeps) and FUTEX_WAIT (only after spin_ns).
 */
#include "options_load.h"
#include "rto_fast.h"
#include "fn.h"
#include "callsite.h"
#include "transport.h"
#include "signals.h"
#include "futex.h"
#include "route_state.h"

#include <errno.h>
#include <pthread.h>

static void wake_worker(struct rto_queue *q)
{
	uatomic_inc(&q->wake_seq);
	rto_futex_wake(&q->wake_seq, 1);
}

static void wake_worker_if_all_asleep(struct rto_queue *q)
{
	/*
	 * awake == 0 is the NEED_WAKEUP flag (io_uring SQPOLL): workers that
	 * poll, including one polling a predicted window (helper.c), count as
	 * awake, so a periodic caller served in its window makes no syscall.
	 * cds_wfcq_enqueue() published the request with uatomic_xchg(), a full
	 * barrier, so this load comes after it.  A worker about to sleep, timed
	 * nap or not, does sleepers++, awake--, then re-checks the queue (full
	 * barriers too): either it sees our request or we see that nobody is
	 * awake.
	 */
	if (CMM_LOAD_SHARED(q->awake) == 0)
		wake_worker(q);
}

static int done(struct rto_req *r)
{
	if (CMM_LOAD_SHARED(r->state) != RTO_REQ_DONE)
		return 0;
	cmm_smp_rmb(); /* pairs with the worker's xchg: the result is visible */
	return 1;
}

/* Spin up to spin_ns; the clock is read every 64 polls to keep it cheap. */
static int spin_until_done(struct rto_req *r, uint64_t t0)
{
	uint64_t deadline = t0 + rto_opt.spin_ns;

	do {
		for (int i = 0; i < 64; i++) {
			if (done(r))
				return 1;
			caa_cpu_relax();
		}
	} while (rto_now_ns() < deadline);
	return done(r);
}

/*
 * Make the worker running r give up a blocking call: RTO_SIG_INTERRUPT ends
 * it with EINTR.  The signal must never reach the worker once it has moved
 * on to another request, whose call it would break: KICKING holds the
 * worker's publish back while tgkill runs, and KICKED tells the worker to
 * take the (then surely pending) signal before its next call.
 */
static void kick(struct rto_req *r)
{
	uint32_t s = CMM_LOAD_SHARED(r->state);

	if (s == RTO_REQ_DONE || uatomic_cmpxchg(&r->state, s, RTO_REQ_KICKING) != s)
		return;
	rto_signal_kick(rto_helper_running(r)); /* 0: not taken yet, kick again later */
	uatomic_xchg(&r->state, RTO_REQ_KICKED);
}

/* Sleep until r's state is no longer `seen` (or ns passed, if not 0). */
static void wait_state(struct rto_req *r, uint32_t seen, long ns, int cancellable)
{
	int type = PTHREAD_CANCEL_DEFERRED;

	/*
	 * A cancellation point: pthread_cancel() must reach us here, as it
	 * would reach the call's own system call.  glibc's cancellable system
	 * calls do the same: asynchronous cancellation around the syscall
	 * only (and a cancellation already pending acts at once).
	 */
	if (cancellable)
		pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &type);
	if (ns)
		rto_futex_wait_ns(&r->state, seen, ns);
	else
		rto_futex_wait(&r->state, seen);
	if (cancellable)
		pthread_setcanceltype(type, NULL);
}

/*
 * Each turn sleeps until DONE or a signal.  A handler without SA_RESTART
 * that ran here would have ended the call with EINTR: kick the worker
 * every millisecond until the call returns (a call that does not sleep
 * interruptibly just finishes).
 */
static void wait_loop(struct rto_req *r, int cancellable)
{
	int interrupting = 0;

	while (!done(r)) {
		int sig = rto_self.signal_seen;
		if (RTO_UNLIKELY(sig) && !interrupting) {
			rto_self.signal_seen = 0;
			interrupting = rto_signal_interrupts(sig);
		}
		if (RTO_UNLIKELY(interrupting))
			kick(r);
		uint32_t s = CMM_LOAD_SHARED(r->state);
		if (s == RTO_REQ_WAITING || s == RTO_REQ_KICKED)
			wait_state(r, s, interrupting ? 1000000 : 0, cancellable);
	}
}

/*
 * Cancelled while waiting: r is on the stack being unwound, so the worker
 * must be done with it before the unwinding goes on.  Kick it out of a
 * blocking call (as cancellation would have ended the call's own system
 * call) and wait, every millisecond, until it publishes.
 */
static void abandon(void *arg)
{
	struct rto_req *r = arg;

	while (!done(r)) {
		kick(r);
		uint32_t s = CMM_LOAD_SHARED(r->state);
		if (s == RTO_REQ_WAITING || s == RTO_REQ_KICKED)
			rto_futex_wait_ns(&r->state, s, 1000000);
	}
	rto_route_resume(r->route);
}

static void sleep_until_done(struct rto_queue *q, struct rto_req *r)
{
	/*
	 * Not served within spin_ns: the awake workers may all be inside long
	 * calls (a blocking read, getaddrinfo).  Wake a sleeper to take ours;
	 * if it finds nothing it goes back to sleep.  We are about to sleep
	 * anyway, so this costs the hot path nothing.
	 */
	if (CMM_LOAD_SHARED(q->sleepers) > 0)
		wake_worker(q);
	/* Tell the worker we sleep; if it finished meanwhile, do not. */
	if (uatomic_cmpxchg(&r->state, RTO_REQ_PENDING, RTO_REQ_WAITING) == RTO_REQ_DONE) {
		cmm_smp_rmb();
		return;
	}
	if (!(r->fn->flags & RTO_F_CANCEL)) {
		wait_loop(r, 0);
		return;
	}
	pthread_cleanup_push(abandon, r);
	wait_loop(r, 1);
	pthread_cleanup_pop(0);
}

void rto_offload(struct rto_req *r, uint64_t t0)
{
	struct rto_queue *q = rto_q;

	r->err = errno;
	r->state = RTO_REQ_PENDING;
	r->t0 = (uint32_t)t0; /* the helpers learn this thread's rhythm from it (predict.c) */
	r->key = rto_req_key(&rto_self); /* initial-exec TLS: an offset from the thread pointer */
	rto_self.signal_seen = 0;	 /* only a handler that runs during this call counts */
	cds_wfcq_node_init(&r->node);
	cds_wfcq_enqueue(&q->head, &q->tail, &r->node);
	wake_worker_if_all_asleep(q);
	if (!spin_until_done(r, t0))
		sleep_until_done(q, r);
}

void rto_offload_async(struct rto_req *r)
{
	struct rto_queue *q = rto_q;

	/* Queued again and again (async.c): an enqueuer behind it stored its next atomically. */
	CMM_STORE_SHARED(r->node.next, NULL);
	r->key = 0; /* a notice of the library's, not a thread's rhythm (predict.c) */
	r->t0 = 0;
	cds_wfcq_enqueue(&q->head, &q->tail, &r->node);
	wake_worker_if_all_asleep(q);
}
