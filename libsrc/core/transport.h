/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * transport.c: the request and the queue: the caller's side of the hand-off.
 *
 * Concurrency: rto_offload() is the caller's path (enqueue, FUTEX_WAKE if every worker
 * sleeps, spin, FUTEX_WAIT); docs/ARCHITECTURE.md, "Memory ordering".
 */
#ifndef RTO_TRANSPORT_H
#define RTO_TRANSPORT_H

#include "rto_base.h"
#include "predict.h"
#include "request.h" /* RTO_REQ_INLINE, the request's flags */

struct rto_fn;
struct rto_predict;
struct rto_queue;

/*
 * A request's futex word.  The caller moves PENDING -> WAITING when it
 * sleeps, WAITING/KICKED -> KICKING -> KICKED around each interrupt it
 * sends; the worker moves any state but KICKING to DONE (transport.c).
 */
enum rto_req_state {
	RTO_REQ_PENDING = 0, /* the caller spins */
	RTO_REQ_WAITING = 1, /* the caller sleeps on the word: wake it */
	RTO_REQ_DONE = 2,    /* published: the worker no longer touches it */
	RTO_REQ_KICKING = 3, /* the caller is signalling the worker: wait */
	RTO_REQ_KICKED = 4,  /* signalled: take the signal before the next call */
};

/*
 * One request, on the caller's stack.  The first cache line holds what
 * every call moves between the two CPUs: a 32-byte header and, when they
 * fit, the call's arguments and result (request.h): the worker touches
 * this one line of the caller's and the result, errno and DONE come back
 * in it.  The second line holds what only some calls use (arguments too
 * big to travel inline, a lent stream, a locale, a process-class call, a
 * fault, dlopen, DNS).
 */
struct rto_req {
	union {
		struct cds_wfcq_node node; /* through the queue */
		uint64_t post; /* in a thread's slot: posts so far << 8 | prio (transport.h) */
	};
	struct rto_fn *fn;
	uint32_t state;	     /* futex word, enum rto_req_state */
	int err;	     /* errno: the caller's in, the call's out */
	uint32_t t0;	     /* rto_now_ns() at the call, low 32 bits (predict.c) */
	uint16_t key;	     /* the caller for predict.c (request.h), 0 for the library's */
	unsigned char prio;  /* caller's realtime priority (0-99), for ordering and inherit */
	unsigned char flags; /* enum rto_req_flag (request.h) */
	unsigned char inl[RTO_REQ_INLINE] __attribute__((aligned(8))); /* RTO_RQ_INLINE */
	/* Second line: the worker reads it only when flags say so. */
	void *args __attribute__((aligned(RTO_CACHELINE))); /* not inline: the caller's */
	void *locale;	     /* RTO_RQ_LOCALE: the caller's uselocale() (printf's %f...) */
	FILE *stream;	     /* RTO_RQ_LENT: stdio lock lent */
	void *owner;	     /* the caller's lock owner identity, for the handoff */
	FILE *file;	     /* the stream a stdio call works on, lent or not */
	uint64_t sigmask;    /* caller's signal mask, for process-class calls */
	char *dlerror;	     /* dlopen/dlclose: the worker's dlerror(), copied */
	void *res;	     /* DNS calls: the caller's resolver state (dns_state.c), or NULL */
	int h_err;	     /* h_errno of a DNS call, both ways (a call may leave it) */
	int signo;	     /* SIGPIPE/SIGXFSZ the call raised, for the caller to take */
	unsigned char route; /* the caller's route before the call, restored if cancelled */
} __attribute__((aligned(RTO_CACHELINE)));

/*
 * Caller side: enqueue, wake a helper only if one sleeps, wait for DONE. t0: now.
 * Past stall_us the wait is noted (stall.c); with on_stall=local a call no
 * worker took yet is taken back and run here: RTO_RQ_TAKEN in req->flags.
 */
RTO_HIDDEN void rto_offload(struct rto_req *req, uint64_t t0);
/* Enqueue and wake a worker if all sleep; nobody waits for req. */
RTO_HIDDEN void rto_offload_async(struct rto_req *req);

