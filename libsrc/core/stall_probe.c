/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A late call is a stall of the library only when the library holds it
 * up.  A worker that sleeps in a read of a pipe nobody writes, in the
 * open of a FIFO nobody opens for writing, in accept() or poll(), waits
 * for input exactly as the calling thread would have waited without the
 * library: that is the program's own wait, and a line about it on the
 * program's stderr would change what the program and its own tests see
 * (a shell's `read` from a terminal, `cat` of a FIFO).  stall.c counts
 * such calls and shows them in the live view, and says nothing.
 *
 * What the kernel says of the worker decides, from /proc:
 *   - its state: S, an interruptible sleep.  R (runnable: running, or
 *     waiting for its CPU held by another task) and D (an uninterruptible
 *     sleep: a hung disk or network filesystem) are the library's
 *     business, and so is a sleep in anything but the calls below (a lock);
 *   - its system call (/proc/.../syscall: number and arguments): one that
 *     waits on a peer whatever its descriptor is (accept, connect, poll,
 *     select, epoll_wait, wait4, msgrcv, a signal wait, a sleep the call
 *     asked for), or a read, write, send or receive whose descriptor is a
 *     pipe, a socket, a character device (a tty, a serial port) or an
 *     anonymous inode (eventfd, signalfd, timerfd, inotify), or an open
 *     of a FIFO or a character device.
 *
 * The look runs on a thread of its own (rtoffload-probe), started at the
 * first question, with a descriptor table of its own and no descriptor of
 * the program's in it: /proc files must be opened, and a program may rely
 * on open() and dup() giving the lowest free number (stall.c's scanner
 * tells the story).  The descriptor in question is looked at through
 * /proc/<pid>/task/<tid>/fd/N, the worker's own table; a path through the
 * worker's cwd or its directory descriptor there.  A stat of a hung
 * filesystem's file may itself hang: the watchdog waits ns at most, then
 * takes the call for held up (said, as before this probe), and asks no
 * more questions until the probe thread answers.
 */
#include "resolve.h"
#include "transport.h"
#include "futex.h"
#include "own_thread.h"
#include "lifetime.h"
#include "procfs.h"
#include "real.h"
#include "stall_probe.h"
#include "helgrind_annot.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#define PROBE_STACK (128 * 1024)

enum { OTHER, WAITS, BY_FD, OPEN_PATH, OPENAT_PATH, FCNTL_LOCK };

/* How a system call of a worker asleep in it is judged. */
static int kind_of_call(long nr)
{
	switch (nr) {
	/* A peer, a child, a signal, a timer the call asked for: whatever the descriptor. */
	case SYS_accept:
	case SYS_accept4:
	case SYS_connect:
	case SYS_ppoll:
	case SYS_pselect6:
	case SYS_epoll_pwait:
#ifdef SYS_poll
	case SYS_poll:
#endif
#ifdef SYS_select
	case SYS_select:
#endif
#ifdef SYS_epoll_wait
	case SYS_epoll_wait:
#endif
#ifdef SYS_epoll_pwait2
	case SYS_epoll_pwait2:
#endif
#ifdef SYS_pause
	case SYS_pause:
#endif
	case SYS_wait4:
	case SYS_waitid:
	case SYS_msgrcv:
	case SYS_msgsnd:
	case SYS_semop:
	case SYS_semtimedop:
	case SYS_mq_timedreceive:
	case SYS_mq_timedsend:
	case SYS_rt_sigtimedwait:
	case SYS_rt_sigsuspend:
	case SYS_nanosleep:
	case SYS_clock_nanosleep:
	case SYS_flock: /* another process holds the lock */
		return WAITS;
	case SYS_fcntl:
		return FCNTL_LOCK;
	/* The descriptor (the first argument) decides. */
	case SYS_read:
	case SYS_readv:
	case SYS_pread64:
	case SYS_preadv:
	case SYS_preadv2:
	case SYS_write:
	case SYS_writev:
	case SYS_recvfrom:
	case SYS_recvmsg:
	case SYS_recvmmsg:
	case SYS_sendto:
	case SYS_sendmsg:
	case SYS_sendmmsg:
	case SYS_ioctl: /* tcdrain() on a tty */
	case SYS_splice:
	case SYS_tee:
		return BY_FD;
#ifdef SYS_open
	case SYS_open:
#endif
#ifdef SYS_creat
	case SYS_creat:
#endif
		return OPEN_PATH;
	case SYS_openat:
#ifdef SYS_openat2
	case SYS_openat2:
#endif
		return OPENAT_PATH;
	default:
		return OTHER;
	}
}

/* A FIFO, a socket, a character device, an anonymous inode: its wait is for a peer. */
static int stream_mode(unsigned mode)
{
	mode &= S_IFMT;
	return mode == S_IFIFO || mode == S_IFSOCK || mode == S_IFCHR || mode == 0;
}

static int stream_path(const char *path)
{
	struct statx st;

	if (rto_syscall(SYS_statx, AT_FDCWD, path, AT_STATX_DONT_SYNC, STATX_TYPE, &st) != 0 ||
	    !(st.stx_mask & STATX_TYPE))
		return 0;
	return stream_mode(st.stx_mode);
}

static int stream_fd(pid_t pid, pid_t tid, long fd)
{
	char path[96], link[64];

	snprintf(path, sizeof(path), "/proc/%d/task/%d/fd/%ld", (int)pid, (int)tid, fd);
	long n = rto_syscall(SYS_readlinkat, AT_FDCWD, path, link, sizeof(link) - 1);
	if (n <= 0)
		return 0;
	link[n] = '\0';
	/* pipe:[N], socket:[N], anon_inode:[eventfd]: no file to stat. */
	if (!strncmp(link, "pipe:", 5) || !strncmp(link, "socket:", 7) ||
	    !strncmp(link, "anon_inode:", 11))
		return 1;
	return stream_path(path); /* a FIFO, a tty: the magic link leads to it */
}

/*
 * The path a worker's open names, read from its (our) memory with
 * process_vm_readv: a bad pointer is an error there, not a fault.  dirfd
 * as openat's, AT_FDCWD the worker's working directory.
 */
static int stream_open(pid_t pid, pid_t tid, long dirfd, unsigned long user_path)
{
	char name[512], path[640];
	struct iovec local = {name, sizeof(name) - 1},
		     remote = {(void *)user_path, sizeof(name) - 1};

	/* One page at most past the pointer may be unmapped: read up to it first. */
	unsigned long to_page = 4096 - (user_path & 4095);
	if (remote.iov_len > to_page)
		remote.iov_len = local.iov_len = to_page;
	long n = rto_syscall(SYS_process_vm_readv, (long)pid, &local, 1UL, &remote, 1UL, 0UL);
	if (n <= 0)
		return 0;
	name[n] = '\0';
	if (strlen(name) == (size_t)n && n == (long)to_page) { /* it goes on on the next page */
		local.iov_base = name + n;
		local.iov_len = remote.iov_len = sizeof(name) - 1 - (size_t)n;
		remote.iov_base = (void *)(user_path + (unsigned long)n);
		long more = rto_syscall(SYS_process_vm_readv, (long)pid, &local, 1UL, &remote, 1UL,
					0UL);
		n += more > 0 ? more : 0;
		name[n] = '\0';
	}
	if (!name[0] || strlen(name) >= sizeof(name) - 1)
		return 0;
	if (name[0] == '/')
		snprintf(path, sizeof(path), "%s", name);
	else if (dirfd == AT_FDCWD)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/cwd/%s", (int)pid, (int)tid, name);
	else
		snprintf(path, sizeof(path), "/proc/%d/task/%d/fd/%ld/%s", (int)pid, (int)tid,
			 dirfd, name);
	return stream_path(path);
}

static char state_of(pid_t pid, pid_t tid)
{
	char line[1024];
	const char *state;

	if (rto_procfs_task(pid, tid, "stat", line, sizeof(line)) <= 0 ||
	    !(state = rto_procfs_stat_field(line, 3)))
		return '?';
	return *state;
}

char rto_stall_task_state(pid_t tid)
{
	return state_of(getpid(), tid);
}

/*
 * Runnable but not running: R in its stat, and its syscall file does not
 * say "running" (the kernel writes that for a task on a CPU right now).
 * Returns the CPU it waits for, or -1.
 */
static int starved(pid_t pid, pid_t tid)
{
	char line[1024], sys[64];
	const char *state, *cpu;

	if (rto_procfs_task(pid, tid, "stat", line, sizeof(line)) <= 0 ||
	    !(state = rto_procfs_stat_field(line, 3)) || *state != 'R')
		return -1;
	if (rto_procfs_task(pid, tid, "syscall", sys, sizeof(sys)) <= 0 ||
	    !strncmp(sys, "running", 7))
		return -1;
	cpu = rto_procfs_stat_field(line, 39); /* processor */
	return cpu ? atoi(cpu) : -1;
}

static int waits(pid_t pid, pid_t tid)
{
	char line[256];
	unsigned long a[6];
	char *p, *end;

	if (state_of(pid, tid) != 'S')
		return 0;
	/* "nr a0 ... a5 sp pc" in hex after the decimal number; "running", or -1: not in one. */
	if (rto_procfs_task(pid, tid, "syscall", line, sizeof(line)) <= 0)
		return 0;
	long nr = strtol(line, &end, 10);
	if (end == line || nr < 0)
		return 0;
	for (int i = 0; i < 6; i++) {
		p = end;
		a[i] = strtoul(p, &end, 16);
		if (end == p)
			return 0;
	}
	int yes;
	switch (kind_of_call(nr)) {
	case WAITS:
		yes = 1;
		break;
	case FCNTL_LOCK:
		yes = a[1] == F_SETLKW || a[1] == F_OFD_SETLKW;
		break;
	case BY_FD:
		yes = stream_fd(pid, tid, (long)a[0]);
		break;
	case OPEN_PATH:
		yes = stream_open(pid, tid, AT_FDCWD, a[0]);
		break;
	case OPENAT_PATH:
		yes = stream_open(pid, tid, (long)(int)a[0], a[1]);
		break;
	default:
		yes = 0;
	}
	/* Still asleep: not woken meanwhile, and now in its next call. */
	return yes && state_of(pid, tid) == 'S';
}

/* ---- the probe thread -------------------------------------------------------------- */

/* One question at a time: the watchdog asks, the probe thread answers. */
static struct {
	uint32_t asked; /* futex: bumped with each question */
	uint32_t told;	/* futex: = asked once answered */
	int32_t tid;
	int32_t what; /* WAITS or STARVED */
	int32_t answer;
} box;

enum { Q_WAITS, Q_STARVED };
static int started; /* the watchdog's: 1 started, -1 could not be */

static void *probe_main(void *arg)
{
	uint32_t seen = 0;

	(void)arg;
	/* A table of our own with nothing of the program's in it. */
	if (rto_syscall(SYS_unshare, CLONE_FILES) != 0 ||
	    rto_syscall(SYS_close_range, 0U, ~0U, 0U) != 0) {
		__atomic_store_n(&box.told, UINT32_MAX, __ATOMIC_RELEASE); /* never ask again */
		rto_futex_wake(&box.told, 1);
		rto_lifetime_helper_exiting(); /* start() counted it out */
		return NULL;
	}
	for (;;) {
		uint32_t ask = __atomic_load_n(&box.asked, __ATOMIC_ACQUIRE);
		if (CMM_LOAD_SHARED(rto_q->leave)) /* stored before asked moved (alone.c) */
			break;
		if (ask == seen) {
			rto_futex_wait(&box.asked, ask);
			continue;
		}
		seen = ask;
		pid_t tid = __atomic_load_n(&box.tid, __ATOMIC_RELAXED);
		int answer = __atomic_load_n(&box.what, __ATOMIC_RELAXED) == Q_WAITS
				     ? waits(getpid(), tid)
				     : starved(getpid(), tid);
		__atomic_store_n(&box.answer, answer, __ATOMIC_RELAXED);
		__atomic_store_n(&box.told, ask, __ATOMIC_RELEASE);
		rto_futex_wake(&box.told, 1);
	}
	rto_lifetime_helper_exiting();
	return NULL;
}

void rto_stall_probe_leave(void)
{
	__atomic_add_fetch(&box.asked, 1, __ATOMIC_SEQ_CST); /* after rto_q->leave */
	rto_futex_wake(&box.asked, 1);
}

static int start(void)
{
	pthread_attr_t attr;
	pthread_t tid;

	/*
	 * The box is handed back and forth by release stores and acquire
	 * loads (and futex words), which helgrind does not see as ordering.
	 */
	RTO_HG_BENIGN_RACE(&box, sizeof(box));
	/* The watchdog's mask (every signal blocked), policy and CPUs: inherited. */
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, PROBE_STACK);
	int err = rto_create_own_thread(&tid, &attr, probe_main, NULL);
	pthread_attr_destroy(&attr);
	if (err)
		return -1;
	rto_lifetime_helper_started(); /* like the watchdog: it keeps no process alive */
	rto_real_pthread_setname_np(tid, "rtoffload-probe");
	return 1;
}

