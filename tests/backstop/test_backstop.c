/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The backstop (issue 12): a marked thread's system calls that no wrapper
 * catches (libc's internal ones, a raw syscall()) trap into the library's
 * SIGSYS handler and are decided by shim-gen/syscalls.tbl.
 *
 * Where a call ran is seen with a witness: a seccomp filter installed on
 * the marked thread by a raw instruction (raw_seccomp.h: unseen by the
 * library) makes one system call fail with EHWPOISON.  Syscall User
 * Dispatch acts before seccomp, so a trapped call that is offloaded runs on
 * a helper, outside the filter, and succeeds; one run on the caller fails.
 *
 * Built twice: test_backstop (the default, backstop on) and
 * test_backstop_off (backstop=off: today's behaviour, the raw call runs on
 * the caller).  Options: policy=SYS_sysinfo:strict,SYS_statfs:warn,
 * SYS_rt_sigpending:strict (a realtime-safe row made strict).
 */
#include "harness.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <pthread.h>
#include <semaphore.h>
#include <spawn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/epoll.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#include "raw_seccomp.h"
#include "raw_syscall_asm.h" /* libsrc's: a raw instruction, outside libc and the library */
#include "rtoffload.h"

#ifndef SYS_SECCOMP
#define SYS_SECCOMP 1 /* si_code of a seccomp RET_TRAP */
#endif

extern char **environ;

__asm__(".pushsection .text\n" RTO_RAW_SYSCALL6_ASM(trap_syscall6) ".popsection\n");
long trap_syscall6(long nr, long a, long b, long c, long d, long e, long f);

/* The witness: nr fails with EHWPOISON on this thread only.  0, or -1. */
static int witness(long nr, int raw)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)nr, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EHWPOISON),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {.len = sizeof(f) / sizeof(f[0]), .filter = f};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return -1;
	if (raw)
		return (int)raw_seccomp_filter(&prog);
	/* through libc's syscall(): the library sees this thread's own filter */
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

static long raw_getcwd(void)
{
	char buf[PATH_MAX];
	return syscall(SYS_getcwd, buf, sizeof(buf));
}

/* ---- where a trapped call runs ------------------------------------------------ */

struct where {
	int witness_rc;
	long ret;
	int err;
};

static void getcwd_under_witness(void *arg)
{
	struct where *w = arg;
	w->witness_rc = witness(SYS_getcwd, 1);
	errno = 0;
	w->ret = raw_getcwd();
	w->err = errno;
}

#ifndef BACKSTOP_OFF
Test(backstop, raw_syscall_of_an_unwrapped_call_is_offloaded, .timeout = TEST_TIMEOUT)
{
	struct where w;

	run_marked(getcwd_under_witness, &w);
	cr_assert_eq(w.witness_rc, 0);
	cr_expect_gt(w.ret, 1, "getcwd ran on the marked thread, under its witness (errno %d)",
		     w.err);
}

/*
 * A realtime loop's waits do not trap: their wrappers run them locally
 * with the selector open (the clock variants too, calls.tbl's rtsafe
 * rows).  The statistics count them local, and trapped stays 0 (only
 * this thread is marked).
 */
struct waits {
	uint64_t trapped, local;
	int rc[8];
};

/*
 * ThreadSanitizer's runtime maps memory for a lock's state at the lock's
 * first use, on the thread that uses it (its own mmap traps, and runs
 * here): the first pass warms it up and is not counted there.
 */
#ifdef __SANITIZE_THREAD__
#define WAITS_WARMUP 1
#else
#define WAITS_WARMUP 0
#endif

