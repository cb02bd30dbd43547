/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A counting witness of one thread's system calls, for the caller-path
 * rule ("no system call but FUTEX_WAIT when it must sleep"): every system
 * call the thread makes traps (SECCOMP_RET_TRAP, a filter installed raw,
 * unseen by the library) unless it comes from witness_syscall6's
 * instruction; the SIGSYS handler counts it (a futex wait, a wake, any
 * other) and makes it from there, so the thread goes on as if unwatched.
 * The filter stays for the thread's life.  x86-64 (the stub, the
 * registers): elsewhere the header defines nothing.
 *
 *   witness_prepare()   finds libc's own sigaction and sets no_new_privs:
 *        on an unmarked thread before the witnessed one is marked, where
 *        the witnessed thread may not make these calls itself (strict,
 *        or a window that counts them); install_witness() does it
 *        otherwise
 *   install_witness()   on the thread to witness: 0, or -1
 *   seen_wait, seen_wake, seen_other, other_nr   the counts (and the last
 *        other number), read around the calls a test looks at
 *   witness_allowed_nr   a system call a window expects, not counted as
 *        other (-1: none)
 */
#ifndef RTO_TEST_CALL_WITNESS_H
#define RTO_TEST_CALL_WITNESS_H

#if defined(__x86_64__)

#include <linux/futex.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <ucontext.h>

#include "raw_seccomp.h"

__asm__(".pushsection .text\n"
	".type witness_syscall6,@function\n"
	"witness_syscall6:\n"
	"	mov %rdi, %rax\n"
	"	mov %rsi, %rdi\n"
	"	mov %rdx, %rsi\n"
	"	mov %rcx, %rdx\n"
	"	mov %r8, %r10\n"
	"	mov %r9, %r8\n"
	"	mov 8(%rsp), %r9\n"
	"	syscall\n"
	"witness_syscall6_after:\n"
	"	ret\n"
	".size witness_syscall6, .-witness_syscall6\n"
	".popsection\n");
long witness_syscall6(long nr, long a, long b, long c, long d, long e, long f);
extern const char witness_syscall6_after[];

/* The sanitizer runtimes map memory on the thread that needs it: theirs, not the library's. */
static int sanitizer_own(long nr)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	return nr == SYS_mmap || nr == SYS_munmap || nr == SYS_madvise || nr == SYS_mprotect;
#else
	(void)nr;
	return 0;
#endif
}

static _Atomic long seen_wait, seen_wake, seen_other, other_nr;
static _Atomic long witness_allowed_nr = -1;

static void on_sigsys(int sig, siginfo_t *si, void *vctx)
{
	(void)sig;
	greg_t *g = ((ucontext_t *)vctx)->uc_mcontext.gregs;
	long nr = si->si_syscall;

	if (nr == SYS_futex) {
		if ((g[REG_RSI] & FUTEX_CMD_MASK) != FUTEX_WAKE)
			atomic_fetch_add(&seen_wait, 1); /* the caller waited */
		else
			atomic_fetch_add(&seen_wake, 1); /* the caller woke a helper */
	} else if (nr != atomic_load(&witness_allowed_nr) && !sanitizer_own(nr)) {
		atomic_fetch_add(&seen_other, 1);
		atomic_store(&other_nr, nr);
	}
	g[REG_RAX] = witness_syscall6(nr, g[REG_RDI], g[REG_RSI], g[REG_RDX], g[REG_R10], g[REG_R8],
				      g[REG_R9]);
}

/*
 * libc's own sigaction, not the library's: its trampoline would note our
 * SIGSYS as a signal that interrupted an offloaded call, and the caller
 * would then ask the kernel for its flags (signals.c), a system call of
 * the witness's own.
 */
static libc_sigaction_fn *witness_sigaction;

static int witness_prepare(void)
{
	witness_sigaction = libc_sigaction_of_libc();
	return witness_sigaction && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 ? 0 : -1;
}

static int install_witness(void)
{
	struct sigaction sa = {.sa_sigaction = on_sigsys, .sa_flags = SA_SIGINFO | SA_RESTART};

	if (!witness_sigaction && witness_prepare() != 0)
		return -1;
	sigemptyset(&sa.sa_mask);
	if (witness_sigaction(SIGSYS, &sa, NULL) != 0)
		return -1;
	/* Raw: a filter installed through libc makes the library run the thread's calls here. */
	return (int)raw_seccomp_witness((uintptr_t)witness_syscall6_after);
}

#endif /* __x86_64__ */

#endif /* RTO_TEST_CALL_WITNESS_H */
