/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * shims.c / wrap_*.c: the wrapped-function registry: descriptors, classes, handlings, flags,
 * counters.
 *
 * Concurrency: A descriptor's handling is written at load (policy.c) before any thread is
 * marked; its counters are atomics; first_done is set once (route.c).
 */
#ifndef RTO_FN_H
#define RTO_FN_H

#include "rto_base.h"

enum rto_class {
	RTO_CLASS_DESC,
	RTO_CLASS_PATH,
	RTO_CLASS_DIR,
	RTO_CLASS_STDIO,
	RTO_CLASS_DNS,
	RTO_CLASS_NET,
	RTO_CLASS_MEMORY,
	RTO_CLASS_PROCESS,
	RTO_CLASS_NAMES,  /* users, groups, time zone, locale, system figures */
	RTO_CLASS_RTSAFE, /* waits and locks that stay on the caller */
	RTO_CLASS_COUNT,
	RTO_CLASS_INTERNAL = RTO_CLASS_COUNT /* the library's own requests: not in totals */
};

struct rto_fn;

enum rto_handling {
	RTO_OFFLOAD, /* run on a helper (the default for non-deterministic calls) */
	RTO_LOCAL,   /* allow-list: run on the caller */
	RTO_STRICT,  /* refuse: RT_OFFLOAD_STRICT_ERRNO */
	RTO_WARN,    /* run on the caller, and report where it came from */
	RTO_ASYNC,   /* writes: copy into the thread's ring, a helper writes later */
};

#define RTO_HIST_SUB	 8  /* sub-buckets per power of two: 12.5% resolution */
#define RTO_HIST_POW	 40 /* up to 2^40 ns, about 18 minutes */
#define RTO_HIST_BUCKETS (RTO_HIST_POW * RTO_HIST_SUB)

struct rto_counters {
	uint64_t local, denied, async;
	uint64_t fallback; /* would have been offloaded, ran on the caller: no helper */
	uint64_t max_ns;
	/* Round trips, log-linear; their total is the offloaded count (rto_counters_offloaded). */
	uint64_t hist[RTO_HIST_BUCKETS];
};

/*
 * Calls offloaded: one atomic per call on the caller's return path, not
 * two.  A reader racing with callers sees each bucket's count of some
 * moment, as it did with a counter of its own.
 */
static inline uint64_t rto_counters_offloaded(const struct rto_counters *c)
{
	uint64_t n = 0;

	for (unsigned b = 0; b < RTO_HIST_BUCKETS; b++)
		n += CMM_LOAD_SHARED(c->hist[b]);
	return n;
}

/*
 * What makes a call special to the routing core (route.c) and the worker
 * (helper.c).  shim-gen writes them from calls.tbl (its header says which
 * column or annotation gives each); the C never asks which function a call is.
 */
enum rto_fn_flag {
	RTO_F_BYFD = 1 << 0,	  /* local when its descriptor's kernel path is short (fdclass.c) */
	RTO_F_LOCK = 1 << 1,	  /* takes its stream's lock: the caller takes it and lends it */
	RTO_F_CALLBACKS = 1 << 2, /* calls back pointers a sanitizer may have wrapped */
	RTO_F_TEARDOWN = 1 << 3,  /* frees its stream: never lend that stream's lock */
	RTO_F_RESOLVER = 1 << 4,  /* the caller's resolver state (_res) and h_errno travel */
	RTO_F_SIGMASK = 1 << 5,	  /* runs under the caller's signal mask (children inherit it) */
	RTO_F_DLERROR = 1 << 6,	  /* its dlerror() message goes back to the caller */
	RTO_F_CANCEL = 1 << 7,	  /* a POSIX cancellation point (transport.c) */
	RTO_F_CAN_ASYNC = 1 << 8, /* a write that RTO_ASYNC may queue */
	RTO_F_INTERNAL = 1 << 9,  /* the library's own request: never refused, never reported */
	RTO_F_FIRST = 1 << 10,	/* only its first use is slow: offloaded until a marked call ran */
	RTO_F_CALLER = 1 << 11, /* replaces the process image: on the caller, never a helper */
	RTO_F_SPAWN = 1 << 12,	/* starts a child: on the caller unless children=helpers */
};

struct rto_fn {
	const char *name;
	void (*run)(void *args); /* calls the real function with *args */
	unsigned char cls;	 /* enum rto_class */
	unsigned char handling;	 /* enum rto_handling */
	unsigned short flags;	 /* enum rto_fn_flag */
	unsigned char args_size; /* its args travel inside the request: their size; else 0 */
	struct rto_counters *ctr;
	int first_done; /* RTO_F_FIRST: a marked call of it ran on a helper (route.c) */
};

/* Every descriptor also lands in section rto_fns, for the stats walk. */
#define RTO_FN_ARGS(fname, class, handl, runfn, fflags, size)                                   \
	static struct rto_counters rto_ctr_##fname;                                             \
	RTO_HIDDEN struct rto_fn rto_fn_##fname = {                                             \
		#fname, runfn, class, handl, fflags, size, &rto_ctr_##fname, 0};                \
	static struct rto_fn *const rto_fnp_##fname __attribute__((used, section("rto_fns"))) = \
		&rto_fn_##fname
#define RTO_FN_FULL(fname, class, handl, runfn, fflags) \
	RTO_FN_ARGS(fname, class, handl, runfn, fflags, 0)
#define RTO_FN(fname, class, handl, runfn) RTO_FN_FULL(fname, class, handl, runfn, 0)
/* A "hand" row's descriptor, in the wrap_*.c that defines rto_run_NAME (shims.h). */
#define RTO_FN_HAND(fname) RTO_FN_HAND_##fname

RTO_HIDDEN extern struct rto_fn *const __start_rto_fns[];
RTO_HIDDEN extern struct rto_fn *const __stop_rto_fns[];

#endif /* RTO_FN_H */
