/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Strict means no offloading at all: not even the request that learns what
 * a descriptor is.
 *
 *   strict_fd HOW DIR
 *     Run with workers=1:spin_ns=0 and fd_local without pipe.  The only
 *     helper is held first: a non-strict marked thread opens a FIFO for
 *     reading, and the helper blocks in that open until the main thread
 *     opens the other end at the very end.  Any request enqueued meanwhile
 *     is never served, and with spin_ns=0 its caller sleeps in FUTEX_WAIT
 *     at once.
 *
 *     A thread named "strict" is made strict (HOW=api: the API before its
 *     mark; after: the API after its mark; option: mode=strict) and
 *     marked.  The main thread then opens more descriptors (born after
 *     the mark), one of them behind the library's back (raw openat).
 *     The strict thread installs a seccomp filter on itself that kills the
 *     process when it waits on a futex, and writes to each descriptor: an
 *     enqueued request (and so the wait for it) would kill the process.
 *     Prints one word per call, the return value and errno:
 *       sock=R/E null=R/E disk=R/E null2=R/E disk2=R/E raw=R/E fsync=R/E
 *     sock: a socketpair made before the mark; null, disk: /dev/null and a
 *     file of DIR opened before it; null2, disk2: the same opened after
 *     it; raw: /dev/null opened by raw syscall after it; fsync: of disk.
 */
#include "child.h"

#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/futex.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "raw_seccomp.h"

/*
 * Kill the process when this thread waits on a futex; everything else is
 * allowed.  A request the thread enqueued could never be served (the only
 * helper is held) and, with spin_ns=0, its caller goes straight to
 * FUTEX_WAIT.  Wakes are allowed: the report of a refused call (a
 * diagnostic path, which makes system calls the first time: libunwind's
 * pthread_once wakes its waiters) may make one.
 */
static int forbid_futex_wait(void)
{
	struct sock_filter insn[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_futex, 0, 5),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1])),
		BPF_STMT(BPF_ALU | BPF_AND | BPF_K, FUTEX_CMD_MASK),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, FUTEX_WAKE, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, FUTEX_WAKE_BITSET, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {.len = sizeof(insn) / sizeof(insn[0]), .filter = insn};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return -1;
	return (int)raw_seccomp_filter(&prog); /* unseen by the library: a witness */
}

struct holder {
	char fifo[PATH_MAX];
	int fd;
};

/* Non-strict, marked: its open of the FIFO runs on the only helper and blocks there. */
static void hold(void *arg)
{
	struct holder *h = arg;

	rt_offload_set_thread_mode(RT_OFFLOAD_MODE_OFFLOAD);
	if (rt_offload_mark_thread() != 0)
		fail("mark the holder");
	h->fd = open(h->fifo, O_RDONLY | O_CLOEXEC);
	rt_offload_unmark_thread();
	if (h->fd >= 0)
		close(h->fd);
}

struct call {
	const char *name;
	int fd;
	int fsync;
	long ret;
	int err;
};

enum { SOCK, NUL, DISK, NUL2, DISK2, RAW, FSYNC, NCALLS };

struct strict {
	const char *how;
	pthread_barrier_t born, go;
	int done[2];
	struct call calls[NCALLS];
};

static void strict_thread(void *arg)
{
	struct strict *s = arg;

	if (!strcmp(s->how, "api"))
		rt_offload_set_thread_mode(RT_OFFLOAD_MODE_STRICT);
	if (rt_offload_mark_thread() != 0)
		fail("mark");
	if (!strcmp(s->how, "after"))
		rt_offload_set_thread_mode(RT_OFFLOAD_MODE_STRICT);
	pthread_barrier_wait(&s->born); /* the main thread makes descriptors now */
	pthread_barrier_wait(&s->go);
	if (forbid_futex_wait() != 0)
		fail("seccomp");
	for (int i = 0; i < NCALLS; i++) {
		struct call *c = &s->calls[i];
		errno = 0;
		c->ret = c->fsync ? fsync(c->fd) : write(c->fd, "x", 1);
		c->err = errno;
	}
	rt_offload_unmark_thread();
	if (write(s->done[1], "d", 1) != 1)
		_exit(CHILD_SETUP_FAILED);
	for (;;)
		pause(); /* exiting could make a futex call: the process ends around us */
}

static int open_or_fail(const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC, 0644);
	if (fd < 0)
		fail("open %s", path);
	return fd;
}

int sc_strict_fd(int argc, char **argv)
{
	static struct strict s;
	static struct holder h;
	char disk[PATH_MAX], disk2[PATH_MAX];
	int sv[2];
	char c;

	if (argc < 2)
		fail("usage: strict_fd HOW DIR");
	s.how = argv[0];
	path_join(h.fifo, argv[1], "hold.fifo");
	path_join(disk, argv[1], "strict.disk");
	path_join(disk2, argv[1], "strict.disk2");
	if (mkfifo(h.fifo, 0600) != 0 || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0 ||
	    pipe2(s.done, O_CLOEXEC) != 0)
		fail("setup");
	s.calls[SOCK] = (struct call){.name = "sock", .fd = sv[0]};
	s.calls[NUL] = (struct call){.name = "null", .fd = open_or_fail("/dev/null", O_WRONLY)};
	s.calls[DISK] = (struct call){.name = "disk", .fd = open_or_fail(disk, O_WRONLY | O_CREAT)};
	s.calls[FSYNC] = (struct call){.name = "fsync", .fd = s.calls[DISK].fd, .fsync = 1};

	struct thread holder = {.name = "holder", .fn = hold, .arg = &h};
	thread_start(&holder);
	wait_helper_in_syscall(SYS_openat);

	pthread_barrier_init(&s.born, NULL, 2);
	pthread_barrier_init(&s.go, NULL, 2);
	struct thread st = {.name = "strict", .fn = strict_thread, .arg = &s};
	thread_start(&st);
	pthread_barrier_wait(&s.born);
	s.calls[NUL2] = (struct call){.name = "null2", .fd = open_or_fail("/dev/null", O_WRONLY)};
	s.calls[DISK2] =
		(struct call){.name = "disk2", .fd = open_or_fail(disk2, O_WRONLY | O_CREAT)};
	s.calls[RAW] = (struct call){
		.name = "raw",
		.fd = (int)syscall(SYS_openat, AT_FDCWD, "/dev/null", O_WRONLY | O_CLOEXEC)};
	if (s.calls[RAW].fd < 0)
		fail("raw openat");
	pthread_barrier_wait(&s.go);
	if (read(s.done[0], &c, 1) != 1)
		fail("read done");

	char line[512] = "";
	for (int i = 0; i < NCALLS; i++) {
		size_t n = strlen(line);
		snprintf(line + n, sizeof(line) - n, "%s%s=%ld/%d", i ? " " : "", s.calls[i].name,
			 s.calls[i].ret, s.calls[i].err);
	}
	say("%s", line);

	int w = open_or_fail(h.fifo, O_WRONLY); /* releases the helper */
	close(w);
	thread_join(&holder);
	return 0; /* the strict thread still waits in pause() */
}
