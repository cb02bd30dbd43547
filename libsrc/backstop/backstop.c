/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The backstop's arming: Syscall User Dispatch on each marked thread, the
 * SIGSYS handler installed once, the program's own SIGSYS handler kept as
 * the one to chain to (seccomp RET_TRAP), and masks that must never block
 * SIGSYS.
 *
 * SUD is per thread and only the thread itself can turn it on (prctl), so
 * a thread arms when it is first marked (route_state.h) or, marked by
 * mark= from another thread, at its first wrapped call (backstop.h).
 * Unmarked, it stays armed with the selector at ALLOW, so that a later mark
 * is a flag flip.  It disarms in a thread-specific-data destructor at its
 * exit, before glibc unmaps the stack that holds the selector (the kernel
 * would kill a thread whose selector it cannot read).  A new thread, a forked
 * child and an exec'd program start disarmed (the kernel clears it).
 *
 * The SIGSYS handler is installed with the raw rt_sigaction and the
 * library's own restorer, inside the allowed region: its rt_sigreturn
 * passes while the selector blocks.  It runs with SA_NODEFER so that a
 * seccomp RET_TRAP raised by a call the handler makes (a thread's own
 * filter) reaches the program's handler instead of killing the process.
 *
 * A forced SIGSYS that is blocked kills the process; so from the first arm
 * on, SIGSYS is taken out of every handler's sa_mask (those installed
 * before, and every later sigaction), of the masks armed threads set
 * through the wrappers, and of trapped rt_sigprocmask/rt_sigaction calls
 * (backstop_trap.c).
 */
#include "rto_base.h"
#include "options.h"
#include "backstop.h"
#include "real.h"
#include "procfs.h"
#include "kernel_sigaction.h"
#include "raw_syscall_asm.h"

#include <errno.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#ifndef PR_SET_SYSCALL_USER_DISPATCH
#define PR_SET_SYSCALL_USER_DISPATCH 59
#define PR_SYS_DISPATCH_OFF	     0
#define PR_SYS_DISPATCH_ON	     1
#endif

__thread volatile unsigned char rto_bs_sel RTO_TLS;
__thread unsigned char rto_bs_depth RTO_TLS;
struct sigaction rto_backstop_chain;

/*
 * The handler and the program's view of a signal's action, from above
 * (backstop_trap.c, signals.c), registered by init.c with
 * rto_backstop_init() before any thread is marked; pthread_create orders
 * those stores before every other thread's loads.
 */
/* backstop=: copied once at load (rto_backstop_configure), read-only afterwards. */
static struct {
	int on; /* backstop=on */
} opt;

void rto_backstop_configure(const struct rto_options *o)
{
	opt.on = o->backstop;
}

static void (*sigsys_handler)(int sig, siginfo_t *si, void *uc);
static int (*program_action)(int sig, struct sigaction *cur);

/* ---- the library's text: a raw call, the restorer ---------------------------- */

__asm__(".text\n" RTO_RAW_SYSCALL6_ASM(rto_bs_raw)
	/* glibc's byte pattern: libunwind knows a signal frame by it */
	".globl rto_bs_restorer\n"
	".hidden rto_bs_restorer\n"
	".type rto_bs_restorer,@function\n"
	"rto_bs_restorer:\n"
	"	mov $15, %rax\n"
	"	syscall\n"
	"	hlt\n"
	".size rto_bs_restorer, .-rto_bs_restorer\n"
	".previous\n");

__thread unsigned char rto_bs_armed RTO_TLS;
int rto_backstop_on;
int rto_backstop_traced;

static uintptr_t text_start, text_len; /* the allowed region: the library's text */
static const char *why_off = "backstop=off";
static pthread_key_t disarm_key;
static int handler_state; /* 0: not installed, 1: installing, 2: installed */

#define SIGSYS_BIT (1ULL << (SIGSYS - 1))

static long raw_sigaction(int sig, const struct ksa *act, struct ksa *old)
{
	return rto_bs_raw(SYS_rt_sigaction, sig, (long)act, (long)old, 8, 0, 0);
}

