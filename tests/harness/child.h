/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rto_child: the option child, which the tests of an option run with
 * RTOFFLOAD_OPTIONS set (async, config, faults, fd, reports, strict).
 *
 * The library reads its options once, in its constructor, so every option
 * combination needs a process of its own.  The tests start this program
 * with the options and a scenario name; the scenario does its work in
 * marked threads and prints what happened as "key=value" words on stdout,
 * one line per fact.  Marked threads never print: they record into memory
 * and the main thread (unmarked, so its calls go straight to libc) prints
 * after joining them.  Exit status 0 means the scenario ran; 99 means its
 * own setup failed (never the library's 78).
 *
 * Built with -O0 -g and noinline call-site functions, so that backtraces in
 * the library's reports name them.
 */
#ifndef RTO_TEST_CHILD_H
#define RTO_TEST_CHILD_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "rtoffload.h"

/* Exit status of a scenario whose own setup failed. */
#define CHILD_SETUP_FAILED 99

/*
 * The errno the per-thread seccomp filter makes a syscall fail with.  Not
 * EPERM, which is also RT_OFFLOAD_STRICT_ERRNO: this errno can only come
 * from the filter, so it proves the syscall was made on the filtered thread.
 */
#define FILTER_ERRNO ENOTRECOVERABLE

typedef int (*scenario_fn)(int argc, char **argv);

struct scenario {
	const char *name;
	scenario_fn run;
};

/* One line on stdout (raw write under the hood: never queued, never lost). */
void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Setup failure: a message on stderr and exit CHILD_SETUP_FAILED. */
_Noreturn void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* snprintf into a PATH_MAX buffer; fail() on truncation. */
void path_join(char *out, const char *dir, const char *name);

typedef void (*thread_fn)(void *arg);

/*
 * Run fn(arg) on a new thread named `name`, marked for exactly the
 * duration of fn when `mark` is set, and join it.  fail() if the thread or
 * the mark cannot be had.
 */
void on_thread(const char *name, int mark, thread_fn fn, void *arg);
/* The same without joining: the caller joins with thread_join(). */
struct thread {
	pthread_t handle;
	const char *name;
	int mark;
	thread_fn fn;
	void *arg;
	void *stack;	   /* mmap'd stack without transparent huge pages, or NULL */
	size_t stack_size; /* with stack: its size */
};
void thread_start(struct thread *t);
void thread_join(struct thread *t);

/* Filter on the calling thread only: each syscall in nrs (-1 ends) fails with err. */
int filter_syscalls(const long *nrs, int err);

/* Exact stats of the process so far (rt_offload_get_stats, which must not fail). */
struct rt_offload_stats stats_now(void);

pid_t tid_now(void);
/* Wait until a helper thread (comm rtoffload/N) is blocked in syscall nr: its tid. */
pid_t wait_helper_in_syscall(long nr);
/* Size of the file at path, or -1. */
long file_size(const char *path);
/* Read the whole file with a descriptor of its own; malloc'd, NUL-terminated, or NULL. */
char *read_whole(const char *path, size_t *len);

/* The scenarios, one group per file. */
int sc_op(int argc, char **argv);
int sc_sigdebug(int argc, char **argv);
int sc_sites(int argc, char **argv);
int sc_fdkind(int argc, char **argv);
int sc_fdreuse(int argc, char **argv);
int sc_lines(int argc, char **argv);
int sc_barrier(int argc, char **argv);
int sc_exit_drain(int argc, char **argv);
int sc_fork_queue(int argc, char **argv);
int sc_lock_release(int argc, char **argv);
int sc_async_error(int argc, char **argv);
int sc_async_calls(int argc, char **argv);
int sc_async_unqueued(int argc, char **argv);
int sc_async_mixed(int argc, char **argv);
int sc_async_handler(int argc, char **argv);
int sc_async_crossed(int argc, char **argv);
int sc_async_exec(int argc, char **argv);
int sc_async_first(int argc, char **argv);
int sc_async_spawn(int argc, char **argv);
int sc_async_readback(int argc, char **argv);
int sc_async_fd_readback(int argc, char **argv);
int sc_async_kernel_file(int argc, char **argv);
int sc_async_trapped(int argc, char **argv);
int sc_async_unlocked(int argc, char **argv);
int sc_async_fpurge(int argc, char **argv);
int sc_async_exit(int argc, char **argv);
int sc_vmlck(int argc, char **argv);
int sc_faults(int argc, char **argv);
int sc_stack_faults(int argc, char **argv);
int sc_fault_read(int argc, char **argv);
int sc_async_path(int argc, char **argv);
int sc_thread_rows(int argc, char **argv);
int sc_overflow(int argc, char **argv);
int sc_remote_rows(int argc, char **argv);
int sc_strict_fd(int argc, char **argv);

#endif
