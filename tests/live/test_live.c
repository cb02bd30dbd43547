/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The live view: `rtoffload stat PID` against a running process gives the
 * numbers that process's own rt_offload_get_stats() gives; the segment is
 * its owner's only (mode 0600: another user cannot read it); it is gone
 * when the process exits, and a killed process's stale one is removed by
 * the next process that starts its publisher, even one cut short while it
 * was being made; live=0 makes none; `rtoffload top` refreshes a terminal
 * in place (tmux, capture-pane); and the publisher never takes a descriptor
 * number from under the program (tar's close(n); dup(x) == n, in a forked
 * child that starts its helpers and publisher right there).
 */
#include "harness.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define OPTIONS "RTOFFLOAD_OPTIONS=live=1:fd_local=none:policy=fsync:local,unlink:strict"

struct child {
	pid_t pid;
	int in;		/* its stdin: closing it ends it */
	char line[512]; /* what it printed: its own statistics */
	char dir[PATH_MAX];
};

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
	nanosleep(&ts, NULL);
}

static void start(struct child *c, const char *options, int busy)
{
	int in[2], out[2];

	tmp_make(c->dir);
	cr_assert_eq(pipe2(in, O_CLOEXEC), 0);
	cr_assert_eq(pipe2(out, O_CLOEXEC), 0);
	c->pid = fork();
	cr_assert_geq(c->pid, 0);
	if (c->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		putenv((char *)options);
		execl(LIVE_CHILD, LIVE_CHILD, c->dir, busy ? "busy" : NULL, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	c->in = in[1];
	size_t n = 0;
	ssize_t r;
	while (n < sizeof(c->line) - 1 && (r = read(out[0], c->line + n, 1)) == 1 &&
	       c->line[n] != '\n')
		n++;
	c->line[n] = '\0';
	close(out[0]);
	cr_assert_eq(kv(c->line, "pid", -1), c->pid, "the child said: '%s'", c->line);
}

static int finish(struct child *c)
{
	int status = -1;

	close(c->in);
	waitpid(c->pid, &status, 0);
	tmp_remove(c->dir);
	return status;
}

static void seg_path(pid_t pid, char *out)
{
	pathf(out, "/dev/shm/rtoffload.%d", (int)pid);
}

/* The segment appears once the publisher ran (after the helpers start). */
static int wait_segment(pid_t pid)
{
	char path[PATH_MAX];

	seg_path(pid, path);
	for (int i = 0; i < (int)(WAIT_S * 100); i++, sleep_ms(10))
		if (access(path, F_OK) == 0)
			return 1;
	return 0;
}

/* The first "key":N of a JSON text after `from`. */
static long json_num(const char *text, const char *from, const char *key)
{
	char k[64];
	const char *p = from ? strstr(text, from) : text;

	snprintf(k, sizeof(k), "\"%s\":", key);
	p = p ? strstr(p, k) : NULL;
	return p ? strtol(p + strlen(k), NULL, 10) : -1;
}

Test(live, stat_gives_the_process_own_numbers, .timeout = TEST_TIMEOUT)
{
	static const char *const keys[] = {"offloaded", "local", "denied", "async", "fallback"};
	struct child c;
	struct proc p;
	char pid[16], path[PATH_MAX];
	struct stat st;

	start(&c, OPTIONS, 0);
	cr_assert(wait_segment(c.pid), "no segment for pid %d", c.pid);
	seg_path(c.pid, path);
	cr_assert_eq(stat(path, &st), 0);
	cr_expect_eq(st.st_mode & 07777, 0600, "mode %o", st.st_mode & 07777);
	cr_expect_eq(st.st_uid, geteuid());

	snprintf(pid, sizeof(pid), "%d", (int)c.pid);
	char *argv[] = {LAUNCHER, "stat", pid, "--json", NULL};
	cr_assert_eq(run_proc(argv, NULL, &p), 0);
	cr_assert(WIFEXITED(p.status) && WEXITSTATUS(p.status) == 0, "status %#x: %s", p.status,
		  p.err);
	cr_expect_eq(json_num(p.out, NULL, "fresh"), 1, "%s", p.out);
	/* The totals, key by key, equal what the process itself said. */
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		cr_expect_eq(json_num(p.out, "\"totals\"", keys[i]), kv(c.line, keys[i], -2),
			     "%s: stat says %ld, the process %ld\n%s", keys[i],
			     json_num(p.out, "\"totals\"", keys[i]), kv(c.line, keys[i], -2),
			     p.out);
	/* What the marked thread did: 7 offloaded (the open, 6 writes), 3 local, 2 denied. */
	cr_expect_eq(json_num(p.out, "{\"name\":\"write\"", "offloaded"), 6, "%s", p.out);
	cr_expect_eq(json_num(p.out, "{\"name\":\"fsync\"", "local"), 3, "%s", p.out);
	cr_expect_eq(json_num(p.out, "{\"name\":\"unlink\"", "denied"), 2, "%s", p.out);
	char thread[64];
	snprintf(thread, sizeof(thread), "\"tid\":%ld,", kv(c.line, "tid", -1));
	cr_expect_eq(json_num(p.out, thread, "offloaded"), 7, "no row for %s: %s", thread, p.out);
	cr_expect_eq(json_num(p.out, thread, "denied"), 2, "%s", p.out);

	/* The table says the same. */
	char *text[] = {LAUNCHER, "stat", pid, NULL};
	cr_assert_eq(run_proc(text, NULL, &p), 0);
	cr_expect(WIFEXITED(p.status) && WEXITSTATUS(p.status) == 0, "%s", p.err);
	cr_expect_not_null(strstr(p.out, "\nunlink "), "%s", p.out);

	int status = finish(&c);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %#x", status);
	cr_expect_neq(access(path, F_OK), 0, "%s is left behind", path);
	cr_assert_eq(run_proc(argv, NULL, &p), 0);
	cr_expect(WIFEXITED(p.status) && WEXITSTATUS(p.status) == 1, "stat of a gone process: %#x",
		  p.status);
	cr_expect_not_null(strstr(p.err, "no process"), "%s", p.err);
}

Test(live, another_user_cannot_read_it, .timeout = TEST_TIMEOUT)
{
	struct child c;
	struct proc p;
	char pid[16], path[PATH_MAX];

	if (geteuid() != 0)
		cr_skip_test("needs root to run a command as another user (setpriv)");
	start(&c, OPTIONS, 0);
	cr_assert(wait_segment(c.pid));
	seg_path(c.pid, path);
	snprintf(pid, sizeof(pid), "%d", (int)c.pid);
	char *as_nobody[] = {"setpriv",
			     "--reuid=65534",
			     "--regid=65534",
			     "--clear-groups",
			     LAUNCHER,
			     "stat",
			     pid,
			     NULL};
	cr_assert_eq(run_proc(as_nobody, NULL, &p), 0);
	cr_expect(WIFEXITED(p.status) && WEXITSTATUS(p.status) == 1, "status %#x\n%s", p.status,
		  p.out);
	cr_expect_not_null(strstr(p.err, "Permission denied"), "%s", p.err);
	cr_expect_eq(p.out[0], '\0', "it printed: %s", p.out);
	char *cat[] = {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "cat", path,
		       NULL};
	cr_assert_eq(run_proc(cat, NULL, &p), 0);
	cr_expect(WIFEXITED(p.status) && WEXITSTATUS(p.status) != 0, "cat read it: %#x", p.status);
	/* The owner (root here) can. */
	char *mine[] = {LAUNCHER, "stat", pid, NULL};
	cr_assert_eq(run_proc(mine, NULL, &p), 0);
	cr_expect(WIFEXITED(p.status) && WEXITSTATUS(p.status) == 0, "%s", p.err);
	finish(&c);
}

Test(live, a_killed_process_segment_is_removed_by_the_next, .timeout = TEST_TIMEOUT)
{
	struct child a, b;
	char path[PATH_MAX];

	start(&a, OPTIONS, 0);
	cr_assert(wait_segment(a.pid));
	seg_path(a.pid, path);
	kill(a.pid, SIGKILL);
	finish(&a);
	cr_assert_eq(access(path, F_OK), 0, "the kill should have left %s", path);
	start(&b, OPTIONS, 0);
	cr_assert(wait_segment(b.pid));
	cr_expect_neq(access(path, F_OK), 0, "the stale %s is still there", path);
	finish(&b);
}

/*
 * An image that changed user before its exec leaves its segment of this
 * pid (root's, mode 0600) to the new image, which cannot replace it.  The
 * new image then runs without a live view; its publisher, counted out of
 * glibc's thread count before it knew, ended and took the count to zero:
 * glibc called exit(0) before `id` printed anything (issue 28's peer run).
 */
Test(live, an_exec_as_another_user_keeps_the_program, .timeout = TEST_TIMEOUT)
{
	struct proc p;
	char preload[PATH_MAX + 64];
	char *argv[] = {"setpriv", "--reuid=65534", "id", "-u", NULL};
	char *env[] = {preload, "RTOFFLOAD_OPTIONS=mark=main:live=1", NULL};

	if (geteuid() != 0)
		cr_skip_test("needs root to run a command as another user (setpriv)");
	snprintf(preload, sizeof(preload), "LD_PRELOAD=%s", rto_preload());
	cr_assert_eq(run_proc(argv, env, &p), 0);
	cr_expect(WIFEXITED(p.status) && WEXITSTATUS(p.status) == 0, "status %#x: %s", p.status,
		  p.err);
	cr_expect_str_eq(p.out, "65534\n", "id printed \"%s\" (stderr: %s)", p.out, p.err);
}

/*
 * 20 children, 256 close+dup pairs each.  Before the fix about one child in
 * eight got another number from dup() (exit 3; tar's called abort()), and
 * most runs left a child's segment behind (stored after the child went on).
 */
Test(live, fork_exec_children_keep_their_descriptor_numbers, .timeout = TEST_TIMEOUT)
{
	char *argv[] = {LIVE_FORK_EXEC, "20", NULL};
	char *env[] = {"RTOFFLOAD_OPTIONS=mark=all:fd_local=none:live=1", NULL};
	struct proc p;

#ifdef __SANITIZE_THREAD__
	/*
	 * ThreadSanitizer: a child of a process with helpers marks nothing and
	 * starts no helper (libsrc/core/fork.c), so the window looked at here does
	 * not exist; the first child (its parent has no helper yet) starts
	 * them, and TSan, which does not follow threads started in a forked
	 * child, reports the queue's accesses (exit 66).  Checked by the plain
	 * and the ASan runs.
	 */
	cr_skip_test("under ThreadSanitizer a forked child starts no helpers (libsrc/core/fork.c)");
#endif

	cr_assert_eq(run_proc(argv, env, &p), 0);
	cr_assert(WIFEXITED(p.status) && WEXITSTATUS(p.status) == 0, "status %#x: %s", p.status,
		  p.err);
	cr_expect_eq(kv(p.out, "ok", -1), 20,
		     "children that kept their numbers: %s (first bad "
		     "status %#lx)",
		     p.out, (unsigned long)kv(p.out, "first_bad", 0));
	/* Each exec'd child made its own segment and removed it at exit. */
	cr_expect_eq(kv(p.out, "left", -1), 0, "%s%s", p.out, p.err);
}

/* A segment whose process was killed while making it: no magic, or no size. */
Test(live, a_segment_cut_short_is_removed_too, .timeout = TEST_TIMEOUT)
{
	char empty[PATH_MAX], nomagic[PATH_MAX];
	pid_t gone[2];

	for (int i = 0; i < 2; i++) { /* two pids that name no process now */
		gone[i] = fork();
		cr_assert_geq(gone[i], 0);
		if (gone[i] == 0)
			_exit(0);
		waitpid(gone[i], NULL, 0);
	}
	seg_path(gone[0], empty);
	seg_path(gone[1], nomagic);
	cr_assert_eq(spit(empty, "", 0), 0);
	static char zeros[4096];
	cr_assert_eq(spit(nomagic, zeros, sizeof(zeros)), 0);
	struct child c;
	start(&c, OPTIONS, 0);
	cr_assert(wait_segment(c.pid), "no segment for pid %d", c.pid);
	cr_expect_neq(access(empty, F_OK), 0, "%s (empty) was left", empty);
	cr_expect_neq(access(nomagic, F_OK), 0, "%s (no magic) was left", nomagic);
	unlink(empty);
	unlink(nomagic);
	int status = finish(&c);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %#x", status);
}

/* live=0: no publisher thread, no segment. */
Test(live, live_0_makes_none, .timeout = TEST_TIMEOUT)
{
	struct child c;
	char path[PATH_MAX], cmd[PATH_MAX + 64], comm[64];
	int publisher = 0;

	start(&c, OPTIONS ":live=0", 0);
	/* The helpers have run the child's calls: the publisher would be up by now. */
	snprintf(cmd, sizeof(cmd), "cat /proc/%d/task/*/comm", (int)c.pid);
	FILE *ls = popen(cmd, "r");
	cr_assert_not_null(ls);
	while (fgets(comm, sizeof(comm), ls))
		publisher += strncmp(comm, "rtoffload-live", 14) == 0;
	pclose(ls);
	cr_expect_eq(publisher, 0);
	seg_path(c.pid, path);
	cr_expect_neq(access(path, F_OK), 0, "%s exists with live=0", path);
	finish(&c);
}

/* ---- rtoffload top on a terminal ----------------------------------------------- */

#define TMUX_SOCKET "rto-live-test"

static void tmux(char *const args[], struct proc *p)
{
	char *argv[16] = {"tmux", "-L", TMUX_SOCKET};
	int n = 3;

	for (; *args && n < 15; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	cr_assert_eq(run_proc(argv, NULL, p), 0);
}

static void screen(struct proc *p)
{
	char *args[] = {"capture-pane", "-p", "-t", "top", NULL};
	tmux(args, p);
}

/* The [total] of the write row on the screen, or -1. */
static long write_total(const char *s)
{
	const char *row = strstr(s, "\nwrite ");
	const char *br = row ? strchr(row, '[') : NULL;
	const char *eol = row ? strchr(row + 1, '\n') : NULL;

	return br && (!eol || br < eol) ? strtol(br + 1, NULL, 10) : -1;
}

static int count(const char *s, const char *what)
{
	int n = 0;

	for (const char *p = s; (p = strstr(p, what)); p++)
		n++;
	return n;
}

Test(live, top_refreshes_in_place_in_a_terminal, .timeout = TEST_TIMEOUT)
{
	struct child c;
	struct proc p;
	char cmd[PATH_MAX + 64];
	long first = -1, later = -1;

	start(&c, OPTIONS, 1);
	cr_assert(wait_segment(c.pid));
	snprintf(cmd, sizeof(cmd), "%s top %d --interval 0.2", LAUNCHER, (int)c.pid);
	char *run[] = {"new-session", "-d", "-s", "top", "-x", "160", "-y", "50", cmd, NULL};
	tmux(run, &p);
	cr_assert(WIFEXITED(p.status) && WEXITSTATUS(p.status) == 0, "tmux: %s", p.err);
	/* Interval screens, with the busy thread's writes going up between two of them. */
	for (int i = 0; i < (int)(WAIT_S * 20) && later <= first; i++, sleep_ms(50)) {
		screen(&p);
		if (!strstr(p.out, "over the last"))
			continue;
		long n = write_total(p.out);
		if (first < 0)
			first = n;
		else
			later = n;
	}
	cr_expect_gt(first, 0, "no write row:\n%s", p.out);
	cr_expect_gt(later, first, "the counts did not move:\n%s", p.out);
	/* In place: one title on the screen, not a scrolling log of them. */
	cr_expect_eq(count(p.out, "rtoffload: pid"), 1, "\n%s", p.out);
	cr_expect_not_null(strstr(p.out, "function            offloaded"), "%s", p.out);
	char tid[32];
	snprintf(tid, sizeof(tid), " %ld ", kv(c.line, "tid", -1));
	cr_expect_not_null(strstr(p.out, tid), "no row for the marked thread %s:\n%s", tid, p.out);
	/* The process ends: top says so and ends too. */
	finish(&c);
	int ended = 0;
	for (int i = 0; i < (int)(WAIT_S * 20) && !ended; i++, sleep_ms(50)) {
		char *has[] = {"has-session", "-t", "top", NULL};
		tmux(has, &p);
		ended = WIFEXITED(p.status) && WEXITSTATUS(p.status) != 0;
	}
	cr_expect(ended, "top is still running after its process exited");
	char *kill_server[] = {"kill-server", NULL};
	tmux(kill_server, &p);
}
