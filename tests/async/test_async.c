/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Asynchronous writes (policy=stdio:async, write:async): a marked thread's
 * write returns at once and a helper writes the bytes later.  Nothing
 * accepted may be lost or reordered within a thread: every line is checked
 * on disk.  Flush points (fflush, fclose, fsync, close, exit) write what is
 * queued before they act, and a write that fails on the helper fails a
 * later call on the same descriptor.
 */
#include "harness.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

TestSuite(async, .init = child_setup, .fini = child_teardown, .timeout = 150);

#define MAX_T 16

/* ---- checking lines "T I\n" ------------------------------------------------------------ */

struct tally {
	long next[MAX_T]; /* the I expected next from thread T */
	long bad;	  /* lines that are malformed, foreign or out of order */
	char first_bad[64];
};

/*
 * Parsed by hand, with memchr for the line ends: strtol and strcspn on a
 * multi-megabyte buffer read all of it to the end under ASan's
 * strict_string_checks, which makes the check quadratic.
 */
static long number(const char **p, const char *end)
{
	const char *s = *p;
	long v = 0;

	if (s == end || *s < '0' || *s > '9')
		return -1;
	for (; s < end && *s >= '0' && *s <= '9'; s++)
		v = v * 10 + (*s - '0');
	*p = s;
	return v;
}

static void tally_line(struct tally *t, const char *p, const char *end, int t0, int nt)
{
	const char *s = p;
	long th = number(&s, end);
	long i = s < end && *s == ' ' ? (s++, number(&s, end)) : -1;

	if (s == end && th >= t0 && th < t0 + nt && i == t->next[th]) {
		t->next[th]++;
		return;
	}
	if (!t->bad++)
		snprintf(t->first_bad, sizeof(t->first_bad), "%.*s (wanted %ld)",
			 (int)(end - p < 40 ? end - p : 40), p,
			 th >= 0 && th < MAX_T ? t->next[th] : -1L);
}

/*
 * The file holds exactly lines "T I" for T in [t0, t0 + nt) and I in
 * [0, nl), each thread's lines in the order it wrote them.
 */
static void check_lines(const char *path, int t0, int nt, long nl)
{
	struct tally t = {{0}, 0, ""};
	size_t len;
	char *text = slurp(path, &len);

	cr_assert_not_null(text, "no file %s", path);
	for (const char *p = text, *stop = text + len; p < stop;) {
		const char *eol = memchr(p, '\n', (size_t)(stop - p));
		const char *end = eol ? eol : stop;
		tally_line(&t, p, end, t0, nt);
		p = end + 1;
	}
	cr_expect_eq(t.bad, 0, "%s: %ld bad lines, the first: %s", path, t.bad, t.first_bad);
	for (int i = t0; i < t0 + nt; i++)
		cr_expect_eq(t.next[i], nl, "%s: thread %d: %ld of %ld lines in order", path, i,
			     t.next[i], nl);
	free(text);
}

static void lines_run(struct run *r, const char *opts, const char *mode, int nt, long nl,
		      const char *end)
{
	char snt[16], snl[24];

	snprintf(snt, sizeof(snt), "%d", nt);
	snprintf(snl, sizeof(snl), "%ld", nl);
	RUN_CHILD(r, opts, "lines", mode, snt, snl, child_dir, end);
	assert_child_exit0(r);
}

static void check_files(const char *mode, int nt, long nl)
{
	char path[PATH_MAX], name[32];

	if (!strcmp(mode, "file") || !strcmp(mode, "fd")) {
		child_path(path, "lines");
		check_lines(path, 0, nt, nl);
		return;
	}
	for (int t = 0; t < nt; t++) {
		snprintf(name, sizeof(name), "lines.%d", t);
		child_path(path, name);
		check_lines(path, t, 1, nl);
	}
}

/* nt threads x nl lines, all queued (async counts them all), all on disk. */
static void all_lines(const char *opts, const char *mode, const char *fn, int nt, long nl)
{
	struct run r;

	lines_run(&r, opts, mode, nt, nl, "close");
	cr_expect_eq(out_long(r.out, NULL, "async", -1), nt * nl, "%s", r.out);
	cr_expect_eq(json_family(&r, fn, "async"), nt * nl);
	cr_expect_eq(json_family(&r, fn, "offloaded") + json_family(&r, fn, "local"), 0);
	check_files(mode, nt, nl);
	run_free(&r);
}

/* ---- many threads, many lines -------------------------------------------------------------- */

Test(async, eight_threads_100k_lines_one_shared_file)
{
	all_lines("policy=stdio:async", "file", "fprintf", 8, 100000);
}

Test(async, eight_threads_100k_lines_separate_files)
{
	all_lines("policy=stdio:async", "files", "fprintf", 8, 100000);
}

Test(async, eight_threads_write_to_one_descriptor)
{
	all_lines("policy=write:async", "fd", "write", 8, 20000);
}