static void rtsafe_waits(void *arg)
{
	struct waits *w = arg;
	struct rt_offload_stats before, after;
	const struct timespec past = {1, 0}, zero = {0, 0};
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t c = PTHREAD_COND_INITIALIZER;
	pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
	struct epoll_event ev;
	sem_t sem;
	int ep = epoll_create1(EPOLL_CLOEXEC);

	sem_init(&sem, 0, 1);
	for (int pass = 0; pass <= WAITS_WARMUP; pass++) {
		rt_offload_get_stats(&before);
#ifndef __SANITIZE_THREAD__
		w->rc[0] = pthread_mutex_clocklock(&m, CLOCK_MONOTONIC, &past);
#else /* GCC 12's ThreadSanitizer has no interceptor for it: the wait's unlock would be its error \
       */
		w->rc[0] = pthread_mutex_lock(&m);
#endif
		w->rc[1] = pthread_cond_clockwait(&c, &m, CLOCK_MONOTONIC, &past);
		w->rc[2] = pthread_mutex_unlock(&m);
		w->rc[3] = pthread_rwlock_clockrdlock(&rw, CLOCK_MONOTONIC, &past) |
			   pthread_rwlock_unlock(&rw);
		w->rc[4] = pthread_rwlock_clockwrlock(&rw, CLOCK_MONOTONIC, &past) |
			   pthread_rwlock_unlock(&rw);
		w->rc[5] = sem_clockwait(&sem, CLOCK_MONOTONIC, &past) | sem_post(&sem);
		w->rc[6] = epoll_pwait2(ep, &ev, 1, &zero, NULL);
		w->rc[7] = clock_nanosleep(CLOCK_MONOTONIC, 0, &zero, NULL);
		rt_offload_get_stats(&after);
	}
	w->trapped = after.trapped - before.trapped;
	w->local = after.local - before.local;
	close(ep);
	sem_destroy(&sem);
}

Test(backstop, realtime_safe_waits_do_not_trap, .timeout = TEST_TIMEOUT)
{
	struct waits w;

	run_marked(rtsafe_waits, &w);
	int want[8] = {0, ETIMEDOUT, 0, 0, 0, 0, 0, 0};
	for (int i = 0; i < 8; i++)
		cr_expect_eq(w.rc[i], want[i], "call %d returned %d", i, w.rc[i]);
	cr_expect_eq(w.trapped, 0, "%llu of the waits trapped", (unsigned long long)w.trapped);
	cr_expect_geq(w.local, 10, "local: %llu", (unsigned long long)w.local);
}

Test(backstop, unmarked_thread_is_not_decided, .timeout = TEST_TIMEOUT)
{
	struct where w;

	start_helpers(); /* the first mark arms; this thread is never marked */
	run_unmarked(getcwd_under_witness, &w);
	cr_expect_eq(w.ret, -1);
	cr_expect_eq(w.err, EHWPOISON, "the witness did not see the unmarked call");
}

/*
 * getrandom's short form (random_short.h): up to 256 bytes runs on the
 * caller, trapped (a raw instruction, as glibc's arc4random and
 * getentropy make it) or through syscall() alike; a longer one, or one
 * with GRND_RANDOM, is offloaded.  The witness fails getrandom on the
 * marked thread only.
 */
struct randoms {
	int witness_rc;
	long ret[6];
	int err[6];
};

static void getrandoms_under_witness(void *arg)
{
	struct randoms *w = arg;
	static char buf[4096];
	const struct {
		int raw;
		size_t len;
		unsigned flags;
	} calls[6] = {{1, 16, 0},  {0, 256, 0},	 {1, 8, GRND_NONBLOCK},
		      {1, 257, 0}, {0, 4096, 0}, {1, 16, GRND_RANDOM}};

	w->witness_rc = witness(SYS_getrandom, 1);
	for (int i = 0; i < 6; i++) {
		errno = 0;
		w->ret[i] = calls[i].raw
				    ? trap_syscall6(SYS_getrandom, (long)buf, (long)calls[i].len,
						    calls[i].flags, 0, 0, 0)
				    : syscall(SYS_getrandom, buf, calls[i].len, calls[i].flags);
		w->err[i] = calls[i].raw && w->ret[i] < 0 ? (int)-w->ret[i] : errno;
	}
}

