/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A realtime-safe system call never traps (issue 30, item 0).  The trap
 * alone costs microseconds, on the wake-up chain of an audio server.
 *
 *   - syscall() of a marked, armed thread is decided by the library from
 *     shim-gen/syscalls.tbl, as the SIGSYS handler would, without the
 *     trap: a raw FUTEX_WAKE_PRIVATE runs on the caller with no SIGSYS;
 *   - the families that wait on futexes inside glibc (semaphores,
 *     condition variables, mutexes, barriers, rwlocks, pthread_join, the
 *     sleeps, sched_yield) block in the kernel, contended for real by a
 *     partner thread, and none traps;
 *   - a loop driven by a POSIX timer's signal (cyclictest -s): the timer's
 *     calls and each wait for its signal (sigwait, sigwaitinfo,
 *     sigtimedwait, sigsuspend) block for a real expiry, and none traps.
 *
 * The witness is the backstop's trapped count (rt_offload_get_stats()):
 * only the thread under test is marked, so the process's count is its
 * own.  A futex made by a syscall instruction of the test's own text (no
 * wrapper can see it) must trap once: the witness would see a trap.
 */
#include "harness.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "rtoffload.h"

/*
 * ThreadSanitizer's runtime maps memory for a lock's state at the lock's
 * first use, on the thread that uses it (its own mmap traps): the first
 * pass warms it up and is not counted there.
 */
#ifdef __SANITIZE_THREAD__
#define PASSES 2
#else
#define PASSES 1
#endif

static uint64_t trapped_now(void)
{
	struct rt_offload_stats s;

	rt_offload_get_stats(&s);
	return s.trapped;
}

/* A system call from the test's own text: behind every wrapper's back. */
static long asm_syscall3(long nr, long a0, long a1, long a2)
{
	long ret;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a0), "S"(a1), "d"(a2)
			 : "rcx", "r11", "memory");
	return ret;
}

/* ---- raw syscall() of realtime-safe calls --------------------------------------------- */

struct raw {
	uint64_t trapped, control;
	long wake, wait, yield, clock, wait_err;
};

static void raw_calls(void *arg)
{
	struct raw *r = arg;
	uint32_t word = 0;
	struct timespec ts;

	for (int pass = 0; pass < PASSES; pass++) {
		uint64_t t0 = trapped_now();
		r->wake = syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
		errno = 0;
		r->wait = syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 1, NULL, NULL, 0);
		r->wait_err = errno; /* the word is 0, not 1: EAGAIN at once */
		r->yield = syscall(SYS_sched_yield);
		r->clock = syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
		uint64_t t1 = trapped_now();
		asm_syscall3(SYS_futex, (long)&word, FUTEX_WAKE_PRIVATE, 1);
		r->trapped = t1 - t0;
		r->control = trapped_now() - t1;
	}
}

Test(no_trap, raw_syscall_of_a_realtime_safe_call, .timeout = TEST_TIMEOUT)
{
	struct raw r;

	run_marked(raw_calls, &r);
	cr_expect_eq(r.wake, 0, "FUTEX_WAKE_PRIVATE: %ld", r.wake);
	cr_expect_eq(r.wait, -1);
	cr_expect_eq(r.wait_err, EAGAIN, "FUTEX_WAIT's errno: %ld", r.wait_err);
	cr_expect_eq(r.yield, 0);
	cr_expect_eq(r.clock, 0);
	cr_assert_eq(r.control, 1,
		     "the witness: a futex from the test's own text trapped %llu times",
		     (unsigned long long)r.control);
	cr_expect_eq(r.trapped, 0, "%llu raw realtime-safe calls trapped",
		     (unsigned long long)r.trapped);
}

/* ---- the families, contended --------------------------------------------------------- */

enum {
	MUTEX,
	MUTEX_TIMED,
	SEM,
	SEM_TIMED,
	SEM_CLOCK,
	COND,
	COND_TIMED,
	BARRIER,
	RWLOCK,
	JOIN,
	NSTEPS
};

/*
 * Each step: the partner (unmarked) prepares (holds the lock, starts the
 * thread to join), says held; the marked thread says about and blocks in
 * the call; the partner waits until it sleeps in a futex, then lets it go,
 * and waits for the step's end.
 */
struct fam {
	pid_t tid;
	struct flag held[PASSES][NSTEPS], about[PASSES][NSTEPS], done[PASSES][NSTEPS];
	pthread_mutex_t m, cm;
	pthread_cond_t c;
	int ready;
	sem_t s;
	pthread_barrier_t b;
	pthread_rwlock_t rw;
	pthread_t joinee;
	struct flag joinee_go;
	int rc[NSTEPS], sleeps, yield;
	uint64_t trapped;
};