Test(async, eight_threads_write_to_separate_descriptors)
{
	all_lines("policy=write:async", "fds", "write", 8, 20000);
}

/* The same with the printf family as packages call it: __fprintf_chk. */
Test(async, fortified_fprintf_lines)
{
	child_program = child_fortify;
	all_lines("policy=stdio:async", "file", "__fprintf_chk", 8, 20000);
}

/* ---- every call that can be queued ------------------------------------------------------- */

#define NAMES(...) ((const char *const[]){__VA_ARGS__, NULL})

static void expect_file(const char *name, const char *want)
{
	char path[PATH_MAX];

	child_path(path, name);
	char *text = slurp(path, NULL);
	cr_expect_str_eq(text ? text : "(none)", want, "%s: \"%.200s\"", name,
			 text ? text : "(none)");
	free(text);
}

/*
 * One call of each (child_async.c, each_call): queued, and their bytes in
 * the order of the calls; each returns what the call itself would.
 */
static void each_call(const char *const *queued)
{
	struct run r;

	RUN_CHILD(&r, "policy=stdio:async,write:async", "async_calls", child_dir);
	assert_child_exit0(&r);
	for (; *queued; queued++)
		cr_expect_eq(json_family(&r, *queued, "async"), 1, "%s not queued", *queued);
	expect_file("calls.file", "fwrite|fputs|cd|fprintf 7|");
	expect_file("calls.write", "write|");
	cr_expect_not_null(strstr(r.out, "puts-line\nP|printf 8\n"), "stdout: %s", r.out);
	static const struct {
		const char *key;
		long want;
	} rets[] = {{"fwrite", 1}, {"fputc", 'c'},   {"putc", 'd'}, {"fprintf", 11},
		    {"write", 6},  {"putchar", 'P'}, {"printf", 10}};
	for (size_t i = 0; i < sizeof(rets) / sizeof(rets[0]); i++)
		cr_expect_eq(out_long(r.out, "fwrite=", rets[i].key, -999), rets[i].want,
			     "%s returned: %s", rets[i].key, r.out);
	cr_expect_geq(out_long(r.out, "fwrite=", "fputs", -1), 0);
	cr_expect_geq(out_long(r.out, "fwrite=", "puts", -1), 0);
	run_free(&r);
}

Test(async, every_queueable_call_lands_in_order)
{
	each_call(NAMES("fwrite", "fputs", "fputc", "putc", "fprintf", "write", "puts", "putchar",
			"printf"));
}

Test(async, fortified_calls_land_in_order)
{
	child_program = child_fortify;
	each_call(NAMES("fwrite", "fputs", "fputc", "__fprintf_chk", "write", "puts",
			"__printf_chk"));
}

/*
 * Calls the async handling does not queue (child_async.c, async_unqueued):
 * a printf whose format has %m (strerror may read its message catalogue
 * from a file: a helper formats it), one longer than a log line, and an
 * fwrite bigger than half the ring.  Each is made synchronously, after
 * what the thread queued before it.
 */
static void unqueued(void)
{
	struct run r;

	RUN_CHILD(&r, "policy=stdio:async", "async_unqueued", child_dir);
	assert_child_exit0(&r);
	const char *fprintf_name = child_program == child_fortify ? "__fprintf_chk" : "fprintf";
	cr_expect_eq(json_family(&r, "fputs", "async"), 3, "the fputs between them not queued");
	cr_expect_eq(json_family(&r, fprintf_name, "async"), 0, "%s with %%m or long queued",
		     fprintf_name);
	cr_expect_eq(json_family(&r, "fwrite", "async"), 0, "the big fwrite queued");
	long sync =
		json_family(&r, fprintf_name, "offloaded") + json_family(&r, fprintf_name, "local");
	cr_expect_eq(sync, 2, "%s with %%m or long not made: %s", fprintf_name, r.out);
	cr_expect_eq(out_long(r.out, "m=", "m", -1), 26, "%s", r.out); /* "No such file..." */
	cr_expect_eq(out_long(r.out, "m=", "long", -1), 1101, "%s", r.out);
	long big = out_long(r.out, "m=", "big", -1);
	cr_assert_gt(big, 128 * 1024, "the fwrite fits half a ring: %s", r.out);
	char *want = malloc(1300 + (size_t)big);
	cr_assert_not_null(want);
	int n = snprintf(want, 1300, "q|No such file or directory|a|%*s|b|", 1100, "L");
	memset(want + n, 'B', (size_t)big);
	want[n + big] = 0;
	expect_file("unqueued.file", want);
	free(want);
	run_free(&r);
}

Test(async, a_call_not_queued_comes_after_what_is_queued)
{
	unqueued();
}

Test(async, a_fortified_call_not_queued_comes_after_what_is_queued)
{
	child_program = child_fortify;
	unqueued();
}

/*
 * An unmarked thread's write (main's, and the marked thread's own after it
 * unmarked) comes after what was queued before it: what the threads'
 * synchronisation ordered lands in that order, as without the library
 * (child_async.c, async_mixed).
 */