Test(backstop, short_getrandom_runs_on_the_caller, .timeout = TEST_TIMEOUT)
{
	struct randoms w;
	const long want[6] = {-EHWPOISON, -1, -EHWPOISON, 257, 4096, 16};

	run_marked(getrandoms_under_witness, &w);
	cr_assert_eq(w.witness_rc, 0);
	for (int i = 0; i < 6; i++) {
		if (want[i] == -1) /* syscall(): -1 and errno */
			cr_expect(w.ret[i] == -1 && w.err[i] == EHWPOISON,
				  "call %d: %ld (errno %d): not on the caller", i, w.ret[i],
				  w.err[i]);
		else
			cr_expect_eq(w.ret[i], want[i], "call %d: %ld (errno %d)", i, w.ret[i],
				     w.err[i]);
	}
}
#else
Test(backstop_off, raw_syscall_runs_on_the_caller, .timeout = TEST_TIMEOUT)
{
	struct where w;

	run_marked(getcwd_under_witness, &w);
	cr_assert_eq(w.witness_rc, 0);
	cr_expect_eq(w.ret, -1, "backstop=off: the raw call ran elsewhere");
	cr_expect_eq(w.err, EHWPOISON);
}
#endif

#ifndef BACKSTOP_OFF
/* A thread's own filter, installed through libc, keeps applying: its calls run on it. */
static void own_filter(void *arg)
{
	struct where *w = arg;
	w->witness_rc = witness(SYS_getcwd, 0);
	errno = 0;
	w->ret = raw_getcwd();
	w->err = errno;
}

Test(backstop, own_seccomp_filter_still_applies, .timeout = TEST_TIMEOUT)
{
	struct where w;

	run_marked(own_filter, &w);
	cr_assert_eq(w.witness_rc, 0);
	cr_expect_eq(w.ret, -1, "the call ran outside the thread's own filter");
	cr_expect_eq(w.err, EHWPOISON);
}

/* ---- errno, strict, warn ------------------------------------------------------------ */

struct results {
	long open_ret, sysinfo_ret, statfs_ret, pending_ret;
	int open_err, sysinfo_err, statfs_err, pending_err, witness_rc;
};

static void errno_strict_warn(void *arg)
{
	struct results *r = arg;
	struct sysinfo si;
	struct statfs sf;

	r->witness_rc = witness(SYS_statfs, 1);
	errno = 0;
	r->open_ret = syscall(SYS_openat, AT_FDCWD, "/nonexistent/backstop", O_RDONLY);
	r->open_err = errno;
	errno = 0;
	r->sysinfo_ret = syscall(SYS_sysinfo, &si);
	r->sysinfo_err = errno;
	errno = 0;
	r->statfs_ret = syscall(SYS_statfs, "/", &sf);
	r->statfs_err = errno;
	uint64_t pending;
	errno = 0;
	r->pending_ret = syscall(SYS_rt_sigpending, &pending, sizeof(pending));
	r->pending_err = errno;
}

Test(backstop, errno_strict_and_warn_from_the_table, .timeout = TEST_TIMEOUT)
{
	struct results r;

	run_marked(errno_strict_warn, &r);
	cr_assert_eq(r.witness_rc, 0);
	cr_expect_eq(r.open_ret, -1);
	cr_expect_eq(r.open_err, ENOENT, "an offloaded raw call's errno: %d", r.open_err);
	cr_expect_eq(r.sysinfo_ret, -1, "policy=SYS_sysinfo:strict did not refuse");
	cr_expect_eq(r.sysinfo_err, RT_OFFLOAD_STRICT_ERRNO);
	/* warn runs it here: the witness on statfs sees it */
	cr_expect_eq(r.statfs_ret, -1);
	cr_expect_eq(r.statfs_err, EHWPOISON, "SYS_statfs:warn did not run on the caller");
	/* A realtime-safe row (syscall() runs those without a look at the thread) made strict. */
	cr_expect_eq(r.pending_ret, -1, "policy=SYS_rt_sigpending:strict did not refuse");
	cr_expect_eq(r.pending_err, RT_OFFLOAD_STRICT_ERRNO);
}

