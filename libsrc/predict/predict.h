/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * helper_wake=predict (predict.c): when will the next call of a periodic
 * marked thread come, and how long should an idle helper poll around it?
 * Included by transport.h (struct rto_queue holds a struct rto_predict).
 *
 * Concurrency: helper side only: every function here takes s->lock, none
 * runs on a caller.  The lock guards the whole struct but hint[] and the
 * polling budget:
 *   rto_predict_served()   any worker, after it published the call (the
 *        caller never waits for this bookkeeping); several at once
 *   rto_predict_plan(), _sleeps(), _woke(), _hit(), _missed()   the one
 *        polling worker (helper.c: the first idle worker, q->pollers); which
 *        worker that is changes from one idle turn to the next
 *   rto_predict_configure() (at load), rto_pollcap_init()   once, before the
 *        helpers start
 *   rto_pollcap_allows()   the poller only: cap_slice_at and cap_used_ns
 *        are not under the lock
 *   hint[]   written by marked callers before they sleep, without a lock,
 *        read by the planner without it (wake_hint.h says why a torn or
 *        stolen word is harmless); rto_wake_word() and rto_wake_fits(),
 *        its format, are pure and run on those callers (wake_hint.c);
 *        rto_wake_hinted*() read a word without the lock
 * stats.c reads the counts under the lock, and leaves them out of its
 * report when the lock is held too long (a helper stopped for good).  The
 * struct lives on struct rto_queue's MADV_WIPEONFORK page: a forked child
 * starts with zeros and an unlocked lock, whatever a helper held.
 */
#ifndef RTO_PREDICT_H
#define RTO_PREDICT_H

#include "rto_base.h"

#include <pthread.h>
#include <stdint.h>

#define RTO_PRED_SLOTS	      8	  /* marked threads followed at once; the least recent goes */
#define RTO_PRED_GAPS	      32  /* burst-to-burst gaps kept per thread */
#define RTO_PRED_LATES	      128 /* lateness samples of timed naps kept */
#define RTO_PRED_LATE_BUCKETS 7
#define RTO_PRED_HINTS	      64 /* wake hints, one word per key hash (below) */
#define RTO_PRED_ARRIVES      64 /* hinted bursts' lateness samples kept */

/*
 * A marked thread's calls less than this apart (from one's return to the
 * next one's start) are one burst of a periodic loop's cycle.  The caller
 * decides (route.c sets RTO_RQ_BURST, request.h), by its own clock: only
 * it knows when it got its last result, which on a VM may be long after
 * the worker published it (a caller that slept wakes tens of microseconds
 * later).
 */
#define RTO_PRED_BURST_NS 30000

/* One marked thread's call pattern, keyed by a hash of its TLS address (request.h). */
struct rto_pattern {
	uint16_t key;
	uint64_t last_t0;	     /* when its last call was made (the caller's clock) */
	uint64_t last_done;	     /* when a helper published its last call */
	uint64_t last_start;	     /* t0 of the first call of its last burst */
	uint64_t prev_start;	     /* ... and of the burst before */
	uint32_t gap[RTO_PRED_GAPS]; /* ns between burst starts, a ring */
	unsigned ngaps, pos;
	unsigned calls_cur;   /* calls in the current burst so far */
	unsigned calls_prev;  /* calls in the burst before */
	int hinted;	      /* its last burst came after a sleep it announced (wake_hint.h) */
	uint64_t word_seen;   /* the end of that sleep as its word said at its last burst */
	unsigned word_slow;   /* bursts in a row whose next word took longer than the wait */
	uint64_t word_judged; /* last_start of the burst word_slow last judged */
	int prio;	      /* its last call's priority (SCHED_FIFO; 0: other) */
	uint64_t win_from, win_until; /* the window last planned for its next burst */
	int win_hinted;		      /* ... from its own word on its sleep */
	/*
	 * Bursts to go before a nap may start within helper_idle_us of its
	 * last call again: RTO_PRED_GAPS after a burst that came sooner than
	 * that after the call before it (rto_predict_promised).
	 */
	unsigned short_quiet;
};

