/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Per-thread state and the public mark/mode API. */
#include "rto.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>

#include "rtoffload.h"

__thread struct rto_thread rto_self RTO_TLS;

int rto_thread_mode(void)
{
	return rto_self.mode ? rto_self.mode - 1 : rto_opt.mode;
}

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
	rto_seccomp_check_at_mark();
	t->prio = 0;
	if (pthread_getschedparam(pthread_self(), &policy, &sp) == 0 &&
	    (policy == SCHED_FIFO || policy == SCHED_RR))
		t->prio = sp.sched_priority;
	if (pthread_sigmask(SIG_BLOCK, NULL, &mask) == 0)
		memcpy(&t->sigmask, &mask, sizeof(t->sigmask));
	rto_helpers_raise_ceiling(t->prio);
	t->identity_known = 1;
}

/* ---- the signal mask, followed where it changes ------------------------------ */

static int (*real_pthread_sigmask)(int, const sigset_t *, sigset_t *);
static int (*real_sigprocmask)(int, const sigset_t *, sigset_t *);

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

RTO_EXPORT int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	int (*real)(int, const sigset_t *, sigset_t *) = CMM_LOAD_SHARED(real_pthread_sigmask);
	if (!real) /* any thread may be first: the same value, stored atomically */
		real = CMM_STORE_SHARED(real_pthread_sigmask,
					(int (*)(int, const sigset_t *, sigset_t *))rto_resolve(
						"pthread_sigmask", NULL));
	int err = real(how, set, old);
	if (!err)
		mask_changed(how, set);
	return err;
}

RTO_EXPORT int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	int (*real)(int, const sigset_t *, sigset_t *) = CMM_LOAD_SHARED(real_sigprocmask);
	if (!real)
		real = CMM_STORE_SHARED(real_sigprocmask,
					(int (*)(int, const sigset_t *, sigset_t *))rto_resolve(
						"sigprocmask", NULL));
	int ret = real(how, set, old);
	if (ret == 0)
		mask_changed(how, set);
	return ret;
}

/* ---- traps: page faults while marked ---------------------------------------- */

static uint64_t faults_minor, faults_major; /* of threads no longer marked */
static pthread_key_t exit_key;		    /* unmark accounting when a marked thread exits */

static void fault_counts(uint64_t *minor, uint64_t *major)
{
	struct rusage ru;

	*minor = *major = 0;
	if (getrusage(RUSAGE_THREAD, &ru) == 0) {
		*minor = (uint64_t)ru.ru_minflt;
		*major = (uint64_t)ru.ru_majflt;
	}
}

/* Touch the stack the thread will use, so that its first use does not fault. */
static __attribute__((noinline)) void prefault_stack(size_t bytes)
{
	volatile char *p = __builtin_alloca(bytes);
	for (size_t i = 0; i < bytes; i += 4096)
		p[i] = 0;
}

/*
 * Faults are counted when stats were asked for (stats=1, stats_file=):
 * then a mark and an unmark each cost one getrusage().  Otherwise a mark
 * is a flag flip.
 */
static int counting_faults(void)
{
	return rto_opt.stats || rto_opt.stats_file[0];
}

void rto_thread_marked(void)
{
	if (rto_opt.prefault_stack_kb)
		prefault_stack((size_t)rto_opt.prefault_stack_kb * 1024);
	rto_async_thread_marked(); /* its ring, if some call is async: first mark only */
	if (!counting_faults())
		return;
	fault_counts(&rto_self.minflt, &rto_self.majflt);
	pthread_setspecific(exit_key, &rto_self); /* non-NULL: the destructor runs */
}

void rto_thread_unmarked(void)
{
	uint64_t minor, major;

	if (!counting_faults())
		return;
	fault_counts(&minor, &major);
	uatomic_add(&faults_minor, minor - rto_self.minflt);
	uatomic_add(&faults_major, major - rto_self.majflt);
	pthread_setspecific(exit_key, NULL);
}

static void thread_exits_marked(void *self)
{
	(void)self;
	if (rto_self.route != RTO_ROUTE_DIRECT)
		rto_thread_unmarked();
}

/* Totals, plus what the calling thread has taken so far if it is marked. */
void rto_thread_faults(uint64_t *minor, uint64_t *major)
{
	*minor = CMM_LOAD_SHARED(faults_minor);
	*major = CMM_LOAD_SHARED(faults_major);
	if (rto_self.route != RTO_ROUTE_DIRECT && counting_faults()) {
		uint64_t mi, ma;
		fault_counts(&mi, &ma);
		*minor += mi - rto_self.minflt;
		*major += ma - rto_self.majflt;
	}
}

void rto_thread_init(void)
{
	pthread_key_create(&exit_key, thread_exits_marked);
}

/* ---- the API ------------------------------------------------------------------- */

RTO_EXPORT int rt_offload_mark_thread(void)
{
	int saved = errno;

	rto_init_once(); /* marked from a constructor that ran before ours */
	if (rto_helper_is_self()) {
		errno = EPERM; /* a helper serving itself would deadlock */
		return -1;
	}
	if (RTO_UNLIKELY(rto_fork_no_threads)) {
		errno = EAGAIN; /* no helper can start in this process (fork.c) */
		return -1;
	}
	if (rto_helpers_start() != 0)
		return -1;
	rto_thread_capture(&rto_self);
	rto_self.by_policy = 0;
	if (rto_self.route == RTO_ROUTE_DIRECT)
		rto_thread_marked();
	rto_self.route = RTO_ROUTE_MARKED;
	errno = saved;
	return 0;
}

RTO_EXPORT int rt_offload_unmark_thread(void)
{
	rto_self.by_policy = 0;
	if (rto_self.route != RTO_ROUTE_DIRECT)
		rto_thread_unmarked();
	rto_self.route = RTO_ROUTE_DIRECT;
	return 0;
}

RTO_EXPORT int rt_offload_thread_is_marked(void)
{
	return rto_self.route != RTO_ROUTE_DIRECT;
}

RTO_EXPORT int rt_offload_set_thread_mode(int mode)
{
	if (mode != RT_OFFLOAD_MODE_OFFLOAD && mode != RT_OFFLOAD_MODE_STRICT) {
		errno = EINVAL;
		return -1;
	}
	rto_self.mode = (unsigned char)(mode + 1);
	return 0;
}
