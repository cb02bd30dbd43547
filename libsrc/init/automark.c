/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mark=: mark the threads of a program that cannot call the API.
 *
 * A thread's traits (main, realtime policy, affinity inside rt_cpus, name
 * matching the glob) change only through a few calls, so they are tracked
 * there, never per wrapped call:
 *   thread start      pthread_create (all four traits, queried once)
 *   scheduling        sched_setscheduler, sched_setparam, pthread_setschedparam
 *   affinity          sched_setaffinity, pthread_setaffinity_np
 *   name              pthread_setname_np, prctl(PR_SET_NAME)
 * These wrappers always run the real call on the calling thread (they act on
 * thread identity) and only then update the traits and the mark.  A change
 * made to another thread finds it in a small registry of live threads.
 *
 * Not seen: sched_setattr() (glibc 2.36 has no wrapper; a raw syscall()
 * cannot be interposed) and changes made from outside the process
 * (chrt -p, taskset -p).  A thread marked through the API is left alone.
 */
#include "options.h"
#include "rto_fast.h"
#include "self.h"
#include "mark.h"
#include "automark.h"
#include "own_thread.h"
#include "callsite.h"
#include "resolve.h"
#include "helper.h"
#include "sanitizer.h"
#include "fork.h"
#include "rto_malloc.h"
#include "route_state.h"
#include "context.h"
#include "real.h"

#include <errno.h>
#include <fnmatch.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef int pthread_create_fn(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

/* ---- deciding ---------------------------------------------------------- */

/*
 * mark=, rt_cpus= (mark=cpus): copied once at load
 * (rto_automark_configure), read-only afterwards.
 */
static struct {
	unsigned mark;
	int rt_cpus_set;
	cpu_set_t rt_cpus;
	char mark_name[64];
} opt;

void rto_automark_configure(const struct rto_options *o)
{
	opt.mark = o->mark;
	opt.rt_cpus_set = o->rt_cpus_set;
	opt.rt_cpus = o->rt_cpus;
	memcpy(opt.mark_name, o->mark_name, sizeof(opt.mark_name));
}

static int in_constructor; /* helpers never start at load: on first use instead */

static int wanted(unsigned traits)
{
	return (opt.mark & RTO_MARK_ALL) || (opt.mark & traits);
}

/*
 * Mark or unmark by the traits; a thread marked by the API stays as it is.
 * tid: another thread's (its state is t), or 0 for the caller's own.
 * Prefault and the async ring need the thread itself; marked time and
 * faults are counted for another thread too (through its tid).
 */
static void apply(struct rto_thread *t, pid_t tid)
{
	unsigned char route = CMM_LOAD_SHARED(t->route);

	if ((route != RTO_ROUTE_DIRECT && !t->by_policy) || RTO_UNLIKELY(rto_fork_no_threads))
		return; /* marked by the API; or no helper can start here (fork.c) */
	if (t == &rto_self && rto_helper_is_self())
		return; /* code a helper runs for a caller renames or pins it: never marked */
	int self = t == &rto_self;
	if (wanted(t->traits)) {
		t->by_policy = 1;
		if (self && route == RTO_ROUTE_DIRECT) {
			rto_thread_marked();
			/* Now, not on its first call inside the realtime loop. */
			if (!in_constructor)
				rto_helpers_start();
		} else if (route == RTO_ROUTE_DIRECT) {
			rto_thread_marked_remote(t, tid);
		}
		rto_route_mark_other(t, 1);
		if (self)
			rto_backstop_marked_self(); /* others arm at their next wrapped call */
	} else if (t->by_policy) {
		t->by_policy = 0;
		if (self && route != RTO_ROUTE_DIRECT)
			rto_thread_unmarked();
		else if (route != RTO_ROUTE_DIRECT)
			rto_thread_unmarked_remote(t, tid);
		if (self)
			rto_backstop_unmarked_self();
		rto_route_mark_other(t, 0);
	}
}

static void set_trait(struct rto_thread *t, pid_t tid, unsigned trait, int on)
{
	t->traits = on ? (t->traits | trait) : (t->traits & ~trait);
	apply(t, t == &rto_self ? 0 : tid);
}

static int is_rt_policy(int policy)
{
	policy &= ~SCHED_RESET_ON_FORK;
	return policy == SCHED_FIFO || policy == SCHED_RR;
}

static int cpus_inside_rt(size_t size, const cpu_set_t *set)
{
	cpu_set_t outside;

	if (!opt.rt_cpus_set || CPU_COUNT_S(size, set) == 0)
		return 0;
	size = size < sizeof(cpu_set_t) ? size : sizeof(cpu_set_t);
	CPU_ZERO(&outside);
	memcpy(&outside, set, size);
	CPU_AND(&outside, &outside, &opt.rt_cpus);
	return CPU_COUNT_S(size, &outside) == CPU_COUNT_S(size, set);
}

