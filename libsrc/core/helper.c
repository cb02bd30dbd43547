/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Helper workers: threads pinned to the housekeeping CPUs that run the
 * offloaded calls.  Not realtime code; they may lock and make syscalls.
 *
 * Idle protocol, with the caller's side in transport.c:
 *   - q->awake counts workers not asleep, busy or idle; it changes only when
 *     a worker falls asleep or wakes, so callers read it without pulling a
 *     line that changes on every request;
 *   - one idle worker at a time polls the queue, the others sleep on
 *     q->wake_seq.  helper_wake=idle: it polls helper_idle_us, then sleeps.
 *     helper_wake=predict: it follows predict.c's plan, napping (a timed
 *     sleep in steps of helper_nap_us, callers may wake it) until just
 *     before a periodic caller's next call and polling around it; no
 *     periodic caller: as idle;
 *   - polling at a realtime priority is capped (pollcap.c) so that the
 *     kernel's realtime throttling never stops a helper;
 *   - a caller wakes a sleeper when nobody is awake, and again when its
 *     request is still unserved after spin_ns (every awake worker is inside
 *     a long call): a blocking call in one worker does not hold up others.
 *
 * This protocol, with transport.c's side, is model-checked by spin
 * (tests/model/handoff.pml): a change to it changes the model too.
 */
#include "options.h"
#include "cpulist.h"
#include "predict.h"
#include "rto_fast.h"
#include "self.h"
#include "own_thread.h"
#include "fn.h"
#include "callsite.h"
#include "transport.h"
#include "dns_state.h"
#include "resolve.h"
#include "helper.h"
#include "stdio_lock.h"
#include "signals.h"
#include "futex.h"
#include "report.h"
#include "real.h"
#include "lifetime.h"
#include "rto_malloc.h"
#include "trace.h"

#include <dlfcn.h>
#include <stdlib.h>

#include <errno.h>
#include <locale.h>
#include <netdb.h>
#include <pthread.h>
#include <resolv.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Enough for getaddrinfo, dlopen's constructors, stdio: a few 100 KiB at most. */
#define RTO_HELPER_STACK (1024 * 1024)
/* A worker started past workers= (rto_helpers_grow) exits after this long idle. */
#define RTO_EXTRA_IDLE_NS (2000L * 1000 * 1000)

/*
 * The options the workers follow, copied once at load (rto_helpers_configure),
 * before any worker starts; read-only afterwards.
 */
static struct {
	int prio_mode;		 /* helper_priority=: enum rto_prio_mode */
	int prio;		 /* ... its fixed priority */
	uint64_t helper_idle_ns; /* helper_idle_us=, in ns: converted here, nowhere else */
	int predict;		 /* helper_wake=predict */
	uint64_t nap_step_ns;	 /* helper_nap_us=, in ns: nap()'s longest sleep */
	unsigned workers;	 /* workers= */
	unsigned workers_max;	 /* workers_max=: at least workers */
	struct rto_options cpus; /* rt_cpus=, helper_cpus= (cpulist.c's rule), the rest zero */
} opt;

void rto_helpers_configure(const struct rto_options *o)
{
	opt.prio_mode = o->helper_prio_mode;
	opt.prio = o->helper_prio;
	opt.helper_idle_ns = o->helper_idle_us * UINT64_C(1000);
	opt.predict = o->helper_wake == RTO_WAKE_PREDICT;
	opt.nap_step_ns = o->helper_nap_us * UINT64_C(1000);
	opt.workers = o->workers;
	opt.workers_max = o->workers_max > o->workers ? o->workers_max : o->workers;
	opt.cpus.rt_cpus = o->rt_cpus;
	opt.cpus.rt_cpus_set = o->rt_cpus_set;
	opt.cpus.helper_cpus = o->helper_cpus;
	opt.cpus.helper_cpus_set = o->helper_cpus_set;
	rto_predict_configure(opt.helper_idle_ns);
}

static __thread int rto_helper_prio RTO_TLS;	   /* current, for inherit: -1 unknown */
static __thread int rto_helper_watches RTO_TLS;	   /* worker 0: only helpers left? (lifetime.c) */
static __thread unsigned rto_helper_index RTO_TLS; /* its row of q->running */
/* predict.c's plan: the priority of the thread the poller waits for (0: none known). */
static __thread int rto_helper_plan_prio RTO_TLS;
/* A slot's request the polling loop claimed, for take() to run next. */
static __thread struct rto_req *rto_helper_claimed RTO_TLS;

/* ---- request order ------------------------------------------------------ */

/* Insert after every request of the same or higher priority: FIFO within one. */
static void pending_insert(struct rto_queue *q, struct rto_req *r)
{
	struct rto_req **pp = &q->pending;

	while (*pp && (*pp)->prio >= r->prio)
		pp = (struct rto_req **)&(*pp)->node.next;
	/* An enqueuer stored r's next atomically (helgrind_annot.h). */
	CMM_STORE_SHARED(r->node.next, (struct cds_wfcq_node *)*pp);
	CMM_STORE_SHARED(*pp, r); /* q->pending is read without the lock */
}

