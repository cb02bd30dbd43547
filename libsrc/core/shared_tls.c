/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A task that shares a thread's TLS without being that thread: the child
 * of clone(CLONE_VM) without CLONE_SETTLS (glibc's clone() as stress-ng's
 * vm-rw uses it, a raw clone).  It reads the parent's rto_self, so it
 * looks marked when the parent is; but it has its own descriptor table
 * (no CLONE_FILES), cwd, credentials, signal handlers, and its calls must
 * never run on the process's helpers (they would close the parent's
 * descriptor), nor take the parent's request slot or async ring.
 *
 * Such clones are rare, so the thread that makes one is noticed (the
 * clone() wrapper here, the syscall() wrapper, the backstop's trapped
 * clone): it records its tid in its rto_self, and from then on each of its
 * routed calls asks the kernel who runs it (gettid, from the library's
 * text).  A call from another task is the child's, and runs directly.
 * The child's stack tells nothing: stress-ng puts it inside the parent's.
 * That system call per call is paid only by a thread that made such a
 * clone, not by any other.
 */
#include "rto_fast.h"
#include "backstop.h"
#include "resolve.h"
#include "real.h"

#include <linux/sched.h>
#include <stdarg.h>
#include <sys/syscall.h>

void rto_note_clone(uint64_t flags)
{
	if (!(flags & CLONE_VM) || (flags & CLONE_SETTLS) || rto_self.tls_shared)
		return;
	rto_self.tls_owner = (int)rto_bs_raw(SYS_gettid, 0, 0, 0, 0, 0, 0);
	rto_self.tls_shared = 1;
}

void rto_note_clone_args(long nr, const long *a)
{
	if (nr == SYS_clone)
		rto_note_clone((uint64_t)a[0]);
	else if (nr == SYS_clone3 && a[0] && a[1] >= 8)
		rto_note_clone(((const struct clone_args *)a[0])->flags);
}

int rto_foreign_slow(void)
{
	return rto_bs_raw(SYS_gettid, 0, 0, 0, 0, 0, 0) != rto_self.tls_owner;
}

/* glibc's clone(): its child may share this thread's TLS.  ptid, tls, ctid are read by flags. */
RTO_EXPORT int clone(int (*fn)(void *), void *stack, int flags, void *arg, ...)
{
	va_list ap;

	va_start(ap, arg);
	void *ptid = va_arg(ap, void *), *tls = va_arg(ap, void *), *ctid = va_arg(ap, void *);
	va_end(ap);
	rto_note_clone((uint64_t)(unsigned)flags);
	return RTO_HAND_REAL(clone)(fn, stack, flags, arg, ptid, tls, ctid);
}
