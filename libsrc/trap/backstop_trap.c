/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The backstop's SIGSYS handler: what one trapped system call of an armed
 * thread becomes, from its line of shim-gen/syscalls.tbl.
 *
 * The kernel did not run the call (Syscall User Dispatch rolls it back and
 * sends SIGSYS with si_code SYS_USER_DISPATCH); the handler runs it, or
 * not, and puts the raw result (-errno on failure) into the trapped frame's
 * rax, so that libc's own code goes on as if the kernel had answered:
 *   local    run here, from the library's text (the allowed region)
 *   offload  the same number and arguments on a helper, through the queue
 *            (route.c's internal request): the helper's raw result
 *   byfd     local when argument 0's descriptor is (fdclass.c)
 *   strict   -RT_OFFLOAD_STRICT_ERRNO, reported; so is every offload of a
 *            strict thread
 *   warn     local, reported once per call site
 * A filter installed by a raw seccomp instruction stays unseen, as it is
 * without the backstop (wrap_syscall.c sees libc's and prctl's): the tests'
 * witness filters rely on it.
 * The table's "emul" calls (the signal mask and the alternate stack, which
 * rt_sigreturn restores; rt_sigaction) are emulated on the trapped frame
 * whatever the thread's route (backstop_altstack.c); the program's own
 * PR_SET_SYSCALL_USER_DISPATCH and PTRACE_TRACEME hand the thread over
 * (backstop_cede.c).  A SIGSYS of dispatch on a thread that is not armed
 * is the program's own: chained, like seccomp's.
 * What a call of a marked thread becomes is rto_decide()'s (decide.h), as
 * for the wrapped functions, with one input of its own: a signal handler
 * starts no thread, so a call to offload before any helper runs is a
 * fallback, run here (counted local in the table).  A call of a thread
 * inside the library's own work (BUSY) or of a vfork child runs here
 * before any decision: as the wrapped functions do (rto_direct()).
 *
 * The first thing the handler does is to set the selector to ALLOW: from
 * there on its own system calls pass.  It sets BLOCK again last, before
 * its return through the library's restorer.  errno is the program's:
 * kept across the handler.
 *
 * Not instrumented (RTO_UNINSTRUMENTED): the path of a trap that runs on
 * the caller without deciding, down to the raw call (a sanitizer runtime's
 * own calls, made from its text, perhaps holding its locks: ThreadSanitizer
 * would take our instrumented code for the program's, and wait for that
 * lock in a report), and the chain to the program's handler (a thread the
 * runtime has not set up yet may trap in an inherited seccomp filter).
 *
 * rt_sigreturn of a handler that returned through libc's restorer while
 * the selector blocked is made again from the library's text, on the
 * trapped stack: the frame it restores is the program's own.
 */
#include "rto_base.h"
#include "options.h"
#include "self.h"
#include "decide.h"
#include "callsite.h"
#include "route.h"
#include "fdclass.h"
#include "random_short.h"
#include "transport.h"
#include "sanitizer.h"
#include "backstop.h"
#include "route_state.h"
#include "context.h"
#include "real.h"
#include "kernel_sigaction.h"
#include "trace.h"

#include <errno.h>
#include <linux/sched.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <ucontext.h>

#include "rtoffload.h"

/* report_traps=: copied once at load (rto_trap_configure), read-only afterwards. */
static struct {
	int report_traps;
} opt;

void rto_trap_configure(const struct rto_options *o)
{
	opt.report_traps = o->report_traps;
}

#ifndef SYS_USER_DISPATCH
#define SYS_USER_DISPATCH 2
#endif
#define SIGSYS_BIT  (1ULL << (SIGSYS - 1))
#define UNBLOCKABLE ((1ULL << (SIGKILL - 1)) | (1ULL << (SIGSTOP - 1)))

/* ---- the library's text: raw calls, the restorer, sigreturn on a given stack ---- */

RTO_HIDDEN __attribute__((noreturn)) void rto_bs_sigreturn_on(uintptr_t sp);