/*
 * A marked thread's request slot, the line a polling worker watches.
 *
 * Through the queue a call moves two lines between the CPUs: the queue's
 * (the enqueue, the worker's look and its dequeue) and the request's,
 * which the worker can only find through the queue's.  A marked thread
 * that holds a slot copies its request into it instead and bumps the
 * slot's post counter, in the request's first line: the worker finds it
 * there and answers in the same line, so one line goes each way.
 *
 * Concurrency:
 *   rto_slot_mine()          the caller's path: a bounded claim, no syscall
 *   rto_slot_post()          the caller, on its own slot only
 *   rto_slots_posted()       any worker, without a lock: a hint
 *   rto_slot_take()          any worker: a claim by compare-and-swap
 *   rto_slots_counts()       anyone: a snapshot
 * A post is new to the workers while its counter differs from the one
 * they took last (q->slot_seen, theirs alone): the worker whose
 * compare-and-swap moves slot_seen to the post owns the request.  The
 * caller writes the request, then the counter with an exchange (a full
 * barrier, as the queue's enqueue: the NEED_WAKEUP check comes after it);
 * a worker loads the counter, claims, then reads the request.  The
 * counter's low byte is the request's priority, so that nothing of a
 * request is read before its claim.  The slots are on the
 * queue's MADV_WIPEONFORK page: a child sees them free and unposted.
 */
/* This thread's slot (claimed at its first offload while marked), or NULL: the queue. */
RTO_HIDDEN struct rto_req *rto_slot_mine(struct rto_queue *q);
/* Copy r (but its post counter) into this thread's slot s and post it. */
RTO_HIDDEN void rto_slot_post(struct rto_req *s, const struct rto_req *r);
/* After DONE: the slot's request back into r (but r's queue node). */
RTO_HIDDEN void rto_slot_collect(struct rto_req *r, const struct rto_req *s);
/* 1: some slot holds a post no worker took yet. */
RTO_HIDDEN int rto_slots_posted(struct rto_queue *q);
/* A posted slot's request of a priority above `above`, claimed; or NULL. */
RTO_HIDDEN struct rto_req *rto_slot_take(struct rto_queue *q, int above);
/* The report's figures: slots ever claimed at once (a high-water mark), and held now. */
RTO_HIDDEN void rto_slots_counts(const struct rto_queue *q, unsigned *most, unsigned *held);
/*
 * on_stall=local: the caller's own claim of its posted slot s, the same
 * compare-and-swap a worker's claim makes: 1 when it won, and no worker
 * will ever read the post.  0: a worker took it first.
 */
RTO_HIDDEN int rto_slot_take_back(struct rto_queue *q, struct rto_req *s);
/* At load, before any thread claims a slot: the release at thread exit. */
RTO_HIDDEN void rto_slots_init(void);

/* Shared between transport.c and helper.c; lives on a MADV_WIPEONFORK page. */

/*
 * Grouped by who writes what, one cache line each, so that a request costs
 * as few line transfers as the queue allows.
 */
#define RTO_WORKERS_MAX 64 /* workers= is capped here too (options.c) */
#define RTO_SLOTS	16 /* marked threads with a slot; the others use the queue alone */
#define RTO_STALL_NOTES 16 /* calls stalled at once that the watchdog sees one by one */

