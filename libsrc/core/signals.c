/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A signal that interrupts an offloaded call, as it would interrupt the
 * call made locally.
 *
 * While a marked thread waits for a blocking call (open of a FIFO,
 * connect, a wait), a signal handler may run on it.  Without SA_RESTART
 * the kernel would have ended the call with EINTR; with SA_RESTART it would
 * have gone on.  To know which handler ran, sigaction() and signal()
 * install a trampoline in front of the program's handler that notes the
 * signal in the thread's state; the program still sees its own handler
 * when it asks.  The waiting caller then asks the kernel for that signal's
 * flags (siginterrupt() may have changed them) and, without SA_RESTART,
 * sends RTO_SIG_INTERRUPT to the worker running its call, every
 * millisecond until the call returns: a call sleeping interruptibly ends
 * with EINTR (or its partial result), one that does not sleep finishes as
 * it would have.  Only this path makes system calls on the caller's side
 * (sigaction to read the flags, tgkill, a timed futex wait).  The kick
 * protocol that keeps the signal off the worker's next call is in
 * transport.c; pthread_cancel() uses the same kick.
 *
 * Not seen: handlers installed with sigset()/sysv_signal() or the raw
 * rt_sigaction syscall; RTO_SIG_INTERRUPT (SIGRTMAX) is the library's.
 */
#include "backstop.h"
#include "rto_fast.h"
#include "resolve.h"
#include "transport.h"
#include "signals.h"
#include "real.h"

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static void *user_handler[NSIG]; /* the program's handler behind each trampoline */
static int user_flags[NSIG];	 /* its sa_flags as the program gave them */
static int trampoline_in[NSIG];	 /* 1: the kernel's action for sig is our trampoline */
static __thread int worker_tid RTO_TLS;

RTO_UNINSTRUMENTED static int real_sigaction(int sig, const struct sigaction *act,
					     struct sigaction *old)
{
	return RTO_HAND_REAL(sigaction)(sig, act, old);
}

static __thread sigjmp_buf *fault_jump RTO_TLS; /* a worker inside a call */
__thread int rto_signal_handler_depth RTO_TLS;

RTO_UNINSTRUMENTED static int is_fault(int sig)
{
	return sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL;
}

/* No handler of the program's: what the kernel would have done. */
RTO_UNINSTRUMENTED static void default_action(int sig, siginfo_t *si)
{
	struct sigaction dfl = {.sa_handler = SIG_DFL};

	real_sigaction(sig, &dfl, NULL);
	uatomic_set(&trampoline_in[sig], 0);
	if (si->si_code <= 0) /* sent by kill(): raise it again, now default */
		raise(sig);
	/* A fault: returning runs the faulting instruction again, now fatal. */
}

RTO_UNINSTRUMENTED static void trampoline(int sig, siginfo_t *si, void *uc)
{
	void *h = user_handler[sig];
	int flags = user_flags[sig];

	if (is_fault(sig) && fault_jump && si->si_code > 0) {
		sigjmp_buf *jump = fault_jump; /* it faulted: back to the guard */
		fault_jump = NULL;
		/* The mask of before the fault, which leaving by a jump does not restore. */
		rto_real_pthread_sigmask(SIG_SETMASK, &((ucontext_t *)uc)->uc_sigmask, NULL);
		siglongjmp(*jump, sig);
	}
	rto_self.signal_seen = sig; /* initial-exec TLS: async-signal-safe */
	if (is_fault(sig) && (!h || h == (void *)SIG_IGN)) {
		default_action(sig, si);
		return;
	}
	if (flags & SA_RESETHAND) /* the kernel has reset it to SIG_DFL */
		user_handler[sig] = NULL;
	if (!h)
		return;
	/* The program's handler is the program's code: an armed thread's selector blocks. */
	unsigned char sel = rto_backstop_handler_enter();
	rto_signal_handler_depth++; /* a handler that leaves by longjmp leaves it raised: */
	if (flags & SA_SIGINFO)	    /* its later writes are then not ordered (async.c) */
		((void (*)(int, siginfo_t *, void *))h)(sig, si, uc);
	else
		((void (*)(int))h)(sig);
	rto_signal_handler_depth--;
	rto_backstop_handler_leave(sel);
}

RTO_UNINSTRUMENTED static int is_function(void *h)
{
	return h != (void *)SIG_DFL && h != (void *)SIG_IGN && h != (void *)SIG_ERR;
}

