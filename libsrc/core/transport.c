/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Caller side of an offload, and the marked threads' request slots.
 * Realtime code: the request lives on the caller's stack, and travels by
 * the thread's slot (transport.h) or the queue; the post and the enqueue
 * are wait-free, the only syscalls are FUTEX_WAKE
 * (only when every worker sleeps) and FUTEX_WAIT (only after spin_ns).
 *
 * The hand-off protocol here and in helper.c is model-checked by spin
 * (tests/model/handoff.pml): a change to it changes the model too.
 */
#include <sched.h>

#include "options.h"
#include "rto_fast.h"
#include "fn.h"
#include "callsite.h"
#include "transport.h"
#include "signals.h"
#include "futex.h"
#include "route_state.h"
#include "stall.h"
#include "self.h"
#include "helper.h"
#include "trace.h"

#include "rtoffload.h"

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>

/* ---- a marked thread's request slot (transport.h) ------------------------------------ */

/* Its address is the thread's mark in the slot it holds: unique among live threads. */
static __thread unsigned char slot_index RTO_TLS; /* 1 + its slot's index, 0: none */
/*
 * spin_ns=, stall_us=, on_stall=: copied once at load
 * (rto_transport_configure), read-only afterwards.
 */
static struct {
	uint64_t spin_ns;
	uint64_t stall_ns;  /* stall_us=, in ns; 0: none */
	int on_stall_local; /* on_stall=local */
} opt;

void rto_transport_configure(const struct rto_options *o)
{
	opt.spin_ns = o->spin_ns;
	opt.stall_ns = o->stall_us * 1000;
	opt.on_stall_local = o->on_stall == RTO_ON_STALL_LOCAL;
}

static pthread_key_t exit_key;

_Static_assert(offsetof(struct rto_req, post) == 0 && sizeof(uint64_t) == sizeof(void *),
	       "the post counter is the request's first word, the queue node's place");
_Static_assert(offsetof(struct rto_req, state) == offsetof(struct rto_req, fn) + sizeof(void *) &&
		       offsetof(struct rto_req, err) == offsetof(struct rto_req, state) + 4,
	       "a post copies fn, stores state, copies from err on");
#define BODY offsetof(struct rto_req, fn) /* what comes back after DONE: all but the counter */

static void release(void *slot)
{
	struct rto_slot *s = slot;

	/* The thread's last call is DONE: no worker touches the request any more. */
	CMM_STORE_SHARED(s->holder, NULL);
}

static int slots_usable; /* set at load: the key's setspecific allocates nothing */

void rto_slots_init(void)
{
	/*
	 * glibc keeps keys below 32 (PTHREAD_KEY_2NDLEVEL_SIZE) in the thread
	 * descriptor itself: their setspecific, on the caller's first
	 * offload, is a store.  A higher key may calloc: no slots then.
	 */
	slots_usable = pthread_key_create(&exit_key, release) == 0 && exit_key < 32;
}

/* Bounded: each failed try means another thread raised it. */
static void raise_nslots(struct rto_queue *q, uint32_t n)
{
	uint32_t cur = CMM_LOAD_SHARED(q->nslots);

	for (int i = 0; i < 8 && cur < n; i++) {
		uint32_t seen = uatomic_cmpxchg(&q->nslots, cur, n);
		if (seen == cur)
			return;
		cur = seen;
	}
}

static struct rto_slot *claim(struct rto_queue *q)
{
	const void *me = &slot_index;

	for (unsigned i = 0; i < RTO_SLOTS; i++) {
		struct rto_slot *s = &q->slots[i];
		if (CMM_LOAD_SHARED(s->holder) || uatomic_cmpxchg(&s->holder, NULL, me) != NULL)
			continue;
		slot_index = (unsigned char)(i + 1);
		raise_nslots(q, i + 1);
		/* Key below 32 (slots_usable): a store, no allocation, no system call. */
		pthread_setspecific(exit_key, s);
		return s;
	}
	return NULL;
}

