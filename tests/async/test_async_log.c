/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Async logging as cheap as buffered stdio (issue 30, item 4): on a stream
 * whose writes are queued (policy=stdio:async), a marked thread's fflush
 * only queues a mark behind the lines before it; the helper that writes
 * them flushes the stream there.  It never waits for a helper, makes no
 * system call but a FUTEX_WAKE of a sleeping helper, and no line is lost
 * or reordered.  fsync and fclose wait for what is queued (docs/async.md).
 *
 * Witnesses, counted, never timed:
 *   - the only helper (workers=1) is held in a blocking read: a marked
 *     thread logs and flushes anyway, and finishes while it is held;
 *   - rt_offload_get_stats(): the logging loop offloads nothing, and
 *     queues every fprintf and every fflush;
 *   - a seccomp filter on the logging thread (installed raw, unseen by the
 *     library) traps every system call not made from one instruction of
 *     this file; its handler counts them per fflush and makes them there;
 *   - the file itself, watched from an unmarked thread with stat (no flush
 *     point): the helpers write the lines, and the queued fflush, on their
 *     own, with no request and no wake-up from the logging thread, even
 *     after pauses long enough for every helper to fall asleep.
 */
#include "harness.h"
#include "call_witness.h"

#include <criterion/criterion.h>
#include <dlfcn.h>
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/futex.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "raw_seccomp.h"
#include "rtoffload.h"

/* ---- the file: lines "I", 0 to n - 1, in order ---------------------------------------- */

static void check_lines(const char *path, long n)
{
	size_t len;
	char *text = slurp(path, &len);
	long next = 0, bad = 0;

	cr_assert_not_null(text, "no file %s", path);
	for (const char *p = text, *stop = text + len; p < stop;) {
		const char *eol = memchr(p, '\n', (size_t)(stop - p));
		long v = 0;
		const char *s = p;
		if (!eol)
			eol = stop;
		for (; s < eol && *s >= '0' && *s <= '9'; s++)
			v = v * 10 + (*s - '0');
		if (s != eol || s == p || v != next)
			bad++;
		next = s == eol ? v + 1 : next + 1;
		p = eol + 1;
	}
	cr_expect_eq(bad, 0, "%s: %ld lines missing, foreign or out of order", path, bad);
	cr_expect_eq(next, n, "%s: %ld of %ld lines", path, next, n);
	free(text);
}

/* ---- the logging loop --------------------------------------------------------------- */

struct logger {
	FILE *f;
	long lines;
	struct flag done;
	uint64_t offloaded, async; /* the loop's deltas */
	int fflush_fails;
};

static void log_lines(void *arg)
{
	struct logger *l = arg;
	struct rt_offload_stats a, b;

	rt_offload_get_stats(&a);
	for (long i = 0; i < l->lines; i++) {
		fprintf(l->f, "%ld\n", i);
		if (i % 10 == 9)
			l->fflush_fails += fflush(l->f) != 0;
	}
	rt_offload_get_stats(&b);
	l->offloaded = b.offloaded - a.offloaded;
	l->async = b.async - a.async;
	flag_set(&l->done);
}

/* ---- the helper held ---------------------------------------------------------------- */

struct hold {
	int fds[2];
	char c;
};

static void blocked_read(void *arg)
{
	struct hold *h = arg;
	if (read(h->fds[0], &h->c, 1) != 1) /* offloaded (fd_local=none): the helper waits */
		h->c = 0;
}

Test(async_log, fflush_does_not_wait_for_a_held_helper, .timeout = TEST_TIMEOUT)
{
	char dir[PATH_MAX], path[PATH_MAX];
	static struct hold h;
	static struct logger l;
	struct bg holder, logger;

	tmp_make(dir);
	path_join(path, dir, "log");
	l.f = fopen(path, "w"); /* here: a marked thread's open waits for the helper */
	cr_assert_not_null(l.f);
	l.lines = 1000;
	cr_assert_eq(pipe(h.fds), 0);
	start_helpers();
	bg_start(&holder, blocked_read, &h, BG_MARK);
	cr_assert_neq(wait_helper_in_syscall(SYS_read, h.fds[0]), 0, "the helper is not held");
	bg_start(&logger, log_lines, &l, BG_MARK | BG_PIN);
	int finished = flag_wait_s(&l.done, 10);
	cr_assert_eq(write(h.fds[1], "x", 1), 1); /* let the helper go */
	bg_join(&holder);
	bg_join(&logger);
	cr_expect(finished, "the marked thread's fflush waited for the held helper");
	cr_expect_eq(l.fflush_fails, 0);
	cr_expect_eq(l.offloaded, 0, "%llu calls of the loop offloaded",
		     (unsigned long long)l.offloaded);
	cr_expect_eq(l.async, l.lines + l.lines / 10, "%llu queued", (unsigned long long)l.async);
	cr_expect_eq(fclose(l.f), 0); /* unmarked: writes what is queued first */
	check_lines(path, l.lines);
	close(h.fds[0]);
	close(h.fds[1]);
	tmp_remove(dir);
}

/* ---- a system call witness on the logging thread (call_witness.h) ------------------ */

struct witnessed {
	FILE *f;
	long lines;
	int installed, fflush_fails;
	long fflush_waits, fflush_other, last_nr, fprintf_waits;
	uint64_t offloaded, async;
};

