/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The programs of the process-lifetime tests (test_lifetime.c): one
 * scenario per run, chosen by argv[1], writing its evidence as files into
 * the directory argv[2].  Not linked to the library: the tests preload it
 * and mark threads by RTOFFLOAD_OPTIONS (mark=main, mark=all), or through
 * the API's weak declarations.  The test asserts the exit status and that
 * nothing of the process tree is left; a scenario's own failure is an exit
 * status of 90 or more.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rtoffload.h"

#define FAIL_SETUP 90 /* a step of the scenario itself failed */
#define FAIL_HANG  91 /* a wait of the scenario timed out */
#define WAIT_MS	   20000

static const char *dir;

static void nap_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

/* dir/name holding text: open, write, close (offloaded in a marked thread). */
static void put(const char *name, const char *text)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0600);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text) || close(fd) != 0)
		_exit(FAIL_SETUP);
}

/* The initial thread has exited (a zombie): the caller is now the last thread. */
static void wait_main_gone(void)
{
	for (int i = 0; i < WAIT_MS; i++) {
		char buf[512];
		int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
		ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
		if (fd >= 0)
			close(fd);
		if (n > 0) {
			buf[n] = '\0';
			char *p = strrchr(buf, ')');
			if (p && p[1] == ' ' && p[2] == 'Z')
				return;
		}
		nap_ms(1);
	}
	_exit(FAIL_HANG);
}

static void mark_self(void)
{
	if (rt_offload_mark_thread() != 0)
		_exit(FAIL_SETUP);
}

static pthread_t start(void *(*fn)(void *), void *arg)
{
	pthread_t t;

	if (pthread_create(&t, NULL, fn, arg) != 0)
		_exit(FAIL_SETUP);
	return t;
}

/* ---- the last thread ends: which one, and how ------------------------------------ */

static const char *how; /* "exit", "return", "cancel" */
static int api_mark;	/* the thread marks itself through the API */

static void cancelled(void *arg)
{
	(void)arg;
	wait_main_gone();
	put("last", "cancelled");
}

static void *last_thread(void *arg)
{
	(void)arg;
	if (api_mark)
		mark_self();
	if (strcmp(how, "cancel") == 0) {
		int p[2];
		char c;
		if (pipe(p) != 0)
			_exit(FAIL_SETUP);
		pthread_cleanup_push(cancelled, NULL);
		for (;;)
			read(p[0], &c, 1); /* a cancellation point; nothing is ever written */
		pthread_cleanup_pop(0);
	}
	wait_main_gone();
	put("last", how);
	if (strcmp(how, "exit") == 0)
		pthread_exit(NULL);
	return NULL;
}

static int scenario_last(void)
{
	put("main", "m"); /* helpers start here when the initial thread is marked */
	pthread_t t = start(last_thread, NULL);
	if (strcmp(how, "cancel") == 0)
		pthread_cancel(t);
	pthread_exit(NULL);
}

/* A marked thread started the helpers and ended first; the initial thread is last. */
static void *first_thread(void *arg)
{
	(void)arg;
	mark_self();
	put("first", "f");
	return NULL;
}

static int scenario_main_last(void)
{
	pthread_join(start(first_thread, NULL), NULL);
	put("main", "m");
	pthread_exit(NULL);
}

/* ---- fork from a thread that is not the initial one ------------------------------- */

static void *forker(void *arg)
{
	int *code = arg;

	put("parent", "p");
	pid_t pid = fork();
	if (pid < 0)
		_exit(FAIL_SETUP);
	if (pid == 0) { /* the child's only thread, and it is not its initial one */
		put("child", "c");
		pthread_exit(NULL);
	}
	int st;
	for (int i = 0; i < WAIT_MS; i++) {
		pid_t w = waitpid(pid, &st, WNOHANG);
		if (w == pid) {
			*code = WIFEXITED(st) ? WEXITSTATUS(st) : 100 + WTERMSIG(st);
			return NULL;
		}
		nap_ms(1);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	*code = FAIL_HANG;
	return NULL;
}

static int scenario_fork(void)
{
	int code = FAIL_SETUP;

	put("main", "m");
	pthread_join(start(forker, &code), NULL);
	return code; /* the child's exit status */
}

/* ---- exit() while marked threads log through stdio -------------------------------- */

#define LOGGERS 4
static FILE *log_file;
static atomic_int logged[LOGGERS];

static void *logger(void *arg)
{
	int i = (int)(long)arg;

	for (unsigned n = 0;; n++) {
		fprintf(log_file, "logger %d line %u\n", i, n);
		atomic_fetch_add(&logged[i], 1);
	}
	return NULL;
}

static int scenario_exit_race(void)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/log", dir);
	log_file = fopen(path, "w");
	if (!log_file)
		return FAIL_SETUP;
	for (long i = 0; i < LOGGERS; i++)
		start(logger, (void *)i);
	for (int i = 0; i < LOGGERS; i++)
		for (int w = 0; atomic_load(&logged[i]) < 100; w++) {
			if (w == WAIT_MS)
				return FAIL_HANG;
			nap_ms(1);
		}
	exit(3);
}

