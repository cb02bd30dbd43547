/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Internal interfaces of librtoffload.  Everything here uses the rto_
 * prefix and hidden visibility; only rt_offload_* and the wrapped libc
 * names leave the shared object.
 *
 * The path of one call, file by file:
 *   shims.c (generated from shim-gen/calls.tbl)  the wrapper: marked? -> rto_call()
 *   route.c      decides: local, offload or refuse (strict)
 *   transport.c  caller side: request on the stack, wfcq enqueue, futex wait
 *   helper.c     worker side: dequeue by priority, run the real call, wake
 */
#ifndef RTO_H
#define RTO_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <limits.h>
#include <pthread.h>

#define _LGPL_SOURCE	    /* inline wfcq fast paths; we are LGPL too */
#include "tsan_annot.h"	    /* under ThreadSanitizer: liburcu's atomics as __atomic */
#include "helgrind_annot.h" /* the valgrind build: those atomics as Helgrind's edges */
#include <urcu/wfcqueue.h>

#define RTO_HIDDEN	__attribute__((visibility("hidden")))
#define RTO_EXPORT	__attribute__((visibility("default")))
#define RTO_LIKELY(x)	__builtin_expect(!!(x), 1)
#define RTO_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define RTO_TLS		__attribute__((tls_model("initial-exec")))
/*
 * No sanitizer instrumentation: code a sanitizer runtime may reach before
 * it is initialised (TSan's start-up installs its signal handlers through
 * sigaction(), ASan's log_path= makes its directory with mkdir(): both our
 * wrappers, instrumented code there crashes on shadow memory that does not
 * exist yet), and the first steps of our signal trampoline.  Nothing else.
 */
#define RTO_UNINSTRUMENTED __attribute__((no_sanitize("address", "thread", "undefined")))

/* ---- options.c: RTOFFLOAD_OPTIONS ------------------------------------ */

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
	int live;	  /* live=0|1: the segment for rtoffload stat/top (live.c) */
	int backstop;	  /* backstop=on|off: Syscall User Dispatch on marked threads */
	int report_traps; /* report_traps=0|1: each new trapping call site, once */
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

/* ---- cpulist.c: CPU lists --------------------------------------------- */

/* "1,4-7" into *set.  Returns 0 or -1 (syntax, or CPU >= CPU_SETSIZE). */
RTO_HIDDEN int rto_cpulist_parse(const char *s, cpu_set_t *set);
RTO_HIDDEN void rto_cpulist_format(const cpu_set_t *set, char *buf, size_t len);
/*
 * The CPUs the helpers run on: helper_cpus= if given, else online CPUs
 * minus isolated, minus rt_cpus, minus `avoid` (the CPUs marked threads
 * are pinned to), dropping those subtractions one by one while nothing
 * would remain.  Returns how many subtractions had to be dropped.
 */
RTO_HIDDEN int rto_helper_cpus(const cpu_set_t *avoid, cpu_set_t *out);
/* The online CPUs (sysfs; else the process's affinity; else CPU 0). */
RTO_HIDDEN void rto_cpus_online(cpu_set_t *set);

/* ---- thread.c: per-thread state ---------------------------------------- */

enum rto_route {
	RTO_ROUTE_DIRECT = 0, /* unmarked: call libc */
	RTO_ROUTE_MARKED = 1, /* marked and not already inside an offload */
	RTO_ROUTE_BUSY = 3,   /* marked, waiting for an offload: nested calls go direct */
};

/*
 * A thread's own statistics (stats.c): written by the thread only, read by
 * the exit report.  Calls are counted on the caller's path, into TLS.
 */
struct rto_thread_stats {
	uint64_t offloaded, local, denied, async;
	uint64_t fallback;     /* offload-mode calls run here: no helper could start */
	uint64_t marked_ns;    /* finished marked intervals */
	uint64_t marked_at;    /* rto_now_ns() when the current one began */
	uint64_t minor, major; /* page faults of the finished marked intervals */
	uint64_t pool_high;    /* malloc=pool: the most bytes its pool held (pool.c) */
	uint64_t pool_fallbacks, pool_failures; /* pool_full= events (malloc.c) */
};