static void *joinee_main(void *arg)
{
	struct fam *f = arg;
	flag_wait(&f->joinee_go);
	return NULL;
}

static void far_future(struct timespec *ts, clockid_t clk)
{
	clock_gettime(clk, ts);
	ts->tv_sec += 60;
}

static void partner_prepare(struct fam *f, int step)
{
	switch (step) {
	case MUTEX:
	case MUTEX_TIMED:
		pthread_mutex_lock(&f->m);
		break;
	case RWLOCK:
		pthread_rwlock_wrlock(&f->rw);
		break;
	case JOIN:
		pthread_create(&f->joinee, NULL, joinee_main, f);
		break;
	}
}

static void partner_release(struct fam *f, int step)
{
	switch (step) {
	case MUTEX:
	case MUTEX_TIMED:
		pthread_mutex_unlock(&f->m);
		break;
	case SEM:
	case SEM_TIMED:
	case SEM_CLOCK:
		sem_post(&f->s);
		break;
	case COND:
	case COND_TIMED:
		pthread_mutex_lock(&f->cm);
		f->ready = 1;
		pthread_cond_broadcast(&f->c);
		pthread_mutex_unlock(&f->cm);
		break;
	case BARRIER:
		pthread_barrier_wait(&f->b);
		break;
	case RWLOCK:
		pthread_rwlock_unlock(&f->rw);
		break;
	case JOIN:
		flag_set(&f->joinee_go);
		break;
	}
}

static void partner(void *arg)
{
	struct fam *f = arg;

	for (int pass = 0; pass < PASSES; pass++) {
		for (int step = 0; step < NSTEPS; step++) {
			partner_prepare(f, step);
			flag_set(&f->held[pass][step]);
			flag_wait(&f->about[pass][step]);
			wait_task_in_syscall(f->tid, SYS_futex, -1); /* it sleeps: contended */
			partner_release(f, step);
			flag_wait(&f->done[pass][step]); /* before it holds the next lock */
		}
	}
}

static int cond_step(struct fam *f, int timed)
{
	struct timespec abs;
	int rc = 0;

	far_future(&abs, CLOCK_REALTIME);
	pthread_mutex_lock(&f->cm);
	while (!f->ready && rc == 0)
		rc = timed ? pthread_cond_timedwait(&f->c, &f->cm, &abs)
			   : pthread_cond_wait(&f->c, &f->cm);
	f->ready = 0;
	pthread_mutex_unlock(&f->cm);
	return rc;
}

static int marked_step(struct fam *f, int step)
{
	struct timespec abs;

	switch (step) {
	case MUTEX:
		return pthread_mutex_lock(&f->m) | pthread_mutex_unlock(&f->m);
	case MUTEX_TIMED:
		far_future(&abs, CLOCK_REALTIME);
		return pthread_mutex_timedlock(&f->m, &abs) | pthread_mutex_unlock(&f->m);
	case SEM:
		return sem_wait(&f->s);
	case SEM_TIMED:
		far_future(&abs, CLOCK_REALTIME);
		return sem_timedwait(&f->s, &abs);
	case SEM_CLOCK:
		far_future(&abs, CLOCK_MONOTONIC);
		return sem_clockwait(&f->s, CLOCK_MONOTONIC, &abs);
	case COND:
		return cond_step(f, 0);
	case COND_TIMED:
		return cond_step(f, 1);
	case BARRIER: {
		int rc = pthread_barrier_wait(&f->b);
		return rc == PTHREAD_BARRIER_SERIAL_THREAD ? 0 : rc;
	}
	case RWLOCK:
		return pthread_rwlock_rdlock(&f->rw) | pthread_rwlock_unlock(&f->rw);
	case JOIN:
		return pthread_join(f->joinee, NULL);
	}
	return -1;
}

static void families(void *arg)
{
	struct fam *f = arg;
	const struct timespec short_sleep = {0, 100 * 1000};

	f->tid = tid_self();
	for (int pass = 0; pass < PASSES; pass++) {
		uint64_t t0 = trapped_now();
		for (int step = 0; step < NSTEPS; step++) {
			flag_wait(&f->held[pass][step]);
			flag_set(&f->about[pass][step]);
			f->rc[step] = marked_step(f, step);
			flag_set(&f->done[pass][step]);
		}
		f->yield = sched_yield();
		struct timespec next;
		clock_gettime(CLOCK_MONOTONIC, &next);
		next.tv_nsec += 100 * 1000;
		if (next.tv_nsec >= 1000000000) {
			next.tv_nsec -= 1000000000;
			next.tv_sec++;
		}
		f->sleeps = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) |
			    nanosleep(&short_sleep, NULL) | usleep(100);
		f->trapped = trapped_now() - t0;
	}
}

