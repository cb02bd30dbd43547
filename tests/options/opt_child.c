/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The child of test_fallback.c, linked to the library and run with
 * mark=main: its main thread is marked from the constructor, so the
 * helpers start on its first offloaded call.  A seccomp filter makes
 * thread creation (clone3, and clone with CLONE_THREAD) fail with EAGAIN:
 * its calls go to a supervisor process (SECCOMP_RET_USER_NOTIF) that
 * answers EAGAIN and counts them -- the witness that no later call tries
 * again.  The filter is TSYNC, as one covering the helpers would be, so
 * the library does not take it for the thread's own (wrap_syscall.c).
 *
 *   opt_child fallback DIR   an open and 50 writes of DIR/f, offload mode
 *   opt_child strict DIR     the same in strict mode
 *
 * It prints key=value words on stdout (after unmarking itself).  Its own
 * pipes to the supervisor use raw system calls: no wrapped call but those
 * counted.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rtoffload.h"

#define WRITES 50

#ifndef SECCOMP_FILTER_FLAG_TSYNC_ESRCH
#define SECCOMP_FILTER_FLAG_TSYNC_ESRCH (1UL << 4)
#endif

static int req[2], ans[2];

static int install_filter(void)
{
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 4, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 0, 2),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
	};
	struct sock_fprog prog = {sizeof(code) / sizeof(code[0]), code};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
			    SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_TSYNC |
				    SECCOMP_FILTER_FLAG_TSYNC_ESRCH,
			    &prog);
}

/* Answers every notified clone with EAGAIN; a byte on req asks for the count. */
static _Noreturn void supervise(int listener)
{
	struct seccomp_notif n;
	struct seccomp_notif_resp r;
	struct pollfd {
		int fd;
		short events, revents;
	} fds[2] = {{listener, 1, 0}, {req[0], 1, 0}};
	int count = 0;
	char c;

	for (;;) {
		if (syscall(SYS_poll, fds, 2, -1) < 0)
			continue;
		if (fds[0].revents) {
			memset(&n, 0, sizeof(n));
			if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &n) == 0) {
				memset(&r, 0, sizeof(r));
				r.id = n.id;
				r.error = -EAGAIN;
				count++;
				ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &r);
			}
		}
		if (fds[1].revents) {
			if (syscall(SYS_read, req[0], &c, 1) != 1)
				_exit(0);
			syscall(SYS_write, ans[1], &count, sizeof(count));
		}
	}
}

static int clones(void)
{
	int count = -1;

	syscall(SYS_write, req[1], "?", 1);
	syscall(SYS_read, ans[0], &count, sizeof(count));
	return count;
}

/*
 * The supervisor is forked before the filter exists and gets the listener
 * over a socket: a runtime that starts a thread of its own in a forked
 * child (ThreadSanitizer does) must not be caught by the filter it would
 * otherwise inherit, waiting for an answer from itself.
 */
static int start_supervisor(void)
{
	int sv[2], listener = -1;
	char byte = 0;
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = {&byte, 1};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};

	if (syscall(SYS_pipe2, req, O_CLOEXEC) || syscall(SYS_pipe2, ans, O_CLOEXEC) ||
	    syscall(SYS_socketpair, AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return -1;
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		syscall(SYS_close, req[1]); /* so that the parent's exit is an EOF */
		syscall(SYS_close, sv[0]);
		memset(&ctl, 0, sizeof(ctl));
		msg.msg_control = ctl.buf;
		msg.msg_controllen = sizeof(ctl.buf);
		if (syscall(SYS_recvmsg, sv[1], &msg, 0) != 1)
			_exit(1);
		struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
		if (!c || c->cmsg_type != SCM_RIGHTS)
			_exit(1);
		memcpy(&listener, CMSG_DATA(c), sizeof(int));
		supervise(listener);
	}
	syscall(SYS_close, sv[1]);
	listener = install_filter();
	if (listener < 0)
		return -1;
	memset(&ctl, 0, sizeof(ctl));
	msg.msg_control = ctl.buf;
	msg.msg_controllen = sizeof(ctl.buf);
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &listener, sizeof(int));
	long sent = syscall(SYS_sendmsg, sv[0], &msg, 0);
	syscall(SYS_close, listener);
	syscall(SYS_close, sv[0]);
	return sent == 1 ? 0 : -1;
}

int main(int argc, char **argv)
{
	char path[4096];
	struct rt_offload_stats a, b;
	int strict = argc == 3 && !strcmp(argv[1], "strict");
	int failed = 0, eperm = 0;

	if (argc != 3 || (!strict && strcmp(argv[1], "fallback")) || !rt_offload_thread_is_marked())
		return 2;
	snprintf(path, sizeof(path), "%s/f", argv[2]);
	if (start_supervisor() != 0)
		return 3;
	if (strict)
		rt_offload_set_thread_mode(RT_OFFLOAD_MODE_STRICT);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600); /* the helpers' start */
	int after_first = clones();
	rt_offload_get_stats(&a);
	for (int i = 0; i < WRITES; i++) {
		ssize_t n = write(fd, "x", 1);
		failed += n != 1;
		eperm += n < 0 && errno == EPERM;
	}
	int after_loop = clones();
	/* A mark after a failed start: no new try (strict: it would be the first). */
	int mark = strict ? 0 : rt_offload_mark_thread();
	int mark_errno = errno;
	rt_offload_get_stats(&b);
	rt_offload_unmark_thread();
	if (fd >= 0)
		close(fd);
	int after_mark = clones();
	printf("open=%d clones_first=%d clones_loop=%d clones_after=%d failed=%d eperm=%d mark=%d "
	       "mark_errno=%d "
	       "fallback=%lu offloaded=%lu local=%lu denied=%lu\n",
	       fd >= 0, after_first, after_loop, after_mark, failed, eperm, mark, mark_errno,
	       (unsigned long)(b.fallback - a.fallback), (unsigned long)(b.offloaded - a.offloaded),
	       (unsigned long)(b.local - a.local), (unsigned long)(b.denied - a.denied));
	syscall(SYS_close, req[1]); /* the supervisor's end */
	wait(NULL);
	return 0;
}