/* Move what callers enqueued into the priority list.  Under q->dispatch. */
static void drain_queue(struct rto_queue *q)
{
	struct cds_wfcq_node *node;

	/*
	 * Non-blocking: the blocking dequeue would poll(10 ms) when an enqueuer
	 * is between its two stores.  WOULDBLOCK leaves that request for the
	 * next turn; has_work() stays true meanwhile, so nobody sleeps on it.
	 */
	for (;;) {
		node = __cds_wfcq_dequeue_nonblocking(&q->head, &q->tail);
		if (!node || node == CDS_WFCQ_WOULDBLOCK)
			return;
		struct rto_req *r = caa_container_of(node, struct rto_req, node);
		RTO_TSAN_ACQUIRE(r);
		pending_insert(q, r);
	}
}

/*
 * The next request: the one the polling loop claimed; else a slot's of a
 * higher priority than the queue's first; else the queue's.
 */
static struct rto_req *take(struct rto_queue *q)
{
	struct rto_req *r, *s = rto_helper_claimed;

	if (s) {
		rto_helper_claimed = NULL;
		r = s;
		goto taken;
	}
	rto_mutex_lock(&q->dispatch);
	drain_queue(q);
	r = q->pending;
	s = rto_slot_take(q, r ? r->prio : -1);
	if (s)
		r = s;
	else if (r)
		CMM_STORE_SHARED(q->pending, (struct rto_req *)r->node.next);
	rto_mutex_unlock(&q->dispatch);
taken:
	if (s)
		RTO_TSAN_ACQUIRE(s);
	return r;
}

/*
 * Also 1 when the workers are to end (alone.c): every sleep of a worker
 * reads wake_seq, then asks this before it sleeps, and alone.c stores
 * leave before it moves wake_seq, so no worker sleeps through it.
 */
static int has_work(struct rto_queue *q)
{
	return !cds_wfcq_empty(&q->head, &q->tail) || CMM_LOAD_SHARED(q->pending) != NULL ||
	       rto_slots_posted(q) || CMM_LOAD_SHARED(q->leave);
}

/* ---- running one request ------------------------------------------------- */

static int prio_ceiling; /* highest priority of a marked thread so far */

void rto_helpers_raise_ceiling(int prio)
{
	int cur = CMM_LOAD_SHARED(prio_ceiling);

	/* Bounded: each failed try means another thread raised it. */
	for (int i = 0; i < 8 && prio > cur; i++) {
		int seen = uatomic_cmpxchg(&prio_ceiling, cur, prio);
		if (seen == cur) {
			/* Sleeping workers wait at the old ceiling: wake them to rise. */
			if (opt.prio_mode == RTO_PRIO_INHERIT && rto_q &&
			    CMM_LOAD_SHARED(rto_q->sleepers) > 0) {
				uatomic_inc(&rto_q->wake_seq);
				rto_futex_wake(&rto_q->wake_seq, INT32_MAX);
			}
			return;
		}
		cur = seen;
	}
}

static void set_priority(int prio)
{
	struct sched_param sp = {.sched_priority = prio};

	if (prio == rto_helper_prio)
		return;
	rto_helper_prio = prio; /* also when refused: do not retry on every call */
	rto_real_pthread_setschedparam(pthread_self(), prio ? SCHED_FIFO : SCHED_OTHER, &sp);
}

/*
 * A write to a closed pipe or past RLIMIT_FSIZE raises SIGPIPE or SIGXFSZ
 * at the thread that made it: here, where every signal is blocked, so it
 * would stay pending forever.  Take it and give it to the caller.
 */
static int take_call_signal(int err)
{
	static const struct timespec zero;
	sigset_t set;

	if (err != EPIPE && err != EFBIG)
		return 0;
	sigemptyset(&set);
	sigaddset(&set, SIGPIPE);
	sigaddset(&set, SIGXFSZ);
	int sig = rto_real_sigtimedwait(&set, NULL, &zero);
	return sig > 0 ? sig : 0;
}

static char *take_dlerror(void)
{
	const char *e = rto_real_dlerror();
	return e ? strdup(e) : NULL; /* the caller's dlerror() frees it */
}

/*
 * DONE: after this the request (on the caller's stack) is gone.  Not while
 * the caller is KICKING, or its signal could land in our next call; after
 * KICKED, take that signal first (transport.c).  The wait for KICKING is a
 * sleep, not a spin: on one CPU the caller may need ours to finish tgkill.
 */
static void publish(struct rto_req *r)
{
	uint32_t *word = &r->state;
	uint32_t s;

	RTO_TSAN_RELEASE(r);
	for (;;) {
		s = CMM_LOAD_SHARED(r->state);
		if (s == RTO_REQ_KICKING)
			rto_futex_wait_ns(word, s, 50000);
		else if (uatomic_cmpxchg(word, s, RTO_REQ_DONE) == s)
			break;
	}
	if (s != RTO_REQ_PENDING)
		rto_futex_wake(word, 1);
	if (s == RTO_REQ_KICKED)
		rto_signal_take_kick();
}

