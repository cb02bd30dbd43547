/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The census (issue 13): a marked thread runs ordinary libc workloads
 * (workloads.c) under a seccomp filter of its own that allows only the
 * realtime-safe system calls (rtsafe_syscalls.h) and traps every other
 * into a SIGSYS handler that records it.  Twice: the first round is the
 * first use of everything (time zone, NSS, locale, descriptor classes),
 * the second is the steady state.  No workload may trap in the steady
 * state, nor at first use unless its entry says why.  The backstop
 * (issue 12) is off here (backstop=off): every call is caught by its
 * wrapper.
 *
 * test_census_backstop is the same with the backstop on and more
 * workloads (backstop_works.c: raw syscall()s, malloc's growth, a thread's
 * start): no workload may trap, at first use or in the steady state, with
 * no exception.
 *
 * fd_local=none: descriptor calls are offloaded whatever the file system
 * (see rtsafe_syscalls.h).
 */
#include "harness.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/futex.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "raw_seccomp.h"
#include "raw_syscall_asm.h" /* libsrc's: the backstop's raw call is the same text */
#include "rtsafe_syscalls.h"
#include "workloads.h"

#define MAX_INSNS 128
#define ROUNDS	  2 /* first use, steady state */
#define MAX_WORKS 64

/* The workloads of this run: census_works, then with the backstop its own. */
static const struct census_work *work_at(unsigned w)
{
#ifdef CENSUS_BACKSTOP
	if (w >= census_nworks)
		return &census_backstop_works[w - census_nworks];
#endif
	return &census_works[w];
}

static unsigned nworks(void)
{
#ifdef CENSUS_BACKSTOP
	return census_nworks + census_backstop_nworks;
#else
	return census_nworks;
#endif
}

#ifdef CENSUS_BACKSTOP
/*
 * A thread the census thread starts inherits its filter: its system calls
 * are its own, not the census thread's.  The SIGSYS handler makes them from
 * this one instruction, which the filter lets through.
 */
__asm__(".pushsection .text\n" RTO_RAW_SYSCALL6_ASM(census_syscall6) ".popsection\n");
long census_syscall6(long nr, long a, long b, long c, long d, long e, long f);
extern const char census_syscall6_after[];
static __thread int census_thread_self;
#endif

static int install_filter(void)
{
	struct sock_filter f[MAX_INSNS];
	unsigned short n = 0;
	size_t nallow = sizeof(rtsafe_syscalls) / sizeof(rtsafe_syscalls[0]);

	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					      offsetof(struct seccomp_data, arch));
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP);
#ifdef CENSUS_BACKSTOP
	uint64_t ip = (uint64_t)(uintptr_t)census_syscall6_after;
	f[n++] = (struct sock_filter)BPF_STMT(
		BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, instruction_pointer) + 4);
	f[n++] =
		(struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)(ip >> 32), 0, 3);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					      offsetof(struct seccomp_data, instruction_pointer));
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)ip, 0, 1);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
#endif
	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					      offsetof(struct seccomp_data, nr));
	for (size_t i = 0; i < nallow; i++) {
		f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
						      (uint32_t)rtsafe_syscalls[i], 0, 1);
		f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	}
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	/* The sanitizer runtimes map and reset memory on the thread itself (test_witness.c). */
	static const long runtime[] = {SYS_mmap, SYS_munmap, SYS_madvise};
	for (size_t i = 0; i < sizeof(runtime) / sizeof(runtime[0]); i++) {
		f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
						      (uint32_t)runtime[i], 0, 1);
		f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	}
#endif
#ifdef CENSUS_BACKSTOP
	/*
	 * A thread is made by its creator: clone is the one system call
	 * pthread_create must make on the calling thread (the backstop starts
	 * it from its handler); its stack's mmap and mprotect are offloaded,
	 * and counted here like any other.
	 */
	static const long creator[] = {SYS_clone, SYS_clone3};
	for (size_t i = 0; i < sizeof(creator) / sizeof(creator[0]); i++) {
		f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
						      (uint32_t)creator[i], 0, 1);
		f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	}
#endif
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP);
	struct sock_fprog prog = {.len = n, .filter = f};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return -1;
	return (int)raw_seccomp_filter(&prog); /* unseen by the library (raw_seccomp.h) */
}

/* ---- the SIGSYS record --------------------------------------------------------- */

#define MAX_TRAPS 1024
static _Atomic int ntraps;
static int traps[MAX_TRAPS];

/*
 * Record the number; the system call returns -ENOSYS; no system call in here.
 * Not instrumented: the filter is inherited by the threads the census thread
 * starts, whose first calls (ThreadSanitizer's, before it has set the thread
 * up) trap here.
 */