static long dispatch(int op)
{
	if (op == PR_SYS_DISPATCH_OFF)
		return rto_bs_raw(SYS_prctl, PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_OFF, 0,
				  0, 0, 0);
	return rto_bs_raw(SYS_prctl, PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_ON,
			  (long)text_start, (long)text_len, (long)&rto_bs_sel, 0);
}

static int find_text(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	uintptr_t self = (uintptr_t)rto_backstop_init;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t start = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && self >= start &&
		    self < start + ph->p_memsz) {
			text_start = start;
			text_len = ph->p_memsz;
			return 1;
		}
	}
	return 0;
}

/* Valgrind runs the program's code translated, from its own text: SUD would trap it all. */
static int under_valgrind(void)
{
	const char *p = getenv("LD_PRELOAD");
	return p && strstr(p, "vgpreload");
}

static void disarm_at_exit(void *unused)
{
	(void)unused;
	rto_backstop_disarm_self();
}

static void child_after_fork(void)
{
	rto_backstop_after_fork();
}

/* Is this process traced (TracerPid in /proc/self/status)?  At load. */
static int traced_now(void)
{
	char buf[2048];
	const char *p;

	if (rto_procfs_read("/proc/self/status", buf, sizeof(buf)) < 0)
		return 0;
	p = strstr(buf, "\nTracerPid:");
	return p && strtol(p + sizeof("\nTracerPid:") - 1, NULL, 10) != 0;
}

void rto_backstop_init(void (*handler)(int sig, siginfo_t *si, void *uc),
		       int (*action)(int sig, struct sigaction *cur))
{
	sigsys_handler = handler;
	program_action = action;
	int traced = traced_now();
	if (traced) /* a program started by gdb or strace: the stops it would see alone (init.c) */
		CMM_STORE_SHARED(rto_backstop_traced, 1);
	if (!opt.on)
		return;
	if (under_valgrind())
		why_off = "valgrind does not emulate Syscall User Dispatch";
	else if (!dl_iterate_phdr(find_text, NULL))
		why_off = "the library's text was not found";
	else {
		/* Probe on this thread: on, then off at once. */
		unsigned char was = rto_bs_sel;
		rto_bs_sel = RTO_BS_ALLOW;
		long r = dispatch(PR_SYS_DISPATCH_ON);
		if (r == 0)
			dispatch(PR_SYS_DISPATCH_OFF);
		rto_bs_sel = was;
		if (r == -EINVAL)
			why_off = "this kernel has no Syscall User Dispatch (Linux 5.11+)";
		else if (r != 0)
			why_off = "the kernel refused Syscall User Dispatch "
				  "(sysctl kernel.syscall_user_dispatch?)";
		else if (traced)
			why_off = "this process is traced: a tracer would see each trapped system "
				  "call as a SIGSYS stop";
		else
			why_off = NULL;
	}
	if (why_off) {
		rto_say(1, "backstop off: %s; only wrapped calls are decided", why_off);
		return;
	}
	pthread_key_create(&disarm_key, disarm_at_exit);
	pthread_atfork(NULL, NULL, child_after_fork);
	rto_backstop_on = 1;
}

/* SIGSYS out of the sa_mask of every handler installed before the first arm. */
static void strip_installed_masks(void)
{
	for (int sig = 1; sig <= 64; sig++) {
		struct ksa cur;
		if (sig == SIGKILL || sig == SIGSTOP || sig == SIGSYS)
			continue;
		if (raw_sigaction(sig, NULL, &cur) != 0 || !(cur.mask & SIGSYS_BIT))
			continue;
		if (cur.handler == (void *)SIG_DFL || cur.handler == (void *)SIG_IGN)
			continue;
		cur.mask &= ~SIGSYS_BIT;
		raw_sigaction(sig, &cur, NULL);
	}
}

/*
 * The SIGSYS handler, once per process.  The program's handler of the
 * moment, as the program sees it (signals.c), becomes the one to chain to.
 */