static void execute(struct rto_req *r)
{
	sigset_t all, caller;
	int process = r->fn->flags & RTO_F_SIGMASK;
	struct rto_running *me = &rto_q->running[rto_helper_index];

	/*
	 * Say so before taking a lower caller's priority: an idle worker of a
	 * higher one on this CPU, woken meanwhile, preempts us right there,
	 * and must then poll below us (idle_priority), not stall this call.
	 */
	CMM_STORE_SHARED(me->fn, r->fn); /* stall.c's watchdog: what, since when */
	CMM_STORE_SHARED(me->since, rto_now_ns());
	CMM_STORE_SHARED(me->in_call, 1);
	if (opt.prio_mode == RTO_PRIO_INHERIT)
		set_priority(r->prio);
	else if (opt.prio_mode == RTO_PRIO_FIXED)
		set_priority(opt.prio); /* polling may have dropped it (pollcap.c) */
	if (process) {			/* children inherit the spawning thread's mask */
		sigemptyset(&caller);
		memcpy(&caller, &r->sigmask, sizeof(r->sigmask));
		rto_real_pthread_sigmask(SIG_SETMASK, &caller, &all);
	}
	int lent = r->flags & RTO_RQ_LENT;
	if (lent)
		rto_stream_borrow(r->stream);

	/* The caller may interrupt us (transport.c's kick finds us here). */
	CMM_STORE_SHARED(me->req, r);
	/* Only a thread with a locale of its own sends it: TLS writes, no syscall. */
	locale_t own = (r->flags & RTO_RQ_LOCALE) ? uselocale((locale_t)r->locale) : NULL;
	/* The request's second line only for the calls that need it: it stays on the caller. */
	int dns = r->fn->flags & RTO_F_RESOLVER;
	struct __res_state own_res;
	void *res = dns ? r->res : NULL;
	if (res)
		rto_resolver_take(res, &own_res);
	if (dns) /* a numeric address leaves it alone: the caller's, not our last one */
		h_errno = r->h_err;
	errno = r->err;
	int faulted = rto_signal_run_guarded(r);
	r->err = errno;
	if (res)
		rto_resolver_give_back(res, &own_res);
	if (RTO_UNLIKELY(faulted)) {
		r->flags |= RTO_RQ_FAULTED;
		rto_stream_release_if_mine(r->file);
	}
	if (dns)
		r->h_err = h_errno;
	if (RTO_UNLIKELY(r->fn->flags & RTO_F_DLERROR))
		r->dlerror = take_dlerror(); /* dlerror() is per thread: hand it over */
	if (own)
		uselocale(own);
	int signo = take_call_signal(r->err);
	if (RTO_UNLIKELY(signo))
		r->signo = signo; /* the caller zeroed it */

	if (lent)
		rto_stream_return(r->stream, r->owner);
	if (process)
		rto_real_pthread_sigmask(SIG_SETMASK, &all, NULL);

	/*
	 * Before DONE: once published, r's stack may hold the caller's next
	 * request, which a kick must not mistake for ours.  A caller that
	 * finds nobody sends no signal and kicks again later (its KICKING
	 * holds our publish back meanwhile).
	 */
	CMM_STORE_SHARED(me->req, NULL);
	publish(r);
	CMM_STORE_SHARED(me->in_call, 0);
}

/* ---- the worker loop ------------------------------------------------------ */

/*
 * A periodic caller's rhythm (predict.c), after its call was published:
 * the caller's next call never waits for this.  t0 is the low 32 bits of
 * the caller's clock at the call, made less than 4.2 s ago.
 */
static void learn(struct rto_queue *q, uint16_t key, uint32_t t0, int burst, int prio)
{
	uint64_t now = rto_now_ns();

	rto_predict_served(&q->predict, key, now - (uint32_t)((uint32_t)now - t0), burst, now,
			   prio);
}

/*
 * Another worker is inside a call: its row of q->running says so (plain
 * stores to a line only it writes; no counter that every call would
 * change with two atomics).  The rows are read only here, by an idle
 * worker about to poll or sleep, and once per polling round.
 */
static uint32_t rows_used; /* rows of q->running a worker ever had (extra ones included) */

static int another_in_call(struct rto_queue *q)
{
	unsigned n = CMM_LOAD_SHARED(rows_used);

	for (unsigned i = 0; i < n; i++)
		if (i != rto_helper_index && CMM_LOAD_SHARED(q->running[i].in_call))
			return 1;
	return 0;
}

/*
 * The priority an idle worker naps and polls at.
 *  - inherit: the ceiling, so that a realtime caller's wake-up is not
 *    starved by whatever runs on the housekeeping CPU (execute() then
 *    takes the caller's own priority for the call); but while it follows
 *    a plan for one thread (predict.c), that thread's priority, so that
 *    its call needs no sched_setscheduler first (a FIFO 79 loop beside
 *    one at 80 paid 2-3 us a call for it);
 *  - fixed: helper_priority.
 * Either way SCHED_OTHER while another worker is inside a call: at a
 * lower caller's priority, or at the same one and blocked in the kernel,
 * on this same CPU, that call would wait for a SCHED_FIFO spinner until
 * the polling budget ran out (pollcap.c: up to 47.5 ms).
 */
static int idle_priority(struct rto_queue *q)
{
	if (opt.prio_mode == RTO_PRIO_NONE || another_in_call(q))
		return 0;
	if (opt.prio_mode == RTO_PRIO_INHERIT) {
		int ceiling = CMM_LOAD_SHARED(prio_ceiling), planned = rto_helper_plan_prio;
		return planned > 0 && planned < ceiling ? planned : ceiling;
	}
	return opt.prio;
}

