/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fork(), vfork() and raw clone(): a child has no helper threads, whatever
 * state the parent's were in.  The queue and the helpers' bookkeeping live
 * on a MADV_WIPEONFORK mapping, so the child sees them zeroed (ready == 0)
 * even after a clone() that runs no atfork handler, and the next offload or
 * mark starts fresh helpers there.  A vfork() child shares all memory with
 * its parent, so it must offload nothing: wrap_vfork.c makes its calls direct.
 */
#include "options.h"
#include "rto_fast.h"
#include "resolve.h"
#include "transport.h"
#include "sanitizer.h"
#include "fork.h"
#include "own_thread.h"
#include "timer_track.h"
#include "futex.h"
#include "stats.h"
#include "report.h"
#include "route_state.h"
#include "real.h"

#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct rto_queue *rto_q;
/* workers=: copied once at load (rto_fork_configure), read-only afterwards. */
static struct {
	unsigned workers;
} opt;

void rto_fork_configure(const struct rto_options *o)
{
	opt.workers = o->workers;
}

static size_t rto_q_size;

/*
 * A fork() right after the first mark or offload may catch a helper still
 * starting, inside its thread start-up allocations.  glibc's fork() takes
 * malloc's locks first, but a sanitizer allocator that does not (GCC 12's
 * ASan) hands the child a lock held for ever, and the child's own helpers
 * then hang on it.  So fork waits, a bounded while, until every helper has
 * reached its loop (each one counts itself awake, or asleep, from there).
 */
static int forked_with_helpers; /* set in the parent before fork(): the child reads it */
int rto_fork_no_threads;	/* this process may not start helpers (see child_after_fork) */

static void before_fork(void)
{
	struct rto_queue *q = rto_q;
	int n = (int)(opt.workers < 64 ? opt.workers : 64);

	forked_with_helpers = q && CMM_LOAD_SHARED(q->ready);
	/*
	 * Not while one of our threads is being born: its start code may hold
	 * a lock of the thread runtime's (a sanitizer's thread registry), and
	 * the child, which has only the forking thread, would wait for it
	 * for ever at its first pthread_create.  A program that forks right
	 * after its first mark (the helpers, the stall watchdog and the live
	 * publisher start then) would otherwise race with us where, without
	 * the library, no thread is starting.
	 */
	uint64_t end = rto_now_ns() + 100 * 1000 * 1000;
	while ((rto_own_threads_being_born() ||
		(forked_with_helpers &&
		 CMM_LOAD_SHARED(q->awake) + CMM_LOAD_SHARED(q->sleepers) < n)) &&
	       rto_now_ns() < end)
		rto_real_sched_yield();
}

/*
 * stats.c's reset, registered by init.c (stats reads the queue's counters:
 * it is above us) before pthread_atfork can run this; fork() itself orders
 * that store before the child's load.
 */
static void (*stats_reset)(void);
/* stall.c's counts' reset, which the statistics show; stall.c registers it at load. */
static void (*stall_reset)(void);

void rto_fork_on_child(void (*reset)(void))
{
	stall_reset = reset;
}

void rto_fork_wipe_queue(void)
{
	memset(rto_q, 0, rto_q_size);
}

static void child_after_fork(void)
{
	/* Kernels before 4.14 lack MADV_WIPEONFORK: clear by hand (fork() only). */
	rto_fork_wipe_queue();
	stats_reset();
	if (stall_reset)
		stall_reset();
	rto_self.tls_shared = 0; /* its own memory and tid now (shared_tls.c) */
	rto_timer_after_fork();	 /* a child inherits no POSIX timer */
	rto_own_threads_after_fork();
	/*
	 * ThreadSanitizer cannot follow threads started in the child of a
	 * multi-threaded fork (it dies, or trips over the parent's threads):
	 * under it such a child runs its calls on its own threads, unmarked.
	 */
	if (forked_with_helpers && rto_sanitizer_is_tsan()) {
		rto_fork_no_threads = 1;
		rto_route_unmark();
		rto_self.by_policy = 0;
	}
}

int rto_fork_init(void (*child_stats_reset)(void))
{
	stats_reset = child_stats_reset;
	long page = getpagesize();

	rto_q_size = (sizeof(*rto_q) + (size_t)page - 1) & ~((size_t)page - 1);
	void *p = rto_real_mmap(NULL, rto_q_size, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		rto_die(70, "cannot map the request queue");
	if (rto_real_madvise(p, rto_q_size, MADV_WIPEONFORK) != 0)
		rto_say(1, "no MADV_WIPEONFORK: a raw clone() child must not offload");
	rto_q = p;
	return pthread_atfork(before_fork, NULL, child_after_fork);
}
