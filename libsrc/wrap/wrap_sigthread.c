/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Two calls of the thread class that the backstop must see run on the
 * thread itself, with its selector open (backstop.h):
 *
 *   sigaltstack  trapped, it is emulated on the SIGSYS frame
 *                (backstop_altstack.c); run here it costs no trap, and a
 *                debugger attached to the process sees none
 *   ptrace       PTRACE_TRACEME makes the thread a tracee: the backstop
 *                gives its dispatch up from then on (backstop_cede.c), so
 *                that the tracer sees the stops it would see without the
 *                library
 */
#include "rto_base.h"
#include "backstop.h"
#include "real.h"

#include <signal.h>
#include <stdarg.h>
#include <sys/ptrace.h>

/*
 * Uninstrumented, and not armed straight to libc: a sanitizer runtime sets
 * its own alternate stack while it starts, before it can run instrumented
 * code (RTO_UNINSTRUMENTED, rto_base.h).
 */
RTO_EXPORT RTO_UNINSTRUMENTED int sigaltstack(const stack_t *ss, stack_t *old)
{
	if (!(rto_bs_armed & 1))
		return rto_real_sigaltstack(ss, old); /* nothing traps */
	unsigned char sel = rto_backstop_enter();
	int ret = rto_real_sigaltstack(ss, old);
	rto_backstop_leave(sel);
	return ret;
}

RTO_EXPORT long ptrace(enum __ptrace_request request, ...)
{
	va_list ap;

	/* glibc's ptrace() reads three more arguments, whatever the request. */
	va_start(ap, request);
	pid_t pid = va_arg(ap, pid_t);
	void *addr = va_arg(ap, void *);
	void *data = va_arg(ap, void *);
	va_end(ap);
	unsigned char sel = rto_backstop_enter();
	long ret = RTO_HAND_REAL(ptrace)(request, pid, addr, data);
	if (request == PTRACE_TRACEME && ret == 0)
		rto_backstop_now_traced();
	rto_backstop_leave(sel);
	return ret;
}
