/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Caller side of an offload.  Realtime code: the request lives on the
 * caller's stack, enqueue is wait-free, the only syscalls are FUTEX_WAKE
 * (only when every worker sleeps) and FUTEX_WAIT (only after spin_ns).
 */
#include "rto.h"

#include <errno.h>

static void wake_worker(struct rto_queue *q)
{
	uatomic_inc(&q->wake_seq);
	rto_futex_wake(&q->wake_seq, 1);
}

static void wake_worker_if_all_asleep(struct rto_queue *q)
{
	/*
	 * cds_wfcq_enqueue() published the request with uatomic_xchg(), a full
	 * barrier, so this load comes after it.  A worker about to sleep does
	 * sleepers++, awake--, then re-checks the queue (full barriers too):
	 * either it sees our request or we see that nobody is awake.
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
	/*
	 * Each turn sleeps until DONE or a signal.  A handler without SA_RESTART
	 * that ran here would have ended the call with EINTR: interrupt the
	 * worker every millisecond until the call returns (signals.c).
	 */
	int interrupting = 0;
	while (!done(r)) {
		int sig = rto_self.signal_seen;
		if (RTO_UNLIKELY(sig) && !interrupting) {
			rto_self.signal_seen = 0;
			interrupting = rto_signal_interrupts(sig);
		}
		if (RTO_UNLIKELY(interrupting)) {
			rto_signal_interrupt_worker(r);
			rto_futex_wait_ns(&r->state, RTO_REQ_WAITING, 1000000);
		} else {
			rto_futex_wait(&r->state, RTO_REQ_WAITING);
		}
	}
}

void rto_offload(struct rto_req *r, uint64_t t0)
{
	struct rto_queue *q = rto_q;

	r->err = errno;
	r->state = RTO_REQ_PENDING;
	rto_self.signal_seen = 0; /* only a handler that runs during this call counts */
	cds_wfcq_node_init(&r->node);
	cds_wfcq_enqueue(&q->head, &q->tail, &r->node);
	wake_worker_if_all_asleep(q);
	if (!spin_until_done(r, t0))
		sleep_until_done(q, r);
}

void rto_offload_async(struct rto_req *r)
{
	struct rto_queue *q = rto_q;

	cds_wfcq_node_init(&r->node);
	cds_wfcq_enqueue(&q->head, &q->tail, &r->node);
	wake_worker_if_all_asleep(q);
}