/*
 * Lives in struct rto_queue, on its MADV_WIPEONFORK page: a forked child
 * starts with zeros, an unlocked mutex and nothing learnt.
 */
struct rto_predict {
	pthread_mutex_t lock;
	struct rto_pattern p[RTO_PRED_SLOTS];
	uint64_t window_ns;	       /* adaptive poll window (haltpoll): 0 = not set yet */
	uint64_t overshoot_ns;	       /* how late a timed sleep ends: a high percentile */
	uint32_t late[RTO_PRED_LATES]; /* ... of these last lateness samples, ns, a ring */
	unsigned nlate;
	uint64_t slept_at;	       /* the predicting helper's last sleep began */
	uint64_t woke_at;	       /* ... and ended; UINT64_MAX while it sleeps */
	uint64_t grows, shrinks, naps; /* for the tests and the stats */
	int plan_hinted; /* the window last chosen came from its thread's word on its sleep */
	/* How late hinted bursts came after the sleep they announced ended. */
	uint32_t arrive[RTO_PRED_ARRIVES]; /* ns, a ring */
	unsigned narrive;
	uint64_t arrive_ns; /* a high percentile of them: how long past the wake to poll */
	struct rto_predict_counts {
		/* Bursts of periodic threads, by where their first call fell. */
		uint64_t in_window;	/* inside the planned window, the poller awake */
		uint64_t before_window; /* before it opened: too short a lead */
		uint64_t nap_late;	/* inside it, but the poller's nap had not ended */
		uint64_t after_window;	/* after it closed: the loop itself was late */
		uint64_t hinted;	/* of all these, planned from a wake hint */
		/* How late the poller's timed naps ended: < 5, 10, 20, 40, 80, 160, more us. */
		uint64_t late_hist[RTO_PRED_LATE_BUCKETS];
		/*
		 * nap_late bursts, by how long after the nap was due to end
		 * they came (the same buckets): how far past its time the
		 * housekeeping CPU still slept, at least.
		 */
		uint64_t overrun_hist[RTO_PRED_LATE_BUCKETS];
		/* The timed sleeps the naps took (helper_nap_us: a nap sleeps in steps). */
		uint64_t nap_sleeps;
	} counts;
	/* pollcap.c: realtime polling budget, touched by the one poller only. */
	uint64_t cap_slice_at, cap_used_ns;
	/*
	 * Written by marked callers before they sleep (wake_hint.h), read
	 * by the planning helper: lines of their own, away from the lock.
	 */
	uint64_t hint[RTO_PRED_HINTS] __attribute__((aligned(RTO_CACHELINE)));
};

/*
 * A hint word (wake_hint.h: a marked thread's word on when its sleep
 * ends): the key in the top 16 bits, then a bit that says "at the
 * latest" (a wait that an event may end sooner: the planner uses it only
 * where it fits the loop's own period), then the low 47 bits of the end
 * of the sleep (rto_now_ns(), CLOCK_MONOTONIC).  The reader rebuilds the
 * full time from its own clock: ends within 19 hours either side of now
 * come out right.
 */
#define RTO_WAKE_BITS	   47
#define RTO_WAKE_MASK	   ((UINT64_C(1) << RTO_WAKE_BITS) - 1)
#define RTO_WAKE_BOUND	   (UINT64_C(1) << RTO_WAKE_BITS) /* "at the latest" */
#define RTO_WAKE_KEY_SHIFT 48

/* bound: RTO_WAKE_BOUND for a wait that may end sooner, 0 for a sleep. */
static inline uint64_t rto_wake_word(uint16_t key, uint64_t at, uint64_t bound)
{
	return (uint64_t)key << RTO_WAKE_KEY_SHIFT | bound | (at & RTO_WAKE_MASK);
}