Test(async, an_unmarked_write_comes_after_what_is_queued)
{
	struct run r;

	for (int round = 0; round < 5; round++) {
		RUN_CHILD(&r, "policy=stdio:async,write:async", "async_mixed", child_dir);
		assert_child_exit0(&r);
		cr_expect_gt(json_family(&r, "fprintf", "async"), 0, "nothing queued: %s", r.out);
		expect_file("mixed.file", "main first\nrt 0\nrt 1\nrt 2\nrt 3\nrt 4\nmain "
					  "between\nrt after\nrt unmarked\nmain last\n");
		expect_file("mixed.write", "rt w\nmain w\nmain last w\n");
		run_free(&r);
	}
}

/*
 * But not inside a signal handler: its write() does not write the queued
 * lines into their streams, which is not async-signal-safe (main holds the
 * stream's lock, as if the signal came inside a stdio call on it).  The
 * lines are written once the lock is free (child_async.c, async_handler).
 */
Test(async, a_write_in_a_signal_handler_does_not_write_the_queue)
{
	struct run r;

	RUN_CHILD(&r, "policy=stdio:async", "async_handler", child_dir);
	assert_child_exit0(&r);
	long before = out_long(r.out, "before=", "before", -1);
	cr_expect_geq(before, 0, "%s", r.out);
	cr_expect_eq(out_long(r.out, "before=", "after", -1), before,
		     "the handler's write() wrote queued lines into the stream: %s", r.out);
	expect_file("handler.file", "queued 0\nqueued 1\nqueued 2\n");
	run_free(&r);
}

/*
 * Nor when a stream lock another thread holds stands in the way: that
 * thread may be waiting for this one to go on, as u2 waits for main
 * (child_async.c, async_crossed: killed by SIGALRM if main waits).
 */
Test(async, an_unmarked_write_does_not_wait_for_a_lock_another_holds)
{
	struct run r;

	RUN_CHILD(&r, "policy=stdio:async", "async_crossed", child_dir);
	assert_child_exit0(&r);
	cr_expect_eq(json_family(&r, "fputs", "async"), 1, "g's line not queued: %s", r.out);
	expect_file("crossed.f", "main\nu2\n");
	expect_file("crossed.g", "queued\n");
	run_free(&r);
}

/*
 * exec ends the process image, and what is queued with it: exec first has
 * it written, so the bytes a marked thread wrote and flushed before its
 * exec are on disk, as without the library (child_async.c, async_exec).
 */
static void exec_keeps(const char *how)
{
	struct run r;

	RUN_CHILD_RAW(&r, "policy=stdio:async,write:async", "async_exec", child_dir, how);
	assert_child_exit0(&r);
	expect_file("exec.file", "before exec\n");
	expect_file("exec.write", "written\n");
	run_free(&r);
}

/*
 * _exit() and _Exit() end the process without flushing the streams: what
 * is queued is written first as the calls would have written it (an
 * unbuffered stream's line and a write() reach the file, a flushed line
 * too), and a buffered stream's unflushed line is lost, as without the
 * library (GLib's test subprocesses report their failure on stderr and
 * _exit(1); child_async.c, async_exit).
 */
static void exit_keeps(const char *how)
{
	struct run r;

	RUN_CHILD_RAW(&r, "policy=stdio:async,write:async", "async_exit", child_dir, how);
	cr_expect(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 3, "status %#x: %s", r.status,
		  r.err);
	expect_file("exit.unbuf", "unbuffered\n");
	expect_file("exit.buf", "flushed\n");
	expect_file("exit.fd", "written\n");
	run_free(&r);
}

Test(async, _exit_writes_what_is_queued)
{
	exit_keeps("_exit");
}

Test(async, _Exit_writes_what_is_queued)
{
	exit_keeps("_Exit");
}

Test(async, exec_writes_what_is_queued)
{
	exec_keeps("execv");
}

Test(async, execl_writes_what_is_queued)
{
	exec_keeps("execl");
}

/*
 * mark=all marks the main thread at start, before any helper runs: its
 * first call, a line to queue, starts them first (before, it was queued for
 * helpers that did not exist yet, and the process crashed: systemd's
 * test-sizeof under the peer mode mark-all-async), as the library's own
 * work, whose system calls the backstop lets through.
 */
Test(async, a_queued_line_first_starts_the_helpers)
{
	struct run r;

	RUN_CHILD(&r, "mark=all:policy=stdio:async", "async_first");
	assert_child_exit0(&r);
	cr_expect_not_null(strstr(r.out, "first 1\n"), "stdout: %s", r.out);
	cr_expect_eq(json_family(&r, "printf", "async"), 1, "not queued: %s", r.out);
	/*
	 * Started as the library's own work: none of its system calls trapped
	 * as the program's.  Not under a sanitizer, whose runtime's own raw
	 * mmap calls on the marked thread are trapped (as the program's).
	 */
	if (!RTO_SANITIZED)
		cr_expect(r.json && strstr(r.json, "\"syscalls\":[]"), "trapped: %s",
			  r.json ? strstr(r.json, "\"syscalls\"") : "(no json)");
	run_free(&r);
}