Test(no_trap, realtime_safe_families_contended, .timeout = TEST_TIMEOUT)
{
	static struct fam f; /* flags and locks outlive both threads */
	struct bg p;

	pthread_mutex_init(&f.m, NULL);
	pthread_mutex_init(&f.cm, NULL);
	pthread_cond_init(&f.c, NULL);
	sem_init(&f.s, 0, 0);
	pthread_barrier_init(&f.b, NULL, 2);
	pthread_rwlock_init(&f.rw, NULL);
	start_helpers();
	bg_start(&p, partner, &f, 0);
	run_marked(families, &f);
	bg_join(&p);
	for (int i = 0; i < NSTEPS; i++)
		cr_expect_eq(f.rc[i], 0, "step %d returned %d", i, f.rc[i]);
	cr_expect_eq(f.yield, 0);
	cr_expect_eq(f.sleeps, 0);
#ifndef __SANITIZE_THREAD__
	cr_expect_eq(f.trapped, 0, "%llu system calls of the families trapped",
		     (unsigned long long)f.trapped);
#else
	/*
	 * ThreadSanitizer's interceptors of these calls take the runtime's
	 * own locks, contended here by the partner: their futexes are
	 * system calls of its text, which trap (and run here, as its own).
	 */
	(void)f.trapped;
#endif
}

/* ---- a POSIX timer's signal ------------------------------------------------------------ */

struct timer_waits {
	uint64_t trapped;
	int made, set, sigwait_rc, sig, waitinfo, timedwait, suspend, suspend_err, got, gettime,
		overrun, deleted;
};

static volatile sig_atomic_t handled;

static void on_timer(int sig)
{
	handled = sig;
}

static void timer_waits(void *arg)
{
	struct timer_waits *t = arg;
	struct sigevent ev = {.sigev_notify = SIGEV_THREAD_ID, .sigev_signo = SIGUSR1};
	struct itimerspec its = {.it_value = {0, 1000000}, .it_interval = {0, 1000000}}, cur;
	struct timespec second = {1, 0};
	struct sigaction sa = {.sa_handler = on_timer};
	sigset_t set, others;
	siginfo_t info;
	timer_t id;

	/* Set up outside the count: the mask and the handler act on the thread (they may trap). */
	ev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigfillset(&others);
	sigdelset(&others, SIGUSR1);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	for (int pass = 0; pass < PASSES; pass++) {
		uint64_t t0 = trapped_now();
		t->made = timer_create(CLOCK_MONOTONIC, &ev, &id);
		t->set = timer_settime(id, 0, &its, NULL);
		t->sigwait_rc = sigwait(&set, &t->sig);
		t->waitinfo = sigwaitinfo(&set, &info);
		t->timedwait = sigtimedwait(&set, &info, &second);
		t->suspend = sigsuspend(&others); /* the handler runs, then EINTR */
		t->suspend_err = errno;
		t->got = handled;
		t->gettime = timer_gettime(id, &cur);
		t->overrun = timer_getoverrun(id);
		t->deleted = timer_delete(id);
		t->trapped = trapped_now() - t0;
	}
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
}

Test(no_trap, a_posix_timer_and_the_waits_for_its_signal, .timeout = TEST_TIMEOUT)
{
	struct timer_waits t = {0};

	start_helpers();
	run_marked(timer_waits, &t);
	cr_expect_eq(t.made, 0);
	cr_expect_eq(t.set, 0);
	cr_expect_eq(t.sigwait_rc, 0);
	cr_expect_eq(t.sig, SIGUSR1);
	cr_expect_eq(t.waitinfo, SIGUSR1);
	cr_expect_eq(t.timedwait, SIGUSR1);
	cr_expect_eq(t.suspend, -1);
	cr_expect_eq(t.suspend_err, EINTR);
	cr_expect_eq(t.got, SIGUSR1, "sigsuspend's handler");
	cr_expect_eq(t.gettime, 0);
	cr_expect_geq(t.overrun, 0);
	cr_expect_eq(t.deleted, 0);
	cr_expect_eq(t.trapped, 0, "%llu system calls of the timer and its waits trapped",
		     (unsigned long long)t.trapped);
}
