/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Per-thread state: marking and unmarking, marked time and faults, the signal mask. */
#include "random_short.h"
#include "backstop.h"
#include "options.h"
#include "rto_fast.h"
#include "self.h"
#include "mark.h"
#include "fault_count.h"
#include "async.h"
#include "resolve.h"
#include "fdclass.h"
#include "helper.h"
#include "context.h"
#include "futex.h"
#include "stats.h"
#include "route_state.h"
#include "real.h"
#include "trace.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rto_malloc.h"
#include "rtoffload.h"

/*
 * What the helper needs to act for this thread: its realtime priority
 * (request order, helper_priority=inherit) and its signal mask (children
 * started by system()/posix_spawn() inherit the mask of the thread that
 * spawns them).  Asked of the kernel once per thread, at its first mark;
 * from then on the scheduling wrappers (automark.c) and the signal-mask
 * wrappers below keep them current, so a later mark is a flag flip.
 */
void rto_thread_capture(struct rto_thread *t)
{
	struct sched_param sp;
	int policy;
	sigset_t mask;

	if (t->identity_known)
		return;
	unsigned char sel =
		rto_backstop_enter(); /* the library's own calls: armed, they would trap */
	rto_ctx_check_at_mark();
	rto_random_learn(); /* getrandom's short form, once the pool is ready */
	t->prio = 0;
	if (pthread_getschedparam(pthread_self(), &policy, &sp) == 0 &&
	    (policy == SCHED_FIFO || policy == SCHED_RR))
		t->prio = sp.sched_priority;
	if (rto_real_pthread_sigmask(SIG_BLOCK, NULL, &mask) == 0)
		memcpy(&t->sigmask, &mask, sizeof(t->sigmask));
	rto_helpers_raise_ceiling(t->prio);
	t->identity_known = 1;
	rto_backstop_leave(sel);
}

/* ---- the signal mask, followed where it changes ------------------------------ */

static void mask_changed(int how, const sigset_t *set)
{
	uint64_t bits;

	if (!set || !rto_self.identity_known)
		return; /* not captured yet: the first mark will ask the kernel */
	memcpy(&bits, set, sizeof(bits));
	if (how == SIG_BLOCK)
		rto_self.sigmask |= bits;
	else if (how == SIG_UNBLOCK)
		rto_self.sigmask &= ~bits;
	else if (how == SIG_SETMASK)
		rto_self.sigmask = bits;
}

/* An armed thread never blocks SIGSYS: a forced one would kill the process (backstop.c). */
static const sigset_t *without_sigsys(const sigset_t *set, sigset_t *copy)
{
	if (!set || !(rto_bs_armed & 1) || !sigismember(set, SIGSYS))
		return set;
	*copy = *set;
	sigdelset(copy, SIGSYS);
	return copy;
}

RTO_EXPORT int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	sigset_t copy;
	if (how != SIG_UNBLOCK)
		set = without_sigsys(set, &copy);
	int err = RTO_HAND_REAL(pthread_sigmask)(how, set, old);
	if (!err)
		mask_changed(how, set);
	return err;
}

RTO_EXPORT int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	sigset_t copy;
	if (how != SIG_UNBLOCK)
		set = without_sigsys(set, &copy);
	int ret = RTO_HAND_REAL(sigprocmask)(how, set, old);
	if (ret == 0)
		mask_changed(how, set);
	return ret;
}

/* ---- marked time and page faults --------------------------------------------- */

/*
 * live=, prefault_stack_kb=, mode=: copied once at load
 * (rto_thread_configure), read-only afterwards.
 */
static struct {
	int live;
	unsigned prefault_stack_kb;
	int mode; /* RT_OFFLOAD_MODE_* */
} opt;

void rto_thread_configure(const struct rto_options *o)
{
	opt.live = o->live;
	opt.prefault_stack_kb = o->prefault_stack_kb;
	opt.mode = o->mode;
}

static pthread_key_t exit_key; /* a counted thread's exit is accounted */

static uint64_t since(uint64_t now, uint64_t then)
{
	return now > then ? now - then : 0;
}