/* ---- a helper inside a call that never returns ---------------------------------- */

static char fifo[4096];
static atomic_int opening;

static void *fifo_opener(void *arg)
{
	(void)arg;
	mark_self();
	atomic_store(&opening, 1);
	open(fifo, O_RDONLY); /* offloaded; no writer ever comes */
	_exit(FAIL_SETUP);
}

static int read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, len - 1) : -1;

	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return n > 0 ? 0 : -1;
}

/* A helper (named rtoffload/N) is blocked in openat: "257 ..." in its syscall file. */
static int helper_in_openat(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int found = 0;

	while (d && !found && (e = readdir(d))) {
		char path[512], comm[64], sc[128];
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		if (e->d_name[0] == '.' || read_small(path, comm, sizeof(comm)) != 0 ||
		    strncmp(comm, "rtoffload/", 10) != 0)
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/syscall", e->d_name);
		found = read_small(path, sc, sizeof(sc)) == 0 && strncmp(sc, "257 ", 4) == 0;
	}
	if (d)
		closedir(d);
	return found;
}

static void block_a_helper(void)
{
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	if (mkfifo(fifo, 0600) != 0)
		_exit(FAIL_SETUP);
	start(fifo_opener, NULL);
	for (int i = 0; !helper_in_openat(); i++) {
		if (i == WAIT_MS)
			_exit(FAIL_HANG);
		nap_ms(1);
	}
}

/* _exit(4) or exit_group(5) from a thread that is not the initial one. */
static void *ender(void *arg)
{
	if (strcmp(arg, "_exit") == 0)
		_exit(4);
	syscall(SYS_exit_group, 5);
	return NULL;
}

static int scenario_end_from_thread(const char *kind)
{
	put("main", "m");
	block_a_helper();
	pthread_join(start(ender, (void *)kind), NULL);
	return FAIL_SETUP;
}

/* execve from a marked thread while a helper is inside a call: the program becomes sh. */
static void *execer(void *arg)
{
	(void)arg;
	char *argv[] = {"sh", "-c", "exit 6", NULL};
	mark_self();
	execv("/bin/sh", argv);
	_exit(FAIL_SETUP);
}

static int scenario_exec(void)
{
	put("main", "m");
	block_a_helper();
	pthread_join(start(execer, NULL), NULL);
	return FAIL_SETUP;
}

/* ---- daemon(), setsid() and a double fork ------------------------------------------- */

static void put_pid(const char *name)
{
	char text[32];

	snprintf(text, sizeof(text), "%d", (int)getpid());
	put(name, text);
}

static int scenario_daemon(void)
{
	put("main", "m");
	if (daemon(0, 0) != 0) /* the parent _exit(0)s; the daemon goes on, in its own session */
		return FAIL_SETUP;
	put_pid("daemon");
	pthread_exit(NULL);
}

static int scenario_double_fork(void)
{
	put("main", "m");
	pid_t pid = fork();
	if (pid < 0)
		return FAIL_SETUP;
	if (pid == 0) {
		if (setsid() < 0)
			_exit(FAIL_SETUP);
		pid_t gc = fork();
		if (gc < 0)
			_exit(FAIL_SETUP);
		if (gc > 0)
			exit(0); /* the middle one; the grandchild is orphaned */
		put_pid("grandchild");
		pthread_exit(NULL);
	}
	int st;
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return FAIL_SETUP;
	return 0;
}

/* ---- signals ----------------------------------------------------------------------- */