/* sigaction() as the program sees it: its handler behind our trampoline. */
RTO_UNINSTRUMENTED static int install(int sig, const struct sigaction *act, struct sigaction *old)
{
	struct sigaction mine, stripped;
	int ours = sig > 0 && sig < NSIG && sig != RTO_SIG_INTERRUPT;
	int taken;

	if (rto_backstop_sigaction(sig, act, old, &taken))
		return taken; /* the backstop's handler stays; the program's is chained */
	if (act && rto_backstop_on && sigismember(&act->sa_mask, SIGSYS)) {
		stripped = *act; /* a forced SIGSYS must never be blocked (backstop.c) */
		sigdelset(&stripped.sa_mask, SIGSYS);
		act = &stripped;
	}
	void *prev = ours ? user_handler[sig] : NULL;
	int prev_flags = ours ? user_flags[sig] : 0;

	if (act && ours && is_function((void *)act->sa_handler)) {
		mine = *act;
		mine.sa_sigaction = trampoline;
		mine.sa_flags |= SA_SIGINFO;
		user_flags[sig] = act->sa_flags;
		user_handler[sig] = (void *)act->sa_handler;
		act = &mine;
	}
	int ret = real_sigaction(sig, act, old);
	if (ret != 0 && act == &mine) {
		user_handler[sig] = prev;
		user_flags[sig] = prev_flags;
	}
	if (ret == 0 && act && ours)
		uatomic_set(&trampoline_in[sig], act == &mine);
	if (ret == 0 && old && old->sa_sigaction == trampoline) {
		old->sa_handler = (void (*)(int))prev; /* the program sees its own handler */
		old->sa_flags = (old->sa_flags & ~SA_SIGINFO) | (prev_flags & SA_SIGINFO);
	}
	return ret;
}

int rto_signal_program_action(int sig, struct sigaction *cur)
{
	return install(sig, NULL, cur);
}

RTO_EXPORT RTO_UNINSTRUMENTED int sigaction(int sig, const struct sigaction *act,
					    struct sigaction *old)
{
	return install(sig, act, old);
}

/* glibc's signal(): BSD semantics, SA_RESTART, the signal blocked in its handler. */
RTO_UNINSTRUMENTED static sighandler_t bsd_install(int sig, sighandler_t handler)
{
	struct sigaction act = {.sa_handler = handler, .sa_flags = SA_RESTART}, old;

	sigemptyset(&act.sa_mask);
	if (sig > 0 && sig < NSIG)
		sigaddset(&act.sa_mask, sig);
	if (install(sig, &act, &old) != 0)
		return SIG_ERR;
	return old.sa_handler;
}

RTO_EXPORT RTO_UNINSTRUMENTED void (*signal(int sig, void (*handler)(int)))(int)
{
	return bsd_install(sig, handler);
}

RTO_EXPORT RTO_UNINSTRUMENTED void (*bsd_signal(int sig, void (*handler)(int)))(int)
{
	return bsd_install(sig, handler);
}

/* sig's action is the default one (no handler of the program's, nor ours, nor SIG_IGN). */
int rto_signal_is_default(int sig)
{
	struct sigaction cur;

	return real_sigaction(sig, NULL, &cur) == 0 && cur.sa_handler == SIG_DFL;
}

/* ---- the waiting caller ----------------------------------------------------- */

/* The handler of sig ran on us: would the kernel have ended the call? */
int rto_signal_interrupts(int sig)
{
	struct sigaction cur;

	if (real_sigaction(sig, NULL, &cur) != 0)
		return 0;
	return !(cur.sa_flags & SA_RESTART);
}

void rto_signal_kick(int tid)
{
	if (tid > 0)
		rto_syscall(SYS_tgkill, getpid(), tid, RTO_SIG_INTERRUPT);
}

/* ---- the worker ----------------------------------------------------------------- */

/*
 * A call given a bad pointer can fault inside libc (stdio, strlen...).  On
 * the worker that would kill the process from the wrong thread, past the
 * program's SIGSEGV handler: instead the worker jumps back and the caller
 * runs the call itself (route.c), so the fault happens where it would have
 * without the library.  The synchronous fault signals go through the
 * trampoline for that; faults elsewhere reach the program's handler, or
 * the default action, as before.
 */