__attribute__((no_sanitize("address", "thread", "undefined"))) static void
on_sigsys(int sig, siginfo_t *si, void *ctx)
{
	(void)sig;
#ifdef CENSUS_BACKSTOP
	if (!census_thread_self) { /* a thread it started: run its call */
		greg_t *g = ((ucontext_t *)ctx)->uc_mcontext.gregs;
		g[REG_RAX] = census_syscall6(si->si_syscall, g[REG_RDI], g[REG_RSI], g[REG_RDX],
					     g[REG_R10], g[REG_R8], g[REG_R9]);
		return;
	}
#endif
	int i = atomic_fetch_add(&ntraps, 1);
	if (i < MAX_TRAPS)
		traps[i] = si->si_syscall;
	((ucontext_t *)ctx)->uc_mcontext.gregs[REG_RAX] = -ENOSYS;
}

/* ---- the marked thread ----------------------------------------------------------- */

struct census {
	struct census_fx fx;
	struct flag done;
	int mark_rc, filter_rc;
	int from[ROUNDS][MAX_WORKS], to[ROUNDS][MAX_WORKS]; /* its traps: [from, to) */
	int result[ROUNDS][MAX_WORKS];			    /* census_work.run's */
	int control_traps, control_nr;			    /* the filter is live */
};

static void *census_thread(void *arg)
{
	struct census *c = arg;

#ifdef CENSUS_BACKSTOP
	census_thread_self = 1;
#endif
	pin_rt_cpu();
	/*
	 * The thread's malloc arena and tcache, made at its first malloc or
	 * free (an mmap of 64 MiB of address space): malloc is not in
	 * calls.tbl (docs/COVERAGE.md), so a realtime thread allocates once
	 * before it is marked, as it prefaults its stack.  freeaddrinfo() is
	 * the census's only free().
	 */
	void *volatile first = malloc(64); /* volatile: not optimised away */
	free(first);
	c->mark_rc = rt_offload_mark_thread();
	if (c->mark_rc == 0)
		c->filter_rc = install_filter();
	for (int r = 0; r < ROUNDS && c->mark_rc == 0 && c->filter_rc == 0; r++)
		for (unsigned w = 0; w < nworks(); w++) {
			c->from[r][w] = atomic_load(&ntraps);
			c->result[r][w] = work_at(w)->run(&c->fx);
			c->to[r][w] = atomic_load(&ntraps);
		}
	/* Control: unmarked, a workload's own system calls trap. */
	int before = atomic_load(&ntraps);
	if (c->mark_rc == 0 && c->filter_rc == 0 && rt_offload_unmark_thread() == 0)
		census_works[0].run(&c->fx);
	c->control_traps = atomic_load(&ntraps) - before;
	c->control_nr = c->control_traps > 0 ? traps[before] : -1;
	flag_set(&c->done);
	for (;;) /* exiting needs system calls the filter traps */
		syscall(SYS_futex, &c->done.v, FUTEX_WAIT_PRIVATE, 1, NULL, NULL, 0);
	return NULL;
}

static void trap_list(const struct census *c, int r, unsigned w, char *buf, size_t len)
{
	size_t n = 0;
	buf[0] = '\0';
	for (int i = c->from[r][w]; i < c->to[r][w] && i < MAX_TRAPS && n + 16 < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%d ", traps[i]);
}

Test(census, marked_thread_reaches_the_kernel_only_through_rtsafe_calls, .timeout = TEST_TIMEOUT)
{
#ifndef __x86_64__
	cr_skip_test("the filter and the SIGSYS fix-up are x86-64");
#endif
	static struct census c; /* the parked thread keeps using it */
	char dir[PATH_MAX], list[512];
	pthread_t th;

	cr_assert_leq(nworks(), MAX_WORKS);
	cr_assert_geq(nworks(), 25, "the census needs at least 25 workloads");
	tmp_make(dir);
	cr_assert_eq(census_setup(&c.fx, dir), 0);
	struct sigaction sa = {.sa_sigaction = on_sigsys, .sa_flags = SA_SIGINFO};
	sigemptyset(&sa.sa_mask);
	cr_assert_eq(sigaction(SIGSYS, &sa, NULL), 0);
	start_helpers();
	cr_assert_eq(pthread_create(&th, NULL, census_thread, &c), 0);
	cr_assert(flag_wait_timeout(&c.done), "the census thread did not finish");
	cr_assert_eq(c.mark_rc, 0);
	cr_assert_eq(c.filter_rc, 0, "seccomp filter refused");

	for (int r = 0; r < ROUNDS; r++)
		for (unsigned w = 0; w < nworks(); w++) {
			const struct census_work *cw = work_at(w);
			int n = c.to[r][w] - c.from[r][w];
			trap_list(&c, r, w, list, sizeof(list));
			cr_log_info("census %s %-32s %2d traps %s", r ? "steady" : "first ",
				    cw->name, n, list);
			cr_expect_eq(c.result[r][w], 0, "[%s] round %d: wrong result (line %d)",
				     cw->name, r, c.result[r][w]);
#ifndef CENSUS_BACKSTOP
			if (r == 0 && cw->first_use)
				continue;
#endif
			cr_expect_eq(n, 0, "[%s: %s] %s: the marked thread made system calls: %s",
				     cw->name, cw->calls, r ? "steady state" : "first use", list);
		}
	cr_expect_gt(c.control_traps, 0, "unmarked, '%s' made no trapped system call",
		     census_works[0].calls);
	tmp_remove(dir);
}