/* ---- EINTR of an offloaded raw call ---------------------------------------------------- */

static void on_usr1(int sig)
{
	(void)sig;
}

struct intr {
	int fds[2];
	pid_t tid;
	struct flag ready;
	long ret;
	int err;
};

static void blocked_read(void *arg)
{
	struct intr *in = arg;
	char c;
	in->tid = tid_self();
	flag_set(&in->ready);
	errno = 0;
	in->ret = syscall(SYS_read, in->fds[0], &c, 1); /* a pipe: offloaded (fd_local=none) */
	in->err = errno;
}

Test(backstop, offloaded_raw_call_is_interrupted_like_a_local_one, .timeout = TEST_TIMEOUT)
{
	struct intr in = {0};
	struct bg b;
	struct sigaction sa = {.sa_handler = on_usr1}; /* no SA_RESTART: EINTR */

	sigemptyset(&sa.sa_mask);
	cr_assert_eq(sigaction(SIGUSR1, &sa, NULL), 0);
	cr_assert_eq(pipe(in.fds), 0);
	start_helpers();
	bg_start(&b, blocked_read, &in, BG_MARK | BG_PIN);
	cr_assert(flag_wait_timeout(&in.ready));
	pid_t helper = wait_helper_in_syscall(SYS_read, in.fds[0]);
	cr_assert_neq(helper, 0, "no helper blocked in the read: it was not offloaded");
	cr_assert_neq(helper, in.tid);
	pthread_kill(b.thread, SIGUSR1);
	bg_join(&b);
	cr_expect_eq(in.ret, -1);
	cr_expect_eq(in.err, EINTR, "errno %d", in.err);
}

/* ---- SIGSYS is never blocked while a dispatch can happen --------------------------------- */

struct masks {
	int sys_blocked_wrapper, usr1_blocked, sys_blocked_raw, after;
};

static void block_everything(void *arg)
{
	struct masks *m = arg;
	sigset_t all, cur, old;
	uint64_t raw_all = ~0ULL, raw_cur = 0;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	pthread_sigmask(SIG_BLOCK, NULL, &cur);
	m->sys_blocked_wrapper = sigismember(&cur, SIGSYS);
	m->usr1_blocked = sigismember(&cur, SIGUSR1);
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &raw_all, NULL, 8);
	syscall(SYS_rt_sigprocmask, SIG_BLOCK, NULL, &raw_cur, 8);
	m->sys_blocked_raw = (raw_cur >> (SIGSYS - 1)) & 1;
	m->after = raw_getcwd() > 1; /* a dispatch now: SIGSYS must get through */
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

Test(backstop, sigsys_is_stripped_from_every_mask, .timeout = TEST_TIMEOUT)
{
	struct masks m;

	run_marked(block_everything, &m);
	cr_expect_eq(m.usr1_blocked, 1);
	cr_expect_eq(m.sys_blocked_wrapper, 0, "pthread_sigmask blocked SIGSYS");
	cr_expect_eq(m.sys_blocked_raw, 0, "a raw rt_sigprocmask blocked SIGSYS");
	cr_expect_eq(m.after, 1);
}

static _Atomic long handler_cwd;

static void full_mask_handler(int sig)
{
	(void)sig;
	handler_cwd = raw_getcwd(); /* traps: SIGSYS must not be blocked here */
}

static void raise_usr1(void *arg)
{
	(void)arg;
	raise(SIGUSR1);
}

