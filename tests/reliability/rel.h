/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Shared helpers of the reliability tests (issue 6).  Self-contained: it
 * does not use tests/common.c, so this directory builds on its own.
 *
 * Rules every test here follows:
 *  - a marked thread never calls criterion: it records results (return
 *    values, errno, bytes, thread ids) and the test thread asserts;
 *  - nothing is a timing: waits poll for a state (a flag, a thread blocked
 *    in a given system call) and time out only to turn a hang into a
 *    failure;
 *  - a test that needs RTOFFLOAD_OPTIONS other than its file's runs a
 *    "scenario" of its own executable in a child (REL_SCENARIO below), with
 *    the options in the child's environment: the library reads them once,
 *    at load.
 */
#ifndef REL_H
#define REL_H

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

#define REL_RT_CPU 1 /* marked threads */
#define REL_HK_CPU 0 /* helpers and hogs */

/* criterion's .timeout of a test that could hang if the library were wrong. */
#define REL_TIMEOUT 60.0
/* How long a wait for another thread's or process's state may take. */
#define REL_WAIT_S 20.0

/* ---- files -------------------------------------------------------------- */

/* mkdtemp() under /tmp (unmarked thread only); "" on failure. */
void rel_tmpdir(char dir[PATH_MAX]);
void rel_rmtree(const char *dir);
/* dir/name into out (PATH_MAX). */
void rel_path(char out[PATH_MAX], const char *dir, const char *name);
/* A whole file, NUL-terminated, malloc'd; NULL on error. */
char *rel_slurp(const char *path, size_t *len);

/* ---- threads ------------------------------------------------------------ */

pid_t rel_tid(void);
/* Pin the calling thread to cpu: 0, or -1 (no such CPU). */
int rel_pin(int cpu);
/* SCHED_FIFO prio for the calling thread (0: SCHED_OTHER): 0 or an errno. */
int rel_fifo(int prio);

/* A one-shot event that costs only futex calls: usable from marked threads. */
struct rel_flag {
	_Atomic uint32_t v;
};
void rel_flag_set(struct rel_flag *f);
int rel_flag_is_set(struct rel_flag *f);
void rel_flag_wait(struct rel_flag *f);
/* 1 when set, 0 after s seconds. */
int rel_flag_wait_s(struct rel_flag *f, double s);

enum {
	REL_MARK = 1,	/* rt_offload_mark_thread() before fn, unmark after */
	REL_PIN_RT = 2, /* pinned to REL_RT_CPU */
	REL_PIN_HK = 4, /* pinned to REL_HK_CPU */
	REL_OTHER = 8,	/* SCHED_OTHER even if the creating thread is SCHED_FIFO */
};

struct rel_thread {
	pthread_t thread;
	void (*fn)(void *);
	void *arg;
	int flags;
	int prio; /* SCHED_FIFO priority, set before marking; 0: the creator's policy */
	int mark_rc, prio_rc;
	_Atomic pid_t tid;
	struct rel_flag started;
};

/* Start fn(arg) on a thread of its own: 0, or an errno.  No criterion. */
int rel_thread_start(struct rel_thread *t, void (*fn)(void *), void *arg, int flags, int prio);
int rel_thread_join(struct rel_thread *t);
/* Start, run and join; 0 when the thread ran and, if asked, was marked. */
int rel_thread_run(void (*fn)(void *), void *arg, int flags, int prio);

/* ---- this process's threads, from /proc (unmarked threads only) ----------- */

/* Tids of the helper threads (comm "rtoffload/N"); how many. */
int rel_helper_tids(pid_t *out, int max);
/* The system call thread tid is blocked in (/proc/.../syscall): 0, or -1. */
int rel_task_syscall(pid_t tid, long *nr, long *arg0, long *arg1);
/* Wait until tid is blocked in nr (first argument arg0, any if arg0 == -1). */
int rel_wait_in_syscall(pid_t tid, long nr, long arg0);
/* The same for any helper thread: its tid, or 0. */
pid_t rel_wait_helper_in_syscall(long nr, long arg0);
/* Scheduling state of tid from /proc/self/task/TID/stat: 0, or -1. */
int rel_task_sched(pid_t tid, char *state, int *policy, int *rtprio);
/* Parse the policy and rt_priority out of a /proc stat line: 0, or -1. */
int rel_parse_stat(const char *line, char *state, int *policy, int *rtprio);
/* A signal's bit in a "SigPnd:"-style line of a /proc status file. */
int rel_status_has_signal(const char *status_path, const char *field, int sig);
/* Every thread's comm, state, wchan, syscall and kernel stack to fd. */
void rel_dump_threads(int fd);

/* ---- children ------------------------------------------------------------ */

struct rel_proc {
	int status; /* from waitpid; -1 if it could not be collected */
	int timed_out;
	char out[32768];
	char err[16384];
};

/*
 * Run argv (execvp) with env changes on top of ours ("K=V" sets, "K"
 * unsets; NULL-terminated, may be NULL), collect stdout and stderr; kill it
 * after REL_WAIT_S.  0 when it ran, -1 when it could not be started.
 */
int rel_run(char *const argv[], char *const env[], struct rel_proc *p);
/* The same for a scenario of this executable (REL_SCENARIO below). */
int rel_run_scenario(const char *name, char *const env[], struct rel_proc *p);
/* Wait for pid up to REL_WAIT_S (then SIGKILL): exit code, or -signal. */
int rel_reap(pid_t pid);
/* The number after "key=" in text, or def. */
long rel_kv(const char *text, const char *key, long def);
/* "exited N" / "killed by SIGX" for messages. */
const char *rel_status_str(int status, char *buf, size_t len);

/* The library under test (build path), for LD_PRELOAD and dlopen. */
const char *rel_lib_path(void);

/*
 * A scenario: code that runs in a child process of this executable, with
 * its own RTOFFLOAD_OPTIONS, instead of criterion's main.  It reports on
 * stdout (key=value lines) and through its return value, the exit status.
 */
struct rel_scenario {
	const char *name;
	int (*fn)(void);
};

#define REL_SCENARIO(nm)                                                                   \
	static int rel_sc_##nm(void);                                                      \
	static const struct rel_scenario rel_scd_##nm = {#nm, rel_sc_##nm};                \
	static const struct rel_scenario *const rel_scp_##nm                               \
		__attribute__((used, section("rel_scenarios"), aligned(sizeof(void *)))) = \
			&rel_scd_##nm;                                                     \
	static int rel_sc_##nm(void)

/* In a scenario: one "key=value" line on stdout, without stdio. */
void rel_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
