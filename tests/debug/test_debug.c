/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Issue 28: a debugger, a tracer and the program's own use of the
 * mechanisms the backstop relies on see the same with the library as
 * without it.  Each program here is run plainly and preloaded (mark=all
 * unless said), and what it prints is compared:
 *   - sigaltstack, through glibc, syscall() and a raw instruction (which
 *     traps: emulated on the trapped frame, since rt_sigreturn restores
 *     the alternate stack), in the main thread and in another; the
 *     kernel's errors; the shape, started through env;
 *   - a tracer's stops of its PTRACE_TRACEME child (stress-ng vm-segv);
 *   - a program that turns Syscall User Dispatch on and off itself
 *     (the kernel's selftest, stress-ng --prctl, Wine);
 *   - none of the library's own work traps (report_traps=1);
 *   - gdb with default settings runs and stops at a breakpoint, whether
 *     it starts the program or attaches to it (then with the auto-load
 *     script built beside the library), and prints no SIGSYS.
 */
#include "harness.h"

#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/*
 * Under ThreadSanitizer the runtime preloaded into these programs is part
 * of what a tracer and a dispatch see: it takes the child's fault itself
 * (exit 66) and can hang in that report in a child forked from threads, a
 * program's dispatch with no allowed region traps the runtime's own calls
 * (killed by SIGSYS without the library too).  Those cases run in the
 * plain and AddressSanitizer presets.
 */
#ifdef __SANITIZE_THREAD__
#define NO_TRACED_RUNTIME 1
#endif
/* A sanitizer's runtime in the program makes gdb outlast the timeout too. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define NO_GDB 1
#endif

/* LD_PRELOAD and RTOFFLOAD_OPTIONS for a preloaded run. */
struct lib_env {
	char preload[PATH_MAX + 64];
	char options[256];
	char *env[4];
};

static void lib_env(struct lib_env *e, const char *options)
{
	snprintf(e->preload, sizeof(e->preload), "LD_PRELOAD=%s", rto_preload());
	snprintf(e->options, sizeof(e->options), "RTOFFLOAD_OPTIONS=%s", options);
	e->env[0] = e->preload;
	e->env[1] = e->options;
	e->env[2] = "ASAN_OPTIONS=detect_leaks=0"; /* LeakSanitizer cannot run traced */
	e->env[3] = NULL;
}

/*
 * Without the library: with the sanitizer runtime alone in the sanitizer
 * presets, so that the runs differ by the library only.
 */
static char plain_preload[PATH_MAX + 64];
static char *plain_env[] = {plain_preload, "RTOFFLOAD_OPTIONS", "ASAN_OPTIONS=detect_leaks=0",
			    NULL};

static void plain_init(void)
{
	if (*rto_sanitizer_runtime())
		snprintf(plain_preload, sizeof(plain_preload), "LD_PRELOAD=%s",
			 rto_sanitizer_runtime());
	else
		snprintf(plain_preload, sizeof(plain_preload), "LD_PRELOAD");
}
TestSuite(debug, .init = plain_init);

/* argv plainly and preloaded with options: the same status and output; the plain output. */
static void expect_same(char *const argv[], const char *options, struct proc *plain)
{
	static struct proc lib;
	struct lib_env e;
	char a[64], b[64];

	lib_env(&e, options);
	cr_assert_eq(run_proc(argv, plain_env, plain), 0);
	cr_assert_eq(run_proc(argv, e.env, &lib), 0);
	cr_expect(!lib.timed_out, "%s %s hung under the library", argv[0], argv[1]);
	cr_expect_eq(plain->status, lib.status, "%s %s %s: plainly %s, with the library %s\n%s",
		     argv[0], argv[1], argv[2] ? argv[2] : "",
		     status_str(plain->status, a, sizeof(a)), status_str(lib.status, b, sizeof(b)),
		     lib.err);
	cr_expect_str_eq(lib.out, plain->out, "%s %s %s: with the library\n%s\nplainly\n%s",
			 argv[0], argv[1], argv[2] ? argv[2] : "", lib.out, plain->out);
}

/* ---- the alternate signal stack ---------------------------------------------------- */

static const char *hows[] = {"glibc", "syscall", "raw"};

Test(debug, sigaltstack_set_by_a_marked_thread_holds_at_its_overflow, .timeout = TEST_TIMEOUT)
{
	static struct proc p;
	for (int h = 0; h < 3; h++) {
		for (int w = 0; w < 2; w++) {
			char *argv[] = {ALTSTACK_PROG, (char *)hows[h], w ? "thread" : "main",
					NULL};
			expect_same(argv, "mark=all", &p);
			cr_expect_not_null(
				strstr(p.out, "same=1 flags=0\nhandler ran on_altstack=1"), "%s",
				p.out);
		}
	}
}

Test(debug, sigaltstack_errors_are_the_kernels, .timeout = TEST_TIMEOUT)
{
	static struct proc p;
	for (int h = 0; h < 3; h++) {
		char *argv[] = {ALTSTACK_PROG, (char *)hows[h], "errors", NULL};
		expect_same(argv, "mark=all", &p);
		cr_expect_not_null(strstr(p.out, "bad new: -14\nbad old: -14\n"), "%s", p.out);
		cr_expect_not_null(strstr(p.out, "in handler: read=0 flags=1 set=-1\n"), "%s",
				   p.out);
	}
}

/* The shape: the program is started by a marked process (env). */
Test(debug, sigaltstack_of_a_program_started_by_a_marked_process, .timeout = TEST_TIMEOUT)
{
	static struct proc p;
	for (int h = 0; h < 3; h++) {
		char *argv[] = {"env", ALTSTACK_PROG, (char *)hows[h], "main", NULL};
		expect_same(argv, "mark=all", &p);
		cr_expect_not_null(strstr(p.out, "handler ran on_altstack=1"), "%s", p.out);
	}
}

#ifndef NO_TRACED_RUNTIME
/* ---- a tracer ------------------------------------------------------------------------ */

Test(debug, a_tracer_sees_the_stops_it_sees_without_the_library, .timeout = TEST_TIMEOUT)
{
	static struct proc p;
	for (int h = 0; h < 3; h++) {
		char *argv[] = {TRACEE_PROG, (char *)hows[h], NULL};
		expect_same(argv, "mark=all", &p);
		cr_expect_not_null(strstr(p.out, "stops: STOP SEGV\n"), "%s", p.out);
	}
}

#endif

#ifndef NO_TRACED_RUNTIME
/* ---- the program's own Syscall User Dispatch -------------------------------------------- */

Test(debug, a_program_using_syscall_user_dispatch_runs_as_without_the_library,
     .timeout = TEST_TIMEOUT)
{
	static struct proc p;
	for (int h = 0; h < 3; h += 2) {
		for (int w = 0; w < 2; w++) {
			char *argv[] = {SUD_PROG, (char *)hows[h], w ? "thread" : "main", NULL};
			expect_same(argv, "mark=all", &p);
			cr_expect_not_null(strstr(p.out, "round 2: on=0 got=0xff00,0xff00,0xff00 "
							 "off=0 after=-38 emulated=9 foreign=0\n"),
					   "%s", p.out);
		}
	}
}

#endif

/* ---- the library's own calls ------------------------------------------------------------ */

/*
 * The system calls that a program that only prints makes itself while
 * marked, behind the wrappers: its exit's exit_group (libc's); under a
 * sanitizer, the runtime's own memory calls at exit too.
 */
static const char *const own_traps[] = {
	"exit_group",
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	"mmap",	      "munmap", "madvise", "nanosleep", /* ThreadSanitizer's atexit_sleep_ms */
#endif
};

/* The first trap reported in err that is not one of own_traps, or NULL. */
static const char *foreign_trap(const char *err, char *name, size_t len)
{
	static const char tag[] = "rtoffload: trap '";
	for (const char *q = err; (q = strstr(q, tag)); q++) {
		const char *b = q + sizeof(tag) - 1, *e = strchr(b, '\'');
		if (!e || (size_t)(e - b) >= len)
			return "?";
		memcpy(name, b, (size_t)(e - b));
		name[e - b] = '\0';
		int own = 0;
		for (size_t i = 0; i < sizeof(own_traps) / sizeof(own_traps[0]); i++)
			own |= !strcmp(name, own_traps[i]);
		if (!own)
			return name;
	}
	return NULL;
}

/*
 * A program that only prints: every trap reported is one of its own,
 * none of the library's marking, starting or exit report.
 */
Test(debug, the_librarys_own_work_never_traps, .timeout = TEST_TIMEOUT)
{
	static struct proc p;
	const char *marks[] = {"mark=all", "mark=main"};
	for (int m = 0; m < 2; m++) {
		char options[128];
		struct lib_env e;
		snprintf(options, sizeof(options), "%s:report_traps=1:stats=1", marks[m]);
		lib_env(&e, options);
		char *argv[] = {GDB_PROG, NULL};
		cr_assert_eq(run_proc(argv, e.env, &p), 0);
		cr_expect(WIFEXITED(p.status) && WEXITSTATUS(p.status) == 3, "%#x", p.status);
		cr_expect_str_eq(p.out, "before\nafter 3\n");
		char name[64];
		const char *bad = foreign_trap(p.err, name, sizeof(name));
		cr_expect_null(bad, "%s: trap '%s'\n%s", marks[m], bad, p.err);
	}
}

#ifndef NO_GDB
/* ---- gdb ------------------------------------------------------------------------------------- */

/* gdb's output of a session that ran GDB_PROG to its breakpoint and to its end. */
static void expect_debugged(const struct proc *p, const char *what)
{
	cr_expect(WIFEXITED(p->status) && WEXITSTATUS(p->status) == 0, "%s: gdb %#x\n%s\n%s", what,
		  p->status, p->out, p->err);
	cr_expect_not_null(strstr(p->out, "Breakpoint 1, marker (x=2)"), "%s:\n%s\n%s", what,
			   p->out, p->err);
	cr_expect_not_null(strstr(p->out, "after 3\n"), "%s:\n%s", what, p->out);
	cr_expect_not_null(strstr(p->out, "exited with code 03"), "%s:\n%s\n%s", what, p->out,
			   p->err);
	cr_expect_null(strstr(p->out, "SIGSYS"), "%s:\n%s", what, p->out);
	cr_expect_null(strstr(p->err, "SIGSYS"), "%s:\n%s", what, p->err);
}

/*
 * gdb starts the program, with the library in the program's environment
 * only, and in gdb's own (gdb itself then runs under the library, and
 * its vfork child makes itself a tracee).  gdb's default settings: it
 * starts the program through a shell, whose exec from a marked thread
 * runs on that thread (issue 28, finding 2: on a helper, gdb lost the
 * program, "During startup program exited normally").
 */
Test(debug, gdb_runs_a_program_under_the_library_to_its_breakpoint, .timeout = TEST_TIMEOUT)
{
	static struct proc p;
	const char *marks[] = {"mark=all", "mark=main"};
	for (int m = 0; m < 2; m++) {
		char preload[PATH_MAX + 64], options[128];
		snprintf(preload, sizeof(preload), "set environment LD_PRELOAD=%s", rto_preload());
		snprintf(options, sizeof(options), "set environment RTOFFLOAD_OPTIONS=%s",
			 marks[m]);
		char *inferior[] = {"gdb",
				    "-batch",
				    "-nx",
				    "-ex",
				    preload,
				    "-ex",
				    options,
				    "-ex",
				    "set environment ASAN_OPTIONS=detect_leaks=0",
				    "-ex",
				    "break marker",
				    "-ex",
				    "run",
				    "-ex",
				    "continue",
				    GDB_PROG,
				    NULL};
		cr_assert_eq(run_proc(inferior, plain_env, &p), 0);
		expect_debugged(&p, marks[m]);

		struct lib_env e;
		lib_env(&e, marks[m]);
		char *both[] = {"gdb", "-batch",   "-nx",    "-ex", "break marker", "-ex", "run",
				"-ex", "continue", GDB_PROG, NULL};
		cr_assert_eq(run_proc(both, e.env, &p), 0);
		expect_debugged(&p, "gdb under the library too");
	}
}

/* Start argv with env on top of ours; its stdout is *out.  Its pid. */
static pid_t spawn(char *const argv[], char *const env[], int *out)
{
	int fds[2];
	cr_assert_eq(pipe(fds), 0);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		for (int i = 0; env[i]; i++)
			putenv(env[i]);
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(fds[1]);
	*out = fds[0];
	return pid;
}

/*
 * gdb attaches to a running program whose marked thread traps: the
 * auto-load script built beside the library lets the backstop's SIGSYS
 * pass silently.
 */
Test(debug, gdb_attached_to_a_marked_program_stops_only_where_asked, .timeout = TEST_TIMEOUT)
{
	static struct proc p;
	struct lib_env e;
	char line[64] = "", pid_s[32];
	lib_env(&e, "mark=all");
	char *argv[] = {GDB_PROG, "wait", NULL};
	int out;
	pid_t pid = spawn(argv, e.env, &out);
	FILE *f = fdopen(out, "r");
	cr_assert_not_null(f);
	cr_assert_not_null(fgets(line, sizeof(line), f));
	cr_assert_str_eq(line, "ready\n");
	snprintf(pid_s, sizeof(pid_s), "%d", (int)pid);
	char *gdb[] = {"gdb",
		       "-batch",
		       "-nx",
		       "-iex",
		       "add-auto-load-safe-path " LIB_DIR,
		       "-p",
		       pid_s,
		       "-ex",
		       "set var go_on = 1",
		       "-ex",
		       "break marker",
		       "-ex",
		       "continue",
		       "-ex",
		       "continue",
		       NULL};
	int ran = run_proc(gdb, plain_env, &p);
	char rest[256] = "";
	size_t n = fread(rest, 1, sizeof(rest) - 1, f);
	rest[n] = '\0';
	fclose(f);
	int code = reap_code(pid);
	cr_assert_eq(ran, 0);
	cr_expect_eq(code, 3, "the program: %d", code);
	cr_expect_str_eq(rest, "before\nafter 3\n");
	/* Breakpoint 2: the script's catchpoint is the first */
	cr_expect_not_null(strstr(p.out, "Breakpoint 2, marker (x=2)"), "%s\n%s", p.out, p.err);
	cr_expect_null(strstr(p.out, "SIGSYS, Bad system call"), "%s", p.out);
}
#endif