static void install_handler(void)
{
	if (CMM_LOAD_SHARED(handler_state) == 2)
		return;
	if (uatomic_cmpxchg(&handler_state, 0, 1) != 0) {
		while (CMM_LOAD_SHARED(handler_state) != 2)
			rto_bs_raw(SYS_sched_yield, 0, 0, 0, 0, 0, 0);
		return;
	}
	struct sigaction cur;
	if (program_action(SIGSYS, &cur) == 0)
		rto_backstop_chain = cur;
	strip_installed_masks();
	struct ksa mine = {
		.handler = (void *)sigsys_handler,
		.flags = SA_SIGINFO | SA_NODEFER | SA_RESTART | 0x04000000 /* SA_RESTORER */,
		.restorer = (void *)rto_bs_restorer,
		.mask = 0,
	};
	if (raw_sigaction(SIGSYS, &mine, NULL) != 0)
		rto_die(70, "backstop: cannot install the SIGSYS handler");
	uatomic_set(&handler_state, 2);
}

void rto_backstop_arm_self(void)
{
	uint64_t unblock = SIGSYS_BIT;

	if (!rto_backstop_on || (rto_bs_armed & 1) || rto_self.vforking)
		return;
	if (rto_bs_armed) { /* failed before on this thread: once is enough */
		rto_bs_sel = RTO_BS_ALLOW;
		return;
	}
	if (CMM_LOAD_SHARED(rto_backstop_traced)) { /* a tracer would see each trap */
		rto_bs_armed = 2;
		return;
	}
	install_handler();
	rto_bs_raw(SYS_rt_sigprocmask, SIG_UNBLOCK, (long)&unblock, 0, 8, 0, 0);
	pthread_setspecific(disarm_key, (void *)1); /* non-NULL: the destructor runs */
	rto_bs_sel = RTO_BS_ALLOW;
	long r = dispatch(PR_SYS_DISPATCH_ON);
	if (r != 0) {
		rto_bs_armed = 2;
		rto_say(1, "backstop: this thread cannot be armed (%ld)", -r);
		return;
	}
	rto_bs_armed = 1;
	rto_bs_sel = RTO_BS_BLOCK;
}

void rto_backstop_disarm_self(void)
{
	if (!(rto_bs_armed & 1))
		return;
	rto_bs_sel = RTO_BS_ALLOW;
	dispatch(PR_SYS_DISPATCH_OFF);
	rto_bs_armed = 0;
}

void rto_backstop_give_up_self(void)
{
	if (rto_bs_armed & 1) {
		rto_bs_sel = RTO_BS_ALLOW;
		dispatch(PR_SYS_DISPATCH_OFF);
	}
	rto_bs_armed = 2;
}

void rto_backstop_marked_self(void)
{
	if (rto_bs_armed & 1)
		rto_bs_sel = RTO_BS_BLOCK;
	else
		rto_backstop_arm_self();
}

void rto_backstop_leave_slow(unsigned char was)
{
	if (rto_bs_armed & 4) { /* a clone/vfork ran again, allowed: block again now */
		rto_bs_armed = 1;
		rto_backstop_leave_outer(was);
		return;
	}
	if (!rto_bs_armed && rto_self.route == RTO_ROUTE_MARKED) {
		rto_backstop_arm_self(); /* leaves the selector at BLOCK */
		return;
	}
	rto_bs_sel = was;
}

void rto_backstop_after_fork(void)
{
	/* The kernel copied neither our dispatch nor the program's into the child. */
	rto_bs_armed = 0;
	rto_bs_sel = RTO_BS_ALLOW;
}

/* Uninstrumented: TSan's start-up installs its handlers through our sigaction() (signals.c). */
RTO_UNINSTRUMENTED int rto_backstop_sigaction(int sig, const struct sigaction *act,
					      struct sigaction *old, int *ret)
{
	if (sig != SIGSYS || CMM_LOAD_SHARED(handler_state) != 2)
		return 0;
	/* Written by whoever calls sigaction(SIGSYS), read by the handler: as racy as the kernel's.
	 */
	struct sigaction prev = rto_backstop_chain;
	if (act) {
		struct sigaction a = *act;
		sigdelset(&a.sa_mask, SIGSYS);
		rto_backstop_chain = a;
	}
	if (old)
		*old = prev;
	*ret = 0;
	return 1;
}