__asm__(".text\n"
	".globl rto_bs_sigreturn_on\n"
	".hidden rto_bs_sigreturn_on\n"
	".type rto_bs_sigreturn_on,@function\n"
	"rto_bs_sigreturn_on:\n"
	"	mov %rdi, %rsp\n"
	"	mov $15, %rax\n"
	"	syscall\n"
	"	hlt\n"
	".size rto_bs_sigreturn_on, .-rto_bs_sigreturn_on\n"
	/*
	 * rto_bs_clone(gregs, nr, child_sp, target): a clone with a stack of
	 * its own, made from here with the program's registers.  The parent
	 * comes back here with the result; the child, on its new stack with
	 * the program's registers (rax 0), goes on at target, the instruction
	 * after the program's own syscall: where the kernel would have started
	 * it.  target travels on the child's stack, below its top.
	 */
	".globl rto_bs_clone\n"
	".hidden rto_bs_clone\n"
	".type rto_bs_clone,@function\n"
	"rto_bs_clone:\n"
	"	push %rbx\n"
	"	push %rbp\n"
	"	push %r12\n"
	"	push %r13\n"
	"	push %r14\n"
	"	push %r15\n"
	"	mov %rcx, -8(%rdx)\n"
	"	mov %rsi, %rax\n"
	"	mov 0(%rdi), %r8\n"
	"	mov 8(%rdi), %r9\n"
	"	mov 16(%rdi), %r10\n"
	"	mov 32(%rdi), %r12\n"
	"	mov 40(%rdi), %r13\n"
	"	mov 48(%rdi), %r14\n"
	"	mov 56(%rdi), %r15\n"
	"	mov 72(%rdi), %rsi\n"
	"	mov 80(%rdi), %rbp\n"
	"	mov 88(%rdi), %rbx\n"
	"	mov 96(%rdi), %rdx\n"
	"	mov 64(%rdi), %rdi\n"
	"	syscall\n"
	"	test %rax, %rax\n"
	"	jz 1f\n"
	"	pop %r15\n"
	"	pop %r14\n"
	"	pop %r13\n"
	"	pop %r12\n"
	"	pop %rbp\n"
	"	pop %rbx\n"
	"	ret\n"
	"1:	sub $8, %rsp\n"
	"	ret\n"
	".size rto_bs_clone, .-rto_bs_clone\n");
RTO_HIDDEN long rto_bs_clone(const greg_t *g, long nr, uintptr_t child_sp, uintptr_t target);
/* The offsets rto_bs_clone reads. */
_Static_assert(REG_R8 == 0 && REG_R9 == 1 && REG_R10 == 2 && REG_R12 == 4 && REG_R15 == 7 &&
		       REG_RDI == 8 && REG_RSI == 9 && REG_RBP == 10 && REG_RBX == 11 &&
		       REG_RDX == 12,
	       "x86-64 gregs layout");

/* ---- the offload of a raw system call ----------------------------------------------- */

struct raw_args {
	long nr, a[6], ret;
};

static void run_raw(void *p)
{
	struct raw_args *r = p;
	r->ret = rto_bs_raw(r->nr, r->a[0], r->a[1], r->a[2], r->a[3], r->a[4], r->a[5]);
}

/* The library's own request kind: never refused or reported by the core; decided here. */
RTO_FN_FULL(trapped_syscall, RTO_CLASS_INTERNAL, RTO_OFFLOAD, run_raw, RTO_F_INTERNAL);

/* One pseudo-descriptor per system call, for the call-site reports (callsite.c). */
static struct rto_fn sysfn[RTO_SYSENT_COUNT];

static struct rto_fn *fn_of(long nr)
{
	struct rto_fn *f = &sysfn[nr];
	if (!CMM_LOAD_SHARED(f->name)) {
		f->cls = rto_sysent[nr].cls;
		f->handling = rto_sysent[nr].handling;
		f->run = run_raw;
		CMM_STORE_SHARED(f->name, rto_sysent[nr].name);
	}
	return f;
}

/* ---- emulated on the frame ----------------------------------------------------------- */

static long emul_sigprocmask(ucontext_t *uc, long how, const uint64_t *set, uint64_t *old,
			     long size)
{
	uint64_t cur = uc->uc_sigmask.__val[0];

	if (size != 8)
		return -EINVAL;
	if (set) {
		uint64_t s = *set;
		if (how == SIG_BLOCK)
			cur |= s;
		else if (how == SIG_UNBLOCK)
			cur &= ~s;
		else if (how == SIG_SETMASK)
			cur = s;
		else
			return -EINVAL;
	}
	if (old)
		*old = uc->uc_sigmask.__val[0];
	cur &= ~(UNBLOCKABLE | SIGSYS_BIT); /* a forced SIGSYS must get through */
	uc->uc_sigmask.__val[0] = cur;	    /* what rt_sigreturn will set */
	if (rto_self.identity_known)
		rto_self.sigmask = cur; /* as mark.c follows the wrappers */
	return 0;
}