static const int faults[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
static int faults_plain; /* traced: see rto_signal_faults_plain() */

static void install_fault_trampolines(void)
{
	for (unsigned i = 0; i < sizeof(faults) / sizeof(faults[0]); i++) {
		int sig = faults[i];
		struct sigaction cur, mine;
		if (real_sigaction(sig, NULL, &cur) != 0)
			continue;
		if (cur.sa_sigaction == trampoline) { /* a forked child's, inherited */
			uatomic_set(&trampoline_in[sig], 1);
			continue;
		}
		if (uatomic_read(&faults_plain) && !is_function((void *)cur.sa_handler))
			continue;
		user_handler[sig] = (void *)cur.sa_handler; /* installed before us */
		user_flags[sig] = cur.sa_flags;
		mine = cur;
		mine.sa_sigaction = trampoline;
		mine.sa_flags |= SA_SIGINFO;
		if (real_sigaction(sig, &mine, NULL) == 0)
			uatomic_set(&trampoline_in[sig], 1);
	}
}

/*
 * A tracer sees each signal of its tracee: a fault that no handler of the
 * program's takes would stop it twice (the trampoline sets the default
 * action back, and the instruction faults again).  Traced, such a fault
 * keeps the kernel's default action; a fault inside a call on a worker
 * then ends the process there, as it would have on the caller.
 */
void rto_signal_faults_plain(void)
{
	uatomic_set(&faults_plain, 1);
	for (unsigned i = 0; i < sizeof(faults) / sizeof(faults[0]); i++) {
		int sig = faults[i];
		void *h = user_handler[sig];
		struct sigaction cur;
		if (real_sigaction(sig, NULL, &cur) != 0 || cur.sa_sigaction != trampoline ||
		    is_function(h))
			continue;
		cur.sa_handler = h == (void *)SIG_IGN ? SIG_IGN : SIG_DFL;
		cur.sa_flags = user_flags[sig];
		if (real_sigaction(sig, &cur, NULL) == 0)
			uatomic_set(&trampoline_in[sig], 0);
	}
}

static void worker_unblock(void)
{
	sigset_t only;

	sigemptyset(&only);
	sigaddset(&only, RTO_SIG_INTERRUPT);
	sigaddset(&only, SIGSEGV); /* a fault inside a call must reach us */
	sigaddset(&only, SIGBUS);
	sigaddset(&only, SIGFPE);
	sigaddset(&only, SIGILL);
	rto_real_pthread_sigmask(SIG_UNBLOCK, &only, NULL);
}

int rto_signal_run_guarded(struct rto_req *r)
{
	sigjmp_buf jump;
	/* 0: no mask saved, so no syscall per call; the rare fault path restores it. */
	int sig = sigsetjmp(jump, 0);

	if (sig == 0) {
		fault_jump = &jump;
		r->fn->run((r->flags & RTO_RQ_INLINE) ? (void *)r->inl : r->args);
	}
	fault_jump = NULL; /* the trampoline restored the mask of before a fault */
	return sig;
}

/*
 * A caller's copy of memory the program handed to a call (wake_hint.c,
 * route.c): the kernel would have answered a bad pointer with EFAULT, so a
 * fault here must not kill the program.  Only where the trampolines take
 * SIGSEGV and SIGBUS (rto_signal_install(), before the first helper
 * starts; not for a traced process without a handler of its own, nor
 * after the program set such a signal to SIG_DFL): else nothing is read.
 */
int rto_signal_copy_guarded(void *dst, const void *src, size_t n)
{
	sigjmp_buf jump;
	volatile int faulted = 0;

	if (!uatomic_read(&trampoline_in[SIGSEGV]) || !uatomic_read(&trampoline_in[SIGBUS]))
		return -1;
	if (sigsetjmp(jump, 0) == 0) { /* 0: no mask saved, no syscall */
		fault_jump = &jump;
		/* The handler runs on this thread: compiler fences keep the copy inside. */
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		memcpy(dst, src, n);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
	} else {
		faulted = 1;
	}
	fault_jump = NULL;
	return faulted ? -1 : 0;
}

/* cred_mirror.c's, set before any library thread starts (pthread_create orders it). */
static void (*on_interrupt)(void);

void rto_signal_on_interrupt(void (*fn)(void))
{
	on_interrupt = fn;
}

static void interrupted(int sig)
{
	(void)sig; /* its job: end the system call with EINTR, and a mirror's look */
	int saved = errno;
	if (on_interrupt)
		on_interrupt();
	errno = saved;
}

/*
 * RTO_SIG_INTERRUPT's handler, without SA_RESTART, and the fault
 * trampolines: by the thread that starts the helpers, before the first of
 * them runs, so that a caller's first call finds them (a forked child
 * inherits both).
 */
void rto_signal_install(void)
{
	static int installed;
	struct sigaction act = {.sa_handler = interrupted};

	if (!uatomic_xchg(&installed, 1)) {
		real_sigaction(RTO_SIG_INTERRUPT, &act, NULL);
		install_fault_trampolines();
	}
}

/* In each worker at start: its signals. */
void rto_signal_worker_init(void)
{
	worker_tid = (int)rto_syscall(SYS_gettid);
	worker_unblock();
}

/* The library's other threads (live view, stall watch): only RTO_SIG_INTERRUPT. */
void rto_signal_own_thread_init(void)
{
	sigset_t only;

	rto_signal_install();
	sigemptyset(&only);
	sigaddset(&only, RTO_SIG_INTERRUPT);
	rto_real_pthread_sigmask(SIG_UNBLOCK, &only, NULL);
}

void rto_signal_take_kick(void)
{
	static const struct timespec zero;
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, RTO_SIG_INTERRUPT);
	rto_real_sigtimedwait(&set, NULL, &zero); /* pending: taken; already handled: nothing */
	if (on_interrupt) /* a mirror's signal taken here, unhandled: its look */
		on_interrupt();
}

int rto_signal_worker_tid(void)
{
	return worker_tid;
}