static void block_sigterm(void)
{
	sigset_t s;

	sigemptyset(&s);
	sigaddset(&s, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &s, NULL);
}

/* SIGTERM pending, blocked by the last application thread, which then ends by a raw exit. */
static int scenario_sigterm_pending(void)
{
	put("main", "m");
	block_sigterm();
	kill(getpid(), SIGTERM);
	syscall(SYS_exit, 5);
	return FAIL_SETUP;
}

/* The last application thread ends behind glibc's back: only helpers are left. */
static int scenario_raw_exit(void)
{
	put("main", "m");
	syscall(SYS_exit, 5);
	return FAIL_SETUP;
}

/* Every thread blocks SIGTERM; one takes it with sigwait(), and is the last thread. */
static void *sigwaiter(void *arg)
{
	sigset_t s;
	int sig = 0;
	char text[16];

	(void)arg;
	sigemptyset(&s);
	sigaddset(&s, SIGTERM);
	if (sigwait(&s, &sig) != 0)
		_exit(FAIL_SETUP);
	snprintf(text, sizeof(text), "%d", sig);
	put("signal", text);
	return NULL;
}

static int scenario_sigwait(void)
{
	block_sigterm(); /* inherited by every thread started from here */
	start(sigwaiter, NULL);
	put("main", "m");
	put("ready", "r"); /* the test sends SIGTERM from here on */
	pthread_exit(NULL);
}

/* ---- the helpers' look at /proc (libsrc/core/lifetime.c) ------------------------------- */

static void idle(void)
{
	struct timespec t = {2, 500000000}; /* two and a half watch periods */

	while (nanosleep(&t, &t) != 0)
		;
}

/* The initial thread runs, idle, with the helpers started. */
static int scenario_idle(void)
{
	put("main", "m"); /* offloaded: starts the helpers */
	idle();
	return 0;
}

static void *idle_then_end(void *arg)
{
	(void)arg;
	idle();
	put("last", "idle");
	return NULL;
}

/* ... and the control: the initial thread has ended, another idles. */
static int scenario_idle_after_main(void)
{
	put("main", "m");
	start(idle_then_end, NULL);
	pthread_exit(NULL);
}

/* ---- the six lines, and with async writes --------------------------------- */

static int scenario_six(void)
{
	put("x", "x");
	pthread_exit(NULL);
}

static int scenario_async(void)
{
	char path[4096], line[64];

	snprintf(path, sizeof(path), "%s/log", dir);
	int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0600);
	if (fd < 0)
		return FAIL_SETUP;
	for (int i = 0; i < 100; i++) {
		int n = snprintf(line, sizeof(line), "line %d\n", i);
		if (write(fd, line, (size_t)n) != n) /* queued (policy=write:async) */
			return FAIL_SETUP;
	}
	pthread_exit(NULL); /* no close: the exit writes them */
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return FAIL_SETUP;
	dir = argv[2];
	const char *s = argv[1];
	if (strcmp(s, "six") == 0)
		return scenario_six();
	if (strcmp(s, "async") == 0)
		return scenario_async();
	if (strcmp(s, "last") == 0 && argc >= 4) {
		how = argv[3];
		api_mark = argc >= 5 && strcmp(argv[4], "api") == 0;
		return scenario_last();
	}
	if (strcmp(s, "main-last") == 0)
		return scenario_main_last();
	if (strcmp(s, "fork") == 0)
		return scenario_fork();
	if (strcmp(s, "exit-race") == 0)
		return scenario_exit_race();
	if (strcmp(s, "_exit") == 0 || strcmp(s, "exit_group") == 0)
		return scenario_end_from_thread(s);
	if (strcmp(s, "exec") == 0)
		return scenario_exec();
	if (strcmp(s, "daemon") == 0)
		return scenario_daemon();
	if (strcmp(s, "double-fork") == 0)
		return scenario_double_fork();
	if (strcmp(s, "sigterm-pending") == 0)
		return scenario_sigterm_pending();
	if (strcmp(s, "raw-exit") == 0)
		return scenario_raw_exit();
	if (strcmp(s, "sigwait") == 0)
		return scenario_sigwait();
	if (strcmp(s, "idle") == 0)
		return scenario_idle();
	if (strcmp(s, "idle-after-main") == 0)
		return scenario_idle_after_main();
	return FAIL_SETUP;
}
