/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The test harness: what every criterion test of tests/ uses (one header,
 * harness.c, child_run.c and families.c behind it).
 *
 * Rules that every test follows, and these helpers make easy:
 *  - a marked thread never calls criterion (cr_assert longjmps and talks to
 *    the runner; neither belongs on another thread or in the offload
 *    statistics): it records what happened, the main thread asserts;
 *  - the statistics are compared as deltas around exactly the calls a
 *    marked thread made, so "offloaded" is an exact count, not a ">= 1";
 *  - nothing here is a timing: waits poll for a state (a flag, a thread
 *    blocked in a given system call) with a generous timeout that only
 *    turns a hang into a failure;
 *  - the library reads RTOFFLOAD_OPTIONS once, in its constructor, so a
 *    test that needs other options than its program's runs a child: a
 *    scenario of its own executable (SCENARIO below), or the option
 *    child rto_child (child_run() below, the scenarios in child_*.c).
 */
#ifndef RTO_TEST_HARNESS_H
#define RTO_TEST_HARNESS_H

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
 * (libsrc/base/sanitizer.c).
 */
/*
 * ThreadSanitizer cannot follow threads started in the child of a
 * multi-threaded fork: under it the library marks nothing and starts no
 * helper there (libsrc/core/fork.c), and a test's forked child makes its calls
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
/* Built with ASan or TSan (the children too: every target has the same flags). */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define RTO_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define RTO_SANITIZED 1
#endif
#endif
#ifndef RTO_SANITIZED
#define RTO_SANITIZED 0
#endif
#ifdef __SANITIZE_THREAD__
#define RTO_TSAN 1
#else
#define RTO_TSAN 0
#endif

/* The CPU marked threads are pinned to, when the machine has it. */
#define RT_CPU 1
/* The housekeeping CPU: helpers and the tests' busy loops. */
#define HK_CPU 0

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
/* dir/name into out (PATH_MAX), without criterion (scenarios, marked threads). */
void path_join(char *out, const char *dir, const char *name);

/* ---- flags --------------------------------------------------------------- */

/*
 * A one-shot event between threads that costs only futex system calls, so
 * a marked (or seccomp-filtered) thread can wait and signal with it.  The
 * waits leave errno as it was.
 */
struct flag {
	_Atomic uint32_t v;
};

void flag_set(struct flag *f);
int flag_is_set(struct flag *f);
void flag_wait(struct flag *f);
/* For the main thread: 1 when set, 0 after WAIT_S. */
int flag_wait_timeout(struct flag *f);
/* The same after s seconds. */
int flag_wait_s(struct flag *f, double s);

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
/* Pin the calling thread to cpu: 0, or -1 (no such CPU). */
int pin_cpu(int cpu);
/* SCHED_FIFO prio for the calling thread (0: SCHED_OTHER): 0 or an errno. */
int set_fifo(int prio);

/*
 * A thread with every knob, without criterion (usable in scenarios and
 * forked children): flags say what it does before fn, prio is a
 * SCHED_FIFO priority set before marking (0: the creator's policy).
 */
enum {
	TH_MARK = 1,   /* rt_offload_mark_thread() before fn, unmark after */
	TH_PIN_RT = 2, /* pinned to RT_CPU */
	TH_PIN_HK = 4, /* pinned to HK_CPU */
	TH_OTHER = 8,  /* SCHED_OTHER even if the creating thread is SCHED_FIFO */
};
struct test_thread {
	pthread_t thread;
	job_fn fn;
	void *arg;
	int flags;
	int prio;
	int mark_rc, prio_rc;
	_Atomic pid_t tid;
	struct flag started; /* set once tid is known */
};
/* Start fn(arg) on a thread of its own: 0, or an errno. */
int thread_start(struct test_thread *t, job_fn fn, void *arg, int flags, int prio);
/* Join it: 0 when it ran and, if asked, was marked and got its priority. */
int thread_join(struct test_thread *t);
/* Start, run and join. */
int thread_run(job_fn fn, void *arg, int flags, int prio);

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
/* The system call thread tid is blocked in (/proc/.../syscall): 0, or -1. */
int task_syscall(pid_t tid, long *nr, long *arg0, long *arg1);
/*
 * Wait until thread tid is blocked in system call nr (with first argument
 * arg0, compared as 32 bits so that AT_FDCWD matches, or any when arg0 is
 * -1), as /proc/self/task/TID/syscall shows it.  1 when seen, 0 after WAIT_S.
 */