static long emul_sigaction(long sig, const struct ksa *act, struct ksa *old, long size)
{
	if (size != 8)
		return -EINVAL;
	if (sig == SIGSYS) { /* ours stays; the program's is the one to chain to */
		struct sigaction prev = rto_backstop_chain;
		if (act) {
			struct sigaction a = {.sa_flags = (int)act->flags};
			a.sa_sigaction = (void (*)(int, siginfo_t *, void *))act->handler;
			memcpy(&a.sa_mask, &act->mask, sizeof(act->mask));
			rto_backstop_chain = a;
		}
		if (old) {
			old->handler = (void *)prev.sa_sigaction;
			old->flags = (unsigned long)prev.sa_flags;
			old->restorer = NULL;
			memcpy(&old->mask, &prev.sa_mask, sizeof(old->mask));
		}
		return 0;
	}
	struct ksa copy;
	if (act) {
		copy = *act;
		copy.mask &= ~SIGSYS_BIT;
	}
	return rto_bs_raw(SYS_rt_sigaction, sig, act ? (long)&copy : 0, (long)old, 8, 0, 0);
}

/*
 * The table's "emul" calls, whatever the thread's route: run here they
 * would be undone by the handler's rt_sigreturn (the mask, the alternate
 * stack), or would unblock or replace what the backstop needs (SIGSYS).
 */
static long emulate(long nr, const long *a, ucontext_t *uc)
{
	rto_backstop_count(nr, RTO_BS_LOCAL);
	if (nr == SYS_rt_sigprocmask)
		return emul_sigprocmask(uc, a[0], (const uint64_t *)a[1], (uint64_t *)a[2], a[3]);
	if (nr == SYS_sigaltstack)
		return rto_bs_emul_sigaltstack(uc, (const stack_t *)a[0], (stack_t *)a[1]);
	return emul_sigaction(a[0], (const struct ksa *)a[1], (struct ksa *)a[2], a[3]);
}

/* ---- the program's own SIGSYS (seccomp RET_TRAP) ------------------------------------- */

RTO_UNINSTRUMENTED static void chain(int sig, siginfo_t *si, void *uc)
{
	struct sigaction a = rto_backstop_chain;
	void *h = (void *)a.sa_sigaction;

	if (h == (void *)SIG_DFL || h == (void *)SIG_IGN || !h) {
		/* What the kernel does with an unhandled RET_TRAP: the process dies of SIGSYS. */
		struct ksa dfl = {.handler = (void *)SIG_DFL};
		uint64_t unblock = SIGSYS_BIT;
		rto_bs_raw(SYS_rt_sigaction, SIGSYS, (long)&dfl, 0, 8, 0, 0);
		rto_bs_raw(SYS_rt_sigprocmask, SIG_UNBLOCK, (long)&unblock, 0, 8, 0, 0);
		rto_bs_raw(SYS_tgkill, rto_bs_raw(SYS_getpid, 0, 0, 0, 0, 0, 0),
			   rto_bs_raw(SYS_gettid, 0, 0, 0, 0, 0, 0), SIGSYS, 0, 0, 0);
		return;
	}
	/*
	 * With the selector as it was at the seccomp trap: such a handler
	 * emulates the call its filter trapped, often by making it again from
	 * its own text (which its filter allows).  Blocked, that call would
	 * trap here, run from our text, trap in its filter again: for ever.
	 * A call the backstop's handler runs locally was decided already.
	 */
	if (a.sa_flags & SA_SIGINFO)
		((void (*)(int, siginfo_t *, void *))h)(sig, si, uc);
	else
		((void (*)(int))h)(sig);
}

/* ---- one trapped call ------------------------------------------------------------------ */