/*
 * async.c's rings (rto_helpers_on_queued): registered once, in the
 * constructor before any helper starts, as rto_helpers_on_idle's.
 */
static int (*idle_queued)(void);
static void (*idle_drain)(void);
static long (*idle_look)(void);

void rto_helpers_on_queued(int (*queued)(void), void (*drain)(void), long (*look)(void))
{
	idle_drain = drain;
	idle_look = look;
	idle_queued = queued;
}

/*
 * Poll until deadline.  Poll head.next (an enqueue into an empty queue
 * ends by storing it), the workers' own pending list and the marked
 * threads' slots (transport.c); the check before
 * sleeping (idle) is the full one.  Each look at the clock charges the realtime
 * polling budget (pollcap.c): over it, poll on at SCHED_OTHER.  With a
 * watch (a thread's wake hint, predict.c), also stop, with 0, when the
 * word is no longer was: time to plan again.
 */
static int poll_until(struct rto_queue *q, uint64_t deadline, const uint64_t *watch, uint64_t was)
{
	uint64_t now = rto_now_ns(), last = now;

	if (opt.prio_mode != RTO_PRIO_NONE)
		set_priority(rto_pollcap_allows(&q->predict, now, 0) ? idle_priority(q) : 0);
	do {
		for (int i = 0; i < 256; i++) {
			if (CMM_LOAD_SHARED(q->head.node.next) || CMM_LOAD_SHARED(q->pending))
				return 1;
			/* A slot's request: claimed here, so take() needs no lock for it. */
			if ((rto_helper_claimed = rto_slot_take(q, -1)))
				return 1;
			if (watch && __atomic_load_n(watch, __ATOMIC_RELAXED) != was)
				return has_work(q);
			caa_cpu_relax();
		}
		/*
		 * async.c's lines, once a round: a few microseconds apart, so a
		 * logging thread's line moves to this CPU with the lines queued
		 * after it, not one line at a time.
		 */
		if (idle_queued && idle_queued())
			idle_drain();
		now = rto_now_ns();
		if (opt.prio_mode != RTO_PRIO_NONE) {
			/* Again each round: a worker that entered a call since runs below us. */
			uint64_t rt = rto_helper_prio > 0 ? now - last : 0;
			set_priority(rto_pollcap_allows(&q->predict, now, rt) ? idle_priority(q)
									      : 0);
		}
		last = now;
	} while (now < deadline);
	return has_work(q);
}

/* Today's idle polling (helper_wake=idle, and aperiodic callers under predict). */
static int poll_for_work(struct rto_queue *q)
{
	if (opt.helper_idle_ns == 0) /* never poll: sleep at once */
		return 0;
	return poll_until(q, rto_now_ns() + opt.helper_idle_ns, NULL, 0);
}

/*
 * The nap's sleep, in steps of at most helper_nap_us: a CPU idle longer
 * than that may wake late by hundreds of microseconds (a VM's virtual CPU
 * the host stopped polling for, a bare CPU in a deep C-state), and the
 * window would open after the burst (docs/periodic.md, rule 14).  Between
 * steps the worker stays counted asleep: a caller's wake moves wake_seq,
 * which ends the next step at once.  Returns 1: slept until `until`.
 */
static int sleep_in_steps(struct rto_queue *q, uint32_t seq, uint64_t now, uint64_t until,
			  unsigned *sleeps)
{
	while (now < until) {
		uint64_t left = until - now;
		if (opt.nap_step_ns && left > opt.nap_step_ns)
			left = opt.nap_step_ns;
		rto_futex_wait_ns(&q->wake_seq, seq, (long)left);
		++*sleeps;
		if (CMM_LOAD_SHARED(q->wake_seq) != seq)
			return 0;
		now = rto_now_ns();
	}
	return 1;
}

/*
 * Sleep until `until` or a caller's wake, whichever comes first, with the
 * same protocol as the untimed sleep in idle(): sleepers++ and awake--
 * (full barriers) before the last look at the queue.  awake == 0 is the
 * callers' NEED_WAKEUP flag (transport.c): while this nap lasts, a caller
 * that comes early wakes us.  Returns has_work().
 */
static int nap(struct rto_queue *q, uint64_t now, uint64_t until)
{
	uint32_t seq = CMM_LOAD_SHARED(q->wake_seq);
	int timed_out = 0;
	unsigned sleeps = 0;

	/* Wake at the idle priority, even if the poll before dropped to SCHED_OTHER. */
	if (opt.prio_mode == RTO_PRIO_INHERIT)
		set_priority(idle_priority(q));
	if (idle_queued && idle_queued()) { /* async.c's lines first, then the nap as planned */
		idle_drain();
		now = rto_now_ns();
		if (now >= until)
			return has_work(q);
	}
	rto_predict_sleeps(&q->predict, now);
	rto_trace_nap_begin(until); /* trace.c (trace=lttng) */
	uatomic_add_return(&q->sleepers, 1);
	uatomic_add_return(&q->awake, -1);
	/* After awake--: a line queued before it is seen here (async.c's arm()). */
	int queued = idle_queued && idle_queued();
	if (!has_work(q) && !queued)
		timed_out = sleep_in_steps(q, seq, now, until, &sleeps);
	uatomic_add_return(&q->awake, 1);
	uatomic_add_return(&q->sleepers, -1);
	rto_predict_woke(&q->predict, until, rto_now_ns(), timed_out, sleeps);
	rto_trace_nap(now, timed_out); /* trace.c */
	if (queued)
		idle_drain();
	return has_work(q);
}

