/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Issue 13's process rows (exec, wait, kill, limits) and realtime-safe
 * rows (sleeps, polls, pthread locks, semaphores: local) through the
 * family harness.  An exec that succeeds would replace the test: the exec
 * cases fail on purpose, which still carries every argument across.
 */
#include "more.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;
static char *const argv_none[] = {"rto-no-such-program", NULL};

/* A child that exits with status 5, for the wait cases. */
static pid_t child;
HOOK(prep_child)
{
	child = fork();
	cr_assert_geq(child, 0);
	if (child == 0)
		_exit(5);
}
HOOK(post_child)
{
	if (child > 0)
		waitpid(child, NULL, WNOHANG);
	child = 0;
}
static void note_status(struct res *r, pid_t got, int st)
{
	note(r, "ours=%d exit=%d", got == child, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	r->ret = r->ret > 0 ? 0 : r->ret;
}

/* clang-format off */
CASE(execve_enoent) { INT(execve(P("none"), argv_none, environ)); }
CASE(execv_eacces) { INT(execv(P("f"), argv_none)); }
CASE(execvp_enoent) { INT(execvp("rto-no-such-program", argv_none)); }
CASE(execvpe_enoent) { INT(execvpe("rto-no-such-program", argv_none, environ)); }
CASE(fexecve_ebadf) { INT(fexecve(x->bad, argv_none, environ)); }
CASE(execl_enoent) { INT(execl(P("none"), "none", "a", (char *)NULL)); }
CASE(execlp_enoent) { INT(execlp("rto-no-such-program", "x", "b", "c", (char *)NULL)); }
CASE(execle_eacces) { INT(execle(P("f"), "f", (char *)NULL, environ)); }
CASE(getrlimit_ok) { struct rlimit rl; INT(getrlimit(RLIMIT_NOFILE, &rl)); note(r, "%lu", (unsigned long)rl.rlim_cur); }
CASE(getrlimit_einval) { struct rlimit rl; INT(getrlimit((__rlimit_resource_t)999, &rl)); }
CASE(getrlimit64_ok) { struct rlimit64 rl; INT(getrlimit64(RLIMIT_STACK, &rl)); note(r, "%llu", (unsigned long long)rl.rlim_cur); }
CASE(setrlimit_ok) { struct rlimit rl; INT(getrlimit(RLIMIT_CORE, &rl)); INT(setrlimit(RLIMIT_CORE, &rl)); }
CASE(setrlimit_einval) { struct rlimit rl = {2, 1}; INT(setrlimit(RLIMIT_CORE, &rl)); }
CASE(setrlimit64_ok) { struct rlimit64 rl; INT(getrlimit64(RLIMIT_CORE, &rl)); INT(setrlimit64(RLIMIT_CORE, &rl)); }
CASE(kill_ok) { INT(kill(getpid(), 0)); }
CASE(kill_esrch) { INT(kill(0x3ffffff, 0)); }
CASE(wait_ok) { int st = 0; INT(wait(&st)); note_status(r, (pid_t)r->ret, st); }
CASE(waitpid_ok) { int st = 0; INT(waitpid(child, &st, 0)); note_status(r, (pid_t)r->ret, st); }
CASE(waitpid_echild) { INT(waitpid(-1, NULL, WNOHANG)); }
CASE(waitid_ok)
{
	siginfo_t si = {0};
	INT(waitid(P_PID, (id_t)child, &si, WEXITED));
	note(r, "ours=%d code=%d", si.si_pid == child, si.si_status);
}
CASE(wait3_ok) { int st = 0; INT(wait3(&st, 0, NULL)); note_status(r, (pid_t)r->ret, st); }
CASE(wait4_ok) { int st = 0; struct rusage ru; INT(wait4(child, &st, 0, &ru)); note_status(r, (pid_t)r->ret, st); }
/* clang-format on */

/* ---- realtime-safe waits and locks ---------------------------------------------- */

static const struct timespec tiny = {0, 1000};
static const struct timespec past = {1, 0}; /* an absolute time long gone */
static pthread_mutex_t mtx = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_spinlock_t spin;
static pthread_barrier_t barrier;
static sem_t sem;
static atomic_int waiting, ready;
static pthread_t other;

/* Signals cond once the case waits on it (it holds mtx until then). */
static void *signaller(void *arg)
{
	(void)arg;
	while (!atomic_load(&waiting))
		sched_yield();
	pthread_mutex_lock(&mtx);
	atomic_store(&ready, 1);
	pthread_cond_signal(&cond);
	pthread_mutex_unlock(&mtx);
	return NULL;
}
HOOK(prep_signaller)
{
	atomic_store(&waiting, 0);
	atomic_store(&ready, 0);
	cr_assert_eq(pthread_create(&other, NULL, signaller, NULL), 0);
}
HOOK(post_join)
{
	cr_assert_eq(pthread_join(other, NULL), 0);
}
static void *seven(void *arg)
{
	(void)arg;
	return (void *)7;
}
HOOK(prep_seven)
{
	cr_assert_eq(pthread_create(&other, NULL, seven, NULL), 0);
}
HOOK(prep_sync)
{
	cr_assert_eq(pthread_spin_init(&spin, PTHREAD_PROCESS_PRIVATE), 0);
	cr_assert_eq(pthread_barrier_init(&barrier, NULL, 1), 0);
	cr_assert_eq(sem_init(&sem, 0, 1), 0);
}
HOOK(post_sync)
{
	pthread_spin_destroy(&spin);
	pthread_barrier_destroy(&barrier);
	sem_destroy(&sem);
}

/*
 * ThreadSanitizer binds pthread_cond_* by version (dlvsym GLIBC_2.3.2),
 * which our unversioned wrappers do not answer: under it those calls go
 * from its interceptor straight to glibc and are not counted here.
 */
#ifdef __SANITIZE_THREAD__
#define COND(expr)          \
	do {                \
		CODE(expr); \
		r->calls--; \
	} while (0)
#else
#define COND(expr) CODE(expr)
#endif

/* clang-format off */
CASE(clock_nanosleep_ok) { CODE(clock_nanosleep(CLOCK_MONOTONIC, 0, &tiny, NULL)); }
CASE(clock_nanosleep_einval) { CODE(clock_nanosleep(CLOCK_MONOTONIC, 0, &(struct timespec){0, -1}, NULL)); }
CASE(nanosleep_ok) { INT(nanosleep(&tiny, NULL)); }
CASE(nanosleep_einval) { INT(nanosleep(&(struct timespec){0, 2000000000L}, NULL)); }
CASE(usleep_ok) { INT(usleep(1)); }
CASE(sleep_ok) { INT(sleep(0)); }
CASE(sched_yield_ok) { INT(sched_yield()); }
CASE(poll_ok) { struct pollfd p = {.fd = x->pr, .events = POLLIN}; INT(poll(&p, 1, 0)); note(r, "%x", p.revents); }
CASE(ppoll_einval) { struct pollfd p = {.fd = -1}; INT(ppoll(&p, 1, &(struct timespec){0, -1}, NULL)); }
CASE(ppoll_ok) { struct pollfd p = {.fd = x->pw, .events = POLLOUT}; INT(ppoll(&p, 1, &tiny, NULL)); note(r, "%x", p.revents); }
CASE(select_ok)
{
	fd_set rd; FD_ZERO(&rd); FD_SET(x->pr, &rd);
	INT(select(x->pr + 1, &rd, NULL, NULL, &(struct timeval){0, 0}));
	note(r, "%d", FD_ISSET(x->pr, &rd));
}
CASE(select_einval) { INT(select(-1, NULL, NULL, NULL, &(struct timeval){0, 0})); }
CASE(pselect_ok)
{
	fd_set rd; FD_ZERO(&rd); FD_SET(x->pr, &rd);
	INT(pselect(x->pr + 1, &rd, NULL, NULL, &tiny, NULL));
}
HOOK(prep_epoll_pipe)
{
	struct epoll_event ev = {.events = EPOLLIN};
	r->fd = epoll_create1(EPOLL_CLOEXEC);
	cr_assert_eq(epoll_ctl(r->fd, EPOLL_CTL_ADD, x->pr, &ev), 0);
}
CASE(epoll_wait_ok) { struct epoll_event ev; INT(epoll_wait(r->fd, &ev, 1, 0)); }
CASE(epoll_wait_ebadf) { struct epoll_event ev; INT(epoll_wait(x->bad, &ev, 1, 0)); }
CASE(epoll_pwait_ok) { struct epoll_event ev; INT(epoll_pwait(r->fd, &ev, 1, 0, NULL)); }
CASE(epoll_pwait2_ok) { struct epoll_event ev; struct timespec zero = {0}; INT(epoll_pwait2(r->fd, &ev, 1, &zero, NULL)); }
CASE(pthread_mutex_lock_ok) { CODE(pthread_mutex_lock(&mtx)); CODE(pthread_mutex_unlock(&mtx)); }
CASE(pthread_mutex_trylock_ok) { CODE(pthread_mutex_trylock(&mtx)); CODE(pthread_mutex_unlock(&mtx)); }
CASE(pthread_mutex_timedlock_ok) { CODE(pthread_mutex_timedlock(&mtx, &past)); CODE(pthread_mutex_unlock(&mtx)); }
#ifndef __SANITIZE_THREAD__ /* not intercepted by GCC 12's TSan: it would see an unlock of an unlocked lock */
CASE(pthread_mutex_clocklock_ok) { CODE(pthread_mutex_clocklock(&mtx, CLOCK_MONOTONIC, &past)); CODE(pthread_mutex_unlock(&mtx)); }
#endif
CASE(pthread_mutex_unlock_ok) { CODE(pthread_mutex_lock(&mtx)); CODE(pthread_mutex_unlock(&mtx)); }
CASE(pthread_mutex_trylock_ebusy)
{
	CODE(pthread_mutex_lock(&mtx));
	CODE(pthread_mutex_trylock(&mtx));
	int code = r->code;
	CODE(pthread_mutex_unlock(&mtx));
	r->code = code;
	r->fail = code != 0;
}
CASE(pthread_cond_wait_ok)
{
	CODE(pthread_mutex_lock(&mtx));
	atomic_store(&waiting, 1);
	while (!atomic_load(&ready))
		COND(pthread_cond_wait(&cond, &mtx));
	CODE(pthread_mutex_unlock(&mtx));
}
CASE(pthread_cond_timedwait_etimedout)
{
	CODE(pthread_mutex_lock(&mtx));
	COND(pthread_cond_timedwait(&cond, &mtx, &past));
	int code = r->code;
	CODE(pthread_mutex_unlock(&mtx));
	r->code = code;
	r->fail = code != 0;
}
CASE(pthread_cond_clockwait_etimedout)
{
	CODE(pthread_mutex_lock(&mtx));
	CODE(pthread_cond_clockwait(&cond, &mtx, CLOCK_MONOTONIC, &past)); /* 2.30 only: TSan binds it unversioned */
	int code = r->code;
	CODE(pthread_mutex_unlock(&mtx));
	r->code = code;
	r->fail = code != 0;
}
CASE(pthread_cond_signal_ok) { CODE(pthread_mutex_lock(&mtx)); COND(pthread_cond_signal(&cond)); CODE(pthread_mutex_unlock(&mtx)); }
CASE(pthread_cond_broadcast_ok) { CODE(pthread_mutex_lock(&mtx)); COND(pthread_cond_broadcast(&cond)); CODE(pthread_mutex_unlock(&mtx)); }
CASE(pthread_rwlock_rdlock_ok) { CODE(pthread_rwlock_rdlock(&rw)); CODE(pthread_rwlock_unlock(&rw)); }
CASE(pthread_rwlock_wrlock_ok) { CODE(pthread_rwlock_wrlock(&rw)); CODE(pthread_rwlock_unlock(&rw)); }
CASE(pthread_rwlock_tryrdlock_ok) { CODE(pthread_rwlock_tryrdlock(&rw)); CODE(pthread_rwlock_unlock(&rw)); }
CASE(pthread_rwlock_trywrlock_ok) { CODE(pthread_rwlock_trywrlock(&rw)); CODE(pthread_rwlock_unlock(&rw)); }
CASE(pthread_rwlock_timedrdlock_ok) { CODE(pthread_rwlock_timedrdlock(&rw, &past)); CODE(pthread_rwlock_unlock(&rw)); }
CASE(pthread_rwlock_timedwrlock_ok) { CODE(pthread_rwlock_timedwrlock(&rw, &past)); CODE(pthread_rwlock_unlock(&rw)); }
#ifndef __SANITIZE_THREAD__ /* likewise */
CASE(pthread_rwlock_clockrdlock_ok) { CODE(pthread_rwlock_clockrdlock(&rw, CLOCK_MONOTONIC, &past)); CODE(pthread_rwlock_unlock(&rw)); }
CASE(pthread_rwlock_clockwrlock_ok) { CODE(pthread_rwlock_clockwrlock(&rw, CLOCK_MONOTONIC, &past)); CODE(pthread_rwlock_unlock(&rw)); }
#endif
CASE(pthread_rwlock_unlock_ok) { CODE(pthread_rwlock_rdlock(&rw)); CODE(pthread_rwlock_unlock(&rw)); }
CASE(pthread_barrier_wait_serial) { CODE(pthread_barrier_wait(&barrier) == PTHREAD_BARRIER_SERIAL_THREAD ? 0 : 1); }
CASE(pthread_spin_lock_ok) { CODE(pthread_spin_lock(&spin)); CODE(pthread_spin_unlock(&spin)); }
CASE(pthread_spin_trylock_ok) { CODE(pthread_spin_trylock(&spin)); CODE(pthread_spin_unlock(&spin)); }
CASE(pthread_spin_unlock_ok) { CODE(pthread_spin_lock(&spin)); CODE(pthread_spin_unlock(&spin)); }
CASE(pthread_join_ok) { void *v = NULL; CODE(pthread_join(other, &v)); note(r, "%ld", (long)v); }
#ifndef __SANITIZE_THREAD__
CASE(pthread_join_edeadlk) { CODE(pthread_join(pthread_self(), NULL)); }
#endif
CASE(sem_wait_ok) { INT(sem_wait(&sem)); }
CASE(sem_timedwait_ok) { INT(sem_timedwait(&sem, &past)); }
CASE(sem_clockwait_ok) { INT(sem_clockwait(&sem, CLOCK_MONOTONIC, &past)); }
CASE(sem_trywait_eagain) { INT(sem_trywait(&sem)); INT(sem_trywait(&sem)); }
CASE(sem_post_ok) { INT(sem_post(&sem)); int v = 0; sem_getvalue(&sem, &v); note(r, "%d", v); }
/* SIGURG, ignored by default: never comes; the marked call announces its 1 ms timeout. */
CASE(sigtimedwait_eagain) { sigset_t s; sigemptyset(&s); sigaddset(&s, SIGURG); INT(sigtimedwait(&s, NULL, &(struct timespec){0, 1000000})); }
CASE(sigtimedwait_einval) { sigset_t s; sigemptyset(&s); sigaddset(&s, SIGURG); INT(sigtimedwait(&s, NULL, &(struct timespec){0, -1})); }
/* clang-format on */

/* SIGURG blocked and pending on this thread: a wait for it returns at once. */
static sigset_t pend_urg(void)
{
	sigset_t s;

	sigemptyset(&s);
	sigaddset(&s, SIGURG);
	pthread_sigmask(SIG_BLOCK, &s, NULL);
	pthread_kill(pthread_self(), SIGURG);
	return s;
}

static void unblock(const sigset_t *s)
{
	pthread_sigmask(SIG_UNBLOCK, s, NULL);
}

static volatile sig_atomic_t urg_handled;

static void on_urg(int sig)
{
	urg_handled = sig;
}

/*
 * A POSIX timer that sends nothing (SIGEV_NONE), made and deleted on the
 * main thread around a case (prep, post): the case makes one call.
 */
static timer_t tmr;
static const struct itimerspec second = {.it_value = {1, 0}, .it_interval = {1, 0}};

HOOK(prep_timer)
{
	struct sigevent ev = {.sigev_notify = SIGEV_NONE};

	timer_create(CLOCK_MONOTONIC, &ev, &tmr);
	timer_settime(tmr, 0, &second, NULL);
}

HOOK(post_timer)
{
	timer_delete(tmr);
}

/* clang-format off */
CASE(sigwait_ok) { sigset_t s = pend_urg(); int sig = 0; CODE(sigwait(&s, &sig)); note(r, "%d", sig); unblock(&s); }
CASE(sigwaitinfo_ok) { sigset_t s = pend_urg(); siginfo_t si; INT(sigwaitinfo(&s, &si)); note(r, "%d", si.si_signo); unblock(&s); }
CASE(sigsuspend_eintr) {
	struct sigaction sa = {.sa_handler = on_urg}, old;
	sigset_t none;
	sigemptyset(&sa.sa_mask);
	sigemptyset(&none);
	urg_handled = 0;
	sigaction(SIGURG, &sa, &old);
	sigset_t s = pend_urg();
	INT(sigsuspend(&none)); /* the handler runs, then EINTR */
	note(r, "%d", (int)urg_handled);
	unblock(&s);
	sigaction(SIGURG, &old, NULL);
}
CASE(timer_create_ok) { struct sigevent ev = {.sigev_notify = SIGEV_NONE}; INT(timer_create(CLOCK_MONOTONIC, &ev, &tmr)); }
CASE(timer_create_einval) { struct sigevent ev = {.sigev_notify = SIGEV_NONE}; timer_t t; INT(timer_create((clockid_t)1000, &ev, &t)); }
CASE(timer_settime_ok) { INT(timer_settime(tmr, 0, &second, NULL)); }
CASE(timer_settime_einval) { struct itimerspec bad = {.it_value = {0, -1}}; INT(timer_settime(tmr, 0, &bad, NULL)); }
CASE(timer_gettime_ok) { struct itimerspec cur; INT(timer_gettime(tmr, &cur)); note(r, "%ld", (long)cur.it_interval.tv_sec); }
CASE(timer_getoverrun_ok) { INT(timer_getoverrun(tmr)); }
CASE(timer_delete_ok) { INT(timer_delete(tmr)); }
CASE(timer_delete_einval) { INT(timer_delete((timer_t)(intptr_t)123456)); } /* no such timer */
/* clang-format on */

#define CHILD(id)    ENTRY(id, .local = 1, .prep = prep_child, .post = post_child)
#define LOCAL(id)    ENTRY(id, .local = 1)
#define LFAIL(id, e) ENTRY(id, .local = 1, .fail = 1, .err = e)
#define LCODE(id, e) ENTRY(id, .local = 1, .fail = 1, .code = e)
#define SYNC(id)     ENTRY(id, .local = 1, .prep = prep_sync, .post = post_sync)

/* exec runs on the calling thread: local. */
const struct fcase more_process_cases[] = {
	LFAIL(execve_enoent, ENOENT),
	LFAIL(execv_eacces, EACCES),
	LFAIL(execvp_enoent, ENOENT),
	LFAIL(execvpe_enoent, ENOENT),
	LFAIL(fexecve_ebadf, EBADF),
	LFAIL(execl_enoent, ENOENT),
	LFAIL(execlp_enoent, ENOENT),
	LFAIL(execle_eacces, EACCES),
	OK(getrlimit_ok),
	FAIL(getrlimit_einval, EINVAL),
	OK(getrlimit64_ok),
	OK(setrlimit_ok),
	FAIL(setrlimit_einval, EINVAL),
	OK(setrlimit64_ok),
	LOCAL(kill_ok),
	LFAIL(kill_esrch, ESRCH),
	CHILD(wait_ok),
	CHILD(waitpid_ok),
	LFAIL(waitpid_echild, ECHILD),
	CHILD(waitid_ok),
	CHILD(wait3_ok),
	CHILD(wait4_ok),
};
const size_t more_process_count = sizeof(more_process_cases) / sizeof(more_process_cases[0]);

const struct fcase more_rtsafe_cases[] = {
	LOCAL(clock_nanosleep_ok),
	LCODE(clock_nanosleep_einval, EINVAL),
	LOCAL(nanosleep_ok),
	LFAIL(nanosleep_einval, EINVAL),
	LOCAL(usleep_ok),
	LOCAL(sleep_ok),
	LOCAL(sched_yield_ok),
	LOCAL(poll_ok),
	LFAIL(ppoll_einval, EINVAL),
	LOCAL(ppoll_ok),
	LOCAL(select_ok),
	LFAIL(select_einval, EINVAL),
	LOCAL(pselect_ok),
	ENTRY(epoll_wait_ok, .local = 1, .prep = prep_epoll_pipe),
	LFAIL(epoll_wait_ebadf, EBADF),
	ENTRY(epoll_pwait_ok, .local = 1, .prep = prep_epoll_pipe),
	ENTRY(epoll_pwait2_ok, .local = 1, .prep = prep_epoll_pipe),
	LOCAL(pthread_mutex_lock_ok),
	LOCAL(pthread_mutex_trylock_ok),
	LOCAL(pthread_mutex_timedlock_ok),
#ifndef __SANITIZE_THREAD__ /* GCC 12's TSan: no interceptor for the locks' clock variants */
	LOCAL(pthread_mutex_clocklock_ok),
#endif
	LOCAL(pthread_mutex_unlock_ok),
	LCODE(pthread_mutex_trylock_ebusy, EBUSY),
	ENTRY(pthread_cond_wait_ok, .local = 1, .prep = prep_signaller, .post = post_join),
	LCODE(pthread_cond_timedwait_etimedout, ETIMEDOUT),
	LCODE(pthread_cond_clockwait_etimedout, ETIMEDOUT),
	LOCAL(pthread_cond_signal_ok),
	LOCAL(pthread_cond_broadcast_ok),
	LOCAL(pthread_rwlock_rdlock_ok),
	LOCAL(pthread_rwlock_wrlock_ok),
	LOCAL(pthread_rwlock_tryrdlock_ok),
	LOCAL(pthread_rwlock_trywrlock_ok),
	LOCAL(pthread_rwlock_timedrdlock_ok),
	LOCAL(pthread_rwlock_timedwrlock_ok),
#ifndef __SANITIZE_THREAD__
	LOCAL(pthread_rwlock_clockrdlock_ok),
	LOCAL(pthread_rwlock_clockwrlock_ok),
#endif
	LOCAL(pthread_rwlock_unlock_ok),
	SYNC(pthread_barrier_wait_serial),
	SYNC(pthread_spin_lock_ok),
	SYNC(pthread_spin_trylock_ok),
	SYNC(pthread_spin_unlock_ok),
	ENTRY(pthread_join_ok, .local = 1, .prep = prep_seven),
#ifndef __SANITIZE_THREAD__ /* TSan's join of the joining thread itself spoils its thread table */
	LCODE(pthread_join_edeadlk, EDEADLK),
#endif
	SYNC(sem_wait_ok),
	SYNC(sem_timedwait_ok),
	SYNC(sem_clockwait_ok),
	ENTRY(sem_trywait_eagain, .local = 1, .fail = 1, .err = EAGAIN, .prep = prep_sync,
	      .post = post_sync),
	SYNC(sem_post_ok),
	LFAIL(sigtimedwait_eagain, EAGAIN),
	LFAIL(sigtimedwait_einval, EINVAL),
	LOCAL(sigwait_ok),
	LOCAL(sigwaitinfo_ok),
	LFAIL(sigsuspend_eintr, EINTR),
	ENTRY(timer_create_ok, .local = 1, .post = post_timer),
	LFAIL(timer_create_einval, EINVAL),
	ENTRY(timer_settime_ok, .local = 1, .prep = prep_timer, .post = post_timer),
	ENTRY(timer_settime_einval, .local = 1, .fail = 1, .err = EINVAL, .prep = prep_timer,
	      .post = post_timer),
	ENTRY(timer_gettime_ok, .local = 1, .prep = prep_timer, .post = post_timer),
	ENTRY(timer_getoverrun_ok, .local = 1, .prep = prep_timer, .post = post_timer),
	ENTRY(timer_delete_ok, .local = 1, .prep = prep_timer),
	LFAIL(timer_delete_einval, EINVAL),
};
const size_t more_rtsafe_count = sizeof(more_rtsafe_cases) / sizeof(more_rtsafe_cases[0]);