Test(backstop, program_handler_with_a_full_mask, .timeout = TEST_TIMEOUT)
{
	struct sigaction sa = {.sa_handler = full_mask_handler}, got;

	sigfillset(&sa.sa_mask);
	cr_assert_eq(sigaction(SIGUSR1, &sa, NULL), 0);
	run_marked(raise_usr1, NULL);
	cr_expect_gt(handler_cwd, 1, "the handler's call: %ld", (long)handler_cwd);
	/* What the kernel holds: the mask it blocks while the handler runs. */
	struct {
		void *handler;
		unsigned long flags;
		void *restorer;
		uint64_t mask;
	} k;
	cr_assert_eq(syscall(SYS_rt_sigaction, SIGUSR1, NULL, &k, 8), 0);
	cr_expect_eq(k.mask & (1ULL << (SIGSYS - 1)), 0, "the kernel blocks SIGSYS in the handler");
	cr_expect_neq(k.mask & (1ULL << (SIGTERM - 1)), 0);
#ifndef __SANITIZE_THREAD__ /* ThreadSanitizer answers sigaction() from its copy of the program's \
			     */
	cr_assert_eq(sigaction(SIGUSR1, NULL, &got), 0);
	cr_expect_eq(sigismember(&got.sa_mask, SIGSYS), 0);
#else
	(void)got;
#endif
}

/* ---- the program's own SIGSYS (seccomp RET_TRAP) ------------------------------------------ */

static _Atomic int seccomp_sigsys;

static void program_sigsys(int sig, siginfo_t *si, void *ctx)
{
	(void)sig;
	if (si->si_code == SYS_SECCOMP && si->si_syscall == SYS_getppid) {
		seccomp_sigsys++;
		((ucontext_t *)ctx)->uc_mcontext.gregs[REG_RAX] = 4242;
	}
}

static void trap_getppid(void *arg)
{
	long *ret = arg;
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {.len = sizeof(f) / sizeof(f[0]), .filter = f};
	struct sigaction sa = {.sa_sigaction = program_sigsys, .sa_flags = SA_SIGINFO};

	sigemptyset(&sa.sa_mask);
	*ret = -1;
	if (sigaction(SIGSYS, &sa, NULL) != 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    raw_seccomp_filter(&prog) != 0)
		return;
	*ret = syscall(SYS_getppid);
}

Test(backstop, program_sigsys_handler_still_called, .timeout = TEST_TIMEOUT)
{
	long ret;
	struct sigaction got;

	run_marked(trap_getppid, &ret);
	cr_expect_eq(ret, 4242, "the program's SIGSYS handler did not answer: %ld", ret);
	cr_expect_eq(seccomp_sigsys, 1);
	cr_assert_eq(sigaction(SIGSYS, NULL, &got), 0);
	cr_expect_eq((void *)got.sa_sigaction, (void *)program_sigsys,
		     "sigaction(SIGSYS) does not show the program's handler");
}

/* ---- threads, processes -----------------------------------------------------------------------
 */

static void *child_thread(void *arg)
{
	return (void *)(raw_getcwd() > 1 ? arg : NULL);
}

static void create_threads(void *arg)
{
	int *ok = arg;
	for (int i = 0; i < 4; i++) {
		pthread_t t;
		void *ret = NULL;
		if (pthread_create(&t, NULL, child_thread, (void *)1) != 0 ||
		    pthread_join(t, &ret) != 0 || ret != (void *)1)
			return;
	}
	*ok = 1;
}

Test(backstop, pthread_create_from_a_marked_thread, .timeout = TEST_TIMEOUT)
{
	int ok = 0;
	run_marked(create_threads, &ok);
	cr_expect_eq(ok, 1);
}

static void mark_and_exit(void *arg)
{
	(void)arg;
	raw_getcwd(); /* it exits marked and armed: its stack goes away after */
}

static void *exit_marked(void *arg)
{
	(void)arg;
	if (rt_offload_mark_thread() != 0)
		return NULL;
	raw_getcwd();
	if (arg)
		pthread_exit(arg);
	return (void *)2;
}

Test(backstop, marked_threads_exit_while_armed, .timeout = TEST_TIMEOUT)
{
	for (int i = 0; i < 16; i++) {
		pthread_t t;
		void *ret = NULL;
		cr_assert_eq(pthread_create(&t, NULL, exit_marked, (i & 1) ? (void *)1 : NULL), 0);
		cr_assert_eq(pthread_join(t, &ret), 0);
		cr_expect_eq(ret, (i & 1) ? (void *)1 : (void *)2);
	}
	run_marked(mark_and_exit, NULL);
}