int wait_task_in_syscall(pid_t tid, long nr, long arg0);
/* The same for any helper; returns its tid, or 0 after WAIT_S. */
pid_t wait_helper_in_syscall(long nr, long arg0);
/* Scheduling state of tid from /proc/self/task/TID/stat: 0, or -1. */
int task_sched(pid_t tid, char *state, int *policy, int *rtprio);
/* Parse the policy and rt_priority out of a /proc stat line: 0, or -1. */
int parse_stat(const char *line, char *state, int *policy, int *rtprio);
/* A signal's bit in a "SigPnd:"-style line of a /proc status file (-1: none). */
int status_has_signal(const char *status_path, const char *field, int sig);
/* Every thread's comm, state, wchan, syscall and kernel stack to fd. */
void dump_threads(int fd);

/* ---- files --------------------------------------------------------------- */

/* Read a whole file into a malloc'd NUL-terminated buffer; NULL on error. */
char *slurp(const char *path, size_t *len);
/* Create path with exactly these bytes; 0 or -1. */
int spit(const char *path, const void *buf, size_t len);
/* Create path with this text; fails the test on error. */
void write_file(const char *path, const char *text);

/* ---- subprocesses -------------------------------------------------------- */

struct proc {
	int status; /* from waitpid, or -1 */
	int timed_out;
	char out[32768];
	char err[16384];
};

/*
 * Run argv (PATH is searched) with env changes on top of ours ("K=V" sets,
 * "K" alone unsets; NULL-terminated, may be NULL), collect stdout and
 * stderr; kills it after WAIT_S.  Returns 0 when it ran, -1 when it could
 * not be started.  No criterion: a scenario may run programs too.
 */
int run_proc(char *const argv[], char *const env[], struct proc *p);
/* The same for a scenario of this executable (SCENARIO below). */
int run_scenario(const char *name, char *const env[], struct proc *p);
/* Wait for pid up to WAIT_S (then SIGKILL): exit code, or -signal. */
int reap_code(pid_t pid);
/* The value of "key=" in text (key=value words), or def when absent. */
long kv(const char *text, const char *key, long def);
/* "exited N" / "killed by SIGX" for messages. */
const char *status_str(int status, char *buf, size_t len);

/* The library under test (a build path, set by CMake). */
const char *rto_lib_path(void);
/*
 * What LD_PRELOAD must hold to preload it: the library, after the sanitizer
 * runtime in the sanitizer presets (which must come first).
 */
const char *rto_preload(void);
/* The sanitizer runtime that must come first in LD_PRELOAD ("" in a normal build). */
const char *rto_sanitizer_runtime(void);
/* The probe program (harness/probe.c), which is not linked to the library. */
const char *rto_probe_path(void);

/* ---- scenarios: this executable in a child, with other options ------------ */

/*
 * A scenario is code that runs in a child process of the test program,
 * with its own RTOFFLOAD_OPTIONS, instead of criterion's main (a
 * constructor of harness.c dispatches on RTO_TEST_SCENARIO).  It reports on
 * stdout (key=value lines, say()) and through its return value, the exit
 * status.  run_scenario() starts one.
 */
struct scenario {
	const char *name;
	int (*fn)(void);
};

#define SCENARIO(nm)                                                                       \
	static int sc_fn_##nm(void);                                                       \
	static const struct scenario sc_desc_##nm = {#nm, sc_fn_##nm};                     \
	static const struct scenario *const sc_ptr_##nm                                    \
		__attribute__((used, section("rto_scenarios"), aligned(sizeof(void *)))) = \
			&sc_desc_##nm;                                                     \
	static int sc_fn_##nm(void)

/* In a scenario: one "key=value" line on stdout, by the raw system call. */
void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- the option child: rto_child (child_run.c, child_*.c) ------------------ */

/*
 * A fresh directory per test under /var/tmp (a disk, usually: see
 * child_dir_on_disk), made by child_setup and removed by child_teardown
 * (a suite's .init and .fini).
 */
