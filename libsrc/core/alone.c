/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The process alone again, for a call the kernel allows only a task that
 * shares its memory and fs with no other: unshare() into a new user
 * namespace (or with CLONE_THREAD, CLONE_SIGHAND, CLONE_VM), setns() into a
 * user, mount or time namespace.  In a program of one thread it succeeds;
 * with the library's threads beside it the kernel says EINVAL (EUSERS for
 * a time namespace).  So when it did,
 * and those are the only other threads, they end: the workers (after the
 * async lines queued), the stall watchdog and its probe, the live
 * publisher.  The call is made again.  The next offload starts them anew
 * from this thread, as in a forked child, in its new namespaces: its calls
 * may be offloaded again (context.c does not keep them on it).
 *
 * Not a realtime path: a set-up call, made again after the kernel refused
 * it.  Each of our threads ends within its current bounded step (no
 * program thread is left to give a worker a call); that wait has no other
 * bound.  The kernel's letting them go is waited for 1 s at most: after
 * that the call is made again anyway, and the kernel answers it.
 */
#include "rto_fast.h"
#include "backstop.h"
#include "route_state.h"
#include "transport.h"
#include "fork.h"
#include "own_thread.h"
#include "lifetime.h"
#include "procfs.h"
#include "futex.h"
#include "stall.h"
#include "resolve.h"
#include "alone.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define ALONE_MAX 64 /* own_thread.c's rows */

/* report/live.c's, registered by init.c (it is above us) before any thread of ours runs. */
static void (*live_leave)(void);
static void (*live_left)(void);

void rto_alone_on_leave(void (*leave)(void), void (*left)(void))
{
	live_leave = leave;
	live_left = left;
}

static void pause_us(long us)
{
	struct timespec ts = {0, us * 1000};

	rto_syscall(SYS_nanosleep, &ts, NULL);
}

/* The process's threads as the kernel counts them, or -1. */
static int threads_now(void)
{
	char buf[4096];
	const char *p;

	if (rto_procfs_read("/proc/self/status", buf, sizeof(buf)) <= 0 ||
	    !(p = strstr(buf, "\nThreads:")))
		return -1;
	return atoi(p + sizeof("\nThreads:") - 1);
}

/*
 * Every thread but the caller is one of ours: *n of them, their tids in
 * tids.  glibc counts one of ours from its pthread_create until it takes
 * itself off the count (lifetime.c), and again as it ends; the kernel
 * counts it until it is let go.  So the counts may disagree while one of
 * ours starts or ends, which on a loaded machine may take a while: asked
 * again every 200 us, for 200 ms at most.  A thread glibc counts that none
 * of ours explains is the program's: then 5 ms, as long as one of ours
 * takes to leave its row and the count, and the answer is no.
 */
static int only_ours_beside(int32_t *tids, int *n)
{
	for (int tries = 0; tries < 1000; tries++) {
		int app = rto_lifetime_app_threads(); /* -1: glibc's count unknown */
		int born = rto_own_threads_being_born();
		*n = rto_own_threads(tids, ALONE_MAX);
		int all = threads_now();
		if (all < 0)
			return 0;
		int counted = *n + born - (int)CMM_LOAD_SHARED(rto_q->helpers);
		int program = app > 1 + (counted > 0 ? counted : 0);
		if (program && tries >= 25)
			return 0;
		if (!program && app <= 1 && all == 1 + *n && !born)
			return *n > 0;
		pause_us(200);
	}
	return 0;
}

/*
 * The kernel has let each of ours go: the process counts one thread (a
 * thread leaves the count after it let go of the memory and the fs it
 * shared), or, if /proc cannot tell, tgkill finds none of those there
 * were at the start.
 */
static int gone(const int32_t *tids, int n)
{
	pid_t pid = getpid();
	int all = threads_now();

	if (all >= 0)
		return all == 1;
	for (int i = 0; i < n; i++)
		if (rto_syscall(SYS_tgkill, pid, tids[i], 0) == 0)
			return 0;
	return 1;
}

static void leave(const int32_t *tids, int n)
{
	struct rto_queue *q = rto_q;

	uatomic_set(&q->leave, 1);
	cmm_smp_mb(); /* before each thread's word moves: none sleeps through it */
	uatomic_inc(&q->wake_seq);
	rto_futex_wake(&q->wake_seq, INT32_MAX);
	rto_stall_leave();
	if (live_leave)
		live_leave();
	/* Each ends within its current step (no program thread gives a worker a call). */
	while (rto_own_threads_running())
		pause_us(200);
	/*
	 * Their start routines have returned: none reads the queue any more.
	 * As in a forked child, zeroes (ready 0, leave 0): the next offload
	 * starts them.
	 */
	rto_fork_wipe_queue();
	if (live_left)
		live_left();
	/* A thread is let go microseconds after its routine's end: at most 1 s. */
	for (int i = 0; i < 5000 && !gone(tids, n); i++)
		pause_us(200);
}

int rto_alone(void)
{
	int32_t tids[ALONE_MAX];
	int n = 0, done = 0;

	/* A vfork or clone(CLONE_VM) child: the helpers are its parent's. */
	if (!rto_q || !CMM_LOAD_SHARED(rto_q->ready) || rto_self.vforking || rto_foreign_task())
		return 0;
	/* The library's code: its calls pass the backstop, a handler's calls run here. */
	unsigned char sel = rto_backstop_enter();
	unsigned char route = rto_route_go_direct();
	if (only_ours_beside(tids, &n)) {
		leave(tids, n);
		done = 1;
	}
	rto_route_resume(route);
	rto_backstop_leave(sel);
	return done;
}