/* The probe thread's answer to question what about tid; fail if none within ns. */
static int ask(int what, pid_t tid, long ns, int fail)
{
	if (!started)
		started = start();
	uint32_t asked = __atomic_load_n(&box.asked, __ATOMIC_RELAXED);
	/* No probe thread, or it still looks at an earlier question (a hung stat). */
	if (started < 0 || __atomic_load_n(&box.told, __ATOMIC_ACQUIRE) != asked)
		return fail;
	__atomic_store_n(&box.tid, tid, __ATOMIC_RELAXED);
	__atomic_store_n(&box.what, what, __ATOMIC_RELAXED);
	__atomic_store_n(&box.asked, asked + 1, __ATOMIC_RELEASE);
	rto_futex_wake(&box.asked, 1);
	uint64_t until = rto_now_ns() + (uint64_t)ns;
	for (;;) {
		uint32_t told = __atomic_load_n(&box.told, __ATOMIC_ACQUIRE);
		if (told == asked + 1)
			return __atomic_load_n(&box.answer, __ATOMIC_RELAXED);
		uint64_t now = rto_now_ns();
		if (now >= until)
			return fail;
		rto_futex_wait_ns(&box.told, told, (long)(until - now));
	}
}

int rto_stall_probe_waits(pid_t tid, long ns)
{
	return ask(Q_WAITS, tid, ns, -1);
}

int rto_stall_probe_starved(pid_t tid, int *cpu, long ns)
{
	*cpu = ask(Q_STARVED, tid, ns, -1);
	return *cpu >= 0;
}

void rto_stall_probe_reset(void)
{
	memset(&box, 0, sizeof(box));
	started = 0;
}
