/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * options.c: RTOFFLOAD_OPTIONS: the option values (rto_opt) and their parser.
 *
 * Concurrency: rto_opt is written once, by rto_options_load() in the constructor, before any
 * thread is marked or a helper starts; read everywhere afterwards without
 * synchronisation.  rto_options_parse() is pure (no I/O, no globals): fuzzed.
 */
#ifndef RTO_OPTIONS_H
#define RTO_OPTIONS_H

#include "rto_base.h"

#define RTO_EXIT_CONFIG 78 /* EX_CONFIG: the program does not run */

enum rto_prio_mode { RTO_PRIO_NONE, RTO_PRIO_FIXED, RTO_PRIO_INHERIT };
/* helper_wake=: how an idle helper waits for the next call (helper.c, predict.c). */
enum rto_wake { RTO_WAKE_IDLE, RTO_WAKE_PREDICT };

struct rto_options {
	cpu_set_t rt_cpus; /* rt_cpus=LIST */
	int rt_cpus_set;
	cpu_set_t helper_cpus; /* helper_cpus=LIST */
	int helper_cpus_set;
	int helper_prio_mode;	 /* enum rto_prio_mode */
	int helper_prio;	 /* for RTO_PRIO_FIXED */
	unsigned workers;	 /* workers=N */
	int mode;		 /* mode=offload|strict: RT_OFFLOAD_MODE_* */
	uint64_t spin_ns;	 /* spin_ns=N */
	uint64_t helper_idle_us; /* helper_idle_us=N */
	int helper_wake;	 /* helper_wake=predict|idle: enum rto_wake */
	unsigned mark;		 /* mark=: RTO_MARK_* bits */
	char mark_name[64];	 /* mark=name:GLOB */
	int stats;		 /* stats=0|1 */
	char stats_file[PATH_MAX];
	char policy[1024];	     /* policy=RULE,RULE: checked by policy.c */
	char policy_file[PATH_MAX];  /* policy_file=PATH */
	int on_strict;		     /* on_strict=errno|signal|abort: RTO_ON_STRICT_* */
	char report_path[PATH_MAX];  /* report_path=PATH; empty: stderr */
	unsigned report_max;	     /* report_max=N */
	char suppressions[PATH_MAX]; /* suppressions=PATH */
	int report_offloads;	     /* report_offloads=0|1 */
	unsigned fd_local;	     /* fd_local=: RTO_FD_* kinds that run locally */
	unsigned async_ring_kb;	     /* async_ring_kb=N: each thread's ring */
	int async_full;		     /* async_full=wait|sync */
	char async_path[1024];	     /* async_path=PREFIX,...: checked by options.c */
	int mlock;		     /* mlock=1: mlockall(MCL_CURRENT|MCL_FUTURE) at load */
	unsigned prefault_stack_kb;  /* prefault_stack_kb=N: touched at mark */
	int malloc_mode;	     /* malloc=glibc|pool: RTO_MALLOC_* (rto_malloc.h) */
	unsigned pool_kb;	     /* pool_kb=N: each marked thread's pool */
	int pool_full;		     /* pool_full=fallback|fail|abort: RTO_POOL_FULL_* */
	unsigned prefault_heap_kb;   /* prefault_heap_kb=N: malloc=glibc, mlock=1, at mark */
	int verbosity;
	int live; /* live=0|1: the segment for rtoffload stat/top (live.c) */
};

RTO_HIDDEN extern struct rto_options rto_opt;

/* mark= policies; the low four are also a thread's traits (automark.c). */
#define RTO_MARK_MAIN 0x01 /* the initial thread */
#define RTO_MARK_RT   0x02 /* SCHED_FIFO or SCHED_RR */
#define RTO_MARK_CPUS 0x04 /* affinity inside rt_cpus */
#define RTO_MARK_NAME 0x08 /* name matches mark_name */
#define RTO_MARK_ALL  0x10 /* every thread */

/* Defaults into *o. */
RTO_HIDDEN void rto_options_defaults(struct rto_options *o);
/*
 * Parse "key=value:key=value" into *o (which holds defaults).  Returns 0,
 * or -1 with a one-line message naming the key in err.  Pure: no I/O, so
 * it can be fuzzed.
 */
RTO_HIDDEN int rto_options_parse(const char *text, struct rto_options *o, char *err, size_t len);
/* The ':' that ends the "key=value" segment at s (a value may hold ':'). */
RTO_HIDDEN const char *rto_options_segment_end(const char *s);
/* rto_opt from the environment; a bad option ends the program (exit 78). */
RTO_HIDDEN void rto_options_load(void);

enum rto_async_full { RTO_ASYNC_FULL_WAIT, RTO_ASYNC_FULL_SYNC };

enum rto_on_strict { RTO_ON_STRICT_ERRNO, RTO_ON_STRICT_SIGNAL, RTO_ON_STRICT_ABORT };

#endif /* RTO_OPTIONS_H */
