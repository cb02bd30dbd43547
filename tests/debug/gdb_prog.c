/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A small program to debug (test_debug.c): it prints, calls marker() (the
 * breakpoint) and exits 3.  Not linked to the library.
 *
 *   gdb_prog          at once
 *   gdb_prog wait     prints "ready", then makes raw system calls
 *                     (syscall(): they trap in a marked thread) until a
 *                     debugger that attached sets go_on
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

volatile int go_on;

__attribute__((noinline)) int marker(int x)
{
	return x + 1;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "wait")) {
		printf("ready\n");
		fflush(stdout);
		while (!go_on) {
			syscall(SYS_getppid);
			usleep(1000);
		}
	}
	printf("before\n");
	fflush(stdout);
	int r = marker(2);
	printf("after %d\n", r);
	fflush(stdout);
	return 3;
}