/*
 * 1: a sleep ending at `at` fits a word read back against a clock near
 * now: not past, and within half the 47 bits (19 hours).  An
 * absolute deadline on a machine up for longer than 39 hours fits too:
 * only the distance counts.
 */
static inline int rto_wake_fits(uint64_t at, uint64_t now)
{
	return at >= now && at - now < (RTO_WAKE_MASK >> 1);
}

/*
 * When key's announced sleep ends (may be past), or 0: no word of key's.
 * *bound (when not NULL): 1 if the word says "at the latest".  Without a
 * lock: a word is written whole, and the key says whose it is.
 */
RTO_HIDDEN uint64_t rto_wake_hinted_bound(const struct rto_predict *s, uint16_t key, uint64_t now,
					  int *bound);
RTO_HIDDEN uint64_t rto_wake_hinted(const struct rto_predict *s, uint16_t key, uint64_t now);

enum rto_plan_kind {
	RTO_PLAN_NONE,	/* no periodic caller (or an aperiodic one): today's helper_idle_us */
	RTO_PLAN_POLL,	/* sleep until sleep_until (if later than now), then poll to poll_until */
	RTO_PLAN_SLEEP, /* every periodic caller is overdue: sleep until a caller wakes us */
};

struct rto_plan {
	uint64_t sleep_until, poll_until;
	int linger; /* polling for the next call of a burst, not a predicted window */
	int prio;   /* the priority of the thread it waits for (0: none known, or SCHED_OTHER) */
	/* Non-NULL: also stop polling when this word is no longer hint_was (a new hint). */
	const uint64_t *hint;
	uint64_t hint_was;
};

/*
 * A helper published, at now, key's call made at t0; burst: the caller's
 * first call of a burst (RTO_RQ_BURST); prio: the caller's priority.  After the publish, so that
 * the caller's call never waits for this bookkeeping.
 */
RTO_HIDDEN void rto_predict_served(struct rto_predict *s, uint16_t key, uint64_t t0, int burst,
				   uint64_t now, int prio);
/*
 * helper_idle_us in ns (helper.c converts it, at load): how long a loop
 * later than its window is still polled for, as a lone late loop gets,
 * when another thread's window comes next.  Once, before the helpers
 * start; 0 (the default): never.
 */
RTO_HIDDEN void rto_predict_configure(uint64_t helper_idle_ns);
/*
 * Until when the polling helper must not nap (0: no such promise): the
 * user's helper_idle_us of polling after the last call of a thread that
 * recently made a call sooner than that after its previous one.  Where
 * helper_wake=idle would have polled through the gap, predict does too.
 */
RTO_HIDDEN uint64_t rto_predict_promised(struct rto_predict *s);
/* What the polling helper should do now. */
RTO_HIDDEN int rto_predict_plan(struct rto_predict *s, uint64_t now, struct rto_plan *p);
/*
 * The polling helper sleeps (from now), and woke (at now; timed_out: it
 * was not woken), after `sleeps` timed sleeps (helper_nap_us's steps).
 */
RTO_HIDDEN void rto_predict_sleeps(struct rto_predict *s, uint64_t now);
RTO_HIDDEN void rto_predict_woke(struct rto_predict *s, uint64_t wanted, uint64_t now,
				 int timed_out, unsigned sleeps);
/* A planned window caught its call while polling: a little less margin next time. */
RTO_HIDDEN void rto_predict_hit(struct rto_predict *s);
/* A planned window ended with no call: poll less next time. */
RTO_HIDDEN void rto_predict_missed(struct rto_predict *s);

/* pollcap.c: may the poller go on polling at a realtime priority? */
RTO_HIDDEN void rto_pollcap_init(void);
RTO_HIDDEN int rto_pollcap_allows(struct rto_predict *s, uint64_t now, uint64_t rt_ns);

#endif
