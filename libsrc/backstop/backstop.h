/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The backstop: Linux Syscall User Dispatch (prctl PR_SET_SYSCALL_USER_DISPATCH,
 * 5.11+) on every marked thread, so that a system call the library did not
 * catch as a function (libc's internal calls, a raw syscall(), a JIT) traps
 * into the library's SIGSYS handler instead of entering the kernel on the
 * realtime CPU.  The handler decides from shim-gen/syscalls.tbl.
 *
 * The selector byte (initial-exec TLS) is what the kernel reads at each
 * system call of an armed thread: BLOCK while the thread runs the program's
 * code, ALLOW while it runs the library's (rto_call, the handler).  The
 * library's own text is the allowed region, so its restorer's rt_sigreturn
 * and its raw system calls pass whatever the selector says.
 *
 *   backstop.c        arming per thread, the SIGSYS handler's installation,
 *                     its chaining to the program's own SIGSYS handler
 *   backstop_trap.c   the handler: what one trapped system call becomes
 *   backstop_altstack.c  a trapped sigaltstack, on the trapped frame
 *   backstop_cede.c   what it gives up: a thread to the program's own
 *                     dispatch, the process to a tracer
 *   backstop_stats.c  trapped/offloaded/local/denied per system call
 *   sysent.c          generated from syscalls.tbl by shim-gen/sysent-gen.c
 *
 * Concurrency and ownership:
 *   rto_bs_sel, rto_bs_armed, rto_bs_depth   the thread's own (initial-
 *        exec TLS), written only by the thread and its signal handlers;
 *        the kernel reads rto_bs_sel at each of its system calls.  The
 *        inline enter/leave pairs are the caller's path: a TLS load and a
 *        store, and rto_self.route read once (another thread's mark= may
 *        change it at any moment, route_state.h)
 *   rto_sysent[]   filled at build time, changed by policy= at load
 *        (backstop_policy.c, before any thread is marked), read-only
 *        afterwards: the handler reads it without a lock
 *   rto_backstop_on   set once at load (rto_backstop_init, from init.c);
 *        rto_backstop_traced set at load or by any thread's PTRACE_TRACEME
 *        (uatomic_xchg), read with CMM_LOAD_SHARED by threads about to arm
 *   rto_backstop_chain   the program's SIGSYS action: written by whichever
 *        thread calls sigaction(SIGSYS), as a wrapper or trapped, read by
 *        the handler on any thread, unlocked: as racy as the kernel's own
 *        table is for a program that changes a handler while it fires
 *   the SIGSYS handler   runs on the trapping thread, a marked and armed
 *        one, in the middle of the program's code: it is that thread's
 *        caller's path (it offloads through rto_call or runs the call in
 *        place, backstop_trap.c).  It is installed once, the first arming
 *        thread winning handler_state's cmpxchg (backstop.c)
 *   the counts (backstop_stats.c)   relaxed atomic adds from any trapping
 *        thread, relaxed loads by the report; reset in a forked child,
 *        single-threaded then
 */
#ifndef RTO_BACKSTOP_H
#define RTO_BACKSTOP_H

#include "rto_fast.h"
#include "fn.h"

#include <signal.h>
#include <ucontext.h>

/* ---- the system-call table (generated) ------------------------------------ */

#define RTO_SYSENT_COUNT 512

enum rto_sys_flag {
	RTO_SYS_BYFD = 1 << 0,	    /* local when argument 0's descriptor is (fdclass.c) */
	RTO_SYS_FIXED = 1 << 1,	    /* policy= cannot change it */
	RTO_SYS_EMUL = 1 << 2,	    /* emulated on the trapped frame (mask, altstack, sigreturn) */
	RTO_SYS_AGAIN = 1 << 3,	    /* run again in place, allowed (clone with CLONE_VM, vfork) */
	RTO_SYS_FORGET0 = 1 << 4,   /* closes or replaces the descriptor in argument 0 */
	RTO_SYS_FORGET1 = 1 << 5,   /* ... in argument 1 */
	RTO_SYS_FORGETALL = 1 << 6, /* ... possibly any (close_range) */
	RTO_SYS_CTX = 1 << 7, /* may give the thread a kernel context of its own (context.c) */
	/* Short with getrandom's arguments (1: bytes, 2: flags): random_short.h. */
	RTO_SYS_SHORT_RANDOM = 1 << 8,
	RTO_SYS_FORGETS = RTO_SYS_FORGET0 | RTO_SYS_FORGET1 | RTO_SYS_FORGETALL,
};

struct rto_sysent {
	const char *name;	/* NULL: no such system call */
	unsigned char cls;	/* enum rto_class */
	unsigned char handling; /* enum rto_handling: offload, local, strict, warn */
	unsigned short flags;	/* enum rto_sys_flag */
};

