/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The system calls a marked thread may make itself: the allow-list of the
 * census (tests/census) and, for issue 12, of a Syscall User Dispatch
 * backstop.  Everything else a marked thread reaches the kernel with is a
 * gap in calls.tbl (or a row whose note says why).
 *
 * Two kinds, both realtime-safe: the offload's own wait (futex), and the
 * system calls of calls.tbl's local rows, whose kernel path is short and
 * bounded or a wait for an event the caller would wait for anyway
 * (sleeps, polls, locks, accept, message queues, wait for a child,
 * kill, the short fcntl commands).  Descriptor calls decided by their
 * descriptor (read, write, send... on pipes, sockets, tmpfs) are not
 * here: the census runs with fd_local=none, so they are offloaded, and a
 * backstop must look at the descriptor to allow them.
 */
#ifndef RTO_TEST_RTSAFE_SYSCALLS_H
#define RTO_TEST_RTSAFE_SYSCALLS_H

#include <sys/syscall.h>

/* One call a line, its reason beside it. */
/* clang-format off */
static const long rtsafe_syscalls[] = {
	SYS_futex,	     /* the offload's wait; pthread locks, semaphores */
	SYS_rt_sigreturn,    /* the end of any signal handler */
	SYS_clock_gettime,   /* vDSO where the clock source allows, a syscall otherwise */
	SYS_gettimeofday,    /* likewise */
	SYS_clock_nanosleep, /* rtsafe: clock_nanosleep, nanosleep, usleep, sleep */
	SYS_nanosleep,
	SYS_sched_yield,
	SYS_poll, /* rtsafe: poll, ppoll, select, pselect, epoll_wait, epoll_pwait, epoll_pwait2 */
	SYS_ppoll,
	SYS_select,
	SYS_pselect6,
	SYS_epoll_wait,
	SYS_epoll_pwait,
	SYS_epoll_pwait2,
	SYS_accept, /* net: accept, accept4 */
	SYS_accept4,
	SYS_mq_timedsend, /* desc: mq_send, mq_receive and their timed forms */
	SYS_mq_timedreceive,
	SYS_wait4, /* process: wait, waitpid, wait3, wait4, waitid */
	SYS_waitid,
	SYS_kill,  /* process: kill */
	SYS_fcntl, /* desc: fcntl's short commands (the lock waits are offloaded) */
	SYS_getpid, /* no kernel work at all */
	SYS_gettid,
};
/* clang-format on */

#endif