#define RTO_NAP_MIN_NS 20000 /* a shorter sleep costs more than the polling it saves */

/*
 * helper_wake=predict, for the polling worker: follow predict.c's plans.
 * 1: work came.  0: sleep until a caller wakes us.  -1: no periodic
 * caller, or every one overdue: today's polling.  Bounded: a few plans,
 * then idle() sleeps as usual.
 */
static int wait_predicted(struct rto_queue *q)
{
	struct rto_plan p;

	for (int turn = 0; turn < 8; turn++) {
		uint64_t now = rto_now_ns();
		/*
		 * A thread whose calls come sooner than helper_idle_us after
		 * its previous one (predict.c): idle polls through its gaps,
		 * and so do we, as idle does (issue 30: never worse than idle).
		 */
		if (now < rto_predict_promised(&q->predict))
			return -1;
		int kind = rto_predict_plan(&q->predict, now, &p);
		/*
		 * Every periodic caller overdue: a loop that woke later than
		 * its window allowed comes soon, so poll helper_idle_us more
		 * (today's idle polling) before the untimed sleep that would
		 * cost that call a FUTEX_WAKE and a wake-up.
		 */
		if (kind == RTO_PLAN_NONE || kind == RTO_PLAN_SLEEP)
			return -1;
		rto_helper_plan_prio = p.prio; /* idle_priority(): nap and poll at it */
		if (p.sleep_until > now + RTO_NAP_MIN_NS && nap(q, now, p.sleep_until))
			return 1; /* a caller came early (predict.c grows the window) */
		rto_trace_window_open(p.linger, p.poll_until); /* trace.c */
		if (poll_until(q, p.poll_until, p.hint, p.hint_was)) {
			rto_trace_window_close(1); /* trace.c */
			if (!p.linger)
				rto_predict_hit(&q->predict);
			return 1;
		}
		if (!p.linger) /* the burst may simply be over: not a wrong window */
			rto_predict_missed(&q->predict);
		rto_trace_window_close(0); /* trace.c */
	}
	return 0;
}

/*
 * async.c's drains that gave up on a taken lock: idle workers retry them.
 * Registered once by async.c (it is above us: it offloads), in the
 * constructor before any helper starts; pthread_create orders that store
 * before every helper's loads.
 */
static int (*idle_stalled)(void);
static void (*idle_retry)(void);

void rto_helpers_on_idle(int (*stalled)(void), void (*retry)(void))
{
	idle_retry = retry;
	idle_stalled = stalled;
}

/*
 * Worker 0's sleep while a marked thread queues async lines (idle_look):
 * it wakes every look ns and writes what was queued, counted asleep all
 * along, so that the thread never pays a FUTEX_WAKE for a line.  Back to
 * idle() when woken, for a request, for the lifetime watch, or once the
 * lines stop.
 */
static void sleep_looking(struct rto_queue *q, uint32_t seq, long look)
{
	do {
		rto_futex_wait_ns(&q->wake_seq, seq, look);
		while (idle_queued() && CMM_LOAD_SHARED(q->wake_seq) == seq && !has_work(q))
			idle_drain(); /* ends: each batch writes lines, or stalls (async.c) */
		if (CMM_LOAD_SHARED(q->wake_seq) != seq || has_work(q) || rto_lifetime_watch_due())
			return;
	} while ((look = idle_look()) != 0);
}

/*
 * 1: an extra worker idle for RTO_EXTRA_IDLE_NS, to exit (not counted awake any more);
 * or any worker, when the library's threads are to end (alone.c).
 * caller_here: the last call's caller waits on this worker's CPU (RTO_RQ_HERE);
 * a poll would keep it off the CPU it needs to take its result, so sleep at once.
 */