/*
 * A child process reads the files as its parent wrote them: fork,
 * system() and posix_spawn() first have what is queued written, so a line
 * a marked thread wrote and flushed before is in the file the child copies,
 * as without the library, even while no helper could write it
 * (child_async.c, async_spawn).
 */
static void spawn_reads(const char *how)
{
	struct run r;

	RUN_CHILD_RAW(&r, "policy=stdio:async:workers=1:fd_local=none", "async_spawn", child_dir,
		      how);
	assert_child_exit0(&r);
	cr_expect_eq(out_long(r.out, "status=", "status", -1), 0, "cp: %s", r.out);
	expect_file("spawn.copy", "line\n");
	run_free(&r);
}

Test(async, a_forked_child_reads_what_was_written)
{
	spawn_reads("fork");
}

Test(async, system_reads_what_was_written)
{
	spawn_reads("system");
}

Test(async, posix_spawn_reads_what_was_written)
{
	spawn_reads("posix_spawn");
}

/*
 * A marked thread's call on a stream that is not queued (ftell, rewind,
 * fgets) comes after its own queued writes to that stream: it reads back
 * what it wrote, and ftell counts it, as without the library
 * (child_async.c, async_readback).
 */
Test(async, a_stream_read_back_sees_its_queued_writes)
{
	struct run r;

	for (int round = 0; round < 3; round++) {
		RUN_CHILD(&r, "policy=stdio:async", "async_readback", child_dir);
		assert_child_exit0(&r);
		cr_expect_eq(json_family(&r, "fputs", "async"), 1, "not queued: %s", r.out);
		cr_expect_eq(out_long(r.out, "pos=", "pos", -1), 4, "ftell: %s", r.out);
		char line[16];
		cr_expect_str_eq(out_word(r.out, "pos=", "line", line, sizeof(line)), "abc", "%s",
				 r.out);
		run_free(&r);
	}
}

/*
 * The same for a descriptor: a marked thread's call on a descriptor that
 * is not queued (lseek, fstat, pread, mmap, dprintf) comes after its own
 * queued writes to it, and to a stream on it with the stream's queued fflush
 * (systemd's journal_file_verify writes a temporary file with fwrite and
 * fflush, then maps it: SIGBUS past its end), and a call on a file by
 * its path after its own queued writes (systemd's test-clock writes a
 * file with fputs and fflush, then opens it again to read it;
 * child_async.c, async_fd_readback).
 */
Test(async, a_descriptor_or_path_read_back_sees_its_queued_writes)
{
	struct run r;

	for (int round = 0; round < 5; round++) {
		RUN_CHILD(&r, "policy=stdio:async,write:async", "async_fd_readback", child_dir);
		assert_child_exit0(&r);
		cr_expect_geq(json_family(&r, "write", "async"), 4, "not queued: %s", r.out);
		cr_expect_eq(out_long(r.out, "fd:", "pos", -1), 4, "lseek: %s", r.out);
		cr_expect_eq(out_long(r.out, "fd:", "size", -1), 8, "fstat: %s", r.out);
		cr_expect_eq(out_long(r.out, "fd:", "ssize", -1), 4, "fstat of a stream's: %s",
			     r.out);
		char got[16];
		cr_expect_str_eq(out_word(r.out, "fd:", "pread", got, sizeof(got)), "ijkl", "%s",
				 r.out);
		cr_expect_str_eq(out_word(r.out, "fd:", "map", got, sizeof(got)), "mnop", "%s",
				 r.out);
		cr_expect_str_eq(out_word(r.out, "fd:", "smap", got, sizeof(got)), "uvwx", "%s",
				 r.out);
		cr_expect_str_eq(out_word(r.out, "fd:", "dprintf", got, sizeof(got)), "stuvwx",
				 "%s", r.out);
		cr_expect_str_eq(out_word(r.out, "path:", "reopen", got, sizeof(got)), "qrstuvwxyz",
				 "fopen: %s", r.out);
		cr_expect_eq(out_long(r.out, "path:", "size", -1), 15, "stat: %s", r.out);
		run_free(&r);
	}
}

/*
 * A system call the wrappers do not see (a raw one that traps, libc's
 * own, syscall()) comes after the thread's queued writes as a wrapper's
 * call does: on a descriptor, after those to it; when it closes or
 * replaces descriptors (dup2), after them all (child_async.c,
 * async_trapped).
 */
