/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rto_child: scenario dispatch and the helpers the scenarios share. */
#include "child.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "raw_seccomp.h"

static const struct scenario scenarios[] = {
	{"op", sc_op},
	{"sigdebug", sc_sigdebug},
	{"sites", sc_sites},
	{"fdkind", sc_fdkind},
	{"fdreuse", sc_fdreuse},
	{"lines", sc_lines},
	{"barrier", sc_barrier},
	{"exit_drain", sc_exit_drain},
	{"fork_queue", sc_fork_queue},
	{"lock_release", sc_lock_release},
	{"async_error", sc_async_error},
	{"async_calls", sc_async_calls},
	{"async_unqueued", sc_async_unqueued},
	{"async_mixed", sc_async_mixed},
	{"async_handler", sc_async_handler},
	{"async_crossed", sc_async_crossed},
	{"async_exec", sc_async_exec},
	{"async_first", sc_async_first},
	{"async_spawn", sc_async_spawn},
	{"async_readback", sc_async_readback},
	{"async_fd_readback", sc_async_fd_readback},
	{"async_kernel_file", sc_async_kernel_file},
	{"async_trapped", sc_async_trapped},
	{"async_unlocked", sc_async_unlocked},
	{"async_fpurge", sc_async_fpurge},
	{"async_exit", sc_async_exit},
	{"vmlck", sc_vmlck},
	{"faults", sc_faults},
	{"stack_faults", sc_stack_faults},
	{"fault_read", sc_fault_read},
	{"async_path", sc_async_path},
	{"thread_rows", sc_thread_rows},
	{"overflow", sc_overflow},
	{"remote_rows", sc_remote_rows},
	{"strict_fd", sc_strict_fd},
};

int main(int argc, char **argv)
{
	if (argc < 2)
		fail("usage: rto_child SCENARIO [ARGS...]");
	for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
		if (strcmp(argv[1], scenarios[i].name) == 0)
			return scenarios[i].run(argc - 2, argv + 2);
	fail("unknown scenario '%s'", argv[1]);
}

/* ---- output ------------------------------------------------------------------ */

/*
 * dprintf is not one of the wrapped calls, and the main thread is never
 * marked: these lines reach the test whatever the policy under test does
 * to stdio (async, strict...).
 */
void say(const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	dprintf(1, "%s\n", line);
}

_Noreturn void fail(const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	dprintf(2, "rto_child: %s (errno %d)\n", line, errno);
	_exit(CHILD_SETUP_FAILED);
}

void path_join(char *out, const char *dir, const char *name)
{
	if (snprintf(out, PATH_MAX, "%s/%s", dir, name) >= PATH_MAX)
		fail("path too long: %s/%s", dir, name);
}

/* ---- threads ------------------------------------------------------------------- */

static void *thread_main(void *p)
{
	struct thread *t = p;

	/* The name before the mark: reports name the thread as the program set it. */
	pthread_setname_np(pthread_self(), t->name);
	if (t->mark && rt_offload_mark_thread() != 0)
		fail("rt_offload_mark_thread");
	t->fn(t->arg);
	if (t->mark)
		rt_offload_unmark_thread();
	return NULL;
}

void thread_start(struct thread *t)
{
	pthread_attr_t attr;
	pthread_t th;

	pthread_attr_init(&attr);
	if (t->stack && pthread_attr_setstack(&attr, t->stack, t->stack_size) != 0)
		fail("pthread_attr_setstack");
	int err = pthread_create(&th, &attr, thread_main, t);
	pthread_attr_destroy(&attr);
	if (err) {
		errno = err;
		fail("pthread_create");
	}
	t->handle = th;
}

void thread_join(struct thread *t)
{
	pthread_join(t->handle, NULL);
}

void on_thread(const char *name, int mark, thread_fn fn, void *arg)
{
	struct thread t = {.name = name, .mark = mark, .fn = fn, .arg = arg};

	thread_start(&t);
	thread_join(&t);
}

/* ---- a seccomp filter on one thread ------------------------------------------ */

#if defined(__x86_64__)
#define FILTER_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define FILTER_ARCH AUDIT_ARCH_AARCH64
#else
#error "rto_child: seccomp filter for this architecture"
#endif

/*
 * Without SECCOMP_FILTER_FLAG_TSYNC the filter binds the calling thread
 * only: the helpers, started before, keep making the syscall freely.
 */

int filter_syscalls(const long *nrs, int err)
{
	struct sock_filter insn[64];
	unsigned n = 0;

	insn[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
						 offsetof(struct seccomp_data, arch));
	insn[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, FILTER_ARCH, 1, 0);
	insn[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	insn[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
						 offsetof(struct seccomp_data, nr));
	for (; *nrs >= 0 && n < 60; nrs++) {
		insn[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)*nrs,
							 0, 1);
		insn[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
							 SECCOMP_RET_ERRNO | (uint32_t)err);
	}
	insn[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	struct sock_fprog prog = {.len = (unsigned short)n, .filter = insn};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return -1;
	/*
	 * A raw syscall, not glibc's syscall(): the library honours a filter a
	 * thread installs for itself by running that thread's calls locally
	 * (libsrc/wrap/wrap_syscall.c).  This filter is a witness of where the calls run,
	 * so it is installed where the library cannot see it.
	 */
	return (int)raw_seccomp_filter(&prog);
}

/* ---- small things ------------------------------------------------------------- */

struct rt_offload_stats stats_now(void)
{
	struct rt_offload_stats s;

	if (rt_offload_get_stats(&s) != 0)
		fail("rt_offload_get_stats");
	return s;
}

pid_t tid_now(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static int task_comm_is_helper(const char *tid)
{
	char path[PATH_MAX], comm[32] = "";

	snprintf(path, sizeof(path), "/proc/self/task/%s/comm", tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, comm, sizeof(comm) - 1);
	close(fd);
	return n > 0 && strncmp(comm, "rtoffload/", 10) == 0;
}

static long task_syscall_nr(const char *tid)
{
	char path[PATH_MAX], text[64] = "";

	snprintf(path, sizeof(path), "/proc/self/task/%s/syscall", tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, text, sizeof(text) - 1);
	close(fd);
	return n > 0 && text[0] >= '0' && text[0] <= '9' ? strtol(text, NULL, 10) : -1;
}

/* Polls /proc for a state (not a time); gives up after 20 s so a bug fails, not hangs. */
pid_t wait_helper_in_syscall(long nr)
{
	for (int tries = 0; tries < 20000; tries++) {
		DIR *d = opendir("/proc/self/task");
		struct dirent *e;
		pid_t found = 0;
		while (d && (e = readdir(d)) && !found)
			if (e->d_name[0] != '.' && task_comm_is_helper(e->d_name) &&
			    task_syscall_nr(e->d_name) == nr)
				found = (pid_t)atoi(e->d_name);
		if (d)
			closedir(d);
		if (found)
			return found;
		usleep(1000);
	}
	fail("no helper blocked in syscall %ld", nr);
}

long file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

char *read_whole(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	ssize_t r;

	if (fd < 0 || !buf) {
		if (fd >= 0)
			close(fd);
		free(buf);
		return NULL;
	}
	for (;;) {
		if (cap - n < 2 && !(buf = realloc(buf, cap *= 2)))
			fail("realloc");
		if ((r = read(fd, buf + n, cap - n - 1)) <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}