static int idle(struct rto_queue *q, int caller_here)
{
	if (RTO_UNLIKELY(CMM_LOAD_SHARED(q->leave))) { /* alone.c: the async lines first */
		if (idle_queued && idle_queued())
			idle_drain();
		return 1;
	}
	if (opt.prio_mode == RTO_PRIO_INHERIT)
		set_priority(idle_priority(q));
	/* Only the first idle worker polls: two pollers on one CPU halve each other. */
	int polls = 0;
	if (uatomic_add_return(&q->pollers, 1) == 1 && !caller_here) {
		int got = opt.predict ? wait_predicted(q) : -1;
		rto_helper_plan_prio = 0; /* no plan: the ceiling again */
		polls = got < 0 ? poll_for_work(q) : got;
	}
	uatomic_add_return(&q->pollers, -1);
	if (polls)
		return 0;
	if (opt.prio_mode == RTO_PRIO_INHERIT)
		set_priority(idle_priority(q)); /* the poll may have dropped to SCHED_OTHER */
	uint32_t seq = CMM_LOAD_SHARED(q->wake_seq);
	uatomic_add_return(&q->sleepers, 1); /* before awake--: see transport.c */
	uatomic_add_return(&q->awake, -1);
	int retry = idle_stalled && idle_stalled();
	/* After awake--: a line queued before it is seen here (async.c's arm()). */
	int queued = idle_queued && idle_queued();
	/* Worker 0 looks at the async rings every look ns while lines come (async.c). */
	long look = !queued && rto_helper_watches && idle_look ? idle_look() : 0;
	if (!has_work(q) && !queued) {
		if (retry) /* async.c: a drain waits for a lock; look again soon */
			rto_futex_wait_ns(&q->wake_seq, seq, RTO_ASYNC_RETRY_NS);
		else if (look)
			sleep_looking(q, seq, look);
		else if (rto_helper_watches)
			rto_futex_wait_ns(&q->wake_seq, seq, RTO_LIFETIME_WATCH_NS);
		else if (rto_helper_index >= opt.workers)
			rto_futex_wait_ns(&q->wake_seq, seq, RTO_EXTRA_IDLE_NS);
		else
			rto_futex_wait(&q->wake_seq, seq);
	}
	/*
	 * A worker past workers= (rto_helpers_grow) that slept its while out
	 * unwoken goes, still counted asleep-not-awake: sleepers-- (a full
	 * barrier) then the last look at the queue, as before a sleep, so a
	 * caller either sees it gone or it sees the caller's request.
	 */
	if (rto_helper_index >= opt.workers && !retry && !queued &&
	    CMM_LOAD_SHARED(q->wake_seq) == seq) {
		uatomic_add_return(&q->sleepers, -1);
		if (!has_work(q))
			return 1;
		uatomic_add_return(&q->sleepers, 1);
	}
	uatomic_add_return(&q->awake, 1);
	uatomic_add_return(&q->sleepers, -1);
	if (rto_helper_watches && !has_work(q) && rto_lifetime_watch_due()) {
		if (opt.prio_mode == RTO_PRIO_INHERIT)
			set_priority(0); /* a look at /proc, not at a realtime caller's priority */
		rto_lifetime_watch();
	}
	if (queued && !has_work(q))
		idle_drain();
	if (retry && !has_work(q)) { /* requests first; a background drain at no priority */
		if (opt.prio_mode == RTO_PRIO_INHERIT)
			set_priority(0);
		idle_retry();
	}
	return 0;
}

/*
 * Worker 0, with nothing to do: the next-allocator blocks marked threads
 * freed (free_defer.c), a few at a time, requests first.  glibc's free
 * takes an arena lock unmarked threads share: at no priority under
 * inherit, as async.c's background drain.  Idle wakes at least once a
 * second (the lifetime watch), so a block waits at most about that long.
 */
#define RTO_FREE_BATCH 64

static void free_deferred(struct rto_queue *q)
{
	if (!rto_free_defer_pending())
		return;
	if (opt.prio_mode == RTO_PRIO_INHERIT)
		set_priority(0);
	while (!has_work(q) && rto_free_defer_drain(RTO_FREE_BATCH) == RTO_FREE_BATCH)
		;
}

static void pin_and_prioritise(const cpu_set_t *cpus)
{
	struct sched_param sp = {.sched_priority = opt.prio};
	int err;

	err = rto_real_pthread_setaffinity_np(pthread_self(), sizeof(*cpus), cpus);
	if (err)
		rto_say(1, "helper: cannot pin to its CPUs: %s", strerror(err));
	rto_helper_prio = -1;
	if (opt.prio_mode != RTO_PRIO_FIXED) {
		/* Not the marking thread's policy, which a new thread inherits. */
		struct sched_param other = {0};
		rto_real_pthread_setschedparam(pthread_self(), SCHED_OTHER, &other);
		rto_helper_prio = 0;
	} else {
		err = rto_real_pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
		if (!err)
			rto_helper_prio = sp.sched_priority;
		else
			rto_say(1, "helper: SCHED_FIFO %d refused: %s", sp.sched_priority,
				strerror(err));
	}
}

/*
 * When every CPU of helper_cpus goes offline the kernel moves the helpers
 * to some other CPU and widens their affinity (select_fallback_rq): they
 * keep serving, from there.  Looked at after each idle wake-up (getcpu is
 * a vDSO call), said once per process.
 */
static void check_cpu(void)
{
	static int32_t said;
	int cpu = sched_getcpu();

	if (cpu < 0 || CPU_ISSET(cpu, &rto_q->cpus) || CMM_LOAD_SHARED(said) ||
	    uatomic_xchg(&said, 1))
		return;
	char list[256];
	rto_cpulist_format(&rto_q->cpus, list, sizeof(list));
	rto_say(0,
		"a helper runs on CPU %d, outside its CPUs %s (gone offline?): offloading goes on "
		"there",
		cpu, list);
}

