/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A periodic marked loop for test_trace.c, run under trace_file= (and
 * trace=lttng by test_lttng.sh).
 *
 * The loop thread (pinned to CPU 1 when there is one, SCHED_FIFO when
 * allowed, marked) sleeps with clock_nanosleep (a local call: an instant
 * in the trace) and makes one offloaded 64-byte write to /dev/null
 * (fd_local=none) per 1 ms cycle.  With "witness", a seccomp filter on
 * the loop's thread (as periodic_child.c's) counts every system call the
 * write's wrapper makes other than futex, and every one the sleep's makes
 * other than clock_nanosleep itself: the library's tracing on the caller's
 * path must add none.  With "abort", the main thread calls abort() after
 * the loop: the trace must still be complete.  With "burst", each cycle
 * also makes 300 poll(NULL, 0, 0) calls (local: an instant each, and no
 * helper to drain meanwhile), more than a small ring holds.  With
 * "async", each cycle also logs a line with fprintf to /dev/null (run
 * with policy=stdio:async: queued, an instant in the trace).  With "trap",
 * after the loop, 15 raw getppid and 5 raw sync system calls, which the
 * backstop traps.  With "pool" (run with malloc=pool), each cycle also
 * allocates more than the thread's pool holds: a pool_full event each
 * (under the witness with pool_full=fail: libc's fallback would map).
 * With "hog", the main thread holds CPU 0 (the helpers', helper_cpus=0)
 * at SCHED_FIFO 99 for 30 ms, three times during the loop: the loop's
 * writes meanwhile wait past stall_us (stall events, and with
 * on_stall=local calls taken back).  With "fork", the main thread makes
 * two children during the loop, one by fork() and one by a raw fork
 * system call (no atfork handler runs in it); each marks its thread
 * (named forked_loop), makes 20 offloaded writes and exit()s (see
 * child_work and raw_fork for ThreadSanitizer).
 *
 * Usage: trace_child CYCLES [witness] [abort] [burst] [async] [trap] [pool] [hog] [fork]
 * Prints: installed=0|1 cycles=N writes=N bad_writes=N other_syscalls=N other_nr=N
 *         and with fork: pid=N child=N raw_child=N child_status=N raw_child_status=N
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
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "harness/call_witness.h"
#include "rtoffload.h"

#define PERIOD_NS 1000000 /* 1 kHz */

static long cycles_max;
static int with_witness, burst, async_log, traps, pool, hog, forks;
static _Atomic long cycles_done;
/* What each cycle allocates under "pool": kept, so that the compiler makes the call. */
static void *volatile pool_block;

#if defined(__x86_64__)
/* A system call behind the library's back: backstop=on traps it. */
static long raw_syscall0(long nr)
{
	long ret;
	__asm__ volatile("syscall" : "=a"(ret) : "0"(nr) : "rcx", "r11", "memory");
	return ret;
}
#endif

struct result {
	int installed;
	long cycles, writes, bad_writes, other, other_nr;
};

/* Run the window [a call] and count what it made that it should not have. */
#define WINDOW(res, allowed, call)                                \
	do {                                                      \
		atomic_store(&witness_allowed_nr, (allowed));     \
		long o0_ = atomic_load(&seen_other);              \
		call;                                             \
		long o_ = atomic_load(&seen_other) - o0_;         \
		atomic_store(&witness_allowed_nr, -1);            \
		(res)->other += o_;                               \
		if (o_)                                           \
			(res)->other_nr = atomic_load(&other_nr); \
	} while (0)

static void *loop_body(void *arg)
{
	struct result *res = arg;
	struct sched_param sp = {.sched_priority = 50};
	cpu_set_t one;
	char buf[64] = {0};

	prctl(PR_SET_NAME, "control_loop", 0, 0, 0);
	CPU_ZERO(&one);
	CPU_SET(1, &one);
	if (sysconf(_SC_NPROCESSORS_ONLN) > 1)
		pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
	pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp); /* when allowed */
	if (rt_offload_mark_thread() != 0)
		return NULL;
		/*
		 * The witness right after the mark, before the thread's first traced
		 * event (its open): a tracer that sets up per-thread state at a
		 * thread's first event is watched too.
		 */
#if defined(__x86_64__)
	if (with_witness)
		res->installed = install_witness() == 0;
#endif
	int fd;
	WINDOW(res, -1, fd = open("/dev/null", O_WRONLY | O_CLOEXEC));
	if (fd < 0)
		return NULL;
	FILE *log = async_log ? fopen("/dev/null", "w") : NULL;
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	while (res->cycles < cycles_max) {
		t.tv_nsec += PERIOD_NS;
		if (t.tv_nsec >= 1000000000) {
			t.tv_nsec -= 1000000000;
			t.tv_sec++;
		}
		WINDOW(res, SYS_clock_nanosleep,
		       clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL));
		res->cycles++;
		ssize_t n;
		WINDOW(res, -1, n = write(fd, buf, sizeof(buf)));
		res->writes++;
		if (log)
			fprintf(log, "cycle %ld\n", res->cycles);
		for (int k = 0; burst && k < 300; k++)
			poll(NULL, 0, 0);
		if (pool) { /* more than pool_kb=64 holds: pool_full=, then libc's (or NULL) */
			WINDOW(res, -1, pool_block = malloc(128 * 1024));
			free(pool_block);
		}
		atomic_store(&cycles_done, res->cycles);
		res->bad_writes += n != (ssize_t)sizeof(buf);
	}
	if (log)
		fclose(log);
#if defined(__x86_64__)
	for (int k = 0; traps && k < 20; k++) /* 20 local (getppid), 5 offloaded (sync) */
		raw_syscall0(k < 15 ? SYS_getppid : SYS_sync);
#endif
	rt_offload_unmark_thread();
	close(fd);
	return NULL;
}