struct rto_req *rto_slot_mine(struct rto_queue *q)
{
	unsigned i = slot_index;

	/* Still ours: a forked child's slots are all free (and its queue's page zeroed). */
	if (RTO_LIKELY(i) && CMM_LOAD_SHARED(q->slots[i - 1].holder) == &slot_index)
		return &q->slots[i - 1].req;
	struct rto_slot *s = slots_usable ? claim(q) : NULL;
	return s ? &s->req : NULL;
}

void rto_slot_post(struct rto_req *s, const struct rto_req *r)
{
	/* Only this thread posts here.  The priority travels in the counter's low byte. */
	uint64_t n = ((s->post >> 8) + 1) << 8 | r->prio;

	/*
	 * The state word apart, stored atomically: a worker last wrote it with
	 * a compare-and-swap (publish), and a plain store over an atomic one
	 * is a race to Helgrind even when ordered (helgrind_annot.h).
	 */
	s->fn = r->fn;
	CMM_STORE_SHARED(s->state, r->state);
	memcpy(&s->err, &r->err, sizeof(*r) - offsetof(struct rto_req, err));
	uatomic_xchg(&s->post, n); /* the request before the counter; a full barrier */
}

void rto_slot_collect(struct rto_req *r, const struct rto_req *s)
{
	memcpy((char *)r + BODY, (const char *)s + BODY, sizeof(*r) - BODY);
}

int rto_slots_posted(struct rto_queue *q)
{
	uint32_t n = CMM_LOAD_SHARED(q->nslots);

	for (uint32_t i = 0; i < n && i < RTO_SLOTS; i++)
		if (CMM_LOAD_SHARED(q->slots[i].req.post) != CMM_LOAD_SHARED(q->slot_seen[i]))
			return 1;
	return 0;
}

struct rto_req *rto_slot_take(struct rto_queue *q, int above)
{
	uint32_t n = CMM_LOAD_SHARED(q->nslots), start = CMM_LOAD_SHARED(q->next_look);
	struct rto_req *best = NULL;
	uint64_t best_seen = 0, best_post = 0;
	uint32_t at = 0;

	if (n > RTO_SLOTS)
		n = RTO_SLOTS;
	for (uint32_t k = 0; k < n; k++) {
		uint32_t i = (start + k) % n;
		struct rto_req *r = &q->slots[i].req;
		uint64_t seen = CMM_LOAD_SHARED(q->slot_seen[i]);
		/*
		 * Pairs with the poster's exchange: the request is there once the
		 * count is.  Nothing of it is read before the claim (its caller may
		 * be writing the next one into it): its priority is in the count.
		 */
		uint64_t post = CMM_LOAD_SHARED(r->post);
		int prio = (int)(post & 0xff);
		if (post == seen || prio <= above)
			continue;
		if (!best || prio > (int)(best_post & 0xff)) {
			best = r;
			best_seen = seen;
			best_post = post;
			at = i;
		}
	}
	/*
	 * The claim: the post cannot move on before a worker ran it, so the
	 * one exchange of seen for post that succeeds owns the request.
	 */
	if (!best || uatomic_cmpxchg(&q->slot_seen[at], best_seen, best_post) != best_seen)
		return NULL;
	CMM_STORE_SHARED(q->next_look, at + 1);
	return best;
}

int rto_slot_take_back(struct rto_queue *q, struct rto_req *s)
{
	unsigned i = (unsigned)((struct rto_slot *)(void *)s - q->slots);
	uint64_t post = CMM_LOAD_SHARED(s->post); /* our own: only we post here */
	uint64_t seen = CMM_LOAD_SHARED(q->slot_seen[i]);

	/* A worker's claim is this same exchange of seen for post: one of us wins. */
	return seen != post && uatomic_cmpxchg(&q->slot_seen[i], seen, post) == seen;
}