struct rto_thread {
	unsigned char route;	      /* the only field the unmarked fast path reads */
	unsigned char mode;	      /* RT_OFFLOAD_MODE_* + 1; 0: not set, use mode= */
	int prio;		      /* SCHED_FIFO/RR priority at mark time, 0 if other */
	unsigned char by_policy;      /* marked by mark=, not by the API */
	unsigned char traits;	      /* RTO_MARK_* bits this thread has now (automark.c) */
	uint64_t sigmask;	      /* signal mask at mark time, for process-class calls */
	uint64_t minflt, majflt;      /* the thread's fault counts when it was marked */
	int signal_seen;	      /* the last signal whose handler ran here (signals.c) */
	unsigned char identity_known; /* prio and sigmask captured (thread.c) */
	unsigned char own_filter;     /* a seccomp filter of its own: calls run here */
	char *dlerror;		      /* an offloaded dlopen/dlclose's error, for dlerror() */
	unsigned char vforking;	      /* a vfork() child runs on this state: not our descriptors */
	unsigned char exited;	      /* thread.c: its exit was accounted */
	int row;		      /* stats.c: 1 + its row in the thread table; -1: table full */
	struct rto_pool *pool;	      /* malloc=pool: its own pool (pool.c), kept across unmarks */
	unsigned char pool_keyed;     /* its exit will give the pool up (pool.c) */
	struct rto_thread_stats st;   /* stats.c */
};

RTO_HIDDEN extern __thread struct rto_thread rto_self RTO_TLS;

/*
 * A counter written by one thread and read by others (the exit report):
 * relaxed atomics, plain loads and stores on every target we build for.
 */
static inline uint64_t rto_read64(const uint64_t *c)
{
	return __atomic_load_n(c, __ATOMIC_RELAXED);
}
static inline void rto_own_add(uint64_t *c, uint64_t n)
{
	__atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + n, __ATOMIC_RELAXED);
}

/* The calling thread's mode: its own, else the mode= option. */
RTO_HIDDEN int rto_thread_mode(void);

/*
 * One TLS load and a branch: true for every unmarked thread.  Always
 * inline: it runs in the uninstrumented wrappers, before a sanitizer is up.
 */
static inline __attribute__((always_inline)) int rto_direct(void)
{
	return RTO_LIKELY(rto_self.route != RTO_ROUTE_MARKED);
}

/* thread.c: what a helper must know of its caller (priority, signal mask). */
RTO_HIDDEN void rto_thread_capture(struct rto_thread *t);
/* thread.c: the calling thread becomes marked / unmarked (faults, prefault). */
RTO_HIDDEN void rto_thread_marked(void);
RTO_HIDDEN void rto_thread_unmarked(void);
RTO_HIDDEN void rto_thread_init(void);
RTO_HIDDEN void rto_thread_faults(uint64_t *minor, uint64_t *major);
/* thread.c: t (another thread, tid) was marked / unmarked by mark= (automark.c). */
RTO_HIDDEN void rto_thread_marked_remote(struct rto_thread *t, pid_t tid);
RTO_HIDDEN void rto_thread_unmarked_remote(struct rto_thread *t, pid_t tid);
/* thread.c: the calling thread exits (a thread-specific destructor). */
RTO_HIDDEN void rto_thread_exits(void);
/* thread.c: in a forked child, the forking thread's counting starts afresh. */
RTO_HIDDEN void rto_thread_after_fork(void);
/* thread.c: faults and marked time are counted (stats=1 or stats_file=). */
RTO_HIDDEN int rto_thread_counting(void);
/* thread.c: the fault counters of thread tid (0: the caller): 0, or -1. */
RTO_HIDDEN int rto_thread_fault_counts(pid_t tid, uint64_t *minor, uint64_t *major);

/* automark.c: mark= for programs that cannot call the API. */
RTO_HIDDEN void rto_automark_init(void);
/* How the library starts its own threads: through a sanitizer's interceptor when one is first. */
RTO_HIDDEN int rto_create_own_thread(pthread_t *thread, const pthread_attr_t *attr,
				     void *(*fn)(void *), void *arg);