RTO_UNINSTRUMENTED static long run_local(long nr, const long *a)
{
	return rto_bs_raw(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

static int helpers_ready(void)
{
	return CMM_LOAD_SHARED(rto_q->ready) != 0;
}

static long run_offload(long nr, const long *a)
{
	struct raw_args r = {.nr = nr};
	memcpy(r.a, a, sizeof(r.a));
	rto_call(&rto_fn_trapped_syscall, &r, -1, NULL, 0);
	return r.ret;
}

/*
 * A clone that shares the address space: the child's stack (its top), or
 * 0 when it has none of its own (vfork, clone(CLONE_VM) without one: it
 * would run on the stack this handler runs on).  -1: no shared address
 * space, a fork: it runs here like any local call (the child returns from
 * this handler on its copy of the stack).
 */
RTO_UNINSTRUMENTED static long child_stack(long nr, const long *a)
{
	if (nr == SYS_clone)
		return !(a[0] & CLONE_VM) ? -1 : a[1];
	if (nr == SYS_clone3) {
		const struct clone_args *ca = (const struct clone_args *)a[0];
		if (!ca || a[1] < (long)(offsetof(struct clone_args, stack_size) + 8))
			return 0;
		if (!(ca->flags & CLONE_VM))
			return -1;
		return ca->stack ? (long)(ca->stack + ca->stack_size) : 0;
	}
	return 0; /* vfork */
}

/* child_stack() for the calls the table marks "again" (clone, clone3, vfork); else -1. */
RTO_UNINSTRUMENTED static long shared_child_stack(long nr, const long *a)
{
	return (rto_sysent[nr].flags & RTO_SYS_AGAIN) ? child_stack(nr, a) : -1;
}

/*
 * Run it here, on the caller.  A child sharing the address space must not
 * start inside this handler: with a stack of its own (pthread_create,
 * posix_spawn's child, LeakSanitizer's tracer) it is started with the
 * program's registers, going on after the program's syscall instruction;
 * without one (vfork) the instruction runs again, allowed (*again).
 */
RTO_UNINSTRUMENTED static long run_here(long nr, const long *a, ucontext_t *uc, int *again)
{
	long sp = shared_child_stack(nr, a);
	greg_t *g = uc->uc_mcontext.gregs;

	if (sp < 0)
		return run_local(nr, a);
	if (sp == 0) {
		*again = 1;
		return nr;
	}
	return rto_bs_clone(g, nr, (uintptr_t)sp, (uintptr_t)g[REG_RIP]);
}

static void forget(long nr, const long *a, long ret)
{
	unsigned short f = rto_sysent[nr].flags;
	if (ret < 0 && !(f & RTO_SYS_FORGETALL))
		return;
	if (f & RTO_SYS_FORGET0)
		rto_fd_forget((int)a[0]);
	if (f & RTO_SYS_FORGET1)
		rto_fd_forget((int)a[1]);
	if (f & RTO_SYS_FORGETALL)
		rto_fd_forget_all();
}

/*
 * A trapped call is counted with what became of it; a call syscall()
 * decided (uc NULL) did not trap, and the table's rows count traps.
 */
static void count(long nr, int what, const ucontext_t *uc)
{
	if (uc)
		rto_backstop_count(nr, what);
}

/*
 * What the thread queued (async.c) comes first, as for a wrapper's call:
 * a by-descriptor call's after the writes to its descriptor, a file's
 * mmap after those to the file's; a call that closes or replaces
 * descriptors (dup2's second, close_range), or names a path, after all
 * of them; a socket's call after its socket's.  The calls on the thread
 * itself, its memory, names and clocks wait for nothing.
 */
static void order_after_queued(long nr, const long *a)
{
	const struct rto_sysent *e = &rto_sysent[nr];

	if (e->flags & (RTO_SYS_FORGET1 | RTO_SYS_FORGETALL))
		rto_route_order(-1, RTO_CALL_PATH);
	else if ((e->flags & RTO_SYS_BYFD) || e->cls == RTO_CLASS_NET)
		rto_route_order((int)a[0], 0);
	else if (nr == SYS_mmap && !(a[3] & MAP_ANONYMOUS))
		rto_route_order((int)a[4], 0);
	else if (e->cls == RTO_CLASS_DESC || e->cls == RTO_CLASS_PATH || e->cls == RTO_CLASS_DIR)
		rto_route_order(-1, RTO_CALL_PATH);
}

/*
 * The decision's input from the table's row, as a wrapper's call is
 * decided (decide.h), but as the SIGSYS handler's: it starts no helper.
 */
static inline struct rto_decide_in row_in(long nr, const long *a)
{
	const struct rto_sysent *e = &rto_sysent[nr];

	return (struct rto_decide_in){
		.handling = e->handling,
		.flags = (e->flags & RTO_SYS_BYFD) ? RTO_F_BYFD : 0,
		/* Its arguments: a short getrandom (arc4random's, getentropy's) runs here. */
		.how = (unsigned char)((e->flags & RTO_SYS_SHORT_RANDOM)
					       ? rto_random_short_arg((size_t)a[1], (unsigned)a[2])
					       : 0),
		.sigsys = 1,
	};
}

/*
 * What the table, the thread and the helpers say; the result for rax.
 * uc: the trapped frame, or NULL for a call of the syscall() wrapper
 * (never one of the "again" calls: rto_bs_syscall() leaves those to the
 * trap).
 */
static long decide(long nr, const long *a, ucontext_t *uc, int *again)
{
	const struct rto_sysent *e = &rto_sysent[nr];
	long ret;

	if (uc && shared_child_stack(nr, a) >= 0) { /* a thread, vfork: not a fork */
		rto_note_clone_args(nr, a);	    /* its child may share our TLS: shared_tls.c */
		rto_backstop_count(nr, RTO_BS_LOCAL);
		return run_here(nr, a, uc, again);
	}
	struct rto_decide_in in = row_in(nr, a);
	in.helpers = helpers_ready() ? RTO_HELPERS_READY : RTO_HELPERS_DOWN;
	rto_decide_self(&in);
	int v;
	while ((v = rto_decide(&in)) == RTO_NEED_FD)
		in.fd_local = rto_fd_runs_local((int)a[0]) ? RTO_YES : RTO_NO;
	switch (v & RTO_VERDICT_MASK) {
	case RTO_RUN_REFUSE:
		count(nr, RTO_BS_DENIED, uc);
		rto_callsite_event_trapped(RTO_EVENT_STRICT, fn_of(nr), uc);
		return -RT_OFFLOAD_STRICT_ERRNO;
	case RTO_RUN_OFFLOAD:
		count(nr, RTO_BS_OFFLOADED, uc);
		order_after_queued(nr, a);
		ret = run_offload(nr, a);
		break;
	default: /* LOCAL, and FALLBACK (no helper yet), which the table counts as local */
		if (v & RTO_WHY_WARN)
			rto_callsite_event_trapped(RTO_EVENT_WARN, fn_of(nr), uc);
		count(nr, RTO_BS_LOCAL, uc);
		order_after_queued(nr, a);
		ret = run_local(nr, a);
	}
	forget(nr, a, ret);
	/* Its own fs ids, namespace...: context.c (syscall()'s own call says it, wrap_syscall.c).
	 */
	if (RTO_UNLIKELY(e->flags & RTO_SYS_CTX) && uc)
		rto_ctx_after_syscall(nr, a, ret);
	return ret;
}

/*
 * syscall() of a marked, armed thread (wrap_syscall.c): the same decision
 * without the trap, which alone costs microseconds (issue 30: a raw
 * FUTEX_WAKE was 2.6 us marked against 0.24 us unmarked).  A local call
 * runs from the library's text with the selector open, so it cannot
 * trap; an offloaded one goes through rto_call() as the handler's does.
 * 1 and *ret (the raw result, -errno on failure), or 0 for the calls
 * that need the trapped frame or the program's registers (emulated on
 * the frame, a clone or fork, the program's own dispatch, ptrace) and a
 * call a sanitizer runtime makes for itself: those trap as before.
 */
int rto_bs_syscall(long nr, const long *a, const void *pc, long *ret)
{
	if (nr < 0 || nr >= RTO_SYSENT_COUNT || !rto_sysent[nr].name)
		return 0;
	if ((rto_sysent[nr].flags & (RTO_SYS_EMUL | RTO_SYS_AGAIN)) || nr == SYS_fork ||
	    nr == SYS_prctl || nr == SYS_ptrace)
		return 0;
	if (rto_self.route != RTO_ROUTE_MARKED || rto_self.vforking || rto_sanitizer_pc(pc))
		return 0;
	/*
	 * The call's row settles it here (a futex, sched_yield: the realtime-safe
	 * calls) and it forgets no descriptor: it runs from the library's
	 * text, which the backstop's region lets through whatever the
	 * selector says.  Nothing else runs, so the selector stays as it is.
	 */
	struct rto_decide_in in = row_in(nr, a);
	if (rto_decide_call(&in) == RTO_RUN_LOCAL && !(rto_sysent[nr].flags & RTO_SYS_FORGETS)) {
		*ret = run_local(nr, a);
		return 1;
	}
	int again = 0;
	unsigned char sel = rto_backstop_enter();
	*ret = decide(nr, a, NULL, &again);
	rto_backstop_leave(sel);
	return 1;
}

/* report_traps=1: each new call site that traps, once, with its backtrace. */
static void report_trap(long nr, const ucontext_t *uc)
{
	if (RTO_UNLIKELY(opt.report_traps))
		rto_callsite_event_trapped(RTO_EVENT_TRAP, fn_of(nr), uc);
}

RTO_UNINSTRUMENTED void rto_backstop_sigsys(int sig, siginfo_t *si, void *ucv)
{
	unsigned char was = rto_bs_sel;
	rto_bs_sel = RTO_BS_ALLOW; /* first: nothing below traps */
	ucontext_t *uc = ucv;
	int saved = errno;

	/* Not ours: seccomp's RET_TRAP, or the program's own dispatch (backstop_cede.c). */
	if (si->si_code != SYS_USER_DISPATCH || !(rto_bs_armed & 1)) {
		chain(sig, si, ucv);
		errno = saved;
		rto_bs_sel = was;
		return;
	}
	greg_t *g = uc->uc_mcontext.gregs;
	long nr = si->si_syscall;
	long a[6] = {g[REG_RDI], g[REG_RSI], g[REG_RDX], g[REG_R10], g[REG_R8], g[REG_R9]};
	int again = 0;

	if (nr == SYS_rt_sigreturn) {
		/* A handler returned through libc's restorer: the frame is at the trapped rsp. */
		rto_backstop_count(nr, RTO_BS_TRAPPED);
		rto_backstop_count(nr, RTO_BS_LOCAL);
		errno = saved;
		rto_bs_sel = RTO_BS_BLOCK; /* what the interrupted code ran with */
		rto_bs_sigreturn_on((uintptr_t)g[REG_RSP]);
	}
	if (nr < 0 || nr >= RTO_SYSENT_COUNT || !rto_sysent[nr].name) {
		g[REG_RAX] = run_local(nr, a); /* x32 or unknown: the kernel answers */
	} else {
		rto_backstop_count(nr, RTO_BS_TRAPPED);
		report_trap(nr, uc);
		uint64_t traced = rto_trace_now(); /* trace.c */
		if (rto_sysent[nr].flags & RTO_SYS_EMUL) {
			g[REG_RAX] = emulate(nr, a, uc);
		} else if (rto_bs_cede(nr, a, uc)) {
			/* rax is set: the program's own dispatch, a tracer (backstop_cede.c) */
		} else if (rto_self.route == RTO_ROUTE_DIRECT) { /* unmarked by mark= meanwhile */
			rto_backstop_count(nr, RTO_BS_LOCAL);
			g[REG_RAX] = run_here(nr, a, uc, &again);
		} else if (rto_self.route != RTO_ROUTE_MARKED || rto_self.vforking ||
			   rto_sanitizer_pc(si->si_call_addr)) {
			rto_backstop_count(nr,
					   RTO_BS_LOCAL); /* the library's own work, a runtime's */
			g[REG_RAX] = run_here(nr, a, uc, &again);
		} else {
			g[REG_RAX] = decide(nr, a, uc, &again);
		}
		rto_trace_trap(rto_sysent[nr].name, traced, rto_sysent[nr].handling); /* trace.c */
	}
	errno = saved;
	unsigned short insn = 0;
	if (again) /* the program's instruction, at any alignment */
		memcpy(&insn, (const void *)(g[REG_RIP] - 2), sizeof(insn));
	if (again && insn == 0x050f) {
		g[REG_RIP] -= 2; /* the syscall instruction, once more, allowed */
		g[REG_RAX] = nr;
		rto_bs_armed = 5;
		return; /* the selector stays ALLOW until the next wrapped call */
	}
	if (again) /* not a syscall instruction: run it here after all */
		g[REG_RAX] = run_local(nr, a);
	/* It trapped, so it blocked; unless it was unmarked meanwhile (mark=). */
	rto_bs_sel = (rto_bs_armed & 1) && rto_self.route != RTO_ROUTE_DIRECT ? RTO_BS_BLOCK
									      : RTO_BS_ALLOW;
}
