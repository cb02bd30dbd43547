/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The live view's shared-memory segment, /dev/shm/rtoffload.PID: its
 * layout, shared by the library that writes it (live.c) and the launcher
 * that reads it (rtoffload stat, rtoffload top).  A reader asks for a
 * fresh copy by incrementing `request` and waking it (a futex shared
 * between processes); the library's publisher thread copies its counters
 * in, under the seqlock `seq`, and stores the request it served in
 * `published`.
 *
 * Concurrency: one writer, the publisher thread of the process (live.c);
 * readers in other processes (the launcher), any number, that take no
 * lock of the writer's: they copy the segment and keep the copy only if
 * `seq` was even and unchanged around it.  `request` is the readers'
 * (atomic increment), `published` the writer's; both are futex words
 * shared between processes.
 */
#ifndef RTO_LIVE_LAYOUT_H
#define RTO_LIVE_LAYOUT_H

#include <stdint.h>

#include "fn.h" /* RTO_HIST_BUCKETS */

#define RTO_LIVE_DIR	 "/dev/shm"
#define RTO_LIVE_PREFIX	 "rtoffload."
#define RTO_LIVE_MAGIC	 UINT64_C(0x315645494c4f5452) /* "RTOLIEV1" */
#define RTO_LIVE_VERSION 3			      /* 2: stalls; 3: input waits */
#define RTO_LIVE_FNS	 256
#define RTO_LIVE_THREADS 256

struct rto_live_counts {
	uint64_t offloaded, local, denied, async, fallback;
};

struct rto_live_fn {
	char name[32];
	struct rto_live_counts c;
	uint64_t max_ns;
	uint64_t hist[RTO_HIST_BUCKETS]; /* round trips since start: readers diff two copies */
};

struct rto_live_thread {
	char name[17];
	unsigned char exited;
	int32_t tid;
	struct rto_live_counts c;
	uint64_t marked_ns, minor, major;
};

enum { RTO_LIVE_HELPERS_RUNNING = 1, RTO_LIVE_HELPERS_FAILED = 2 };

struct rto_live {
	uint64_t magic;
	uint32_t version;
	int32_t pid;
	uint64_t starttime;    /* the process's start (/proc/PID/stat, field 22): pid reuse */
	uint32_t request;      /* futex, shared: incremented by a reader */
	uint32_t published;    /* futex, shared: the last request served */
	uint32_t seq;	       /* even: stable; odd: being written */
	uint32_t size;	       /* sizeof(struct rto_live) */
	uint64_t published_ns; /* CLOCK_MONOTONIC of the last copy */
	uint64_t copies;       /* how many copies were made */
	char helper_cpus[256];
	int32_t workers, helpers;     /* helpers: RTO_LIVE_HELPERS_* */
	struct rto_live_counts total; /* as rt_offload_get_stats() */
	uint64_t p50_ns, p99_ns, max_ns, minor, major;
	uint64_t async_queued, async_full; /* writes queued; times a ring was full */
	uint64_t ring_used, ring_cap;	   /* bytes in the async rings now, their size */
	uint32_t rings;
	uint32_t nfns, nthreads;
	uint64_t other_threads; /* marked threads beyond the table */
	struct rto_live_fn fns[RTO_LIVE_FNS];
	struct rto_live_thread threads[RTO_LIVE_THREADS];
	/* Stalls (stall.c): since start, and the calls stalled at this copy. */
	uint64_t stalls, stalls_unclaimed, stalls_running, stalls_taken_back, workers_grown;
	uint64_t input_waits; /* late calls whose helper waited for input: not stalls */
	uint32_t nstalled;
	struct rto_live_stall {
		char fn[32];
		int32_t tid;	/* the caller's */
		int32_t helper; /* the worker running it, 0: no helper took it */
		uint64_t ns;	/* waited so far */
		int32_t input;	/* its helper waits for input, as its caller would have */
		int32_t pad;
	} stalled[16];
};

/* The largest value of histogram bucket b (stats.c's log-linear buckets). */
static inline uint64_t rto_live_bucket_top(unsigned b)
{
	if (b < RTO_HIST_SUB)
		return b;
	unsigned msb = b / RTO_HIST_SUB + 2;
	uint64_t low = (uint64_t)(RTO_HIST_SUB + b % RTO_HIST_SUB) << (msb - 3);
	return low + ((uint64_t)1 << (msb - 3)) - 1;
}

#endif /* RTO_LIVE_LAYOUT_H */
