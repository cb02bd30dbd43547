/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Test-side helpers of the policy tests.
 *
 * The library reads RTOFFLOAD_OPTIONS once, in its constructor, so each
 * option set needs a process: a test runs pol_child (child.h) with the
 * options and a scenario, then asserts on its exit status, its stdout
 * ("key=value" words), its stderr (the library's reports and errors), the
 * files it left and its stats_file JSON.  Nothing here measures time: a
 * child that hangs is killed by an alarm and fails the test.
 */
#ifndef POL_H
#define POL_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <limits.h>
#include <stddef.h>

/* A fresh directory per test under /var/tmp (a disk, usually: see pol_dir_on_disk). */
extern char pol_dir[PATH_MAX];
void pol_setup(void);
void pol_teardown(void);
/* 1 when pol_dir is not on tmpfs/ramfs: its files are "disk files". */
int pol_dir_on_disk(void);
/*
 * Skip the test with a reason.  criterion does not run .fini after a skip,
 * so the directory goes first.
 */
#define POL_SKIP(...)                      \
	do {                               \
		pol_teardown();            \
		cr_skip_test(__VA_ARGS__); \
	} while (0)

/* Skip the test (with the reason) when pol_dir is on tmpfs. */
#define NEED_DISK()                                                                   \
	do {                                                                          \
		if (!pol_dir_on_disk())                                               \
			POL_SKIP("/var/tmp is on tmpfs: no disk file to offload on"); \
	} while (0)

/* A file path in pol_dir (a static buffer per call site is the caller's). */
void pol_path(char *out, const char *name);

/*
 * The program child_run() starts: pol_child (-O0 -g), unless a test picks
 * pol_child_fortify, the same sources built like a distribution package
 * (-O2 -D_FORTIFY_SOURCE=2), whose printf calls are __printf_chk & co.
 * pol_setup() puts the default back.
 */
extern const char *pol_program;
extern const char *const pol_child_fortify;

struct run {
	int status; /* waitpid status */
	char *out;  /* stdout, NUL-terminated */
	char *err;  /* stderr */
	char *json; /* the stats_file, or NULL (none asked, or none written) */
	int pid;
};

/*
 * Run pol_child with RTOFFLOAD_OPTIONS=opts and the scenario words in argv
 * (NULL-terminated).  with_stats: stats_file=pol_dir/stats.json goes in
 * front of opts.  Fails the test if the child cannot be started.
 */
void child_run(struct run *r, int with_stats, const char *opts, const char *const *argv);
#define CHILD(r, opts, ...)	child_run(r, 1, opts, (const char *const[]){__VA_ARGS__, NULL})
#define CHILD_RAW(r, opts, ...) child_run(r, 0, opts, (const char *const[]){__VA_ARGS__, NULL})
void run_free(struct run *r);

/* Exit status 0, or a message (cr_assert fails with stdout/stderr shown). */
void assert_exit0(const struct run *r);
/* Exit 78 with exactly one line on stderr that contains every needle (NULL-ended). */
void assert_config_error(const struct run *r, const char *const *needles);
#define ASSERT_CONFIG_ERROR(r, ...) assert_config_error(r, (const char *const[]){__VA_ARGS__, NULL})

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

/* Built with ASan or TSan (the children too: every target has the same flags). */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define POL_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define POL_SANITIZED 1
#endif
#endif
#ifndef POL_SANITIZED
#define POL_SANITIZED 0
#endif
#ifdef __SANITIZE_THREAD__
#define POL_TSAN 1
#else
#define POL_TSAN 0
#endif

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
char *slurp(const char *path, size_t *len);
void write_file(const char *path, const char *text);

#endif