void rto_slots_counts(const struct rto_queue *q, unsigned *most, unsigned *held)
{
	uint32_t n = q ? CMM_LOAD_SHARED(q->nslots) : 0;

	*most = n;
	*held = 0;
	for (uint32_t i = 0; i < n && i < RTO_SLOTS; i++)
		*held += CMM_LOAD_SHARED(q->slots[i].holder) != NULL;
}

/* ---- the caller's side -------------------------------------------------------------- */

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
	RTO_TSAN_ACQUIRE(r);
	return 1;
}

/* Spin up to spin_ns; the clock is read every 64 polls to keep it cheap. */
static int spin_until_done(struct rto_req *r, uint64_t t0)
{
	uint64_t deadline = t0 + opt.spin_ns;

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
 * Which worker runs r (0: none yet).  A kick is rare (a signal or a
 * cancellation during a call), so the request carries no worker field in
 * its first line and the caller looks through the workers' rows instead;
 * each row is written by its own worker only and lies in a line of its own.
 */
static int worker_running(const struct rto_req *r)
{
	for (unsigned i = 0; i < RTO_WORKERS_MAX; i++)
		if (CMM_LOAD_SHARED(rto_q->running[i].req) == r)
			return CMM_LOAD_SHARED(rto_q->running[i].tid);
	return 0;
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
	rto_signal_kick(worker_running(r)); /* 0: not taken yet, kick again later */
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
 *
 * Stalls: the sleep before stall_at is a timed FUTEX_WAIT that ends there
 * instead of an untimed one, so a call served in time costs nothing more
 * (the kernel arms a timer it disarms at the wake).  Past stall_at the
 * call is noted for the watchdog (stall.c: it reads /proc, which we must
 * not), once; with on_stall=local a slot's post no worker has claimed
 * yet is taken back: returns 1, and the caller runs it.
 */
struct stall_watch {
	uint64_t at; /* 0: noted already, or no stall detection */
	uint64_t t0; /* the call's start */
	unsigned note;
	int may_take; /* on_stall=local, by a slot, not a strict thread */
};

static int stall_passed(struct rto_req *r, struct stall_watch *w, long *ns)
{
	uint64_t now = rto_now_ns();

	if (now < w->at) {
		long left = (long)(w->at - now);
		if (!*ns || left < *ns)
			*ns = left;
#ifdef __SANITIZE_THREAD__
		if (*ns > 1000000) /* rto_futex_wait's slices: a handler runs between them */
			*ns = 1000000;
#endif
		return 0;
	}
	w->at = 0;
	if (w->may_take && rto_slot_take_back(rto_q, r)) {
		rto_stall_taken_back();
		return 1;
	}
	w->note = rto_stall_note(r, r->fn, w->t0);
	return 0;
}

static int wait_loop(struct rto_req *r, int cancellable, struct stall_watch *stall)
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
		long ns = interrupting ? 1000000 : 0;
		if (stall->at && stall_passed(r, stall, &ns))
			return 1;
		uint32_t s = CMM_LOAD_SHARED(r->state);
		if (s == RTO_REQ_WAITING || s == RTO_REQ_KICKED)
			wait_state(r, s, ns, cancellable);
	}
	return 0;
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

static int sleep_until_done(struct rto_queue *q, struct rto_req *r, struct stall_watch *stall)
{
	int taken;

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
		RTO_TSAN_ACQUIRE(r);
		return 0;
	}
	if (!(r->fn->flags & RTO_F_CANCEL))
		return wait_loop(r, 0, stall);
	pthread_cleanup_push(abandon, r);
	taken = wait_loop(r, 1, stall);
	pthread_cleanup_pop(0);
	return taken;
}

/*
 * on_stall=local: the post r (our slot's) is ours again, and no worker
 * will read it.  Run it here as a worker would, but as ourselves: our
 * own signal mask, locale, stdio locks and resolver are already the
 * call's.  DONE first, so that a cancellation inside the call finds
 * nothing to wait for.  The call's nested wrapped calls go direct (the
 * route is, from route.c's offload()).
 */