/* ---- the wrapped-function registry (shims.c, wrap_*.c) ----------------- */

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

enum rto_async_full { RTO_ASYNC_FULL_WAIT, RTO_ASYNC_FULL_SYNC };

/* async.c: asynchronous writes for logging. */
RTO_HIDDEN int rto_async_put(struct rto_fn *fn, int fd, FILE *f, const void *data, size_t len,
			     int nl);
RTO_HIDDEN int rto_async_vprintf(struct rto_fn *fn, FILE *f, int flag, const char *fmt, va_list ap,
				 int *ret);
RTO_HIDDEN void rto_async_barrier(void);
/* A stream lock was released: queue the drain a helper gave up on (if any). */
RTO_HIDDEN void rto_async_kick(void);
/* A helper's drain gave up on a taken lock: idle helpers retry it (helper.c). */
#define RTO_ASYNC_RETRY_NS (10 * 1000 * 1000)
RTO_HIDDEN int rto_async_stalled(void);
RTO_HIDDEN void rto_async_retry(void);
/* f is being closed: abort() no longer flushes it (lock-free, bounded). */
RTO_HIDDEN void rto_async_forget_stream(FILE *f);
RTO_HIDDEN void rto_async_thread_marked(void);
RTO_HIDDEN void rto_async_at_exit(void);
RTO_HIDDEN void rto_async_counts(uint64_t *queued, uint64_t *full);
/* abort(): what is queued is written first, then libc's abort() (the exported abort() too). */
RTO_HIDDEN __attribute__((noreturn)) void rto_async_abort(void);
/* Bytes queued in the async rings now, their total size, and how many rings. */
RTO_HIDDEN void rto_async_ring_use(uint64_t *used, uint64_t *cap, uint32_t *rings);
RTO_HIDDEN void rto_async_forget(int fd);
RTO_HIDDEN void rto_async_init(void);
/* async_path=: is this path (absolute, as /proc/self/fd shows it) under a prefix? */
RTO_HIDDEN int rto_async_path_match(const char *path);
RTO_HIDDEN extern int rto_async_paths; /* async_path= was given */
/* policy.c: does any call have the async handling (or async_path= some files)? */
RTO_HIDDEN int rto_policy_has_async(void);

enum rto_on_strict { RTO_ON_STRICT_ERRNO, RTO_ON_STRICT_SIGNAL, RTO_ON_STRICT_ABORT };

/* policy.c: policy= and policy_file=, applied to the descriptors at load. */
RTO_HIDDEN void rto_policy_load(void);
/*
 * Apply one "name:handling" rule (name: a function or a class) to the
 * descriptors.  Returns 0, or -1 with a one-line reason in err.
 */
RTO_HIDDEN int rto_policy_rule(const char *rule, size_t n, char *err, size_t len);

/* callsite.c: where does realtime code make this call? */
enum rto_event {
	RTO_EVENT_WARN,
	RTO_EVENT_STRICT,
	RTO_EVENT_OFFLOAD,
	RTO_EVENT_FAULT,
	RTO_EVENT_POOL_FULL, /* malloc=pool: the pool had no block (malloc.c) */
	RTO_EVENT_TRAP	     /* report_traps=1: a system call trapped (backstop_trap.c) */
};
/* Report (once per call site, then count) that fn was called from here. */
RTO_HIDDEN void rto_callsite_event(int event, struct rto_fn *fn, uint64_t ns);
RTO_HIDDEN void rto_callsite_init(void);

/* One call site, for the exit report (stats.c). */
struct rto_site_row {
	const char *where, *event, *fn;
	uint64_t count, total_ns, max_ns; /* offload: round trips */
	uint64_t minor, major;		  /* fault: faults taken at the site's calls */
	int suppressed;
};
/* The site after *pos (start at 0): 1 and *row, or 0 at the end. */
RTO_HIDDEN int rto_callsite_next(unsigned *pos, struct rto_site_row *row);

/*
 * faults:warn (policy=): a marked thread's page faults across each wrapped
 * call are measured (getrusage RUSAGE_THREAD before and after: a diagnostic
 * mode, two system calls per call) and a call that faulted is reported as
 * event 'fault'.  RTO_WATCHED(fn, stmt) runs a wrapper's routed part.
 */