/* The loop, and its end told to the main thread's waits (wait_cycles). */
static void *loop(void *arg)
{
	loop_body(arg);
	atomic_store(&cycles_done, cycles_max);
	return NULL;
}

/* Wait until the loop has run `cycles` cycles (or ended). */
static void wait_cycles(long cycles)
{
	struct timespec ms = {0, 1000000};

	while (atomic_load(&cycles_done) < cycles)
		nanosleep(&ms, NULL);
}

/* CPU 0 at SCHED_FIFO 99 for 30 ms, three times: the helpers (helper_cpus=0) cannot run. */
static void hog_cpu0(void)
{
	struct sched_param sp = {.sched_priority = 99}, other = {0};
	cpu_set_t zero;

	CPU_ZERO(&zero);
	CPU_SET(0, &zero);
	for (int round = 1; round <= 3; round++) {
		wait_cycles(round * cycles_max / 4);
		if (pthread_setaffinity_np(pthread_self(), sizeof(zero), &zero) != 0 ||
		    pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) != 0)
			return;
		struct timespec t0, t;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		do
			clock_gettime(CLOCK_MONOTONIC, &t);
		while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 30000000L);
		pthread_setschedparam(pthread_self(), SCHED_OTHER, &other);
	}
}

/*
 * A child's work: its thread marked, 20 offloaded writes, exit().  Under
 * ThreadSanitizer a child of a multi-threaded fork may start no thread,
 * so the library marks nothing there (EAGAIN, libsrc/core/fork.c): the writes
 * run unmarked, and the child exits 10.
 */
static void child_work(void)
{
	char buf[64] = {0};
	int ok = 1, marked = rt_offload_mark_thread() == 0;

	prctl(PR_SET_NAME, "forked_loop", 0, 0, 0);
	if (!marked && errno != EAGAIN)
		exit(3);
	int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	for (int k = 0; k < 20; k++)
		ok &= write(fd, buf, sizeof(buf)) == (ssize_t)sizeof(buf);
	close(fd);
	if (marked)
		rt_offload_unmark_thread();
	exit(!ok ? 4 : marked ? 0 : 10);
}

/*
 * A raw fork: no atfork handler runs in the child, as after clone()
 * without CLONE_VM.  Not under ThreadSanitizer, whose runtime then takes
 * the parent's threads for the child's and reports races between them:
 * -1, no child.
 */
static pid_t raw_fork(void)
{
#ifdef __SANITIZE_THREAD__
	return -1;
#else
	return (pid_t)syscall(SYS_fork);
#endif
}

static void fork_children(void)
{
	pid_t kids[2];
	int status[2] = {-1, 0};

	wait_cycles(cycles_max / 3);
	fflush(stdout);
	for (int i = 0; i < 2; i++) {
		kids[i] = i == 0 ? fork() : raw_fork();
		if (kids[i] == 0)
			child_work();
		if (kids[i] > 0)
			waitpid(kids[i], &status[i], 0);
	}
	printf("pid=%d child=%d raw_child=%d child_status=%d raw_child_status=%d\n", (int)getpid(),
	       (int)kids[0], (int)kids[1], status[0], status[1]);
}

int main(int argc, char **argv)
{
	struct result res = {0};
	pthread_t t;
	int do_abort = 0;

	if (argc < 2)
		return 2;
	cycles_max = atol(argv[1]);
	for (int i = 2; i < argc; i++) {
		with_witness |= strcmp(argv[i], "witness") == 0;
		do_abort |= strcmp(argv[i], "abort") == 0;
		burst |= strcmp(argv[i], "burst") == 0;
		async_log |= strcmp(argv[i], "async") == 0;
		traps |= strcmp(argv[i], "trap") == 0;
		pool |= strcmp(argv[i], "pool") == 0;
		hog |= strcmp(argv[i], "hog") == 0;
		forks |= strcmp(argv[i], "fork") == 0;
	}
#if defined(__x86_64__)
	if (with_witness) /* unmarked: nothing there is a traced call */
		witness_prepare();
#endif
	if (pthread_create(&t, NULL, loop, &res) != 0)
		return 1;
	if (hog)
		hog_cpu0();
	if (forks)
		fork_children();
	if (pthread_join(t, NULL) != 0)
		return 1;
	printf("installed=%d cycles=%ld writes=%ld bad_writes=%ld other_syscalls=%ld "
	       "other_nr=%ld\n",
	       res.installed, res.cycles, res.writes, res.bad_writes, res.other, res.other_nr);
	fflush(stdout);
	if (do_abort)
		abort();
	return 0;
}
