/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Process lifetime under the library (issue 17): the process ends when its
 * last application thread ends, with the status glibc gives without the
 * library, though the helper threads live on; queued async writes and the
 * statistics are written first; nothing of the process tree is left.
 *
 * Each test runs one scenario of proc_child (preloaded, its options in
 * RTOFFLOAD_OPTIONS) in a process group of its own, with this process as
 * the child subreaper (PR_SET_CHILD_SUBREAPER): a daemon or an orphaned
 * grandchild comes back to it, so "nothing left" is waitpid(-1) saying
 * ECHILD.  Waits poll for a state; they time out only to turn a hang into
 * a failure (and then kill what is left).
 */
#include "harness.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef PROC_CHILD
#error "PROC_CHILD (the scenario program's path) must come from the build"
#endif

/*
 * ThreadSanitizer's background thread is a glibc thread that never ends:
 * under TSan, with or without the library, a process whose last thread
 * ends by pthread_exit() (or by a raw exit) never ends, and once its
 * initial thread has exited TSan cannot read /proc/self/maps to match its
 * suppressions.  The tests whose process must end that way do not run
 * under it (tests/sanitizers/README.md); the others do.
 */
#ifdef __SANITIZE_THREAD__
#define NOT_UNDER_TSAN .disabled = true
#else
#define NOT_UNDER_TSAN .disabled = false
#endif

static char dir[PATH_MAX];

