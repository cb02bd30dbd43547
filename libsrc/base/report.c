/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The library's own messages: one line "rtoffload: <message>" on fd 2.
 *
 * Not through stdio: stderr's lock may be held by the thread that ends up
 * here, its buffer belongs to the application, and we run from the
 * constructor before anything is set up.  Not through write() either: that
 * name is one of our wrappers, and a message from a marked thread must not
 * be shipped to a helper (which may be what the message is about).  So the
 * line is formatted on the stack and leaves in one raw system call, which
 * also keeps lines from several threads from interleaving.
 *
 * The bottom layer: the real-function stubs (real.h) report a function
 * libc lacks through here, so this file reaches libc's syscall() itself,
 * through rto_resolve() like them, and its level is set by options.c.
 */
#include "resolve.h"
#include "report.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define RTO_LINE_MAX	   1024
#define RTO_WRITE_ATTEMPTS 8 /* EINTR and short writes; then give up */

static const char prefix[] = "rtoffload: ";

int rto_report_level;

#ifdef RTOFFLOAD_BUILDING
/*
 * libc's syscall(), found once.  Racing threads store the same value;
 * relaxed accesses (CMM_*_SHARED) suffice for a pointer to libc's code.
 */
static long (*raw_syscall)(long number, ...);

static long report_syscall(long nr, long a, long b, long c)
{
	long (*sys)(long, ...) = CMM_LOAD_SHARED(raw_syscall);

	if (!sys) {
		sys = (long (*)(long, ...))rto_resolve("syscall", NULL);
		if (!sys)
			return -1;
		CMM_STORE_SHARED(raw_syscall, sys);
	}
	return sys(nr, a, b, c);
}
#else
static long report_syscall(long nr, long a, long b, long c)
{
	return syscall(nr, a, b, c); /* the launcher: no interceptor there */
}
#endif

static long write_stderr(const char *buf, size_t n)
{
	return report_syscall(SYS_write, 2, (long)buf, (long)n);
}

static void put_all(const char *buf, size_t n)
{
	for (int i = 0; i < RTO_WRITE_ATTEMPTS && n > 0; i++) {
		long r = write_stderr(buf, n);

		if (r > 0) {
			buf += r;
			n -= (size_t)r;
		} else if (r < 0 && errno != EINTR) {
			return; /* EAGAIN on a non-blocking stderr: drop, never spin */
		}
	}
}

/* A message must stay one line, whatever its %s arguments hold. */
static void flatten(char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\n' || s[i] == '\r')
			s[i] = ' ';
	}
}

static void say(const char *fmt, va_list ap)
{
	char buf[RTO_LINE_MAX];
	size_t n = sizeof(prefix) - 1, room = sizeof(buf) - n - 1; /* -1: the '\n' */
	int r;

	memcpy(buf, prefix, n);
	r = vsnprintf(buf + n, room + 1, fmt, ap);
	if (r < 0)
		r = 0;
	if ((size_t)r > room) {
		r = (int)room;
		memcpy(buf + n + room - 3, "...", 3);
	}
	flatten(buf + n, (size_t)r);
	n += (size_t)r;
	buf[n++] = '\n';
	put_all(buf, n);
}

void rto_say(int level, const char *fmt, ...)
{
	int saved = errno; /* callers report, they do not expect errno to move */
	va_list ap;

	if (level > rto_report_level)
		return;
	va_start(ap, fmt);
	say(fmt, ap);
	va_end(ap);
	errno = saved;
}

_Noreturn void rto_die(int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(fmt, ap);
	va_end(ap);
	report_syscall(SYS_exit_group, status, 0, 0); /* _exit(), not our own interposer of it */
	__builtin_trap();			      /* libc's syscall() was not found */
}