/* A marked interval of t (the caller when tid is 0) begins. */
static void begin_marked(struct rto_thread *t, pid_t tid)
{
	uint64_t minor, major;

	if (!rto_thread_counting()) {
		/*
		 * The live view (live.c) shows a row per marked thread: claimed
		 * at the first mark (one atomic add, no system call); its calls
		 * are counted in TLS anyway.  Time and faults need stats.  Not
		 * past the table: a thread there would count its calls with
		 * shared atomics, a cost on its path that only stats= asks for.
		 */
		if (opt.live && !__atomic_load_n(&t->row, __ATOMIC_RELAXED) &&
		    rto_stats_table_has_room()) {
			rto_stats_thread_marked(t, tid);
			if (!tid)
				pthread_setspecific(exit_key, &rto_self);
		}
		return;
	}
	rto_thread_fault_counts(tid, &minor, &major);
	__atomic_store_n(&t->minflt, minor, __ATOMIC_RELAXED);
	__atomic_store_n(&t->majflt, major, __ATOMIC_RELAXED);
	__atomic_store_n(&t->st.marked_at, rto_now_ns(), __ATOMIC_RELAXED);
	rto_stats_thread_marked(t, tid);
	if (!tid)
		pthread_setspecific(exit_key, &rto_self); /* non-NULL: the destructor runs */
}

/* ... and ends: its time and faults go to the thread's row and the totals. */
static void end_marked(struct rto_thread *t, pid_t tid)
{
	uint64_t minor, major;
	int row = __atomic_load_n(&t->row, __ATOMIC_RELAXED);

	if (!rto_thread_counting() || !row)
		return;
	rto_thread_fault_counts(tid, &minor, &major);
	minor = since(minor, rto_read64(&t->minflt));
	major = since(major, rto_read64(&t->majflt));
	uint64_t ns = since(rto_now_ns(), rto_read64(&t->st.marked_at));
	rto_thread_faults_add(minor, major);
	if (row < 0) {
		rto_stats_other_interval(ns, minor, major);
		return;
	}
	rto_own_add(&t->st.minor, minor);
	rto_own_add(&t->st.major, major);
	rto_own_add(&t->st.marked_ns, ns);
}

/* Touch the stack the thread will use, so that its first use does not fault. */
static __attribute__((noinline)) void prefault_stack(size_t bytes)
{
	volatile char *p = __builtin_alloca(bytes);
	for (size_t i = 0; i < bytes; i += 4096)
		p[i] = 0;
}

/*
 * A strict thread makes no request at all, not even to learn what a
 * descriptor is: the descriptors open now are classified here, at mark
 * time, and those born later by unmarked threads where they are born
 * (fdclass.c).  A descriptor it still does not know is not local: a
 * by-descriptor call on it is refused like any other strict call.
 */
void rto_thread_strict_prepare(int mode)
{
	if (mode != RT_OFFLOAD_MODE_STRICT)
		return;
	rto_fd_eager();
	rto_fd_classify_open();
}

void rto_thread_marked(void)
{
	if (opt.prefault_stack_kb)
		prefault_stack((size_t)opt.prefault_stack_kb * 1024);
	rto_async_thread_marked(); /* its ring, if some call is async: first mark only */
	rto_pool_for(&rto_self);   /* malloc=pool: its pool, first mark only */
	rto_heap_recipe_at_mark(); /* malloc=glibc, mlock=1: its own arena */
	rto_thread_strict_prepare(rto_thread_mode());
	/* trace_file=: its ring, first mark only. */
	rto_trace_thread_marked(&rto_self, 0);
	begin_marked(&rto_self, 0);
}

void rto_thread_unmarked(void)
{
	end_marked(&rto_self, 0);
}

void rto_thread_marked_remote(struct rto_thread *t, pid_t tid)
{
	rto_thread_strict_prepare(t->mode ? t->mode - 1 : opt.mode);
	rto_pool_for(t);
	rto_trace_thread_marked(t, tid); /* trace_file=: its ring, made here */
	begin_marked(t, tid);
}

void rto_thread_unmarked_remote(struct rto_thread *t, pid_t tid)
{
	end_marked(t, tid);
}

void rto_thread_exits(void)
{
	if (rto_self.exited)
		return;
	rto_self.exited = 1;
	if (rto_self.route != RTO_ROUTE_DIRECT)
		end_marked(&rto_self, 0);
	rto_stats_thread_fold();
}

static void thread_exits(void *self)
{
	(void)self;
	rto_thread_exits();
}

static void after_fork(void)
{
	rto_thread_faults_reset();
	if (!rto_self.row)
		return;
	rto_self.row = 0;
	memset(&rto_self.st, 0, sizeof(rto_self.st));
	if (rto_self.route != RTO_ROUTE_DIRECT)
		begin_marked(&rto_self, 0); /* the child's own fault counters start at 0 */
}

void rto_thread_init(void)
{
	pthread_key_create(&exit_key, thread_exits);
	/*
	 * stats.c is below us: it calls back after its reset in a forked
	 * child.  Registered here, in the constructor, before any fork of a
	 * thread that could hold a row: no other thread reads it meanwhile.
	 */
	rto_stats_on_reset(after_fork);
}
