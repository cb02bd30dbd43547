/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Process lifetime: the process ends when its last application thread
 * ends, as it would without the library, though the helpers live on.
 *
 * Without the library, glibc counts the threads it started
 * (__nptl_nthreads: pthread_create adds one before clone()) and the thread
 * that takes the count to zero, whether it returned from its start
 * routine, called pthread_exit() or was cancelled, calls exit(0) once its
 * thread-specific data destructors have run (nptl/pthread_create.c
 * start_thread; the initial thread in __libc_start_call_main).  fork()
 * sets the count to 1 in the child.  The helpers are glibc threads too, so
 * the count would never reach zero again: the main thread stays a zombie
 * and the process lives on with its helpers.
 *
 * So each helper is taken off the count as soon as it is started, by the
 * application thread that started it (which glibc still counts, so the
 * count never reaches zero here).  glibc then does all the rest itself:
 * the same thread calls exit(0) at the same moment, the program's atexit
 * handlers and destructors run, and ours (init.c) writes the queued async
 * writes and the statistics.  In a fork child the count is 1 again and
 * the child's own helpers are taken off it when they start.  Tracking the
 * application threads ourselves instead would need a wrapper around every
 * thread start and would call exit() from a destructor of ours, before
 * the program's later thread-specific data destructors: glibc's own count
 * is exact.  It is GLIBC_PRIVATE (exported since 2.34 from libc.so.6, read
 * by libthread_db); without it (another C library) the process outlives
 * its last thread as before, said at verbosity=1 and in docs/LIMITS.md.
 * A side effect: libthread_db's thread count (td_ta_get_nthreads)
 * leaves the helpers out too.
 *
 * A thread may also end behind glibc's back, by the raw exit system call
 * (syscall(SYS_exit), or inline).  Without the library the kernel ends the
 * process when its last thread is gone, with the initial thread's exit
 * status.  With it only helpers would be left, blocking every signal, so
 * even SIGTERM would stay pending.  One helper (worker 0) therefore looks,
 * when idle and at most once a second, whether the initial thread is a
 * zombie and every other thread of the process is a helper
 * (/proc/self/stat: state and num_threads).  If so it writes what async
 * writes are queued and the statistics, lets a fatal signal already
 * pending (SIGTERM, SIGINT, SIGHUP... at their default action) end the
 * process as its sender asked, and otherwise exits with the initial
 * thread's status.  A thread of another runtime (ThreadSanitizer's
 * background thread) keeps the process alive, as it would without us.
 *
 * The helper reads /proc only once the initial thread has exited, which it
 * sees without a system call: the kernel clears that thread's tid word in
 * glibc's thread descriptor when it exits.  An open takes the lowest free
 * descriptor number for a few microseconds, and a program such as tar
 * (close(1); dup(fd), abort() when dup gives another number) runs its
 * close and dup beside the helpers.
 */
#include "callsite.h"
#include "procfs.h"
#include "resolve.h"
#include "transport.h"
#include "signals.h"
#include "futex.h"
#include "report.h"
#include "lifetime.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static unsigned int *nthreads; /* glibc's __nptl_nthreads, or NULL */

/*
 * What the process writes at its end (init.c: the async queue, then the
 * statistics), from above us.  Stored in the constructor, before any helper
 * starts (pthread_create orders it before the watching helper's load).
 */
static void (*write_out)(void);

/*
 * The initial thread's tid word, at the offset libthread_db reads
 * (_thread_db_pthread_tid: bits, count, offset; GLIBC_PRIVATE like the
 * count).  The kernel clears it when that thread exits: glibc registered
 * it with set_tid_address() at start, and fork() with
 * CLONE_CHILD_CLEARTID.  That descriptor is in the initial thread's static
 * TLS block, which glibc never frees, so it stays readable.
 */
static pid_t *initial_tid;
static pid_t *leader_tid;   /* this process's first thread's: NULL when unknown */
static uint64_t next_watch; /* the watching worker reads and writes it; fork resets it */

static pid_t *tid_word(void)
{
	const uint32_t *d = dlvsym(RTLD_DEFAULT, "_thread_db_pthread_tid", "GLIBC_PRIVATE");

	if (!d || d[0] != 8 * sizeof(pid_t) || d[1] != 1)
		return NULL;
	pid_t *w = (pid_t *)((char *)pthread_self() + d[2]);
	return CMM_LOAD_SHARED(*w) == gettid() ? w : NULL;
}

/*
 * A fork child's first thread is the one that forked; its word is known
 * when that was the initial thread (another thread's descriptor lives on
 * its stack, which glibc may unmap once it exits).
 */
static void child_after_fork(void)
{
	leader_tid = initial_tid && tid_word() == initial_tid ? initial_tid : NULL;
	next_watch = 0; /* the child's helpers start afresh */
}

void rto_lifetime_init(void (*at_end)(void))
{
	write_out = at_end;
	if (gettid() == getpid()) /* preloaded or linked: the constructor runs there */
		initial_tid = leader_tid = tid_word();
	pthread_atfork(NULL, NULL, child_after_fork);
	nthreads = (unsigned int *)dlvsym(RTLD_DEFAULT, "__nptl_nthreads", "GLIBC_PRIVATE");
	if (!nthreads || CMM_LOAD_SHARED(*nthreads) == 0) {
		nthreads = NULL;
		rto_say(1, "no glibc thread count: a process whose last thread ends by "
			   "pthread_exit() outlives it while helpers run");
	}
}