Test(async, a_trapped_system_call_comes_after_what_is_queued)
{
	struct run r;

	for (int round = 0; round < 5; round++) {
		RUN_CHILD(&r, "policy=stdio:async,write:async", "async_trapped", child_dir);
		assert_child_exit0(&r);
		cr_expect_geq(json_family(&r, "write", "async"), 3, "not queued: %s", r.out);
		char got[16];
		cr_expect_str_eq(out_word(r.out, "trapped:", "pread", got, sizeof(got)), "abcdefgh",
				 "%s", r.out);
		cr_expect_str_eq(out_word(r.out, "trapped:", "moved", got, sizeof(got)), "xy", "%s",
				 r.out);
		run_free(&r);
	}
}

/*
 * The _unlocked stdio functions say the program owns the stream, and such
 * a program writes it with glibc's inline macros too (putc_unlocked,
 * inlined: no call the library sees), as ls does with its names and
 * newlines: those functions are not queued, so the bytes stay in the order
 * they were written (ls -1 printed its newlines first, then its names;
 * child_async.c, async_unlocked).
 */
static void macro_lines(const char *how)
{
	char path[PATH_MAX], want[16384] = "", line[32];
	struct run r;

	for (int i = 0; i < 1000; i++) {
		snprintf(line, sizeof(line), "name%d\n", i);
		strcat(want, line);
	}
	RUN_CHILD(&r, "policy=stdio:async", "async_unlocked", child_dir, how);
	assert_child_exit0(&r);
	child_path(path, "unlocked.file");
	char *got = slurp(path, NULL);
	cr_assert_not_null(got, "%s", path);
	cr_expect_str_eq(got, want);
	free(got);
	run_free(&r);
}

Test(async, unlocked_stdio_and_inline_putc_keep_their_order)
{
	macro_lines("unlocked");
}

/*
 * The same with fputs and fprintf, which are queued: a write that fits in
 * the stream's buffer goes in there on the caller, and while one is queued
 * the buffer is closed to the macros, which call __overflow, after it
 * (stream_put.c; id printed its newline before "(nogroup)").
 */
Test(async, queued_stdio_and_inline_putc_keep_their_order)
{
	macro_lines("locked");
}

/*
 * __fpurge drops what the stream's buffer holds: it comes after what is
 * queued to the stream, the queued fflush included, as without the
 * library it comes after the fflush that wrote the buffer out.  bash runs
 * "fflush (stdout); fpurge (stdout);" in a command substitution's child:
 * the purge dropped a line a helper had just put into the buffer, and
 * $(echo hello) came back empty about once in 2,400 (child_async.c,
 * async_fpurge).
 */
Test(async, fpurge_comes_after_the_queued_fflush)
{
	struct run r;

	RUN_CHILD(&r, "policy=stdio:async:workers=1:fd_local=none", "async_fpurge", child_dir);
	assert_child_exit0(&r);
	cr_expect_eq(out_long(r.out, "fpurge:", "after", -1), 5, "%s", r.out);
	cr_expect_eq(out_long(r.out, "fpurge:", "final", -1), 5, "%s", r.out);
	run_free(&r);
}

/*
 * A write to a kernel interface's file (/proc, /sys, a cgroup's) is a
 * command: it is made, not queued, so that its effect is there when the
 * call returns and its error is the call's (systemd's test-process-util
 * got the EPERM of its write to /proc/self/oom_score_adj from a later
 * call; child_async.c, async_kernel_file).
 */
Test(async, a_write_to_a_kernel_file_is_made_not_queued)
{
	struct run r;

	RUN_CHILD(&r, "policy=stdio:async,write:async", "async_kernel_file");
	assert_child_exit0(&r);
	cr_expect_eq(out_long(r.out, "kernel:", "flush", 0), -1, "fflush: %s", r.out);
	cr_expect_eq(out_long(r.out, "kernel:", "ferr", 0), EINVAL, "fflush: %s", r.out);
	cr_expect_eq(out_long(r.out, "kernel:", "write", 0), -1, "write: %s", r.out);
	cr_expect_eq(out_long(r.out, "kernel:", "werr", 0), EINVAL, "write: %s", r.out);
	/* Opened before any thread was marked: its file system is learnt at the first write. */
	cr_expect_eq(out_long(r.out, "kernel:", "eflush", 0), -1, "early fflush: %s", r.out);
	cr_expect_eq(out_long(r.out, "kernel:", "eferr", 0), EINVAL, "early fflush: %s", r.out);
	cr_expect_eq(out_long(r.out, "kernel:", "ewrite", 0), -1, "early write: %s", r.out);
	cr_expect_eq(out_long(r.out, "kernel:", "ewerr", 0), EINVAL, "early write: %s", r.out);
	cr_expect_eq(json_family(&r, "fputs", "async"), 0, "%s", r.out);
	cr_expect_eq(json_family(&r, "write", "async"), 0, "%s", r.out);
	run_free(&r);
}

/* ---- a full ring --------------------------------------------------------------------------- */

