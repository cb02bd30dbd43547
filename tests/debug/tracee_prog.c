/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A tracer and its tracee, in stress-ng vm-segv's shape: the child makes
 * itself a tracee (PTRACE_TRACEME), stops (raise(SIGSTOP)) and then
 * faults; the parent lets every signal through and prints the stops it
 * saw.  Not linked to the library: test_debug.c runs it plainly and
 * preloaded, and compares what it prints.
 *
 *   tracee_prog HOW    HOW: glibc (ptrace()), syscall (syscall(SYS_ptrace))
 *                      or raw (a syscall instruction of its own)
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static long traceme(const char *how)
{
	if (!strcmp(how, "glibc"))
		return ptrace(PTRACE_TRACEME, 0, NULL, NULL);
	if (!strcmp(how, "syscall"))
		return syscall(SYS_ptrace, PTRACE_TRACEME, 0, 0, 0);
	long ret;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"((long)SYS_ptrace), "D"((long)PTRACE_TRACEME), "S"(0L), "d"(0L)
			 : "rcx", "r11", "memory");
	return ret;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	pid_t pid = fork();
	if (pid == 0) {
		close(-1); /* a wrapped call first, as stress-ng's child makes many: it arms */
		if (traceme(argv[1]) != 0)
			_exit(3);
		raise(SIGSTOP);
		*(volatile int *)8 = 1; /* SIGSEGV */
		_exit(4);
	}
	int status, n = 0;
	printf("stops:");
	while (waitpid(pid, &status, 0) == pid && n++ < 50) {
		if (WIFSTOPPED(status)) {
			int sig = WSTOPSIG(status);
			printf(" %s", sigabbrev_np(sig) ? sigabbrev_np(sig) : "?");
			ptrace(PTRACE_CONT, pid, NULL, (void *)(long)(sig == SIGSTOP ? 0 : sig));
			continue;
		}
		if (WIFSIGNALED(status))
			printf("\nend: killed by SIG%s\n", sigabbrev_np(WTERMSIG(status)));
		else
			printf("\nend: exited %d\n", WEXITSTATUS(status));
		return 0;
	}
	printf("\nend: lost\n");
	return 1;
}
