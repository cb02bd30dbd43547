/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A periodic realtime loop under a system call witness, for
 * test_periodic_wake.c (which runs it with the options it checks).
 *
 * The loop thread (pinned to CPU 1 when there is one, SCHED_FIFO when
 * allowed, marked) installs a seccomp filter on itself that traps every
 * system call but the ones made from one instruction of this program.  The
 * SIGSYS handler records the number and makes the call from that
 * instruction, so the thread runs as usual (its sleeps, its exit) while
 * the record shows, from the kernel's side, every system call it made.
 * Then it wakes every PERIOD on an absolute clock and makes CALLS
 * offloaded 64-byte writes to /dev/null (fd_local=none) per cycle.
 *
 * Usage: periodic_child CYCLES RUN [PERIOD_US [WAIT]]
 * Stops after CYCLES cycles, or once RUN calls in a row made no system
 * call.  PERIOD_US: the period (default 1000, 1 kHz).  WAIT: how the loop
 * waits for its next cycle: sleep (clock_nanosleep on an absolute
 * deadline, the default), epoll (epoll_wait on an empty set with a
 * timeout of the period, in whole milliseconds), timerfd (a blocking
 * read() of a timerfd armed with the period) or cond
 * (pthread_cond_timedwait, never signalled, on a CLOCK_MONOTONIC
 * condition variable, to an absolute deadline; condclock: the same with
 * pthread_cond_clockwait) or sigtimedwait (for a
 * blocked signal that never comes, a period at most), or timer (sigwait
 * for the blocked signal of a periodic POSIX timer aimed at the loop's
 * thread, as cyclictest -s waits; timerinfo: the same with sigwaitinfo).  Prints key=value words:
 * cycles, calls, bad_writes (a write that did not return 64), clean_run (the longest run of calls
 * with no system call), calls_with_syscall, futex_calls (calls that made a futex call), wake_calls
 * (calls that made a FUTEX_WAKE: a helper had to be woken), other_nr (a system call number other
 * than futex seen inside a call).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/futex.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "harness/call_witness.h"
#include "rtoffload.h"

static long period_ns = 1000000; /* 1 kHz unless told */
#define CALLS 1

static long cycles_max, run_wanted;
static const char *wait_how = "sleep";

/* What the loop waits on, made after it is marked (as a program's loop would). */
static struct waiter {
	int epfd, tfd, timer;
	timer_t id;
	pthread_cond_t cond;
	pthread_mutex_t mutex;
} w = {-1, -1, 0, 0, PTHREAD_COND_INITIALIZER, PTHREAD_MUTEX_INITIALIZER};

#define TIMER_SIGNAL SIGUSR2

/* A periodic POSIX timer whose blocked signal goes to this thread. */
static int timer_init(void)
{
	struct itimerspec its = {.it_value = {0, period_ns}, .it_interval = {0, period_ns}};
	struct sigevent ev = {.sigev_notify = SIGEV_THREAD_ID, .sigev_signo = TIMER_SIGNAL};
	sigset_t set;

	ev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
	sigemptyset(&set);
	sigaddset(&set, TIMER_SIGNAL);
	if (pthread_sigmask(SIG_BLOCK, &set, NULL) != 0 ||
	    timer_create(CLOCK_MONOTONIC, &ev, &w.id) != 0)
		return -1;
	w.timer = 1;
	return timer_settime(w.id, 0, &its, NULL);
}

static int waiter_init(void)
{
	if (!strcmp(wait_how, "epoll")) {
		w.epfd = epoll_create1(EPOLL_CLOEXEC);
		return w.epfd >= 0 ? 0 : -1;
	}
	if (!strcmp(wait_how, "timerfd")) {
		struct itimerspec its = {.it_value = {0, period_ns}, .it_interval = {0, period_ns}};
		w.tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
		return w.tfd >= 0 && timerfd_settime(w.tfd, 0, &its, NULL) == 0 ? 0 : -1;
	}
	if (!strcmp(wait_how, "cond") || !strcmp(wait_how, "condclock")) {
		pthread_condattr_t a;
		pthread_condattr_init(&a);
		pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
		return pthread_cond_init(&w.cond, &a);
	}
	if (!strcmp(wait_how, "timer") || !strcmp(wait_how, "timerinfo"))
		return timer_init();
	if (!strcmp(wait_how, "sigtimedwait")) {
		sigset_t set;
		sigemptyset(&set);
		sigaddset(&set, SIGUSR1);
		return pthread_sigmask(SIG_BLOCK, &set, NULL);
	}
	return strcmp(wait_how, "sleep") ? -1 : 0;
}

