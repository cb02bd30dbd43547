/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * stall.c: calls that waited longer than stall_us, seen and said.
 *
 * Concurrency: rto_stall_note() and rto_stall_clear() run on the caller's
 * path, only once its wait passed stall_us: a few atomics and a FUTEX_WAKE.
 * Everything else runs on the watchdog thread, or reads a snapshot.
 */
#ifndef RTO_STALL_H
#define RTO_STALL_H

#include "rto_base.h"

struct rto_req;
struct rto_fn;

/*
 * The caller's request w (its slot's or its own) is not DONE stall_us after
 * t0: note it for the watchdog and wake it.  Returns the note's handle for
 * rto_stall_clear(), 0 when the table is full (the stall is counted only).
 */
RTO_HIDDEN unsigned rto_stall_note(const struct rto_req *w, struct rto_fn *fn, uint64_t t0);
/* The noted call returned: its note goes (the live view stops showing it). */
RTO_HIDDEN void rto_stall_clear(unsigned handle);
/* on_stall=local took a noted call back: counted. */
RTO_HIDDEN void rto_stall_taken_back(void);

/*
 * What the watchdog may do to the helpers when every worker is stuck:
 * helper.c's, given by init.c (helper.c calls transport.c, which notes
 * stalls here: these calls back go through pointers, not a cycle).
 */
struct rto_stall_remedies {
	int (*grow)(void);		     /* one more worker (0), up to workers_max */
	int (*move_off)(pid_t tid, int cpu); /* worker tid off cpu, another task holds it (0) */
};
/* Start the watchdog with the helpers (init.c): their CPUs are the queue's (rto_q->cpus). */
RTO_HIDDEN void rto_stall_start(const struct rto_stall_remedies *r);
/*
 * The watchdog and the probe thread end (alone.c has set rto_q->leave):
 * each is woken and leaves its loop.  The next rto_stall_start() starts
 * them again.
 */
RTO_HIDDEN void rto_stall_leave(void);

/* The statistics' figures (stats.c, live.c). */
struct rto_stall_counts {
	uint64_t calls;	     /* calls that waited longer than stall_us */
	uint64_t unclaimed;  /* ... of which no helper had taken yet */
	uint64_t running;    /* ... of which a helper was running */
	uint64_t taken_back; /* ... of which their caller ran (on_stall=local) */
	uint64_t grown;	     /* workers started beyond workers= */
	uint64_t moved;	     /* workers moved off a CPU another task held (several CPUs) */
	/*
	 * Calls late on a worker that waits for input, as the caller would
	 * have (stall_probe.c): not stalls of the library, not in calls.
	 */
	uint64_t input;
	uint32_t now;	    /* calls stalled right now */
	uint32_t input_now; /* ... and waiting for input on a worker right now */
};
RTO_HIDDEN void rto_stall_counts(struct rto_stall_counts *c);
/* The calls stalled now, for the live view: the one after *pos (start at 0). */
struct rto_stall_row {
	const char *fn;
	int32_t tid;	/* the caller's */
	int32_t helper; /* the worker running it, 0: none has taken it */
	uint64_t ns;	/* how long it has waited so far */
	int input;	/* its worker waits for input (not a stall of the library) */
};
RTO_HIDDEN int rto_stall_next(unsigned *pos, struct rto_stall_row *row);

struct rto_options;
/* stall_us=, once at load (init.c), before anything here runs. */
RTO_HIDDEN void rto_stall_configure(const struct rto_options *o);

#endif /* RTO_STALL_H */