static int name_matches(const char *name)
{
	return opt.mark_name[0] && fnmatch(opt.mark_name, name, 0) == 0;
}

/* The calling thread's traits, asked of the kernel: at thread start only. */
static unsigned query_traits(int is_main)
{
	unsigned traits = is_main ? RTO_MARK_MAIN : 0;
	struct sched_param sp;
	cpu_set_t set;
	char name[17] = "";
	int policy;

	if ((opt.mark & RTO_MARK_RT) && pthread_getschedparam(pthread_self(), &policy, &sp) == 0 &&
	    is_rt_policy(policy))
		traits |= RTO_MARK_RT;
	if ((opt.mark & RTO_MARK_CPUS) && sched_getaffinity(0, sizeof(set), &set) == 0 &&
	    cpus_inside_rt(sizeof(set), &set))
		traits |= RTO_MARK_CPUS;
	if ((opt.mark & RTO_MARK_NAME) &&
	    RTO_HAND_REAL(prctl)(PR_GET_NAME, (unsigned long)name, 0, 0, 0) == 0 &&
	    name_matches(name))
		traits |= RTO_MARK_NAME;
	return traits;
}

/* ---- the registry of live threads, for changes made to another thread ---- */

#define REGISTRY_SIZE 1024

struct entry {
	pthread_t thread;
	pid_t tid;
	struct rto_thread *t;
};

static struct entry registry[REGISTRY_SIZE];
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t registry_key;

static void registry_add(void)
{
	rto_mutex_lock(&registry_lock);
	for (int i = 0; i < REGISTRY_SIZE; i++) {
		if (!registry[i].t) {
			registry[i] = (struct entry){pthread_self(), (pid_t)rto_syscall(SYS_gettid),
						     &rto_self};
			pthread_setspecific(registry_key, &registry[i]);
			break;
		}
	}
	rto_mutex_unlock(&registry_lock);
}

static void registry_remove(void *slot)
{
	rto_thread_exits(); /* a thread marked by another has no destructor of its own */
	rto_mutex_lock(&registry_lock);
	memset(slot, 0, sizeof(struct entry));
	rto_mutex_unlock(&registry_lock);
}

/* Run fn on the thread's state, under the lock so that it cannot exit meanwhile. */
static void with_thread(int by_tid, pthread_t thread, pid_t tid, unsigned trait, int on)
{
	if (by_tid ? (tid == 0 || tid == (pid_t)rto_syscall(SYS_gettid))
		   : pthread_equal(thread, pthread_self())) {
		set_trait(&rto_self, 0, trait, on);
		return;
	}
	rto_mutex_lock(&registry_lock);
	for (int i = 0; i < REGISTRY_SIZE; i++) {
		struct entry *e = &registry[i];
		if (e->t && (by_tid ? e->tid == tid : pthread_equal(e->thread, thread))) {
			set_trait(e->t, e->tid, trait, on);
			break;
		}
	}
	rto_mutex_unlock(&registry_lock);
}

/* ---- thread start ------------------------------------------------------ */

struct start {
	void *(*fn)(void *);
	void *arg;
};

static void *thread_start(void *p)
{
	struct start s = *(struct start *)p;

	rto_free(p);
	registry_add();
	rto_self.traits = (unsigned char)query_traits(0);
	apply(&rto_self, 0);
	if (rto_self.route != RTO_ROUTE_DIRECT)
		rto_thread_capture(&rto_self);
	return s.fn(s.arg);
}

static int policy_active(void)
{
	return opt.mark & ~RTO_MARK_MAIN;
}

RTO_EXPORT int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*fn)(void *),
			      void *arg)
{
	if (!policy_active() || rto_helper_is_self() || rto_own_thread_starting() ||
	    rto_sanitizer_own_thread(attr, __builtin_return_address(0)))
		return rto_real_pthread_create(thread, attr, fn, arg);
	struct start *s = rto_malloc(sizeof(*s));
	if (!s)
		return EAGAIN;
	s->fn = fn;
	s->arg = arg;
	int err = rto_sanitizer_chain_start(fn, arg, thread_start, s, &s->fn, &s->arg)
			  ? rto_real_pthread_create(thread, attr, fn, arg)
			  : rto_real_pthread_create(thread, attr, thread_start, s);
	if (err)
		rto_free(s);
	return err;
}

/* ---- transitions --------------------------------------------------------- */

/*
 * The priority a marked thread's requests carry follows its scheduling
 * whatever marked it (a program may mark first and go SCHED_FIFO after);
 * the rt trait only matters to mark=rt.
 */