RTO_HIDDEN extern int rto_fault_watch;
struct rto_fault_mark {
	uint64_t minor, major, excluded;
};
RTO_HIDDEN void rto_fault_begin(struct rto_fault_mark *m);
RTO_HIDDEN void rto_fault_end(struct rto_fault_mark *m, struct rto_fn *fn);
#define RTO_WATCHED(fn, stmt)                          \
	do {                                           \
		if (RTO_UNLIKELY(rto_fault_watch)) {   \
			struct rto_fault_mark rto_fm_; \
			rto_fault_begin(&rto_fm_);     \
			stmt;                          \
			rto_fault_end(&rto_fm_, (fn)); \
		} else {                               \
			stmt;                          \
		}                                      \
	} while (0)

#define RTO_HIST_SUB	 8  /* sub-buckets per power of two: 12.5% resolution */
#define RTO_HIST_POW	 40 /* up to 2^40 ns, about 18 minutes */
#define RTO_HIST_BUCKETS (RTO_HIST_POW * RTO_HIST_SUB)

struct rto_counters {
	uint64_t offloaded, local, denied, async;
	uint64_t fallback; /* would have been offloaded, ran on the caller: no helper */
	uint64_t max_ns;
	uint64_t hist[RTO_HIST_BUCKETS]; /* round trips, log-linear */
};

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
	RTO_F_FIRST = 1 << 10, /* only its first use is slow: offloaded until a marked call ran */
};

struct rto_fn {
	const char *name;
	void (*run)(void *args); /* calls the real function with *args */
	unsigned char cls;	 /* enum rto_class */
	unsigned char handling;	 /* enum rto_handling */
	unsigned short flags;	 /* enum rto_fn_flag */
	struct rto_counters *ctr;
	int first_done; /* RTO_F_FIRST: a marked call of it ran on a helper (route.c) */
};

/* Every descriptor also lands in section rto_fns, for the stats walk. */
#define RTO_FN_FULL(fname, class, handl, runfn, fflags)                                           \
	static struct rto_counters rto_ctr_##fname;                                               \
	RTO_HIDDEN struct rto_fn rto_fn_##fname = {#fname,	     runfn, class, handl, fflags, \
						   &rto_ctr_##fname, 0};                          \
	static struct rto_fn *const rto_fnp_##fname __attribute__((used, section("rto_fns"))) =   \
		&rto_fn_##fname
#define RTO_FN(fname, class, handl, runfn) RTO_FN_FULL(fname, class, handl, runfn, 0)

RTO_HIDDEN extern struct rto_fn *const __start_rto_fns[];
RTO_HIDDEN extern struct rto_fn *const __stop_rto_fns[];

/*
 * The real (next) definition of a libc function.  The pointer starts at a
 * stub that resolves it, so a call made before our constructor (from an
 * earlier library's constructor) still works; rto_resolve_all() fills every
 * pointer before the first thread is marked, so no realtime caller ever
 * runs dlsym.
 */