/* Until t (CLOCK_MONOTONIC), or the next expiry, or a period from now (epoll). */
static void wait_next(const struct timespec *t)
{
	struct epoll_event ev;
	uint64_t n;

	if (w.epfd >= 0) {
		epoll_wait(w.epfd, &ev, 1, (int)(period_ns / 1000000 ? period_ns / 1000000 : 1));
	} else if (w.tfd >= 0) {
		if (read(w.tfd, &n, sizeof(n)) != (ssize_t)sizeof(n))
			abort();
	} else if (w.timer) {
		sigset_t set;
		int sig = 0;
		sigemptyset(&set);
		sigaddset(&set, TIMER_SIGNAL);
		if (!strcmp(wait_how, "timer") ? sigwait(&set, &sig) != 0
					       : (sig = sigwaitinfo(&set, NULL)) < 0)
			abort();
	} else if (!strcmp(wait_how, "sigtimedwait")) {
		struct timespec rel = {0, period_ns};
		sigset_t set;
		sigemptyset(&set);
		sigaddset(&set, SIGUSR1);
		sigtimedwait(&set, NULL, &rel); /* EAGAIN: nothing came, as planned */
	} else if (!strcmp(wait_how, "cond")) {
		pthread_mutex_lock(&w.mutex);
		while (pthread_cond_timedwait(&w.cond, &w.mutex, t) == 0) /* never signalled */
			;
		pthread_mutex_unlock(&w.mutex);
	} else if (!strcmp(wait_how, "condclock")) {
		pthread_mutex_lock(&w.mutex);
		while (pthread_cond_clockwait(&w.cond, &w.mutex, CLOCK_MONOTONIC, t) == 0)
			;
		pthread_mutex_unlock(&w.mutex);
	} else {
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, t, NULL);
	}
}

static void waiter_done(void)
{
	if (w.epfd >= 0)
		close(w.epfd);
	if (w.tfd >= 0)
		close(w.tfd);
	if (w.timer)
		timer_delete(w.id);
}

struct result {
	int installed, marked, waiter;
	long cycles, calls, bad_writes, clean_run, with_syscall, futex_calls, wake_calls, other,
		other_nr;
};

static void *loop(void *arg)
{
	struct result *res = arg;
	struct sched_param sp = {.sched_priority = 50};
	cpu_set_t one;
	char buf[64] = {0};

	CPU_ZERO(&one);
	CPU_SET(1, &one);
	if (sysconf(_SC_NPROCESSORS_ONLN) > 1)
		pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
	pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp); /* when allowed */
	res->marked = rt_offload_mark_thread() == 0;
	int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	res->waiter = waiter_init() == 0;
#if defined(__x86_64__)
	res->installed = install_witness() == 0;
#endif
	if (!res->installed || !res->marked || !res->waiter || fd < 0)
		return NULL;
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	long run = 0;
	while (res->cycles < cycles_max && res->clean_run < run_wanted) {
		t.tv_nsec += period_ns;
		if (t.tv_nsec >= 1000000000) {
			t.tv_nsec -= 1000000000;
			t.tv_sec++;
		}
		wait_next(&t);
		res->cycles++;
		for (int k = 0; k < CALLS; k++) {
			long f0 = atomic_load(&seen_wait) + atomic_load(&seen_wake),
			     o0 = atomic_load(&seen_other);
			long w0 = atomic_load(&seen_wake);
			ssize_t n = write(fd, buf, sizeof(buf));
			long f = atomic_load(&seen_wait) + atomic_load(&seen_wake) - f0,
			     o = atomic_load(&seen_other) - o0;
			res->calls++;
			res->bad_writes += n != (ssize_t)sizeof(buf);
			res->futex_calls += f > 0;
			res->wake_calls += atomic_load(&seen_wake) > w0;
			res->other += o;
			if (o)
				res->other_nr = atomic_load(&other_nr);
			if (f || o) {
				res->with_syscall++;
				run = 0;
			} else if (++run > res->clean_run) {
				res->clean_run = run;
			}
		}
	}
	rt_offload_unmark_thread();
	waiter_done();
	close(fd);
	return NULL;
}

int main(int argc, char **argv)
{
	struct result res = {0};
	pthread_t t;

	if (argc < 3 || argc > 5)
		return 2;
	cycles_max = atol(argv[1]);
	run_wanted = atol(argv[2]);
	if (argc >= 4)
		period_ns = atol(argv[3]) * 1000;
	if (argc == 5)
		wait_how = argv[4];
	if (pthread_create(&t, NULL, loop, &res) != 0 || pthread_join(t, NULL) != 0)
		return 1;
	printf("installed=%d marked=%d waiter=%d cycles=%ld calls=%ld bad_writes=%ld clean_run=%ld "
	       "calls_with_syscall=%ld futex_calls=%ld wake_calls=%ld other_syscalls=%ld "
	       "other_nr=%ld\n",
	       res.installed, res.marked, res.waiter, res.cycles, res.calls, res.bad_writes,
	       res.clean_run, res.with_syscall, res.futex_calls, res.wake_calls, res.other,
	       res.other_nr);
	return 0;
}
