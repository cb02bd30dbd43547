/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * syscall(): the way programs make the system calls glibc has no function
 * for, among them those that give the calling thread a kernel context of
 * its own: seccomp without TSYNC, landlock_restrict_self, ioprio_set,
 * set_mempolicy, the keyrings' add_key, request_key and keyctl, and the
 * raw forms of setfsuid, capset, unshare, setns.
 * After such a call succeeds the thread runs its calls itself
 * (context.c); a filter installed with TSYNC covers the helpers too.
 *
 * A marked thread's call is decided here from the backstop's table, as
 * the SIGSYS handler would decide it, without the trap (backstop_trap.c):
 * a realtime-safe one (a futex, sched_yield) runs on the caller at the
 * cost of a selector store.  An unmarked thread pays one TLS load and a
 * branch more than glibc's syscall().
 */
#include "rto_fast.h"
#include "backstop.h"
#include "context.h"
#include "resolve.h"
#include "real.h"

#include <errno.h>
#include <stdarg.h>
#include <sys/syscall.h>

/*
 * One of the calls context.c looks at: syscalls.tbl's "ctx" rows, and the
 * seccomp filters that a trapped instruction does not install here
 * (syscalls.tbl: the witnesses rely on it).  Two loads, no call, for the
 * others.
 */
static inline int may_change_context(long nr)
{
	if (nr == SYS_seccomp || nr == SYS_prctl)
		return 1;
	return nr >= 0 && nr < RTO_SYSENT_COUNT && (rto_sysent[nr].flags & RTO_SYS_CTX);
}

/* The call made: decided as a trapped one for a marked, armed thread (pc: its caller). */
static long made(long nr, const long *a, const void *pc)
{
	long ret;

	if (RTO_UNLIKELY(!rto_direct()) && rto_bs_armed == 1 && rto_bs_syscall(nr, a, pc, &ret)) {
		if ((unsigned long)ret > -4096UL) { /* glibc's syscall(): -1 and errno */
			errno = (int)-ret;
			ret = -1;
		}
		return ret;
	}
	return RTO_HAND_REAL(syscall)(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

/*
 * The caller passed as many arguments as its system call takes, and we
 * read six, as glibc's own syscall() does in assembly: the extra reads
 * land in the caller's frame, which AddressSanitizer would call an
 * underflow.  Not instrumented for that reason only.
 */
RTO_EXPORT __attribute__((no_sanitize("address"))) long syscall(long nr, ...)
{
	long a[6];
	va_list ap;

	/* syscall() takes up to six long-sized arguments: pass them on. */
	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (RTO_UNLIKELY(nr == SYS_clone || nr == SYS_clone3)) /* its child may share our TLS */
		rto_note_clone_args(nr, a);
	const void *pc = __builtin_return_address(0);
	long ret = made(nr, a, pc);
	if (RTO_UNLIKELY(may_change_context(nr))) {
		if (rto_ctx_needs_alone(nr, a, ret)) /* our threads were in the way: again */
			return made(nr, a, pc);
		rto_ctx_after_syscall(nr, a, ret);
	}
	return ret;
}
