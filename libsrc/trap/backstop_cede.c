/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the backstop gives up to the program: a thread's Syscall User
 * Dispatch, when the program wants it for itself, and every thread's, when
 * the process is traced.  The program's own use of the mechanism wins; the
 * library says once what it gave up (verbosity=1).
 *
 * The program's dispatch (stress-ng --prctl, Wine for Windows system
 * calls): the kernel keeps one per thread, so the thread's becomes the
 * program's.  Ours goes off before the program's prctl runs (through its
 * wrapper, or trapped: then the program's own syscall instruction runs
 * again, outside the handler, with no dispatch on), and the thread never
 * arms again.  From then on a SIGSYS of Syscall User Dispatch on that
 * thread is the program's: the handler chains it to the program's SIGSYS
 * handler (backstop_trap.c), as it does seccomp's RET_TRAP.  The thread
 * stays marked: its wrapped calls are routed as before; only the raw
 * system calls it makes behind the wrappers are no longer decided.  A
 * program turning dispatch off on a thread where only ours is on gets
 * what the kernel would answer (it had none), and ours stays.
 *
 * A tracer sees each signal of its tracee, the SIGSYS of every trap
 * included (gdb stops with "Bad system call", stress-ng's vm-segv counts
 * stops), and a fault twice where the library's fault trampoline stands
 * before the default action (signals.c).  A process traced when it loads
 * the library (a program started by gdb or strace) does not arm at all
 * and keeps default fault actions (backstop.c); a thread that makes
 * itself a tracee (PTRACE_TRACEME) disarms, and no thread arms from then
 * on (not a vfork child's: it runs on its parent's state, and execs next).
 * A tracer that attaches later sees the traps: the gdb script
 * installed next to the library lets them pass (README.md, "Debugging").
 */
#include "rto_base.h"
#include "backstop.h"
#include "signals.h"
#include "real.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>

#define PR_SYS_DISPATCH_OFF 0
#define PR_SYS_DISPATCH_ON  1

static void say_dispatch_once(void)
{
	static int said;

	if (!uatomic_xchg(&said, 1))
		rto_say(1, "backstop: the program set Syscall User Dispatch on a thread: the "
			   "thread's dispatch is the program's from now on, its raw system "
			   "calls are no longer decided (its wrapped calls are)");
}

void rto_backstop_now_traced(void)
{
	if (rto_self.vforking)
		return; /* the child of vfork (gdb's): its state is its parent's, and it execs next
			 */
	rto_backstop_give_up_self();
	rto_signal_faults_plain();
	if (!uatomic_xchg(&rto_backstop_traced, 1) && rto_backstop_on)
		rto_say(1, "backstop off: a thread became a tracee (PTRACE_TRACEME): a "
			   "tracer would see each trapped system call as a SIGSYS stop");
}

int rto_backstop_program_dispatch(unsigned long mode, unsigned long off, unsigned long len,
				  unsigned long sel)
{
	unsigned char was = rto_backstop_enter();
	int ret;

	if (rto_self.vforking) {
		/* A vfork child runs on its parent's state, and has none of our dispatch. */
		ret = RTO_HAND_REAL(prctl)(RTO_PR_SET_SYSCALL_USER_DISPATCH, mode, off, len, sel);
	} else if (mode == PR_SYS_DISPATCH_OFF && (rto_bs_armed & 1)) {
		/* Only ours is on: the program had none, off is what it has. */
		ret = 0;
		if (off || len || sel) {
			errno = EINVAL;
			ret = -1;
		}
	} else if (mode == PR_SYS_DISPATCH_ON) {
		int had = rto_bs_armed & 1;
		rto_backstop_give_up_self();
		ret = RTO_HAND_REAL(prctl)(RTO_PR_SET_SYSCALL_USER_DISPATCH, mode, off, len, sel);
		if (ret == 0)
			say_dispatch_once();
		else if (had)
			rto_bs_armed = 0; /* refused: ours again, at the leave below */
	} else {
		ret = RTO_HAND_REAL(prctl)(RTO_PR_SET_SYSCALL_USER_DISPATCH, mode, off, len, sel);
	}
	rto_backstop_leave(was);
	return ret;
}

/* The program's syscall instruction once more, after the handler: 1, or 0 if it is none. */
static int run_again(long nr, ucontext_t *uc)
{
	greg_t *g = uc->uc_mcontext.gregs;

	unsigned short insn;

	memcpy(&insn, (const void *)(g[REG_RIP] - 2), sizeof(insn)); /* any alignment */
	if (insn != 0x050f)
		return 0;
	g[REG_RIP] -= 2;
	g[REG_RAX] = nr;
	return 1;
}

int rto_bs_cede(long nr, const long *a, ucontext_t *uc)
{
	greg_t *g = uc->uc_mcontext.gregs;

	if (nr == SYS_prctl && a[0] == RTO_PR_SET_SYSCALL_USER_DISPATCH) {
		rto_backstop_count(nr, RTO_BS_LOCAL);
		if (a[1] == PR_SYS_DISPATCH_OFF) { /* it trapped: only ours is on */
			g[REG_RAX] = (a[2] || a[3] || a[4]) ? -EINVAL : 0;
			return 1;
		}
		if (a[1] != PR_SYS_DISPATCH_ON)
			return 0; /* the kernel's EINVAL */
		/*
		 * Run here, its dispatch would be on for this handler's own
		 * rt_sigreturn: again, outside it, with ours off.
		 */
		rto_backstop_give_up_self();
		say_dispatch_once();
		if (!run_again(nr, uc))
			g[REG_RAX] = rto_bs_raw(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
		return 1;
	}
	if (nr == SYS_ptrace && a[0] == PTRACE_TRACEME) {
		rto_backstop_count(nr, RTO_BS_LOCAL);
		g[REG_RAX] = rto_bs_raw(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
		if (g[REG_RAX] == 0)
			rto_backstop_now_traced();
		return 1;
	}
	return 0;
}