#define RTO_REAL(ret, fname, params, args)                                \
	static ret rto_lazy_##fname params;                               \
	RTO_HIDDEN ret(*rto_real_##fname) params = rto_lazy_##fname;      \
	RTO_UNINSTRUMENTED static ret rto_lazy_##fname params             \
	{                                                                 \
		void *p_ = rto_resolve(#fname, (void *)rto_lazy_##fname); \
		if (!p_)                                                  \
			rto_die(70, "libc has no '%s'", #fname);          \
		CMM_STORE_SHARED(rto_real_##fname, (__typeof__(p_))p_);   \
		return rto_real_##fname args;                             \
	}

/* resolve.c: the next definition of name, or NULL (also when it is self). */
RTO_HIDDEN RTO_UNINSTRUMENTED void *rto_resolve(const char *name, void *self);
/* Set p from name when libc has it; keep p otherwise. */
#define RTO_RESOLVE(p, name, self)                                  \
	do {                                                        \
		void *rto_p_ = rto_resolve(name, self);             \
		if (rto_p_)                                         \
			CMM_STORE_SHARED(p, (__typeof__(p))rto_p_); \
	} while (0)
/* For hand-written variadic wrappers, whose pointer starts NULL. */
#define RTO_HAND_REAL(fname)               \
	(CMM_LOAD_SHARED(rto_real_##fname) \
		 ?: (rto_resolve_all(), CMM_LOAD_SHARED(rto_real_##fname)))
/* shims.c (generated): fill every rto_real_* pointer. */
RTO_HIDDEN void rto_resolve_all(void);

/*
 * A raw system call through libc's syscall(), never our interceptor
 * (seccomp.c).  The launcher shares cpulist.c, options.c and report.c and
 * has no interceptor: there it is libc's syscall().
 */
#ifdef RTOFFLOAD_BUILDING
RTO_HIDDEN extern long (*rto_real_syscall)(long number, ...);
#define rto_syscall(...) RTO_HAND_REAL(syscall)(__VA_ARGS__)
#else
#define rto_syscall syscall
#endif

/* ---- route.c: what to do with a marked thread's call --------------------- */

/*
 * The routing core, the one place that decides how a marked thread's call
 * runs: here, on a helper, or not at all.  Every wrapper, generated or
 * written by hand, and the library's own requests (RTO_F_INTERNAL) enter
 * here; what is special about a call comes from fn->flags.
 *   fd        the call's descriptor, for RTO_F_BYFD calls; else -1
 *   stream    the FILE the call works on (stdio), or NULL
 *   callbacks nonzero when the call was given a callback (RTO_F_CALLBACKS)
 * Returns 0 when the call ran (its result is in args, errno as the call left
 * it), -1 when it was refused (errno set).
 */
/* What a wrapper knows of one call from its arguments (rto_call's how). */
enum rto_call_how {
	RTO_CALL_BYFD = 1 << 0,	     /* decided by its descriptor, like an RTO_F_BYFD row */
	RTO_CALL_SHORT = 1 << 1,     /* short and bounded with these arguments (fcntl(F_GETFL),
					sysconf(_SC_PAGESIZE)): here unless a policy says strict/warn */
	RTO_CALL_CALLBACKS = 1 << 2, /* a callback was given (RTO_F_CALLBACKS) */
};
RTO_HIDDEN int rto_call(struct rto_fn *fn, void *args, int fd, FILE *stream, unsigned how);

/* ---- fdclass.c: is this descriptor's kernel path short and bounded? ------ */

/* fd_local= kinds */
#define RTO_FD_PIPE   0x01 /* pipes and FIFOs */
#define RTO_FD_SOCKET 0x02 /* sockets */
#define RTO_FD_ANON   0x04 /* eventfd, timerfd, signalfd, epoll */
#define RTO_FD_TMPFS  0x08 /* files on tmpfs or ramfs, memfd */
#define RTO_FD_CHR    0x10 /* character devices: /dev/null, ttys, serial ports */

/*
 * 1: run locally.  May classify fd first (fstat/fstatfs, offloaded), but
 * never for a strict thread: an unknown descriptor is not local there.
 */
RTO_HIDDEN int rto_fd_runs_local(int fd);
/* 1: fd's file lies under async_path= (classified as above when unknown). */
RTO_HIDDEN int rto_fd_async_path(int fd);
/* fd was replaced or closed: its cached class is no longer true. */
RTO_HIDDEN void rto_fd_forget(int fd);
RTO_HIDDEN void rto_fd_forget_all(void);
/*
 * fd was just created (kind: RTO_FD_* when the call says what it is, -1
 * when only the kernel knows).  A known kind is cached on the spot; an
 * unknown one is asked of the kernel by a helper, or by an unmarked thread
 * when descriptors are classified where they are born (rto_fd_eager).
 */
RTO_HIDDEN void rto_fd_born(int fd, int kind);
/* newfd was made from oldfd (dup): the same open file, the same class. */
RTO_HIDDEN void rto_fd_born_like(int newfd, int oldfd);
/* From now on unmarked threads classify the descriptors they create. */
RTO_HIDDEN void rto_fd_eager(void);
/* Classify every open descriptor the cache does not know, here (not a call path). */
RTO_HIDDEN void rto_fd_classify_open(void);
RTO_HIDDEN void rto_fd_init(void);
RTO_HIDDEN int rto_fd_of_file(FILE *f);
RTO_HIDDEN extern struct rto_fn rto_fn_fd_classify; /* counted like a call */

/* Does this write (to fd, or to stream f) go through the async ring? */
static inline int rto_async_wanted(const struct rto_fn *fn, int fd, FILE *f)
{
	if (RTO_UNLIKELY(fn->handling == RTO_ASYNC))
		return 1;
	return RTO_UNLIKELY(rto_async_paths) && rto_fd_async_path(f ? rto_fd_of_file(f) : fd);
}

/* ---- transport.c / helper.c: the offload itself -------------------------- */

/*
 * A request's futex word.  The caller moves PENDING -> WAITING when it
 * sleeps, WAITING/KICKED -> KICKING -> KICKED around each interrupt it
 * sends; the worker moves any state but KICKING to DONE (transport.c).
 */
#define RTO_CACHELINE 64

enum rto_req_state {
	RTO_REQ_PENDING = 0, /* the caller spins */
	RTO_REQ_WAITING = 1, /* the caller sleeps on the word: wake it */
	RTO_REQ_DONE = 2,    /* published: the worker no longer touches it */
	RTO_REQ_KICKING = 3, /* the caller is signalling the worker: wait */
	RTO_REQ_KICKED = 4,  /* signalled: take the signal before the next call */
};

/*
 * One request, on the caller's stack.  The first cache line holds what
 * every call moves between the two CPUs, the second what only some calls
 * use (a lent stream, a process-class call, a fault, dlopen): a plain call
 * costs the transfer of this line and of the arguments', and no more.
 */
struct rto_req {
	struct cds_wfcq_node node;
	struct rto_fn *fn;
	void *args;
	void *locale;	       /* the caller's uselocale(): printf's %f, strerror, ... */
	uint64_t t0;	       /* when the caller made the call (predict.c learns from it) */
	const void *key;       /* the caller's identity for predict.c (&rto_self), or NULL */
	uint32_t state;	       /* futex word, enum rto_req_state */
	int err;	       /* errno: the caller's in, the call's out */
	int worker;	       /* tid of the worker running it, for interrupting it */
	unsigned char prio;    /* caller's realtime priority (0-99), for ordering and inherit */
	unsigned char faulted; /* the call faulted in the worker: the caller runs it again */
	unsigned char route;   /* the caller's route before the call, restored if cancelled */
	unsigned char lent;    /* stream below is set */
	/* Second line: the worker writes it only when the call needs it. */
	FILE *stream __attribute__((aligned(RTO_CACHELINE))); /* stdio lock lent, or NULL */
	void *owner;	  /* the caller's lock owner identity, for the handoff */
	FILE *file;	  /* the stream a stdio call works on, lent or not */
	uint64_t sigmask; /* caller's signal mask, for process-class calls */
	char *dlerror;	  /* dlopen/dlclose: the worker's dlerror(), copied */
	void *res;	  /* DNS calls: the caller's resolver state (resolver.c), or NULL */
	int h_err;	  /* h_errno of a DNS call: its other errno, thread-local too */
	int signo;	  /* SIGPIPE/SIGXFSZ the call raised, for the caller to take */
} __attribute__((aligned(RTO_CACHELINE)));

/* resolver.c: the caller's resolver state (_res) moves to the worker for a DNS call. */
struct __res_state;
RTO_HIDDEN void *rto_resolver_of_caller(void);
RTO_HIDDEN void rto_resolver_take(void *caller, struct __res_state *own);
RTO_HIDDEN void rto_resolver_give_back(void *caller, const struct __res_state *own);

/* Caller side: enqueue, wake a helper only if one sleeps, wait for DONE. t0: now. */
RTO_HIDDEN void rto_offload(struct rto_req *req, uint64_t t0);
/* Enqueue and wake a worker if all sleep; nobody waits for req. */
RTO_HIDDEN void rto_offload_async(struct rto_req *req);

#include "predict.h" /* helper_wake=predict: what the helpers learnt */

/* Shared between transport.c and helper.c; lives on a MADV_WIPEONFORK page. */

/*
 * Grouped by who writes what, one cache line each, so that a request costs
 * as few line transfers as the queue allows.
 */
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
	int32_t busy;		 /* workers inside a call */
	struct rto_req *pending; /* dequeued, by priority; under dispatch */
	/* Read by every caller; written only when a worker falls asleep or wakes. */
	int32_t awake __attribute__((aligned(RTO_CACHELINE))); /* workers not asleep */
	int32_t sleepers;	    /* workers in FUTEX_WAIT on wake_seq */
	uint32_t wake_seq;	    /* bumped by a caller that wakes a worker */
	int32_t ready;		    /* helpers started; 0 again in a forked child */
	int32_t helpers;	    /* helper threads running in this process (lifetime.c) */
	int32_t failed;		    /* no helper could start: never tried again (but in a child) */
	pthread_mutex_t start_lock; /* serialises helper start (all-zero = initialised) */
	/* Helpers only (predict.c, pollcap.c). */
	struct rto_predict predict __attribute__((aligned(RTO_CACHELINE)));
};

/* On a MADV_WIPEONFORK mapping: a child, even of a raw clone(), sees zeros. */
RTO_HIDDEN extern struct rto_queue *rto_q;

_Static_assert(offsetof(struct rto_req, stream) == RTO_CACHELINE,
	       "what every call moves fits the request's first cache line");

/* helper.c: start the workers (idempotent).  0, or -1 with errno. */
RTO_HIDDEN int rto_helpers_start(void);
RTO_HIDDEN int rto_helper_is_self(void);
/* helper_priority=inherit: idle workers wait at the highest marked priority. */
RTO_HIDDEN void rto_helpers_raise_ceiling(int prio);

/* stdio_lock.c: hand a FILE lock held by the caller over to the helper. */
RTO_HIDDEN void rto_stream_selftest(void);
RTO_HIDDEN int rto_stream_lending_ok(void);
RTO_HIDDEN void *rto_stream_owner_if_self(FILE *f);
RTO_HIDDEN void *rto_stream_borrow(FILE *f);
RTO_HIDDEN void rto_stream_return(FILE *f, void *owner);
/* Before a call that takes f's lock: take it here, to lend it; 1 if taken. */
RTO_HIDDEN int rto_stream_lock_for_call(FILE *f);
/* After it: give the lock back up. */
RTO_HIDDEN void rto_stream_unlock_after_call(FILE *f);
/* After a fault: give up a stream lock this thread took inside the call. */
RTO_HIDDEN void rto_stream_release_if_mine(FILE *f);

/* signals.c: interrupting a blocking offloaded call like the kernel would. */
#define RTO_SIG_INTERRUPT SIGRTMAX
RTO_HIDDEN int rto_signal_interrupts(int sig);
/* Send RTO_SIG_INTERRUPT to worker tid (no-op for 0).  Caller side. */
RTO_HIDDEN void rto_signal_kick(int tid);
/* Worker side: take a kick still pending, so that it cannot end the next call. */
RTO_HIDDEN void rto_signal_take_kick(void);
RTO_HIDDEN void rto_signal_worker_init(void);
RTO_HIDDEN int rto_signal_worker_tid(void);
/* 1: sig's action is SIG_DFL (lifetime.c). */
RTO_HIDDEN int rto_signal_is_default(int sig);
/* Run r's call; a fault inside it comes back as its signal number, else 0. */
RTO_HIDDEN int rto_signal_run_guarded(struct rto_req *r);

/* wrap_misc.c: an offloaded dlopen's error, for the caller's dlerror(). */
RTO_HIDDEN void rto_dlerror_set(char *msg);

/* seccomp.c: a thread's own seccomp filter must keep applying to its calls. */
RTO_HIDDEN void rto_seccomp_check_at_mark(void);

/* sanitizer.c: a sanitizer runtime (ASan, TSan) first in the load order. */
RTO_HIDDEN void rto_sanitizer_init(void);
/* Its pthread_create interceptor, or NULL without one. */
RTO_HIDDEN void *rto_sanitizer_pthread_create(void);
/* 1: that runtime is ThreadSanitizer's. */
RTO_HIDDEN int rto_sanitizer_is_tsan(void);
/* 1: pc is in that runtime (its interceptors). */
RTO_HIDDEN int rto_sanitizer_pc(const void *pc);
/* 1: pthread_create(attr) called from caller is the sanitizer runtime's own thread. */
RTO_HIDDEN int rto_sanitizer_own_thread(const pthread_attr_t *attr, void *caller);
/* Under TSan, start fn(arg) with ours(ours_arg) run after the runtime's start: 1 if done. */
RTO_HIDDEN int rto_sanitizer_chain_start(void *(*fn)(void *), void *arg, void *(*ours)(void *),
					 void *ours_arg, void *(**user_fn)(void *),
					 void **user_arg);
/* 1: a call given callbacks must run on the caller (the runtime's wrappers of them). */
RTO_HIDDEN int rto_sanitizer_callbacks_here(void);

/* init.c: what the constructor does, for a mark that comes before it. */
RTO_HIDDEN void rto_init_once(void);

/* fork.c */
RTO_HIDDEN int rto_fork_init(void);
/* 1 in the child of a multi-threaded fork under ThreadSanitizer: nothing is marked there. */
RTO_HIDDEN extern int rto_fork_no_threads;
RTO_HIDDEN void rto_fork_check(void);

/* futex.c */
RTO_HIDDEN void rto_futex_wait(uint32_t *addr, uint32_t val);
RTO_HIDDEN void rto_futex_wait_ns(uint32_t *addr, uint32_t val, long ns);
RTO_HIDDEN void rto_futex_wake(uint32_t *addr, int n);
RTO_HIDDEN uint64_t rto_now_ns(void);

/* ---- stats.c ------------------------------------------------------------- */

RTO_HIDDEN void rto_stats_offloaded(struct rto_fn *fn, uint64_t ns);
RTO_HIDDEN void rto_stats_local(struct rto_fn *fn);
RTO_HIDDEN void rto_stats_denied(struct rto_fn *fn);
RTO_HIDDEN void rto_stats_async(struct rto_fn *fn);
RTO_HIDDEN void rto_stats_fallback(struct rto_fn *fn);
RTO_HIDDEN void rto_stats_reset(void);
/* rt_offload_get_stats(), for the library's own use. */
struct rt_offload_stats;
RTO_HIDDEN int rto_stats_get(struct rt_offload_stats *out);
RTO_HIDDEN void rto_stats_at_exit(void);
/*
 * The thread table: a row per marked thread (claimed at its first mark,
 * off the call path), kept after it exits; past THREAD_ROWS threads, one
 * "other threads" row.  Called when a marked interval of t begins; tid:
 * the thread's (0: the caller's own).
 */
RTO_HIDDEN void rto_stats_thread_marked(struct rto_thread *t, pid_t tid);
/* A thread of the table is done: its counts go into its row (or "other"). */
RTO_HIDDEN void rto_stats_thread_fold(void);
/* A finished marked interval of a thread beyond the table (time, faults). */
RTO_HIDDEN void rto_stats_other_interval(uint64_t ns, uint64_t minor, uint64_t major);
/* A row of the thread table, as the reports show it. */
struct rto_thread_row {
	char name[17];
	pid_t tid;
	int exited;
	struct rto_thread_stats st;
};
/* The row after *i (start at 0): 1 and *out, or 0 at the end.  Lock-free; finished marked intervals
 * only. */
RTO_HIDDEN int rto_stats_thread_next(unsigned *i, struct rto_thread_row *out);
/* The table has a free row (a thread beyond it counts with shared atomics). */
RTO_HIDDEN int rto_stats_table_has_room(void);
/* How many marked threads did not fit in the table. */
RTO_HIDDEN uint64_t rto_stats_other_threads(void);

/* ---- report.c: the library's own messages -------------------------------- */

/* One line to stderr, without stdio (usable anywhere but the caller path). */
RTO_HIDDEN void rto_say(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
RTO_HIDDEN _Noreturn void rto_die(int status, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif /* RTO_H */