/* A 4 KiB ring is full all the time: the writes wait, or are made synchronously. */
Test(async, full_ring_waits_and_loses_nothing)
{
	struct run r;

	lines_run(&r, "policy=stdio:async:async_ring_kb=4:async_full=wait", "file", 8, 20000,
		  "close");
	cr_expect_eq(json_family(&r, "fprintf", "async"), 8 * 20000, "%s", r.out);
	cr_expect_eq(json_family(&r, "fprintf", "offloaded"), 0, "%s", r.out);
	cr_expect_gt(json_count(&r, "async_drain", "offloaded"), 0, "never waited for room");
	check_files("file", 8, 20000);
	run_free(&r);
}

Test(async, full_ring_goes_sync_and_loses_nothing)
{
	struct run r;

	lines_run(&r, "policy=stdio:async:async_ring_kb=4:async_full=sync", "file", 8, 20000,
		  "close");
	long queued = json_family(&r, "fprintf", "async");
	long made = json_family(&r, "fprintf", "offloaded");
	cr_expect_eq(queued + made, 8 * 20000, "%ld queued + %ld made synchronously", queued, made);
	cr_expect_gt(made, 0, "the ring was never full");
	cr_expect_eq(out_long(r.out, NULL, "async", -1), queued, "%s", r.out);
	check_files("file", 8, 20000);
	run_free(&r);
}

/* ---- flush points -------------------------------------------------------------------------- */

/*
 * 1000 queued lines, then KIND; the file is read with a descriptor of its
 * own as soon as KIND returns.  unmarked: the only helper is held in a
 * blocking read, so nothing drained in the background (before == 0) and
 * KIND itself, on the unmarked main thread, wrote the lines.
 */
static void barrier(const char *kind, const char *who)
{
	static const char opts[] = "policy=stdio:async,write:async:workers=1:fd_local=none";
	struct run r;

	RUN_CHILD(&r, opts, "barrier", kind, child_dir, who);
	assert_child_exit0(&r);
	long expected = out_long(r.out, NULL, "expected", -1);
	cr_expect_eq(out_long(r.out, NULL, "after", -2), expected, "%s by %s: %s", kind, who,
		     r.out);
	if (!strcmp(who, "unmarked"))
		cr_expect_eq(out_long(r.out, NULL, "before", -1), 0,
			     "%s: the lines were written before the call: %s", kind, r.out);
	run_free(&r);
}

/*
 * An unmarked thread's fflush writes what is queued.  A marked thread's
 * only queues a mark (test_async_log.c); with fsync after it, the lines
 * are written (and flushed) when fsync returns.
 */
Test(async, fflush_writes_what_is_queued)
{
	barrier("fflush_fsync", "marked");
	barrier("fflush", "unmarked");
}

/*
 * The marked thread holds the stream's lock (flockfile) while it logs,
 * flushes and syncs: the helpers cannot take it, so fsync must not wait
 * for them for ever (it writes the queue itself).
 */
Test(async, fflush_while_holding_the_stream_lock_writes_what_is_queued)
{
	barrier("fflush_locked", "marked");
}

Test(async, fclose_writes_what_is_queued)
{
	barrier("fclose", "marked");
	barrier("fclose", "unmarked");
}

Test(async, fsync_writes_what_is_queued)
{
	barrier("fsync", "marked");
	barrier("fsync", "unmarked");
}

Test(async, close_writes_what_is_queued)
{
	barrier("close", "marked");
	barrier("close", "unmarked");
}

/* ---- exit ---------------------------------------------------------------------------------- */

/* 10000 lines queued behind a held helper, then the process ends: HOW. */
static void exit_drain(const char *how)
{
	static const char opts[] =
		"policy=stdio:async,write:async:workers=1:fd_local=none:async_ring_kb=4096";
	char path[PATH_MAX];
	struct run r;

	RUN_CHILD(&r, opts, "exit_drain", how, child_dir);
	assert_child_exit0(&r);
	cr_expect_eq(out_long(r.out, NULL, "before", -1), 0, "%s: written too early: %s", how,
		     r.out);
	child_path(path, "exit.file");
	check_lines(path, 0, 1, 10000);
	run_free(&r);
}

Test(async, return_from_main_writes_what_is_queued)
{
	exit_drain("return");
	exit_drain("return_fd");
}

Test(async, exit_from_a_sigterm_handler_writes_what_is_queued)
{
	/*
	 * exit() in a handler is not async-signal-safe, and ThreadSanitizer
	 * says so when exit's work (ours: writing the queue, whose stream
	 * allocates its buffer) calls malloc.  The program's choice, common in
	 * daemons, and what this test is about: that report is off here only.
	 */
	const char *tsan = getenv("TSAN_OPTIONS");
	if (tsan) {
		char opts[512];
		snprintf(opts, sizeof(opts), "%s:report_signal_unsafe=0", tsan);
		setenv("TSAN_OPTIONS", opts, 1);
	}
	exit_drain("sigterm");
}

