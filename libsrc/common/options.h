/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * RTOFFLOAD_OPTIONS (options.c, part of rto_common: rto_common.h): the
 * options, their values, their defaults and the parser.  The library
 * loads them from the environment (options_load.c); the launcher parses
 * them to check and explain a configuration.
 *
 * Concurrency: the parser has no state of its own (no I/O, no malloc): it
 * fills the struct rto_options its caller gives it, so any thread may run
 * it.  The library's own copy, rto_opt, is filled once at load and
 * read-only afterwards (options_load.h).
 */
#ifndef RTO_OPTIONS_H
#define RTO_OPTIONS_H

#include "rto_common.h"

#include <limits.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>

#define RTO_EXIT_CONFIG 78 /* EX_CONFIG: the program does not run */
/* The longest error line the parser writes (the key list is ~600 bytes today). */
#define RTO_OPTIONS_ERR_MAX 900

enum rto_prio_mode { RTO_PRIO_NONE, RTO_PRIO_FIXED, RTO_PRIO_INHERIT };
/* helper_wake=: how an idle helper waits for the next call (helper.c, predict.c). */
enum rto_wake { RTO_WAKE_IDLE, RTO_WAKE_PREDICT };

/* on_strict=, async_full=, malloc=, pool_full= */
enum rto_on_strict { RTO_ON_STRICT_ERRNO, RTO_ON_STRICT_SIGNAL, RTO_ON_STRICT_ABORT };
/* on_stall=: what a call no helper took within stall_us does (transport.c). */
enum rto_on_stall { RTO_ON_STALL_WAIT, RTO_ON_STALL_LOCAL };
enum rto_async_full { RTO_ASYNC_FULL_WAIT, RTO_ASYNC_FULL_SYNC };
enum rto_malloc_mode { RTO_MALLOC_GLIBC = 0, RTO_MALLOC_POOL = 1 };
enum rto_pool_full { RTO_POOL_FULL_FALLBACK = 0, RTO_POOL_FULL_FAIL, RTO_POOL_FULL_ABORT };
/* pool_fork=: what a fork()ed child gets of the pools of threads other than the forking one. */
enum rto_pool_fork { RTO_POOL_FORK_COPY = 0, RTO_POOL_FORK_DROP };

/* fd_local= kinds */
#define RTO_FD_PIPE   0x01 /* pipes and FIFOs */
#define RTO_FD_SOCKET 0x02 /* sockets */
#define RTO_FD_ANON   0x04 /* eventfd, timerfd, signalfd, epoll */
#define RTO_FD_TMPFS  0x08 /* files on tmpfs or ramfs, memfd */
#define RTO_FD_CHR    0x10 /* character devices: /dev/null, ttys, serial ports */

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
	uint64_t helper_nap_us;	 /* helper_nap_us=N */
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
	int pool_fork;		     /* pool_fork=copy|drop: RTO_POOL_FORK_* */
	unsigned prefault_heap_kb;   /* prefault_heap_kb=N: malloc=glibc, mlock=1, at mark */
	int verbosity;
	int live;	  /* live=0|1: the segment for rtoffload stat/top (live.c) */
	int backstop;	  /* backstop=on|off: Syscall User Dispatch on marked threads */
	int report_traps; /* report_traps=0|1: each new trapping call site, once */
	int children;	  /* children=caller|helpers: RTO_CHILDREN_* */
	/* Stalls (stall.c): a call waiting longer than stall_us is reported. */
	uint64_t stall_us;    /* stall_us=N, 0: no stall detection */
	int on_stall;	      /* on_stall=wait|local: enum rto_on_stall */
	unsigned workers_max; /* workers_max=N: workers started while all are stuck */
	/* Traces (trace.c). */
	char trace_file[PATH_MAX]; /* trace_file=PATH: Chrome trace-event JSON */
	unsigned trace_ring_kb;	   /* trace_ring_kb=N: each traced thread's ring */
	int trace;		   /* trace=off|lttng: enum rto_trace_opt */
};

/* trace=: LTTng-UST tracepoints (trace.c). */
enum rto_trace_opt { RTO_TRACE_OPT_OFF, RTO_TRACE_OPT_LTTNG };

/* children=: where a marked thread's system/popen/posix_spawn run (route.c). */
#define RTO_CHILDREN_CALLER  0 /* on the caller: the child inherits its state */
#define RTO_CHILDREN_HELPERS 1 /* on a helper: the child starts on the helpers' CPUs */

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
/*
 * A PATH option's file name (stats_file=, trace_file=): pattern with each
 * "%p" replaced by pid, into out (len bytes, NUL-ended).  0, or -1 when it
 * does not fit.
 */
RTO_HIDDEN int rto_options_path(const char *pattern, int pid, char *out, size_t len);
/* What the key of n bytes at `key` does, one line (rtoffload check); NULL: no such key. */
RTO_HIDDEN const char *rto_options_does(const char *key, size_t n);

#endif /* RTO_OPTIONS_H */