struct spawn {
	int system_status, spawn_status, spawn_rc;
};

static void spawn_children(void *arg)
{
	struct spawn *s = arg;
	char *argv[] = {"sh", "-c", "exit 5", NULL};
	pid_t pid;

	s->system_status = system("exit 3");
	s->spawn_rc = posix_spawnp(&pid, "sh", NULL, NULL, argv, environ);
	if (s->spawn_rc == 0)
		waitpid(pid, &s->spawn_status, 0);
}

Test(backstop, posix_spawn_and_system_from_a_marked_thread, .timeout = TEST_TIMEOUT)
{
	struct spawn s = {0};
	run_marked(spawn_children, &s);
	cr_expect(WIFEXITED(s.system_status) && WEXITSTATUS(s.system_status) == 3, "system: %#x",
		  s.system_status);
	cr_assert_eq(s.spawn_rc, 0);
	cr_expect(WIFEXITED(s.spawn_status) && WEXITSTATUS(s.spawn_status) == 5, "spawn: %#x",
		  s.spawn_status);
}

struct forks {
	int fork_status, vfork_status, exec_status;
};

/*
 * The children of a marked thread: SUD is not inherited by fork, vfork or
 * execve (the kernel clears it), so they run whatever their selector says.
 * A child that died of SIGSYS or SIGSEGV would show it in its status.
 */
static void fork_children(void *arg)
{
	struct forks *f = arg;
	pid_t pid = fork();
	if (pid == 0) {
		long a = raw_getcwd();
		int p[2];
		int ok = a > 1 && pipe(p) == 0 && write(p[1], "x", 1) == 1 && raw_getcwd() > 1;
		_exit(ok ? 7 : 1);
	}
	if (pid > 0)
		waitpid(pid, &f->fork_status, 0);
	pid = vfork();
	if (pid == 0)
		_exit(8);
	if (pid > 0)
		waitpid(pid, &f->vfork_status, 0);
	pid = vfork();
	if (pid == 0) {
		char *argv[] = {"sh", "-c", "exit 9", NULL};
		execve("/bin/sh", argv, environ);
		_exit(1);
	}
	if (pid > 0)
		waitpid(pid, &f->exec_status, 0);
}

Test(backstop, fork_vfork_execve_from_a_marked_thread, .timeout = TEST_TIMEOUT)
{
	struct forks f = {0};
	run_marked(fork_children, &f);
	cr_expect(WIFEXITED(f.fork_status) && WEXITSTATUS(f.fork_status) == 7, "fork: %#x",
		  f.fork_status);
	cr_expect(WIFEXITED(f.vfork_status) && WEXITSTATUS(f.vfork_status) == 8, "vfork: %#x",
		  f.vfork_status);
	cr_expect(WIFEXITED(f.exec_status) && WEXITSTATUS(f.exec_status) == 9, "execve: %#x",
		  f.exec_status);
}

/*
 * vfork by a syscall instruction of the program's own, as glibc's vfork
 * does it (the return address out of the shared stack).  It traps; the
 * handler cannot start a child that shares its stack, so it runs the
 * instruction again in place with the selector at ALLOW.
 */
long test_raw_vfork(void);
__asm__(".text\n"
	".globl test_raw_vfork\n"
	".type test_raw_vfork,@function\n"
	"test_raw_vfork:\n"
	"	pop %rdi\n"
	"	mov $58, %eax\n"
	"	syscall\n"
	"	push %rdi\n"
	"	ret\n"
	".size test_raw_vfork, .-test_raw_vfork\n");

static void raw_vfork_child(void *arg)
{
	int *status = arg;
	long pid = test_raw_vfork();
	if (pid == 0)
		_exit(6);
	if (pid > 0)
		waitpid((pid_t)pid, status, 0);
}

Test(backstop, raw_vfork_from_a_marked_thread, .timeout = TEST_TIMEOUT)
{
	int status = 0;
	run_marked(raw_vfork_child, &status);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 6, "raw vfork: %#x", status);
}