static void *worker_main(void *arg)
{
	struct rto_queue *q = rto_q;

	rto_helper_set_self();
	rto_helper_watches = arg == NULL; /* worker 0 */
	rto_helper_index = (unsigned)(uintptr_t)arg;
	/*
	 * A timed nap must end when asked: a SCHED_OTHER thread's timers may
	 * fire up to timer_slack_ns (50 us by default) late, and a helper
	 * naps at SCHED_OTHER under helper_priority=none and after its
	 * realtime polling budget ran out (pollcap.c).
	 */
	RTO_HAND_REAL(prctl)(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
	rto_signal_worker_init();
	CMM_STORE_SHARED(q->running[rto_helper_index].tid, rto_signal_worker_tid());
	CMM_STORE_SHARED(q->running[rto_helper_index].alive, 1);
	uatomic_add_return(&q->awake, 1);
	pin_and_prioritise(&q->cpus);
	int caller_here = 0;
	rto_trace_helper_started(rto_helper_index, rto_signal_worker_tid()); /* trace.c */
	for (;;) {
		struct rto_req *r = take(q);
		if (!r) {
			if (rto_helper_watches) {
				free_deferred(q);
				rto_pool_events_flush(0);
			}
			rto_trace_helper_idle();  /* trace_file=: the rings to the file */
			if (idle(q, caller_here)) /* kept till the next call: not after a watch's
						     wake */
				break;
			check_cpu();
			continue;
		}
		/* r is the caller's again once published: what predict.c learns, first. */
		uint16_t key = r->key;
		uint32_t t0 = r->t0;
		int burst = r->flags & RTO_RQ_BURST, prio = r->prio;
		caller_here = r->flags & RTO_RQ_HERE;
		const struct rto_fn *fn = r->fn;		/* trace.c */
		uint64_t traced = rto_trace_begin(fn, key, t0); /* trace.c */
		execute(r);
		rto_trace_exec(fn, traced, key, t0); /* trace.c */
		if (opt.predict && key)
			learn(q, key, t0, burst, prio);
	}
	/* An extra worker idle, or every worker leaving: glibc counts it again for its exit. */
	rto_lifetime_helper_exiting();
	CMM_STORE_SHARED(q->running[rto_helper_index].alive, 0);
	return NULL;
}

/* ---- start ------------------------------------------------------------- */

static void choose_cpus(cpu_set_t *out)
{
	cpu_set_t mine;
	const cpu_set_t *avoid = NULL;
	char list[256];

	/* The marking thread's CPUs, if it is pinned (not on every CPU). */
	if (sched_getaffinity(0, sizeof(mine), &mine) == 0 &&
	    CPU_COUNT(&mine) < rto_real_sysconf(_SC_NPROCESSORS_ONLN))
		avoid = &mine;
	int dropped = rto_cpus_for_helpers(&opt.cpus, avoid, out);
	rto_cpulist_format(out, list, sizeof(list));
	if (dropped)
		rto_say(1,
			"helpers on CPUs %s: they share a CPU with realtime threads (no other CPU)",
			list);
	else
		rto_say(1, "helpers on CPUs %s", list);
}

/*
 * What starts with the helpers (init.c: live.c's publisher), from above
 * us.  Stored in the constructor, before any helper starts: the thread
 * that starts them ran the constructor or was created after it.
 */
static void (*on_start)(const cpu_set_t *cpus, unsigned workers);

void rto_helpers_on_start(void (*fn)(const cpu_set_t *cpus, unsigned workers))
{
	on_start = fn;
}

/*
 * The workers' thread attributes.  Born on the helper CPUs at SCHED_OTHER,
 * not on the marking thread's realtime CPU at its priority: there a
 * worker could not even run to pin itself until its spinning caller slept.
 * Not the 8 MiB default stack: under mlockall(MCL_FUTURE) every byte is
 * faulted in.
 */
static void worker_attr(pthread_attr_t *attr, const cpu_set_t *cpus)
{
	struct sched_param other = {0};

	pthread_attr_init(attr);
	pthread_attr_setdetachstate(attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setaffinity_np(attr, sizeof(*cpus), cpus);
	pthread_attr_setinheritsched(attr, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(attr, SCHED_OTHER);
	pthread_attr_setschedparam(attr, &other);
	pthread_attr_setstacksize(attr, RTO_HELPER_STACK);
}

/* Worker number i, named before any call is served: tools see every helper. */
static int start_one(const pthread_attr_t *attr, unsigned i)
{
	pthread_t tid;
	int err = rto_create_own_thread(&tid, attr, worker_main, (void *)(uintptr_t)i);

	if (!err) {
		rto_lifetime_helper_started(); /* glibc counts it no more */
		char name[16];
		snprintf(name, sizeof(name), "rtoffload/%u", i);
		rto_real_pthread_setname_np(tid, name);
	}
	return err;
}

static int start_workers(struct rto_queue *q)
{
	sigset_t all, old;
	pthread_attr_t attr;
	cpu_set_t cpus;
	int err = 0;
	unsigned n = opt.workers;

	if (n > RTO_WORKERS_MAX)
		n = RTO_WORKERS_MAX;
	choose_cpus(&cpus);
	rto_pollcap_init();
	q->cpus = cpus; /* read by the workers, which start after this */
	__atomic_store_n(&q->cpus_set, 1, __ATOMIC_RELEASE); /* and by callers (transport.c) */
	CMM_STORE_SHARED(rows_used, n);
	__cds_wfcq_init(&q->head, &q->tail);
	/*
	 * liburcu's dequeue stores head.next with plain stores (under our
	 * dispatch lock), while cds_wfcq_empty() and poll_for_work() read it
	 * without the lock, as liburcu documents ("no mutual exclusion").
	 */
	RTO_HG_BENIGN_RACE(&q->head.node.next, sizeof(q->head.node.next));
	rto_signal_install(); /* before a caller's first call can need it */
	/* Workers start with every signal blocked: signals belong to callers. */
	sigfillset(&all);
	rto_real_pthread_sigmask(SIG_SETMASK, &all, &old);
	worker_attr(&attr, &cpus);
	unsigned started = 0;
	for (; started < n && !err; started += !err)
		err = start_one(&attr, started);
	pthread_attr_destroy(&attr);
	rto_real_pthread_sigmask(SIG_SETMASK, &old, NULL);
	/*
	 * Said once: the caller does not try again (rto_q->failed), so a
	 * realtime loop neither repeats the line nor the thread creation.
	 * Workers that did start serve everything: fewer of them is slower,
	 * not wrong.
	 */
	if (err && started)
		rto_say(0, "started %u of %u helper threads (%s): offloading goes on with %u",
			started, n, strerror(err), started);
	else if (err)
		rto_say(0,
			"cannot start helper threads: %s; offload-mode calls of marked threads "
			"now run on the caller (counted as fallback), strict ones are refused",
			strerror(err));
	if (started && on_start)
		on_start(&cpus, started);
	return started ? 0 : err;
}

/*
 * One more worker, in a free row past workers= (up to workers_max).  Only
 * stall.c's watchdog calls this, so rows are picked by one thread; an
 * extra worker frees its row (alive = 0) as the last thing it does.  Its
 * own row says alive before it runs: not yet in a call, so the watchdog
 * does not count every worker stuck again until it has taken one.
 */
int rto_helpers_grow(void)
{
	struct rto_queue *q = rto_q;
	unsigned max = opt.workers_max;
	pthread_attr_t attr;
	sigset_t all, old;

	if (max > RTO_WORKERS_MAX)
		max = RTO_WORKERS_MAX;
	for (unsigned i = opt.workers; i < max; i++) {
		struct rto_running *row = &q->running[i];
		if (CMM_LOAD_SHARED(row->alive))
			continue;
		CMM_STORE_SHARED(row->in_call, 0);
		CMM_STORE_SHARED(row->tid, 0); /* the watchdog says "starting" until it runs */
		CMM_STORE_SHARED(row->alive, 1);
		if (CMM_LOAD_SHARED(rows_used) < i + 1)
			CMM_STORE_SHARED(rows_used, i + 1);
		sigfillset(&all);
		rto_real_pthread_sigmask(SIG_SETMASK, &all, &old);
		worker_attr(&attr, &q->cpus);
		int err = start_one(&attr, i);
		pthread_attr_destroy(&attr);
		rto_real_pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (err) {
			CMM_STORE_SHARED(row->alive, 0);
			return -1;
		}
		rto_say(1, "every helper is inside a call for over stall_us: worker %u started", i);
		return 0;
	}
	return -1;
}

/*
 * Workers share one mask, all of helper_cpus, so that the kernel places
 * each where it can run.  At a realtime priority it does so at once: a
 * woken FIFO worker goes to the CPU of the lowest priority, and a
 * preempted one is pushed there (the realtime push and pull).  At
 * SCHED_OTHER (helper_priority=none, or a SCHED_OTHER caller's call
 * under inherit) only the fair class's load balancing moves a runnable
 * worker off a CPU that a realtime busy loop holds, and it took up to
 * 145 ms (docs/HELPERS.md).  So the watchdog moves it: a mask without
 * its CPU moves a queued task at once (the kernel's affinity change),
 * and the whole mask again lets it go anywhere from there.
 */
int rto_helpers_move_off(pid_t tid, int cpu)
{
	cpu_set_t other = rto_q->cpus;

	if (cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &other))
		return -1;
	CPU_CLR(cpu, &other);
	if (CPU_COUNT(&other) == 0 ||
	    rto_syscall(SYS_sched_setaffinity, (long)tid, sizeof(other), &other) != 0)
		return -1;
	rto_syscall(SYS_sched_setaffinity, (long)tid, sizeof(rto_q->cpus), &rto_q->cpus);
	return 0;
}

int rto_helpers_start(void)
{
	struct rto_queue *q = rto_q;
	int err = 0;

	if (CMM_LOAD_SHARED(q->ready)) {
		cmm_smp_rmb();
		return 0;
	}
	if (CMM_LOAD_SHARED(q->failed)) { /* no second try in this process */
		errno = EAGAIN;
		return -1;
	}
	rto_mutex_lock(&q->start_lock);
	if (!q->ready && !q->failed) {
		err = start_workers(q);
		if (!err) {
			cmm_smp_wmb(); /* queue initialised before anyone sees ready */
			CMM_STORE_SHARED(q->ready, 1);
		} else {
			CMM_STORE_SHARED(q->failed, 1);
		}
	} else if (!q->ready) {
		err = EAGAIN; /* another thread's start failed while we waited */
	}
	rto_mutex_unlock(&q->start_lock);
	if (err) {
		errno = EAGAIN;
		return -1;
	}
	return 0;
}