extern char child_dir[PATH_MAX];
void child_setup(void);
void child_teardown(void);
/* 1 when child_dir is not on tmpfs/ramfs: its files are "disk files". */
int child_dir_on_disk(void);
/*
 * Skip the test with a reason.  criterion does not run .fini after a skip,
 * so the directory goes first.
 */
#define CHILD_SKIP(...)                    \
	do {                               \
		child_teardown();          \
		cr_skip_test(__VA_ARGS__); \
	} while (0)

/* Skip the test (with the reason) when child_dir is on tmpfs. */
#define NEED_DISK()                                                                     \
	do {                                                                            \
		if (!child_dir_on_disk())                                               \
			CHILD_SKIP("/var/tmp is on tmpfs: no disk file to offload on"); \
	} while (0)

/* A file path in child_dir. */
void child_path(char *out, const char *name);

/*
 * The program child_run() starts: rto_child (-O0 -g), unless a test picks
 * child_fortify, the same sources built like a distribution package
 * (-O2 -D_FORTIFY_SOURCE=2), whose printf calls are __printf_chk & co.
 * child_setup() puts the default back.
 */
extern const char *child_program;
extern const char *const child_fortify;

struct run {
	int status; /* waitpid status */
	char *out;  /* stdout, NUL-terminated */
	char *err;  /* stderr */
	char *json; /* the stats_file, or NULL (none asked, or none written) */
	int pid;
};

/*
 * Run the option child with RTOFFLOAD_OPTIONS=opts and the scenario words
 * in argv (NULL-terminated).  with_stats: stats_file=child_dir/stats.json
 * goes in front of opts.  Fails the test if the child cannot be started.
 */
void child_run(struct run *r, int with_stats, const char *opts, const char *const *argv);
#define RUN_CHILD(r, opts, ...)	    child_run(r, 1, opts, (const char *const[]){__VA_ARGS__, NULL})
#define RUN_CHILD_RAW(r, opts, ...) child_run(r, 0, opts, (const char *const[]){__VA_ARGS__, NULL})
void run_free(struct run *r);

/* Exit status 0, or a message (cr_assert fails with stdout/stderr shown). */
void assert_child_exit0(const struct run *r);
/* Exit 78 with exactly one line on stderr that contains every needle (NULL-ended). */
void assert_child_config_error(const struct run *r, const char *const *needles);
#define ASSERT_CONFIG_ERROR(r, ...) \
	assert_child_config_error(r, (const char *const[]){__VA_ARGS__, NULL})

/*
 * A counter of the stats_file: the "calls" row of function fn (0 when the
 * function has no row: nothing counted), or a "totals" field when fn is NULL.
 * Fails the test when there is no JSON.
 */
long json_count(const struct run *r, const char *fn, const char *field);

/*
 * json_count() summed over fn's printf family when fn is one of the
 * printf calls (fprintf, vfprintf, __fprintf_chk, __vfprintf_chk; the same
 * for printf): a sanitizer's printf interceptor reaches the library
 * through the va_list form (ASan: fprintf arrives as vfprintf), so the row
 * that counts a program's fprintf may be any of them.
 */
long json_family(const struct run *r, const char *fn, const char *field);

/*
 * The per-thread rows of the stats_file: field of the row of thread name
 * (-1 when it has no row), of the "other_threads" row, and how many rows.
 */
long json_thread(const struct run *r, const char *name, const char *field);
long json_other(const struct run *r, const char *field);
int json_threads(const struct run *r);
/* A call-site row ("sites"): field of the row (where, event, function); -1 if none. */
long json_site(const struct run *r, const char *where, const char *event, const char *fn,
	       const char *field);

/*
 * The number after "key=" on the first stdout line that starts with prefix
 * (any line when prefix is NULL); def when absent.
 */
long out_long(const char *out, const char *prefix, const char *key, long def);
/* The same for a word: copied into buf (empty when absent). */
const char *out_word(const char *out, const char *prefix, const char *key, char *buf, size_t len);

int count_of(const char *hay, const char *needle);
/* How many lines of text start with prefix. */
int lines_starting(const char *text, const char *prefix);

#endif