RTO_HIDDEN extern struct rto_sysent rto_sysent[RTO_SYSENT_COUNT];

/* ---- the selector ------------------------------------------------------------ */

#define RTO_BS_ALLOW 0 /* SYSCALL_DISPATCH_FILTER_ALLOW */
#define RTO_BS_BLOCK 1 /* SYSCALL_DISPATCH_FILTER_BLOCK */

/*
 * Read by the kernel at every system call of an armed thread, written only
 * by the thread itself (and its handlers): volatile so that the compiler
 * keeps every store where it is written, before the calls that follow.
 */
RTO_HIDDEN extern __thread volatile unsigned char rto_bs_sel RTO_TLS;
/*
 * 0: not armed; 1: armed; 2: this thread cannot be armed (said once);
 * 5: armed, but allowed until its next wrapped call (a clone or vfork ran
 * again in place, backstop_trap.c).
 */
RTO_HIDDEN extern __thread unsigned char rto_bs_armed RTO_TLS;
/* backstop=on and the kernel has it: marked threads arm. */
RTO_HIDDEN extern int rto_backstop_on;
/* The process was traced at load, or a thread made itself a tracee (PTRACE_TRACEME): no thread arms
 * from then on. */
RTO_HIDDEN extern int rto_backstop_traced;

RTO_HIDDEN void rto_backstop_arm_self(void);
RTO_HIDDEN void rto_backstop_leave_slow(unsigned char was);

/*
 * How deep the thread is in the library's own work (enter/leave pairs): a
 * call the library makes for itself inside it (rto_call for a descriptor's
 * class, inside the wrapped call that needs it) must not block again on
 * its way out, while the outer work goes on calling libc.
 */
RTO_HIDDEN extern __thread unsigned char rto_bs_depth RTO_TLS;

/* The library's code starts on this thread (rto_call): its system calls pass. */
static inline unsigned char rto_backstop_enter(void)
{
	unsigned char was = rto_bs_sel;

	rto_bs_sel = RTO_BS_ALLOW;
	rto_bs_depth++;
	return was;
}

/*
 * ... and ends (the outermost leave).  An armed thread: one TLS load and a
 * store.  A thread marked by mark= from another thread arms itself here,
 * at its first wrapped call (prctl acts on the calling thread only).
 */
static inline void rto_backstop_leave_outer(unsigned char was)
{
	unsigned char armed = rto_bs_armed;

	if (RTO_LIKELY(armed == 1)) {
		/* Another thread's mark= may change it at any time (route_state.h). */
		unsigned char route = CMM_LOAD_SHARED(rto_self.route);
		/* BUSY: a call nested in the library's own work goes back to it as it was. */
		rto_bs_sel = route == RTO_ROUTE_MARKED	 ? RTO_BS_BLOCK
			     : route == RTO_ROUTE_DIRECT ? RTO_BS_ALLOW
							 : was;
		return;
	}
	if (RTO_UNLIKELY(rto_backstop_on) && armed != 2) {
		rto_backstop_leave_slow(was);
		return;
	}
	rto_bs_sel = was;
}
static inline void rto_backstop_leave(unsigned char was)
{
	if (RTO_UNLIKELY(--rto_bs_depth != 0)) { /* nested: the outer work goes on */
		rto_bs_sel = was;
		return;
	}
	rto_backstop_leave_outer(was);
}

/* ---- backstop.c ------------------------------------------------------------------ */

/* At load (init.c): backstop= and whether this kernel has it. */
/* At load (init.c): the SIGSYS handler (backstop_trap.c) and the program's view of an action
 * (signals.c). */
RTO_HIDDEN void rto_backstop_init(void (*handler)(int sig, siginfo_t *si, void *uc),
				  int (*action)(int sig, struct sigaction *cur));
/*
 * The calling thread was marked: arm it (its first mark) or block again.
 * Unmarked: it stays armed, the selector allows (a later mark is a flag
 * flip).  SUD goes off only at thread exit, before its TLS goes away.
 */
RTO_HIDDEN void rto_backstop_marked_self(void);
static inline void rto_backstop_unmarked_self(void)
{
	if (rto_bs_armed & 1)
		rto_bs_sel = RTO_BS_ALLOW;
}
/*
 * SUD off for the calling thread for good (armed 2): the program's own
 * dispatch or a tracer took it (backstop_cede.c).
 */
