/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A program that sets an alternate signal stack, reads it back, and then
 * overflows its stack: its SA_ONSTACK SIGSEGV handler must run (CPython's
 * faulthandler does this).  Not linked to the library: test_debug.c runs
 * it plainly and preloaded, and compares what it prints.
 *
 *   altstack_prog HOW WHERE
 *     HOW    glibc (sigaltstack()), syscall (syscall(SYS_sigaltstack)) or
 *            raw (a syscall instruction of its own)
 *     WHERE  main, or thread (a second thread does it all)
 *   altstack_prog HOW errors: the kernel's answers, one a line
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SS_AUTODISARM
#define SS_AUTODISARM (1U << 31)
#endif
#define ALT_SIZE (256 * 1024)

static const char *how;

/* 0, or -errno, through the chosen path. */
static long alt(const stack_t *ss, stack_t *old)
{
	if (!strcmp(how, "glibc"))
		return sigaltstack(ss, old) ? -errno : 0;
	if (!strcmp(how, "syscall"))
		return syscall(SYS_sigaltstack, ss, old) ? -errno : 0;
	long ret;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"((long)SYS_sigaltstack), "D"(ss), "S"(old)
			 : "rcx", "r11", "memory");
	return ret;
}

static char *alt_mem;

static void on_segv(int sig)
{
	(void)sig;
	char here;
	int on = &here >= alt_mem && &here < alt_mem + ALT_SIZE;
	char line[64];
	int n = snprintf(line, sizeof(line), "handler ran on_altstack=%d\n", on);
	write(1, line, (size_t)n);
	_exit(0);
}

static int deep(int n);
static int (*volatile deeper)(int) = deep; /* no tail call, no warning: it must overflow */

static int deep(int n)
{
	volatile char b[4096];
	b[0] = (char)n;
	return deeper(n + 1) + b[0];
}

static void *overflow(void *unused)
{
	(void)unused;
	stack_t ss = {.ss_sp = alt_mem, .ss_size = ALT_SIZE}, back;
	long r = alt(&ss, NULL);
	long r2 = alt(NULL, &back);
	printf("set=%ld read=%ld same=%d flags=%d\n", r, r2,
	       back.ss_sp == alt_mem && back.ss_size == ALT_SIZE, back.ss_flags);
	fflush(stdout);
	struct sigaction sa = {.sa_handler = on_segv, .sa_flags = SA_ONSTACK};
	sigaction(SIGSEGV, &sa, NULL);
	deep(0);
	return NULL;
}

/* ---- errors ---------------------------------------------------------------------- */

static void on_usr1(int sig)
{
	(void)sig;
	stack_t ss = {.ss_sp = alt_mem, .ss_size = ALT_SIZE}, back;
	long r2 = alt(NULL, &back);
	long r = alt(&ss, NULL); /* on the stack it would replace */
	printf("in handler: read=%ld flags=%d set=%ld\n", r2, back.ss_flags, r);
}

static void on_usr2(int sig)
{
	(void)sig;
	stack_t back;
	long r2 = alt(NULL, &back); /* SS_AUTODISARM: disarmed while it runs */
	printf("in autodisarm handler: read=%ld flags=%#x size=%zu\n", r2, (unsigned)back.ss_flags,
	       back.ss_size);
}

static void errors(void)
{
	stack_t ss = {.ss_sp = alt_mem, .ss_size = ALT_SIZE}, back;

	printf("bad mode: %ld\n", (ss.ss_flags = 5, alt(&ss, NULL)));
	ss.ss_flags = 0;
	printf("too small: %ld\n", (ss.ss_size = 1024, alt(&ss, NULL)));
	ss.ss_size = ALT_SIZE;
	printf("bad new: %ld\n", alt((const stack_t *)8, NULL));
	printf("bad old: %ld\n", alt(NULL, (stack_t *)8));
	printf("disable: %ld\n", (ss.ss_flags = SS_DISABLE, alt(&ss, NULL)));
	alt(NULL, &back);
	printf("read: flags=%d size=%zu\n", back.ss_flags, back.ss_size);
	ss.ss_flags = 0;
	printf("set: %ld\n", alt(&ss, NULL));
	struct sigaction sa = {.sa_handler = on_usr1, .sa_flags = SA_ONSTACK};
	sigaction(SIGUSR1, &sa, NULL);
	raise(SIGUSR1);
	ss.ss_flags = (int)SS_AUTODISARM;
	printf("set autodisarm: %ld\n", alt(&ss, NULL));
	sa.sa_handler = on_usr2;
	sigaction(SIGUSR2, &sa, NULL);
	raise(SIGUSR2);
	alt(NULL, &back);
	printf("after: flags=%#x size=%zu\n", (unsigned)back.ss_flags, back.ss_size);
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	how = argv[1];
	alt_mem = malloc(ALT_SIZE);
	if (!strcmp(argv[2], "errors")) {
		errors();
		return 0;
	}
	if (!strcmp(argv[2], "thread")) {
		pthread_t t;
		pthread_attr_t a;
		pthread_attr_init(&a);
		pthread_attr_setstacksize(&a, 1 << 20);
		pthread_create(&t, &a, overflow, NULL);
		pthread_join(t, NULL);
		return 1;
	}
	overflow(NULL);
	return 1;
}
