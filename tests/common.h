/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Shared helpers of the criterion tests.
 *
 * Rules that every test follows, and these helpers make easy:
 *  - a marked thread never calls criterion (cr_assert longjmps and talks to
 *    the runner; neither belongs on another thread or in the offload
 *    statistics): it records what happened, the main thread asserts;
 *  - the statistics are compared as deltas around exactly the calls a
 *    marked thread made, so "offloaded" is an exact count, not a ">= 1";
 *  - nothing here is a timing: waits poll for a state (a flag, a thread
 *    blocked in a given system call) with a generous timeout that only
 *    turns a hang into a failure.
 */
#ifndef RTO_TEST_COMMON_H
#define RTO_TEST_COMMON_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "rtoffload.h"

/*
 * The sanitizer presets (tests/sanitizers/README.md).  ASan's and TSan's
 * interceptors answer mlock(), munlock() and mlockall() themselves (0,
 * nothing locked): those calls never reach the library there.
 */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define RTO_SANITIZER_OWNS_MLOCK 1
#endif
/*
 * There too, a call given callbacks (scandir's filter, compar) runs on the
 * caller: the runtime's wrappers of them work only there
 * (libsrc/sanitizer.c).
 */
/*
 * ThreadSanitizer cannot follow threads started in the child of a
 * multi-threaded fork: under it the library marks nothing and starts no
 * helper there (libsrc/fork.c), and a test's forked child makes its calls
 * on its own thread.
 */
#ifdef __SANITIZE_THREAD__
#define RTO_FORK_CHILD_DIRECT 1
#else
#define RTO_FORK_CHILD_DIRECT 0
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define RTO_SANITIZER_CALLBACKS_LOCAL 1
#else
#define RTO_SANITIZER_CALLBACKS_LOCAL 0
#endif

/* The CPU marked threads are pinned to, when the machine has it. */
#define RT_CPU 1

/* criterion's .timeout for tests that could hang if the library is wrong. */
#define TEST_TIMEOUT 60.0

/* How long a wait for a state of another thread may take before failing. */
#define WAIT_S 20.0

/* ---- temporary directories ---------------------------------------------- */

/* mkdtemp() under /tmp into dir (PATH_MAX); fails the test if impossible. */
void tmp_make(char *dir);
/* Remove dir and everything below it. */
void tmp_remove(const char *dir);
/* snprintf into a PATH_MAX buffer; fails the test on truncation. */
void pathf(char *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- threads ------------------------------------------------------------- */

typedef void (*job_fn)(void *arg);

/*
 * Run fn(arg) on a new thread pinned to RT_CPU (when possible) and marked
 * for exactly the duration of fn, then join it.  The thread makes no
 * wrapped call outside fn, so the offloaded delta around run_marked() is
 * the number of wrapped calls fn made.  Fails the test if marking fails.
 */
void run_marked(job_fn fn, void *arg);
/* The same on an unmarked thread. */
void run_unmarked(job_fn fn, void *arg);
/* A job on a thread of its own, while the caller goes on (then bg_join). */
enum { BG_MARK = 1, BG_PIN = 2 };
struct bg {
	pthread_t thread;
	job_fn fn;
	void *arg;
	int flags;
	int mark_rc, mark_errno;
};
void bg_start(struct bg *b, job_fn fn, void *arg, int flags);
void bg_join(struct bg *b);
/* The same without criterion, for forked children: 0, or -1. */
int bg_spawn(struct bg *b, job_fn fn, void *arg, int flags);
int bg_wait(struct bg *b);

/* Start the helpers (first mark of the process) from a throwaway thread. */
void start_helpers(void);
/* Pin the calling thread to RT_CPU if this machine has it: 0, or -1. */
int pin_rt_cpu(void);

/*
 * A one-shot event between threads that costs only futex system calls, so
 * a marked (or seccomp-filtered) thread can wait and signal with it.
 */
struct flag {
	_Atomic uint32_t v;
};

void flag_set(struct flag *f);
void flag_wait(struct flag *f);
/* For the main thread: 1 when set, 0 after WAIT_S. */
int flag_wait_timeout(struct flag *f);

/* ---- statistics -------------------------------------------------------- */

struct rt_offload_stats stats_now(void);
uint64_t offloaded_now(void);

/* ---- this process's threads, from /proc ---------------------------------- */

pid_t tid_self(void);
/* Entries of /proc/self/task, or -1.  These /proc helpers never call
 * criterion, so a forked child may use them too. */
int task_count(void);
/* The tids of the helper threads (comm "rtoffload/N"); how many, or -1. */
int helper_tids(pid_t *out, int max);
/* syscr and syscw of one thread (/proc/self/task/TID/io): 0, or -1. */
int task_io(pid_t tid, uint64_t *syscr, uint64_t *syscw);
/*
 * Wait until thread tid is blocked in system call nr (with first argument
 * arg0, or any when arg0 < 0), as /proc/self/task/TID/syscall shows it.
 * 1 when seen, 0 after WAIT_S.
 */
int wait_task_in_syscall(pid_t tid, long nr, long arg0);
/* The same for any helper; returns its tid, or 0 after WAIT_S. */
pid_t wait_helper_in_syscall(long nr, long arg0);

/* ---- files --------------------------------------------------------------- */

/* Read a whole file into a malloc'd NUL-terminated buffer; NULL on error. */
char *slurp(const char *path, size_t *len);
/* Create path with exactly these bytes; 0 or -1. */
int spit(const char *path, const void *buf, size_t len);

/* ---- subprocesses -------------------------------------------------------- */

struct proc {
	int status; /* from waitpid, or -1 */
	char out[16384];
	char err[16384];
};

/*
 * Run argv (PATH is searched) with env changes on top of ours ("K=V" sets,
 * "K" alone unsets), collect stdout and stderr; kills it after WAIT_S.
 * Returns 0 when it ran, -1 when it could not be started.
 */
int run_proc(char *const argv[], char *const env[], struct proc *p);
/* The value of "key=" in text (key=value words), or def when absent. */
long kv(const char *text, const char *key, long def);

/* The library under test (a build path, set by CMake). */
const char *rto_lib_path(void);
/*
 * What LD_PRELOAD must hold to preload it: the library, after the sanitizer
 * runtime in the sanitizer presets (which must come first).
 */
const char *rto_preload(void);
/* The probe program (tests/probe.c), which is not linked to the library. */
const char *rto_probe_path(void);

#endif