struct rto_queue {
	/*
	 * Both ends of the queue in one line.  An enqueue into an empty queue
	 * (a realtime caller's usual case) exchanges the tail and stores
	 * head.next; the worker polls head.next and dequeues from both: one
	 * line moves per call, not two.
	 */
	struct __cds_wfcq_head head __attribute__((aligned(RTO_CACHELINE)));
	struct cds_wfcq_tail tail;
	/* Workers only: never pulled to a caller's CPU. */
	pthread_mutex_t dispatch __attribute__((aligned(RTO_CACHELINE))); /* one worker dequeues */
	int32_t pollers;	 /* idle workers polling (at most one polls) */
	struct rto_req *pending; /* dequeued, by priority; under dispatch */
	/*
	 * The slot a worker looks at first (equal priorities take turns): a
	 * hint, any worker moves it at each take.  Here, not in a static of
	 * transport.c: there it shared a line with the options the callers
	 * read at every call, and each take cost the next call a miss
	 * (+100-270 ns an offload, issue 31's bench).
	 */
	uint32_t next_look;
	/* Read by every caller; written only when a worker falls asleep or wakes. */
	int32_t awake __attribute__((aligned(RTO_CACHELINE))); /* workers not asleep */
	int32_t sleepers;	    /* workers in FUTEX_WAIT on wake_seq */
	uint32_t wake_seq;	    /* bumped by a caller that wakes a worker */
	int32_t ready;		    /* helpers started; 0 again in a forked child */
	int32_t helpers;	    /* helper threads running in this process (lifetime.c) */
	int32_t failed;		    /* no helper could start: never tried again (but in a child) */
	int32_t leave;		    /* the library's threads are to end (alone.c) */
	pthread_mutex_t start_lock; /* serialises helper start (all-zero = initialised) */
	uint32_t nslots;	    /* slots ever claimed: the workers look at [0, nslots) */
	/* Helpers only (predict.c, pollcap.c). */
	struct rto_predict predict __attribute__((aligned(RTO_CACHELINE)));
	/* Workers only: each slot's last post taken (transport.c). */
	uint64_t slot_seen[RTO_SLOTS] __attribute__((aligned(RTO_CACHELINE)));
	/* A marked thread's request slot: the line a polling worker watches (transport.h). */
	struct __attribute__((aligned(RTO_CACHELINE))) rto_slot {
		struct rto_req req;
		const void *holder; /* the thread's mark (transport.c), NULL: free */
	} slots[RTO_SLOTS];
	/*
	 * The workers' CPUs, all of them in every worker's mask: written once
	 * by the helpers' start before its first worker (cpus_set, release;
	 * 0 again in a forked child), read by the workers (helper.c) and by
	 * every caller (transport.c: a caller on one of them sleeps at once).
	 */
	cpu_set_t cpus __attribute__((aligned(RTO_CACHELINE)));
	int32_t cpus_set;
	/* Each worker's call in progress, for a caller's kick and the idle priority (helper.c). */
	struct __attribute__((aligned(RTO_CACHELINE))) rto_running {
		const struct rto_req *req; /* written by its worker only */
		int32_t tid;
		int32_t in_call; /* from before it takes the caller's priority to its publish */
		/* For stall.c's watchdog: what the call is and since when (its worker's clock). */
		struct rto_fn *fn;
		uint64_t since;
		int32_t alive; /* a worker runs on this row (helper.c: rows past workers= come and
				  go) */
	} running[RTO_WORKERS_MAX];
	/*
	 * Calls that waited longer than stall_us, noted by their callers for
	 * the watchdog (stall.c); stall_seq is the watchdog's futex word.
	 */
	uint32_t stall_seq __attribute__((aligned(RTO_CACHELINE)));
	struct rto_stall_note {
		uint32_t gen;  /* odd: a caller holds the note; even: free */
		uint32_t live; /* gen once the fields below are written, 0 while they are not */
		int32_t tid;   /* the caller's (0: unknown) */
		int32_t prio;  /* the caller's realtime priority (0: not a realtime thread) */
		struct rto_fn *fn;
		const struct rto_req *req; /* the request a worker runs: its slot's, or its own */
		uint64_t t0;		   /* the call's start, rto_now_ns() */
	} stalls[RTO_STALL_NOTES];
};

/* On a MADV_WIPEONFORK mapping: a child, even of a raw clone(), sees zeros. */
RTO_HIDDEN extern struct rto_queue *rto_q;

_Static_assert(offsetof(struct rto_req, inl) == RTO_CACHELINE - RTO_REQ_INLINE &&
		       offsetof(struct rto_req, args) == RTO_CACHELINE,
	       "what every call moves fits the request's first cache line");

struct rto_options;
/* spin_ns=, stall_us=, on_stall=, once at load (init.c), before anything here runs. */
RTO_HIDDEN void rto_transport_configure(const struct rto_options *o);

#endif /* RTO_TRANSPORT_H */
