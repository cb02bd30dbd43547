/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A program that uses Syscall User Dispatch itself, in the shape of the
 * kernel's selftest (tools/testing/selftests/syscall_user_dispatch/
 * sud_test.c) and of stress-ng --prctl: its SIGSYS handler answers the
 * system calls its selector blocks, then it turns dispatch off.  Not linked
 * to the library: test_debug.c runs it plainly and preloaded, and compares
 * what it prints.
 *
 *   sud_prog HOW WHERE   HOW: glibc (prctl()) or raw (a syscall
 *                        instruction of its own); WHERE: main or thread
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef PR_SET_SYSCALL_USER_DISPATCH
#define PR_SET_SYSCALL_USER_DISPATCH 59
#define PR_SYS_DISPATCH_OFF	     0
#define PR_SYS_DISPATCH_ON	     1
#endif
#ifndef SYS_USER_DISPATCH
#define SYS_USER_DISPATCH 2
#endif
#define MAGIC 0xff00 /* no such system call: only the handler answers it */

static const char *how;
static volatile char sel; /* 0 allow, 1 block */
static volatile int emulated, foreign;

static long dispatch(long mode, long off, long len, volatile char *s)
{
	if (!strcmp(how, "glibc"))
		return prctl(PR_SET_SYSCALL_USER_DISPATCH, mode, off, len, s) ? -errno : 0;
	long ret;
	register long r10 __asm__("r10") = len;
	register long r8 __asm__("r8") = (long)s;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"((long)SYS_prctl), "D"((long)PR_SET_SYSCALL_USER_DISPATCH), "S"(mode),
			   "d"(off), "r"(r10), "r"(r8)
			 : "rcx", "r11", "memory");
	return ret;
}

static void on_sigsys(int sig, siginfo_t *si, void *ucv)
{
	(void)sig;
	ucontext_t *uc = ucv;
	if (si->si_code == SYS_USER_DISPATCH && si->si_syscall == MAGIC)
		emulated++;
	else
		foreign++;
	uc->uc_mcontext.gregs[REG_RAX] = si->si_syscall; /* syscall(x) == x */
	sel = 0;					 /* for the rt_sigreturn */
}

static void *run(void *unused)
{
	(void)unused;
	printf("off before on: %ld\n", dispatch(PR_SYS_DISPATCH_OFF, 0, 0, NULL));
	printf("off with args: %ld\n", dispatch(PR_SYS_DISPATCH_OFF, 1, 0, NULL));
	for (int round = 0; round < 3; round++) {
		long on = dispatch(PR_SYS_DISPATCH_ON, 0, 0, &sel);
		long got[3];
		for (int i = 0; i < 3; i++) {
			sel = 1;
			got[i] = syscall(MAGIC);
		}
		sel = 0;
		long off = dispatch(PR_SYS_DISPATCH_OFF, 0, 0, NULL);
		long after = syscall(MAGIC) == -1 ? -errno : 0;
		printf("round %d: on=%ld got=%#lx,%#lx,%#lx off=%ld after=%ld emulated=%d "
		       "foreign=%d\n",
		       round, on, got[0], got[1], got[2], off, after, emulated, foreign);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	how = argv[1];
	struct sigaction sa = {.sa_sigaction = on_sigsys, .sa_flags = SA_SIGINFO};
	sigaction(SIGSYS, &sa, NULL);
	if (!strcmp(argv[2], "thread")) {
		pthread_t t;
		pthread_create(&t, NULL, run, NULL);
		pthread_join(t, NULL);
	} else {
		run(NULL);
	}
	write(1, "done\n", 5);
	return 0;
}