static void sched_changed(int by_tid, pthread_t thread, pid_t tid, int policy, int prio)
{
	if (by_tid ? (tid == 0 || tid == (pid_t)rto_syscall(SYS_gettid))
		   : pthread_equal(thread, pthread_self()))
		rto_self.prio = is_rt_policy(policy) ? prio : 0;
	if (is_rt_policy(policy) && rto_self.route != RTO_ROUTE_DIRECT)
		rto_helpers_raise_ceiling(prio); /* only marked threads' requests matter */
	if (opt.mark & RTO_MARK_RT)
		with_thread(by_tid, thread, tid, RTO_MARK_RT, is_rt_policy(policy));
}

RTO_EXPORT int pthread_setschedparam(pthread_t thread, int policy, const struct sched_param *sp)
{
	int err = rto_real_pthread_setschedparam(thread, policy, sp);
	if (!err)
		sched_changed(0, thread, 0, policy, sp->sched_priority);
	return err;
}

RTO_EXPORT int sched_setscheduler(pid_t pid, int policy, const struct sched_param *sp)
{
	int ret = rto_real_sched_setscheduler(pid, policy, sp);
	if (ret == 0)
		sched_changed(1, 0, pid, policy, sp->sched_priority);
	return ret;
}

RTO_EXPORT int sched_setparam(pid_t pid, const struct sched_param *sp)
{
	int ret = rto_real_sched_setparam(pid, sp);
	int saved = errno;
	if (ret == 0 && (pid == 0 || pid == (pid_t)rto_syscall(SYS_gettid)) &&
	    is_rt_policy(sched_getscheduler(0)))
		rto_self.prio = sp->sched_priority;
	errno = saved;
	return ret;
}

RTO_EXPORT int sched_setaffinity(pid_t pid, size_t size, const cpu_set_t *set)
{
	int ret = rto_real_sched_setaffinity(pid, size, set);
	if (ret == 0 && (opt.mark & RTO_MARK_CPUS))
		with_thread(1, 0, pid, RTO_MARK_CPUS, cpus_inside_rt(size, set));
	return ret;
}

RTO_EXPORT int pthread_setaffinity_np(pthread_t thread, size_t size, const cpu_set_t *set)
{
	int err = rto_real_pthread_setaffinity_np(thread, size, set);
	if (!err && (opt.mark & RTO_MARK_CPUS))
		with_thread(0, thread, 0, RTO_MARK_CPUS, cpus_inside_rt(size, set));
	return err;
}

RTO_EXPORT int pthread_setname_np(pthread_t thread, const char *name)
{
	int err = rto_real_pthread_setname_np(thread, name);
	if (!err && (opt.mark & RTO_MARK_NAME))
		with_thread(0, thread, 0, RTO_MARK_NAME, name_matches(name));
	return err;
}

RTO_EXPORT int prctl(int option, ...)
{
	unsigned long a[4];
	va_list ap;

	/* prctl's extra arguments are all unsigned long-sized: pass four on. */
	va_start(ap, option);
	for (int i = 0; i < 4; i++)
		a[i] = va_arg(ap, unsigned long);
	va_end(ap);
	if (option == RTO_PR_SET_SYSCALL_USER_DISPATCH) /* the program's own: backstop_cede.c */
		return rto_backstop_program_dispatch(a[0], a[1], a[2], a[3]);
	int ret = RTO_HAND_REAL(prctl)(option, a[0], a[1], a[2], a[3]);
	long sys_args[6] = {option, (long)a[0], (long)a[1], (long)a[2], (long)a[3]};
	rto_ctx_after_syscall(SYS_prctl, sys_args, ret); /* per thread: see context.c */
	if (ret == 0 && option == PR_SET_NAME && (opt.mark & RTO_MARK_NAME))
		set_trait(&rto_self, 0, RTO_MARK_NAME, name_matches((const char *)a[0]));
	return ret;
}

/* ---- start-up ------------------------------------------------------------ */

static void registry_after_fork(void)
{
	/* Only the forking thread lives on in the child. */
	memset(registry, 0, sizeof(registry));
	pthread_mutex_init(&registry_lock, NULL);
	if (policy_active())
		registry_add();
}

void rto_automark_init(void)
{
	if (!opt.mark)
		return;
	pthread_key_create(&registry_key, registry_remove);
	pthread_atfork(NULL, NULL, registry_after_fork);
	if (policy_active())
		registry_add();
	/* The initial thread: started under chrt, taskset, or just "main". */
	rto_self.traits = (unsigned char)query_traits(1);
	in_constructor = 1;
	apply(&rto_self, 0);
	in_constructor = 0;
	if (rto_self.route != RTO_ROUTE_DIRECT)
		rto_thread_capture(&rto_self);
}