static void setup(void)
{
	cr_assert_eq(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
	tmp_make(dir);
}

static void teardown(void)
{
	tmp_remove(dir);
}

TestSuite(lifetime, .init = setup, .fini = teardown, .timeout = TEST_TIMEOUT);

static void nap_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

/* SIGKILL every process whose parent is this one (orphans come here), until none is left. */
static void kill_descendants(void)
{
	for (int round = 0; round < 100; round++) {
		DIR *d = opendir("/proc");
		struct dirent *e;
		while (d && (e = readdir(d))) {
			char path[300], buf[512];
			int pid = atoi(e->d_name), ppid;
			snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
			FILE *f = pid > 0 ? fopen(path, "r") : NULL;
			if (!f)
				continue;
			size_t n = fread(buf, 1, sizeof(buf) - 1, f);
			fclose(f);
			buf[n] = '\0';
			char *p = strrchr(buf, ')');
			if (p && sscanf(p + 1, " %*c %d", &ppid) == 1 && ppid == getpid())
				kill(pid, SIGKILL);
		}
		if (d)
			closedir(d);
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		if (waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD)
			return;
		nap_ms(10);
	}
}

/* Run proc_child SCENARIO dir [args...] with these options, in its own process group. */
static pid_t spawn(const char *options, const char *scenario, const char *a3, const char *a4)
{
	pid_t pid = fork();

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		setpgid(0, 0);
		setenv("RTOFFLOAD_OPTIONS", options, 1);
		setenv("LD_PRELOAD", rto_preload(), 1);
		execl(PROC_CHILD, PROC_CHILD, scenario, dir, a3, a4, (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* pid's wait status; a process still there after WAIT_S fails the test. */
static int reap(pid_t pid)
{
	int st;

	for (long i = 0; i < (long)(WAIT_S * 1000); i++) {
		pid_t w = waitpid(pid, &st, WNOHANG);
		if (w == pid)
			return st;
		cr_assert_eq(w, 0, "waitpid(%d): %s", (int)pid, strerror(errno));
		nap_ms(1);
	}
	kill_descendants();
	cr_assert_fail("process %d still there after %.0f s: it did not end", (int)pid, WAIT_S);
	return -1;
}

/* Nothing of the tree is left: no child, no orphan handed to us. */
static void nothing_left(void)
{
	int st;
	pid_t w = waitpid(-1, &st, WNOHANG);

	if (w < 0 && errno == ECHILD)
		return;
	kill_descendants();
	cr_assert_fail("a process of the tree was left behind (waitpid: %d)", (int)w);
}

static void assert_exited(int st, int code, const char *what)
{
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == code, "%s: want exit status %d, got %s %d",
		  what, code, WIFEXITED(st) ? "exit status" : "signal",
		  WIFEXITED(st)	    ? WEXITSTATUS(st)
		  : WIFSIGNALED(st) ? WTERMSIG(st)
				    : -1);
}

static void assert_file(const char *name, const char *want)
{
	char path[PATH_MAX];

	pathf(path, "%s/%s", dir, name);
	char *got = slurp(path, NULL);
	cr_assert(got && strcmp(got, want) == 0, "%s: want '%s', got '%s'", name, want,
		  got ? got : "(none)");
	free(got);
}

/* The pid a scenario wrote into dir/name, once it is there. */
static pid_t pid_in(const char *name)
{
	char path[PATH_MAX];

	pathf(path, "%s/%s", dir, name);
	for (long i = 0; i < (long)(WAIT_S * 1000); i++) {
		char *s = slurp(path, NULL);
		int pid = s ? atoi(s) : 0;
		free(s);
		if (pid > 0)
			return pid;
		nap_ms(1);
	}
	kill_descendants();
	cr_assert_fail("%s never written", name);
	return -1;
}

static void run_expect(const char *options, const char *scenario, const char *a3, const char *a4,
		       int code)
{
	int st = reap(spawn(options, scenario, a3, a4));
	assert_exited(st, code, scenario);
	nothing_left();
}

/* ---- the six lines ---------------------------------------------------------- */

Test(lifetime, six_lines_mark_main, NOT_UNDER_TSAN)
{
	run_expect("mark=main", "six", NULL, NULL, 0);
	assert_file("x", "x");
}

Test(lifetime, six_lines_mark_all, NOT_UNDER_TSAN)
{
	run_expect("mark=all", "six", NULL, NULL, 0);
	assert_file("x", "x");
}

/* Queued async writes are written, and stats_file is produced, by that exit. */
Test(lifetime, six_lines_async_writes_and_stats, NOT_UNDER_TSAN)
{
	char opts[PATH_MAX + 128], stats[PATH_MAX], want[1024];

	pathf(stats, "%s/stats.json", dir);
	snprintf(opts, sizeof(opts), "mark=main:policy=write:async:stats_file=%s", stats);
	pid_t pid = spawn(opts, "async", NULL, NULL);
	assert_exited(reap(pid), 0, "async");
	nothing_left();
	want[0] = '\0';
	for (int i = 0; i < 100; i++)
		snprintf(want + strlen(want), sizeof(want) - strlen(want), "line %d\n", i);
	assert_file("log", want);
	char *json = slurp(stats, NULL);
	char key[64];
	snprintf(key, sizeof(key), "{\"pid\":%d,", (int)pid);
	cr_assert(json && strstr(json, key), "no statistics of pid %d in %s", (int)pid, stats);
	cr_assert(strstr(json, "\"name\":\"write\""), "the statistics miss the writes");
	free(json);
}

/* ---- whichever thread is last, however it ends ------------------------------------- */

Test(lifetime, last_thread_pthread_exit_marked, NOT_UNDER_TSAN)
{
	run_expect("mark=all", "last", "exit", NULL, 0);
	assert_file("last", "exit");
}

Test(lifetime, last_thread_returns_marked, NOT_UNDER_TSAN)
{
	run_expect("mark=all", "last", "return", NULL, 0);
	assert_file("last", "return");
}

Test(lifetime, last_thread_cancelled_marked, NOT_UNDER_TSAN)
{
	run_expect("mark=all", "last", "cancel", NULL, 0);
	assert_file("last", "cancelled");
}

/* The initial thread marked (it starts the helpers), the last one not. */
Test(lifetime, last_thread_unmarked_returns, NOT_UNDER_TSAN)
{
	run_expect("mark=main", "last", "return", NULL, 0);
	assert_file("last", "return");
}

Test(lifetime, last_thread_unmarked_cancelled, NOT_UNDER_TSAN)
{
	run_expect("mark=main", "last", "cancel", NULL, 0);
	assert_file("last", "cancelled");
}

/* Nothing marked by policy: the last thread marks itself through the API. */
Test(lifetime, last_thread_api_marked_pthread_exit, NOT_UNDER_TSAN)
{
	run_expect("", "last", "exit", "api", 0);
	assert_file("last", "exit");
}

/* A marked thread started the helpers and ended; the unmarked initial thread is last. */
Test(lifetime, initial_thread_last_unmarked, NOT_UNDER_TSAN)
{
	run_expect("", "main-last", NULL, NULL, 0);
	assert_file("first", "f");
	assert_file("main", "m");
}

/* ---- fork children ------------------------------------------------------------------ */

/* The child's only thread is the one that forked; it ends with pthread_exit. */
Test(lifetime, fork_from_thread_child_pthread_exit)
{
	run_expect("mark=all", "fork", NULL, NULL, 0);
	assert_file("parent", "p");
	assert_file("child", "c");
}

Test(lifetime, fork_from_thread_child_pthread_exit_mark_main)
{
	run_expect("mark=main", "fork", NULL, NULL, 0);
	assert_file("child", "c");
}

/* ---- exit, _exit, exit_group, exec --------------------------------------------------- */

Test(lifetime, exit_races_marked_stdio_loggers)
{
	run_expect("mark=all", "exit-race", NULL, NULL, 3);
}

Test(lifetime, _exit_from_thread_while_helper_in_call)
{
	run_expect("mark=main", "_exit", NULL, NULL, 4);
}

Test(lifetime, exit_group_from_thread_while_helper_in_call)
{
	run_expect("mark=main", "exit_group", NULL, NULL, 5);
}

Test(lifetime, execve_from_thread_while_helper_in_call)
{
	run_expect("mark=main", "exec", NULL, NULL, 6);
}

/* ---- daemon(), setsid and a double fork ------------------------------------------------ */

Test(lifetime, daemon_ends_with_its_last_thread)
{
	pid_t pid = spawn("mark=main", "daemon", NULL, NULL);
	assert_exited(reap(pid), 0, "daemon's parent");
	pid_t d = pid_in("daemon");
	cr_assert_neq(d, pid);
	assert_exited(reap(d), 0, "the daemon");
	nothing_left();
}

Test(lifetime, setsid_double_fork_grandchild_ends)
{
	pid_t pid = spawn("mark=main", "double-fork", NULL, NULL);
	pid_t gc = pid_in("grandchild");
	cr_assert_neq(gc, pid);
	int a = reap(pid), b = reap(gc);
	assert_exited(a, 0, "the child");
	assert_exited(b, 0, "the grandchild");
	nothing_left();
}

/* ---- signals -------------------------------------------------------------------------- */

/*
 * Every thread blocks SIGTERM and one waits for it with sigwait(): the
 * helpers must not take it (it would kill the process); the waiter gets
 * it, and as the last thread ends the process with status 0.
 */
Test(lifetime, sigwait_gets_sigterm_helpers_do_not, NOT_UNDER_TSAN)
{
	pid_t pid = spawn("mark=main", "sigwait", NULL, NULL);
	char ready[PATH_MAX];

	pathf(ready, "%s/ready", dir);
	for (long i = 0; access(ready, F_OK) != 0; i++) {
		cr_assert_lt(i, (long)(WAIT_S * 1000), "the program never got ready");
		nap_ms(1);
	}
	cr_assert_eq(kill(pid, SIGTERM), 0);
	assert_exited(reap(pid), 0, "sigwait");
	nothing_left();
	assert_file("signal", "15");
}

/* The last application thread ends by the raw exit system call: only helpers are left. */
Test(lifetime, only_helpers_left_after_raw_exit, NOT_UNDER_TSAN)
{
	run_expect("mark=main", "raw-exit", NULL, NULL, 5);
}

/* ... with SIGTERM pending (blocked by that thread): it ends the process. */
Test(lifetime, sigterm_pending_with_only_helpers_left, NOT_UNDER_TSAN)
{
	int st = reap(spawn("mark=main", "sigterm-pending", NULL, NULL));
	cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM, "want SIGTERM, got status 0x%x", st);
	nothing_left();
}

/* ... and SIGTERM sent once only helpers are left ends it (or it had ended already). */
Test(lifetime, sigterm_with_only_helpers_left, NOT_UNDER_TSAN)
{
	pid_t pid = spawn("mark=main", "raw-exit", NULL, NULL);
	char path[64], buf[512];

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	for (long i = 0;; i++) { /* the initial thread is a zombie: only helpers run */
		cr_assert_lt(i, (long)(WAIT_S * 1000), "the initial thread never exited");
		FILE *f = fopen(path, "r");
		size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
		if (f)
			fclose(f);
		buf[n] = '\0';
		char *p = strrchr(buf, ')');
		if (p && p[1] == ' ' && p[2] == 'Z')
			break;
		nap_ms(1);
	}
	kill(pid, SIGTERM);
	int st = reap(pid);
	cr_assert((WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM) ||
			  (WIFEXITED(st) && WEXITSTATUS(st) == 5),
		  "want SIGTERM (or exit status 5: ended before the signal), got 0x%x", st);
	nothing_left();
}

/* ---- the only-helpers watch opens nothing while the initial thread runs ------------ */

/*
 * How often SCENARIO's threads opened /proc/self/stat (the watch's look),
 * from strace -f.  An open takes the lowest free descriptor number: a
 * program that runs close(n); dup(x) (tar) beside the helpers must not
 * see one, and needs none while its initial thread runs.
 */
static int proc_stat_opens(const char *scenario)
{
	char trace[PATH_MAX + 8], opts[64], preload[PATH_MAX + 16], line[4096];
	int n = 0;

	snprintf(trace, sizeof(trace), "%s/trace", dir);
	/* live=0: the live publisher reads /proc/self/stat once, inside the helpers' start. */
	snprintf(opts, sizeof(opts), "RTOFFLOAD_OPTIONS=mark=main:live=0");
	snprintf(preload, sizeof(preload), "LD_PRELOAD=%s", rto_preload());
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		setpgid(0, 0);
		/* LeakSanitizer's exit check uses ptrace, which strace holds. */
		execlp("strace", "strace", "-f", "-qq", "-e", "trace=openat", "-o", trace, "-E",
		       opts, "-E", preload, "-E", "ASAN_OPTIONS=detect_leaks=0", PROC_CHILD,
		       scenario, dir, (char *)NULL);
		_exit(127);
	}
	int st = reap(pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "strace %s: status 0x%x", scenario, st);
	FILE *f = fopen(trace, "r");
	cr_assert_not_null(f, "%s", trace);
	while (fgets(line, sizeof(line), f))
		n += strstr(line, "\"/proc/self/stat\"") != NULL;
	fclose(f);
	return n;
}

Test(lifetime, watch_opens_nothing_while_the_initial_thread_runs, NOT_UNDER_TSAN)
{
	cr_expect_eq(proc_stat_opens("idle"), 0);
	assert_file("main", "m");
}

/* The control: the same witness sees the looks once the initial thread has ended. */
Test(lifetime, watch_looks_once_the_initial_thread_has_ended, NOT_UNDER_TSAN)
{
	cr_expect_geq(proc_stat_opens("idle-after-main"), 1);
	assert_file("last", "idle");
}