static void resume_route(void *arg)
{
	rto_route_resume(((struct rto_req *)arg)->route);
}

static void run_taken_back(struct rto_req *r)
{
	CMM_STORE_SHARED(r->state, RTO_REQ_DONE);
	r->flags |= RTO_RQ_TAKEN;
	errno = r->err;
	/* Cancelled inside it: our route back, as abandon() does for a helper's call. */
	pthread_cleanup_push(resume_route, r);
	r->fn->run((r->flags & RTO_RQ_INLINE) ? (void *)r->inl : r->args);
	pthread_cleanup_pop(0);
	r->err = errno;
}

/* 1: cpu is one of the workers' (0 before they first start).  No system call, no lock. */
static int on_a_workers_cpu(const struct rto_queue *q, int cpu)
{
	if (cpu < 0 || !__atomic_load_n(&q->cpus_set, __ATOMIC_ACQUIRE))
		return 0;
	return CPU_ISSET(cpu, &q->cpus);
}

static void enqueue(struct rto_queue *q, struct rto_req *r)
{
	cds_wfcq_node_init(&r->node);
	RTO_TSAN_RELEASE(r);
	cds_wfcq_enqueue(&q->head, &q->tail, &r->node);
}

uint16_t rto_req_key(const void *tls)
{
	uintptr_t a = (uintptr_t)tls >> 6;
	uint16_t k = (uint16_t)(a ^ (a >> 16) ^ (a >> 32) ^ (a >> 48));
	return k ? k : 1;
}

void rto_offload(struct rto_req *r, uint64_t t0)
{
	struct rto_queue *q = rto_q;
	/* A marked thread's own call (not one of the library's on its behalf) goes by its slot. */
	struct rto_req *slot = r->route == RTO_ROUTE_MARKED ? rto_slot_mine(q) : NULL;

	r->err = errno;
	r->state = RTO_REQ_PENDING;
	r->t0 = (uint32_t)t0; /* the helpers learn this thread's rhythm from it (predict.c) */
	r->key = rto_req_key(&rto_self); /* initial-exec TLS: an offset from the thread pointer */
	rto_trace_request(r->fn, t0, r->key); /* trace=lttng: handed over */
	rto_self.signal_seen = 0;	      /* only a handler that runs during this call counts */
	/*
	 * On one of the workers' CPUs (an unpinned thread under mark=all, a
	 * one-CPU machine), a spin only keeps the worker that would answer off
	 * that CPU until the scheduler's slice ends: 70 us a call instead of 4.
	 * Sleep at once, and tell the worker not to poll after the call, which
	 * would keep us off it in turn.  sched_getcpu() reads glibc's rseq
	 * area (the vDSO without it): no system call.
	 */
	int here = on_a_workers_cpu(q, sched_getcpu());
	if (here)
		r->flags |= RTO_RQ_HERE;
	if (slot) {
		RTO_TSAN_RELEASE(slot);
		rto_slot_post(slot, r);
	} else {
		enqueue(q, r);
	}
	wake_worker_if_all_asleep(q);
	struct rto_req *w = slot ? slot : r; /* the request the worker runs */
	if (here || !spin_until_done(w, t0)) {
		/* Not a queued request: its node, on our stack, stays in the queue. */
		struct stall_watch stall = {
			.at = opt.stall_ns ? t0 + opt.stall_ns : 0,
			.t0 = t0,
			.may_take = slot && opt.on_stall_local &&
				    rto_thread_mode() != RT_OFFLOAD_MODE_STRICT,
		};
		if (sleep_until_done(q, w, &stall))
			run_taken_back(w);
		if (RTO_UNLIKELY(stall.note))
			rto_stall_clear(stall.note);
	}
	if (slot)
		rto_slot_collect(r, slot);
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