/* The threads are joined, the files left open: exit drains and flushes them. */
Test(async, exit_with_open_files)
{
	struct run r;

	lines_run(&r, "policy=stdio:async", "files", 4, 20000, "return");
	check_files("files", 4, 20000);
	run_free(&r);
	lines_run(&r, "policy=write:async", "fd", 4, 20000, "return");
	check_files("fd", 4, 20000);
	run_free(&r);
}

/*
 * A child forked while writes are queued inherits a copy of the rings:
 * those bytes belong to the parent, which writes them.  The child's exit
 * must not write them a second time.
 */
Test(async, a_forked_child_does_not_write_the_parents_queue_again)
{
	char path[PATH_MAX];
	struct run r;

	RUN_CHILD(&r, "policy=write:async:workers=1:fd_local=none", "fork_queue", child_dir);
	assert_child_exit0(&r);
	cr_expect_eq(out_long(r.out, NULL, "child_status", -1), 0, "%s", r.out);
	child_path(path, "fork.file");
	check_lines(path, 0, 1, 1000);
	run_free(&r);
}

/* ---- errors found later --------------------------------------------------------------------- */

static void async_error(struct run *r, const char *kind)
{
	RUN_CHILD(r, "policy=write:async:workers=1:fd_local=none", "async_error", kind, child_dir);
	assert_child_exit0(r);
}

Test(async, full_tmpfs_fails_a_later_write_with_enospc)
{
	struct run r;

	async_error(&r, "enospc");
	if (strstr(r.out, "skip="))
		CHILD_SKIP("%s", r.out);
	cr_expect_eq(out_long(r.out, NULL, "accepted", -1), 32,
		     "128 KiB of async writes must all be accepted: %s", r.out);
	cr_expect_eq(out_long(r.out, NULL, "next_ret", 0), -1, "%s", r.out);
	cr_expect_eq(out_long(r.out, NULL, "next_errno", 0), ENOSPC, "%s", r.out);
	cr_expect_neq(strstr(r.err, "No space left on device"), NULL, "not reported: %s", r.err);
	run_free(&r);
}

Test(async, write_to_a_closed_descriptor_fails_the_next_call_with_ebadf)
{
	struct run r;

	async_error(&r, "ebadf");
	cr_expect_eq(out_long(r.out, NULL, "accepted", -1), 1, "%s", r.out);
	cr_expect_eq(out_long(r.out, NULL, "next_ret", 0), -1, "%s", r.out);
	cr_expect_eq(out_long(r.out, NULL, "next_errno", 0), EBADF, "%s", r.out);
	run_free(&r);
}

/* The error belongs to the descriptor that failed, not to its number's next file. */
Test(async, a_new_file_on_the_number_does_not_inherit_the_error)
{
	char other[64];
	struct run r;

	async_error(&r, "reuse");
	cr_assert_eq(out_long(r.out, NULL, "same", 0), 1, "the number was not reused: %s", r.out);
	cr_expect_eq(out_long(r.out, NULL, "next_ret", 0), 4,
		     "a write to the new file failed with errno %ld: %s",
		     out_long(r.out, NULL, "next_errno", 0), r.out);
	cr_expect_str_eq(out_word(r.out, NULL, "other", other, sizeof(other)), "nextmore", "%s",
			 r.out);
	run_free(&r);
}

/* ---- abort() ------------------------------------------------------------------------------ */

/*
 * The program's own abort() writes what is queued before SIGABRT, and
 * flushes the streams it wrote to.  What cannot be saved (docs/async.md): an
 * abort() inside libc (a failed assert, heap corruption), a signal with no
 * handler, _exit().
 */
static void abort_drain(const char *how)
{
	static const char opts[] =
		"policy=stdio:async,write:async:workers=1:fd_local=none:async_ring_kb=4096";
	char path[PATH_MAX];
	struct run r;

	RUN_CHILD(&r, opts, "exit_drain", how, child_dir);
	cr_assert(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGABRT,
		  "%s: status 0x%x, stderr:\n%s", how, r.status, r.err);
	cr_expect_eq(out_long(r.out, NULL, "before", -1), 0, "%s: written too early: %s", how,
		     r.out);
	child_path(path, "exit.file");
	check_lines(path, 0, 1, 10000);
	run_free(&r);
}

Test(async, abort_writes_what_is_queued)
{
	abort_drain("abort");
}

Test(async, abort_writes_and_flushes_queued_stream_lines)
{
	abort_drain("abort_stdio");
}

/*
 * A flush point just before abort() (here fflush(stdout); ThreadSanitizer's
 * own abort() does that) drains the queue into the stream's buffer: abort()
 * still flushes that stream, which only drains wrote to.
 */
Test(async, abort_flushes_a_stream_a_barrier_drained_into)
{
	abort_drain("abort_after_flush");
}

/*
 * A drain that found a stream lock taken by an unmarked thread: that
 * thread's funlockfile() passes through no code of ours, and the program
 * then queues nothing more.  The lines must still be written, by an idle
 * helper's retry.  (Without it they waited for the next async write, flush
 * point or exit.)
 */