RTO_HIDDEN void rto_backstop_give_up_self(void);
/* SUD off for the calling thread (its exit: its TLS may go away next). */
RTO_HIDDEN void rto_backstop_disarm_self(void);
/* In a forked child: the kernel disarmed the forking thread. */
RTO_HIDDEN void rto_backstop_after_fork(void);
/* sigaction(SIGSYS) of the program while the backstop owns SIGSYS (signals.c): 1 if taken. */
RTO_HIDDEN int rto_backstop_sigaction(int sig, const struct sigaction *act, struct sigaction *old,
				      int *ret);
/* A signal handler of the program starts on this thread: the selector blocks (signals.c). */
static inline unsigned char rto_backstop_handler_enter(void)
{
	unsigned char was = rto_bs_sel;

	if ((rto_bs_armed & 1) && rto_self.route != RTO_ROUTE_DIRECT)
		rto_bs_sel = RTO_BS_BLOCK;
	return was;
}
static inline void rto_backstop_handler_leave(unsigned char was)
{
	if (rto_bs_armed & 1)
		rto_bs_sel = was;
}
/* signals.c: sig's action as the program sees it (its handler, not our trampoline). */
RTO_HIDDEN int rto_signal_program_action(int sig, struct sigaction *cur);
/* policy=SYS_NAME:HANDLING (policy.c): 0, or -1 with err. */
RTO_HIDDEN int rto_backstop_policy(const char *name, size_t n, int handling, int pass, char *err,
				   size_t len);

/* ---- backstop_trap.c ------------------------------------------------------------- */

/* The SIGSYS handler (installed by backstop.c with the library's restorer). */
RTO_HIDDEN void rto_backstop_sigsys(int sig, siginfo_t *si, void *uc);
/*
 * syscall() of a marked, armed thread (wrap_syscall.c): decided from the table
 * as a trapped call would be, without the trap.  1 and *ret (-errno on
 * failure), or 0: the call must be made as written, and traps (pc: the
 * caller's return address, a sanitizer runtime's own calls trap).
 */
RTO_HIDDEN int rto_bs_syscall(long nr, const long *a, const void *pc, long *ret);
struct rto_options;
/* report_traps=, copied at load. */
RTO_HIDDEN void rto_trap_configure(const struct rto_options *o);
/* The program's SIGSYS handler, to chain a SIGSYS that is not ours (seccomp RET_TRAP). */
RTO_HIDDEN extern struct sigaction rto_backstop_chain;
/* A raw system call from the library's text: never trapped.  Returns -errno on failure. */
RTO_HIDDEN long rto_bs_raw(long nr, long a0, long a1, long a2, long a3, long a4, long a5);
/* The library's signal restorer (rt_sigreturn from the allowed region). */
RTO_HIDDEN void rto_bs_restorer(void);

/* backstop_altstack.c: a trapped sigaltstack, on the trapped frame's uc_stack (-errno). */
RTO_HIDDEN long rto_bs_emul_sigaltstack(ucontext_t *uc, const stack_t *uss, stack_t *uoss);

/* callsite.c: an event of a trapped call, its backtrace from the trapped context uc. */
RTO_HIDDEN void rto_callsite_event_trapped(int event, struct rto_fn *fn, const void *uc);

/* ---- backstop_cede.c: the program's own dispatch, a tracer ------------------------ */

#define RTO_PR_SET_SYSCALL_USER_DISPATCH 59

/* prctl(PR_SET_SYSCALL_USER_DISPATCH, ...) of the program, through its wrapper (automark.c). */
RTO_HIDDEN int rto_backstop_program_dispatch(unsigned long mode, unsigned long off,
					     unsigned long len, unsigned long sel);
/* ptrace(PTRACE_TRACEME) of the program succeeded, through its wrapper or trapped. */
RTO_HIDDEN void rto_backstop_now_traced(void);
/* In the handler: a trapped call that hands the thread over; 1 and rax set, or 0. */
RTO_HIDDEN int rto_bs_cede(long nr, const long *a, ucontext_t *uc);

/* ---- backstop_stats.c ------------------------------------------------------------ */

enum rto_bs_count { RTO_BS_TRAPPED, RTO_BS_OFFLOADED, RTO_BS_LOCAL, RTO_BS_DENIED, RTO_BS_NCOUNT };
RTO_HIDDEN void rto_backstop_count(long nr, int what);
struct rto_sys_row {
	const char *name;
	uint64_t n[RTO_BS_NCOUNT];
};
/* The system call after *pos with a count (start at 0): 1 and *row, or 0 at the end. */
RTO_HIDDEN int rto_backstop_next(unsigned *pos, struct rto_sys_row *row);
RTO_HIDDEN void rto_backstop_stats_reset(void);

struct rto_options;
/* backstop=, once at load (init.c), before anything here runs. */
RTO_HIDDEN void rto_backstop_configure(const struct rto_options *o);

#endif