static void abort_marked(void *arg)
{
	(void)arg;
	abort();
}

/* A fresh process: a fork of the test program would start threads in a multi-threaded child. */
SCENARIO(abort_marked)
{
	struct bg b;
	if (bg_spawn(&b, abort_marked, NULL, BG_MARK) == 0)
		bg_wait(&b);
	return 1;
}

Test(backstop, abort_from_a_marked_thread_dies_of_sigabrt, .timeout = TEST_TIMEOUT)
{
	struct proc p;

	cr_assert_eq(run_scenario("abort_marked", NULL, &p), 0);
	cr_expect(WIFSIGNALED(p.status) && WTERMSIG(p.status) == SIGABRT, "status %#x\n%s",
		  p.status, p.err);
}

/* setuid() of another thread: glibc signals every thread, a marked one too. */
struct setxid {
	_Atomic int stop;
	long calls, bad;
	struct flag ready;
};

static void busy_marked(void *arg)
{
	struct setxid *s = arg;
	flag_set(&s->ready);
	while (!s->stop) {
		s->calls++;
		s->bad += raw_getcwd() <= 1;
	}
}

Test(backstop, setxid_broadcast_while_a_marked_thread_runs, .timeout = TEST_TIMEOUT)
{
	struct setxid s = {0};
	struct bg b;

	bg_start(&b, busy_marked, &s, BG_MARK);
	cr_assert(flag_wait_timeout(&s.ready));
	for (int i = 0; i < 50; i++)
		cr_assert_eq(setgid(getgid()), 0);
	for (int i = 0; i < 50; i++)
		cr_assert_eq(setresuid((uid_t)-1, geteuid(), (uid_t)-1), 0);
	s.stop = 1;
	bg_join(&b);
	cr_expect_gt(s.calls, 0);
	cr_expect_eq(s.bad, 0);
}

/* ---- what the program is told: reports, the exit statistics -------------------------------- */

static int count(const char *s, const char *what)
{
	int n = 0;
	for (const char *p = s; (p = strstr(p, what)); p++)
		n++;
	return n;
}

Test(backstop, trapped_calls_reported_once_per_site_and_counted, .timeout = TEST_TIMEOUT)
{
	char dir[PATH_MAX], json[PATH_MAX], opt[PATH_MAX + 128];
	struct proc p;

	tmp_make(dir);
	pathf(json, "%s/stats.json", dir);
	snprintf(opt, sizeof(opt),
		 "RTOFFLOAD_OPTIONS=report_traps=1:stats=1:stats_file=%s:"
		 "policy=SYS_sysinfo:strict",
		 json);
	char *argv[] = {TRAP_CHILD, NULL};
	char *env[] = {opt, NULL};
	cr_assert_eq(run_proc(argv, env, &p), 0);
	cr_assert(WIFEXITED(p.status) && WEXITSTATUS(p.status) == 0, "status %#x\n%s\n%s", p.status,
		  p.out, p.err);
	cr_expect_geq(kv(p.out, "trapped", 0), 4, "%s", p.out);
	/* one report for the three getcwd of one site, with its backtrace */
	cr_expect_eq(count(p.err, "==rtoffload: trap 'getcwd'"), 1, "%s", p.err);
	cr_expect_neq(count(p.err, "raw_getcwd_site"), 0, "no backtrace through the site:\n%s",
		      p.err);
	cr_expect_eq(count(p.err, "==rtoffload: strict 'sysinfo'"), 1, "%s", p.err);
	size_t len;
	char *text = slurp(json, &len);
	cr_assert_not_null(text);
	cr_expect_not_null(strstr(text, "{\"name\":\"getcwd\",\"trapped\":3,\"offloaded\":3,"
					"\"local\":0,\"denied\":0}"),
			   "%s", text);
	cr_expect_not_null(strstr(text, "{\"name\":\"sysinfo\",\"trapped\":1,\"offloaded\":0,"
					"\"local\":0,\"denied\":1}"),
			   "%s", text);
	free(text);
	tmp_remove(dir);
}
#endif