Test(async, a_drain_held_up_by_an_unmarked_threads_lock_is_retried)
{
	struct run r;

	RUN_CHILD(&r, "policy=stdio:async:workers=1", "lock_release", child_dir);
	assert_child_exit0(&r);
	long want = out_long(r.out, NULL, "expected", -1);
	cr_assert_gt(want, 0, "%s", r.out);
	/* The drain ran while the lock was held and gave up: what follows is the retry's. */
	cr_assert_gt(out_long(r.out, NULL, "refused", -1), 0,
		     "no drain found the lock taken before it was released: %s", r.out);
	cr_expect_lt(out_long(r.out, NULL, "held_bytes", -1), want,
		     "every line was written while the lock was held: %s", r.out);
	cr_expect_eq(out_long(r.out, NULL, "bytes", -1), want,
		     "the queued lines were not written after the lock was released: %s", r.out);
	run_free(&r);
}

/* ---- async_path= ------------------------------------------------------------------------- */

static void path_lines(const char *sub, const char *name, int t, long nl)
{
	char rel[PATH_MAX], path[PATH_MAX];

	snprintf(rel, sizeof(rel), "%s/%s", sub, name);
	child_path(path, rel);
	check_lines(path, t, 1, nl);
}

/*
 * Files under the prefix are written asynchronously whoever opened them
 * and however (open, fopen, fdopen, a relative path, openat), even though
 * policy= says write:strict; a file elsewhere follows policy=.
 */
static void async_path(const char *sub, int quote)
{
	char opts[PATH_MAX + 128];
	struct run r;

	snprintf(opts, sizeof(opts),
		 "async_path=%s%s/%s%s:policy=write:strict:workers=1:fd_local=none",
		 quote ? "\"" : "", child_dir, sub, quote ? "\"" : "");
	RUN_CHILD(&r, opts, "async_path", child_dir, sub);
	assert_child_exit0(&r);
	cr_expect_eq(out_long(r.out, NULL, "before", -1), 0,
		     "written while the only helper was held: %s", r.out);
	char other[32];
	cr_expect_str_eq(out_word(r.out, "other=", "other", other, sizeof(other)), "-1/1",
			 "a write outside the prefix follows policy= (write:strict): %s", r.out);
	cr_expect_eq(json_count(&r, "write", "async"), 100 + 10 + 10);
	cr_expect_eq(json_count(&r, "write", "offloaded") + json_count(&r, "write", "local"), 0);
	cr_expect_eq(json_count(&r, "write", "denied"), 1);
	cr_expect_eq(json_family(&r, "fprintf", "async"), 100 + 100 + 10);
	path_lines(sub, "fd.log", 0, 100);
	path_lines(sub, "stream.log", 0, 100);
	path_lines(sub, "fdopen.log", 0, 100);
	path_lines(sub, "rel.log", 1, 10);
	path_lines(sub, "at.log", 1, 10);
	path_lines(sub, "f.log", 1, 10);
	run_free(&r);
}

Test(async, async_path_writes_files_under_the_prefix_asynchronously)
{
	async_path("logs", 0);
	async_path("logs/", 0); /* a trailing '/' is the same prefix */
}

Test(async, async_path_prefix_with_a_colon)
{
	async_path("lo:gs", 1);
	async_path("lo:gs", 0); /* what follows ':' has no '=': still the value */
}

/* fdkind disk writes once to DIR/fdkind.file: a string prefix is not enough. */
static long fdkind_async(const char *prefix)
{
	char opts[PATH_MAX + 128];
	struct run r;

	snprintf(opts, sizeof(opts), "async_path=%s/%s:policy=write:strict", child_dir, prefix);
	RUN_CHILD(&r, opts, "fdkind", "disk", child_dir);
	assert_child_exit0(&r);
	long queued = json_count(&r, "write", "async");
	cr_expect_eq(queued + json_count(&r, "write", "denied"), 1);
	run_free(&r);
	return queued;
}

Test(async, async_path_is_a_prefix_of_whole_components)
{
	cr_expect_eq(fdkind_async("fdkind.fil"), 0);
	cr_expect_eq(fdkind_async("fdkind.file"), 1);
	cr_expect_eq(fdkind_async("."), 1); /* resolved: DIR itself */
}

Test(async, async_path_bad_values)
{
	static const char *const bad[] = {
		"async_path=",
		"async_path=var/log",
		"async_path=/var/log,,/tmp",
		"async_path=/var/log,relative",
		"async_path=/1,/2,/3,/4,/5,/6,/7,/8,/9,/10,/11,/12,/13,/14,/15,/16,/17",
	};
	struct run r;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		RUN_CHILD_RAW(&r, bad[i], "fdkind", "pipe", child_dir);
		ASSERT_CONFIG_ERROR(&r, "async_path", "absolute path");
		run_free(&r);
	}
}