static void witnessed_loop(void *arg)
{
	struct witnessed *w = arg;
	struct rt_offload_stats a, b;

	w->installed = install_witness() == 0;
	if (!w->installed)
		return;
	rt_offload_get_stats(&a);
	for (long i = 0; i < w->lines; i++) {
		long w0 = atomic_load(&seen_wait);
		fprintf(w->f, "%ld\n", i);
		w->fprintf_waits += atomic_load(&seen_wait) != w0;
		if (i % 10 == 9) {
			long o0 = atomic_load(&seen_other);
			w0 = atomic_load(&seen_wait);
			w->fflush_fails += fflush(w->f) != 0;
			w->fflush_waits += atomic_load(&seen_wait) != w0;
			w->fflush_other += atomic_load(&seen_other) != o0;
		}
	}
	rt_offload_get_stats(&b);
	w->offloaded = b.offloaded - a.offloaded;
	w->async = b.async - a.async;
	w->last_nr = atomic_load(&other_nr);
}

Test(async_log, fflush_makes_no_system_call_and_no_line_is_lost, .timeout = TEST_TIMEOUT)
{
	char dir[PATH_MAX], path[PATH_MAX];
	static struct witnessed w;

	tmp_make(dir);
	path_join(path, dir, "log");
	w.f = fopen(path, "w");
	cr_assert_not_null(w.f);
	w.lines = 20000;
	start_helpers();
	run_marked(witnessed_loop, &w);
	cr_assert(w.installed, "no witness: %s", strerror(errno));
	cr_expect_eq(w.fflush_fails, 0);
	cr_expect_eq(w.offloaded, 0, "%llu calls of the loop offloaded",
		     (unsigned long long)w.offloaded);
	cr_expect_eq(w.async, w.lines + w.lines / 10, "%llu queued", (unsigned long long)w.async);
	cr_expect_eq(w.fflush_other, 0, "%ld fflush calls made a system call (the last: %ld)",
		     w.fflush_other, w.last_nr);
#ifndef __SANITIZE_THREAD__ /* its runtime's own locks wait on futexes, in its interceptors */
	cr_expect_eq(w.fflush_waits, 0, "%ld fflush calls waited on a futex", w.fflush_waits);
	cr_expect_eq(w.fprintf_waits, 0, "%ld fprintf calls waited on a futex", w.fprintf_waits);
#endif
	cr_expect_eq(fclose(w.f), 0);
	check_lines(path, w.lines);
	tmp_remove(dir);
}

/* ---- the helpers write on their own ------------------------------------------------ */

/*
 * A logger that pauses 2 ms every 100 lines, long enough for the only
 * helper to stop polling (helper_idle_us, 200 us) and fall asleep: its
 * fprintf and fflush calls, witnessed, make no system call at all, not
 * even a FUTEX_WAKE.  The helper must still write every line: the test
 * never flushes, it waits for the file to hold them.
 */
struct quiet {
	FILE *f;
	long lines;
	int installed, fflush_fails;
	long calls_waking, calls_other, last_nr;
	uint64_t offloaded;
};

static void quiet_loop(void *arg)
{
	struct quiet *w = arg;
	struct rt_offload_stats a, b;
	const struct timespec pause = {0, 2 * 1000 * 1000};

	w->installed = install_witness() == 0;
	if (!w->installed)
		return;
	rt_offload_get_stats(&a);
	for (long i = 0; i < w->lines; i++) {
		long k0 = atomic_load(&seen_wake), o0 = atomic_load(&seen_other);
		fprintf(w->f, "%ld\n", i);
		if (i % 10 == 9 || i == w->lines - 1)
			w->fflush_fails += fflush(w->f) != 0;
		w->calls_waking += atomic_load(&seen_wake) != k0;
		w->calls_other += atomic_load(&seen_other) != o0;
		if (i % 100 == 99)
			nanosleep(&pause, NULL); /* its system calls are not the loop's */
	}
	rt_offload_get_stats(&b);
	w->offloaded = b.offloaded - a.offloaded;
	w->last_nr = atomic_load(&other_nr);
}

static long digits_bytes(long n) /* the bytes of "0\n" to "n-1\n" */
{
	long bytes = 0;

	for (long i = 0; i < n; i++)
		bytes += snprintf(NULL, 0, "%ld\n", i);
	return bytes;
}

Test(async_log, helpers_write_the_lines_on_their_own_and_are_never_woken, .timeout = TEST_TIMEOUT)
{
	char dir[PATH_MAX], path[PATH_MAX];
	static struct quiet w;
	struct stat st = {0};

	tmp_make(dir);
	path_join(path, dir, "log");
	w.f = fopen(path, "w");
	cr_assert_not_null(w.f);
	w.lines = 3000;
	start_helpers();
	run_marked(quiet_loop, &w);
	cr_assert(w.installed, "no witness: %s", strerror(errno));
	long want = digits_bytes(w.lines);
	/* stat() is no flush point: the bytes are there when a helper wrote them. */
	for (int i = 0; i < 1000 && (stat(path, &st) != 0 || st.st_size < want); i++) {
		const struct timespec ms = {0, 10 * 1000 * 1000};
		nanosleep(&ms, NULL);
	}
	cr_expect_eq(st.st_size, want, "the helpers wrote %lld of %ld bytes on their own",
		     (long long)st.st_size, want);
	check_lines(path, w.lines); /* before fclose, which would write what is left */
	cr_expect_eq(w.fflush_fails, 0);
	cr_expect_eq(w.offloaded, 0, "%llu calls of the loop offloaded",
		     (unsigned long long)w.offloaded);
	cr_expect_eq(w.calls_other, 0,
		     "%ld fprintf/fflush calls made a system call (the last: %ld)", w.calls_other,
		     w.last_nr);
#ifndef __SANITIZE_THREAD__ /* its runtime's own locks use futexes, in its interceptors */
	cr_expect_eq(w.calls_waking, 0, "%ld fprintf/fflush calls woke a helper (FUTEX_WAKE)",
		     w.calls_waking);
#endif
	cr_expect_eq(fclose(w.f), 0);
	tmp_remove(dir);
}
