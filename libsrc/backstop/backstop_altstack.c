/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A trapped sigaltstack, emulated on the trapped frame.
 *
 * The kernel saves the thread's alternate signal stack into the frame of
 * the SIGSYS it delivers (uc_stack) and sets it back from there at the
 * handler's rt_sigreturn (kernel/signal.c: __save_altstack,
 * restore_altstack).  Run inside the handler, the program's sigaltstack
 * would be undone on the way out: it would read SS_DISABLE back and die
 * at its stack overflow without its handler.  So, as the signal mask is
 * (backstop_trap.c), the call reads and changes uc->uc_stack, which the
 * rt_sigreturn then makes the thread's; with the kernel's checks, in its
 * order (do_sigaltstack), against the trapped stack pointer:
 *   EFAULT  the new stack cannot be read, or the old one cannot be written
 *   EPERM   a new stack while the trapped code runs on the current one
 *           (never with SS_AUTODISARM: it was disarmed on entry)
 *   EINVAL  a mode other than 0, SS_ONSTACK or SS_DISABLE
 *   ENOMEM  a stack smaller than the kernel's MINSIGSTKSZ
 * The kernel's dynamic size check for AMX state (sigaltstack_size_valid)
 * is not repeated: the rt_sigreturn would refuse such a stack silently.
 *
 * The arguments are copied with process_vm_readv/writev on this process:
 * a bad pointer is EFAULT, as from the kernel, not a SIGSEGV inside the
 * handler.  Where a filter refuses those calls, a plain copy it is.
 *
 * The other calls that act on what rt_sigreturn restores are the signal
 * mask's (rt_sigprocmask, emulated in backstop_trap.c).  rt_sigsuspend,
 * ppoll, pselect6 and epoll_pwait set a mask only for their wait and put
 * the handler's back, which is the trapped code's: they run as they are.
 */
#include "rto_base.h"
#include "backstop.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <ucontext.h>

#ifndef SS_AUTODISARM
#define SS_AUTODISARM (1U << 31)
#endif
#define KERNEL_MINSIGSTKSZ 2048 /* the kernel's, not glibc's sysconf(_SC_MINSIGSTKSZ) */

/* n bytes between this process's addresses: 0, or -EFAULT. */
static long copy(void *to, const void *from, size_t n, int write)
{
	struct iovec local = {.iov_base = write ? (void *)from : to, .iov_len = n};
	struct iovec remote = {.iov_base = write ? to : (void *)from, .iov_len = n};
	long pid = rto_bs_raw(SYS_getpid, 0, 0, 0, 0, 0, 0);
	long r = rto_bs_raw(write ? SYS_process_vm_writev : SYS_process_vm_readv, pid, (long)&local,
			    1, (long)&remote, 1, 0);

	if (r == (long)n)
		return 0;
	if (r == -EFAULT || r >= 0)
		return -EFAULT;
	memcpy(to, from, n); /* refused (a filter, ENOSYS): trust the pointer */
	return 0;
}

/* The kernel's on_sig_stack(), for the stack st. */
static int on_stack(uintptr_t sp, const stack_t *st)
{
	uintptr_t base = (uintptr_t)st->ss_sp;

	if ((unsigned)st->ss_flags & SS_AUTODISARM)
		return 0;
	return sp > base && sp - base <= st->ss_size;
}

long rto_bs_emul_sigaltstack(ucontext_t *uc, const stack_t *uss, stack_t *uoss)
{
	stack_t *cur = &uc->uc_stack; /* what rt_sigreturn will set */
	uintptr_t sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
	stack_t in, old;
	long ret;

	if (uss && (ret = copy(&in, uss, sizeof(in), 0)) != 0)
		return ret;
	memset(&old, 0, sizeof(old));
	old.ss_sp = cur->ss_sp;
	old.ss_size = cur->ss_size;
	old.ss_flags = (!cur->ss_size	    ? SS_DISABLE
			: on_stack(sp, cur) ? SS_ONSTACK
					    : 0) |
		       (int)((unsigned)cur->ss_flags & SS_AUTODISARM);
	if (uss) {
		unsigned mode = (unsigned)in.ss_flags & ~SS_AUTODISARM;
		if (on_stack(sp, cur))
			return -EPERM;
		if (mode != SS_DISABLE && mode != SS_ONSTACK && mode != 0)
			return -EINVAL;
		if (mode == SS_DISABLE) {
			in.ss_sp = NULL;
			in.ss_size = 0;
		} else if (in.ss_size < KERNEL_MINSIGSTKSZ) {
			return -ENOMEM;
		}
		*cur = in;
	}
	if (uoss)
		return copy(uoss, &old, sizeof(old), 1);
	return 0;
}