void rto_lifetime_helper_started(void)
{
	uatomic_inc(&rto_q->helpers);
	if (!nthreads)
		return;
	/*
	 * glibc changes the count with atomic read-modify-writes (lock-prefixed
	 * on x86), so ours composes with a concurrent pthread_create or thread
	 * exit.  Never to zero: a starter glibc does not count (a raw clone()
	 * thread) leaves the helper counted, and the watch below covers it.
	 */
	unsigned int cur = CMM_LOAD_SHARED(*nthreads);
	for (int i = 0; i < 64 && cur > 1; i++) {
		unsigned int seen = uatomic_cmpxchg(nthreads, cur, cur - 1);
		if (seen == cur)
			return;
		cur = seen;
	}
}

int rto_lifetime_app_threads(void)
{
	return nthreads ? (int)CMM_LOAD_SHARED(*nthreads) : -1;
}

void rto_lifetime_helper_exiting(void)
{
	uatomic_dec(&rto_q->helpers);
	/*
	 * glibc takes one off the count as the thread ends: put back the one
	 * rto_lifetime_helper_started() took.  If every application thread
	 * ended meanwhile, this thread then takes the count to zero and ends
	 * the process with exit(0), as the last of them would have.
	 */
	if (nthreads)
		uatomic_inc(nthreads);
}

/* ---- the watch: only helpers left ------------------------------------------------ */

struct proc_state {
	char state;    /* the initial thread's: 'Z' once it has exited */
	long threads;  /* every thread of the process, the zombie initial one too */
	int exit_code; /* the initial thread's, as wait() reports it */
};

/* /proc/self/stat: fields 3 (state), 20 (num_threads), 52 (exit_code, Linux 3.5). */
static int read_proc(struct proc_state *ps)
{
	char buf[1024];

	if (rto_procfs_read("/proc/self/stat", buf, sizeof(buf)) <= 0)
		return -1;
	const char *p = strrchr(buf, ')'); /* the name may hold anything but ends at the last ')' */
	if (!p || sscanf(p + 1, " %c", &ps->state) != 1)
		return -1;
	/* Count fields from field 3 (state) on: num_threads is the 20th, exit_code the 52nd. */
	ps->threads = -1;
	ps->exit_code = 0;
	int field = 2;
	for (const char *c = p + 1; *c; c++) {
		if (*c != ' ')
			continue;
		field++;
		if (field == 20)
			ps->threads = strtol(c + 1, NULL, 10);
		else if (field == 52)
			ps->exit_code = (int)strtol(c + 1, NULL, 10);
	}
	return ps->threads > 0 ? 0 : -1;
}

/* Signals that end the process at their default action (not stop, not ignore). */
static void fatal_by_default(sigset_t *set)
{
	sigemptyset(set);
	for (int sig = 1; sig < NSIG; sig++) {
		if (sig == SIGKILL || sig == SIGSTOP || sig == SIGCHLD || sig == SIGCONT ||
		    sig == SIGURG || sig == SIGWINCH || sig == SIGTSTP || sig == SIGTTIN ||
		    sig == SIGTTOU || sig == RTO_SIG_INTERRUPT || (sig > 31 && sig < SIGRTMIN))
			continue;
		if (rto_signal_is_default(sig))
			sigaddset(set, sig);
	}
}

static _Noreturn void end_process(int exit_code)
{
	sigset_t fatal;

	write_out(); /* nothing accepted is lost; pool_full sites; the statistics */
	fatal_by_default(&fatal);
	/* One pending (sent while no application thread could take it) ends us now. */
	rto_syscall(SYS_rt_sigprocmask, SIG_UNBLOCK, &fatal, NULL, (size_t)(_NSIG / 8));
	rto_syscall(SYS_exit_group, (exit_code >> 8) & 0xff);
	__builtin_unreachable();
}

/*
 * The first look comes a whole period after the helpers start, not at their
 * first idle moment: a look opens /proc/self/stat, which takes the lowest
 * free descriptor number for a few microseconds, and a program that has
 * just closed one often opens the next file right away (docs/LIMITS.md).
 */
int rto_lifetime_watch_due(void)
{
	uint64_t now = rto_now_ns(); /* vDSO clock: no system call */

	if (RTO_UNLIKELY(next_watch == 0))
		next_watch = now + RTO_LIFETIME_WATCH_NS;
	return now >= next_watch;
}

void rto_lifetime_watch(void)
{
	struct proc_state ps;

	next_watch = rto_now_ns() + RTO_LIFETIME_WATCH_NS;
	if (leader_tid && CMM_LOAD_SHARED(*leader_tid) != 0)
		return; /* the first thread runs: no look at /proc */
	if (read_proc(&ps) != 0 || ps.state != 'Z')
		return;
	if (ps.threads != (long)CMM_LOAD_SHARED(rto_q->helpers) + 1)
		return; /* an application thread (or another runtime's) is still there */
	end_process(ps.exit_code);
}
