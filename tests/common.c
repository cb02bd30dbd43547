/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "common.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <linux/futex.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef RTO_SANITIZER_RUNTIME
#error "RTO_SANITIZER_RUNTIME (empty, or the sanitizer runtime's path) must come from the build"
#endif
#ifndef RTOFFLOAD_LIB
#error "RTOFFLOAD_LIB (the library's path) must come from the build"
#endif
#ifndef RTO_PROBE
#error "RTO_PROBE (the probe program's path) must come from the build"
#endif

/* ---- temporary directories ---------------------------------------------- */

/* Directories still to remove when the test process exits (a failed
 * assertion ends the test early; criterion then exits normally). */
#define MAX_TMP 16
static char tmp_dirs[MAX_TMP][PATH_MAX];

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	return remove(path) == 0 || errno == ENOENT ? 0 : -1;
}

static void remove_tree(const char *dir)
{
	nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void tmp_remove_left(void)
{
	for (int i = 0; i < MAX_TMP; i++) {
		if (tmp_dirs[i][0])
			remove_tree(tmp_dirs[i]);
	}
}

void tmp_make(char *dir)
{
	static int registered;

	strcpy(dir, "/tmp/rtoffload-test.XXXXXX");
	cr_assert_not_null(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
	if (!registered++)
		atexit(tmp_remove_left);
	for (int i = 0; i < MAX_TMP; i++) {
		if (!tmp_dirs[i][0]) {
			strcpy(tmp_dirs[i], dir);
			break;
		}
	}
}

void tmp_remove(const char *dir)
{
	if (!dir || !dir[0])
		return;
	remove_tree(dir);
	for (int i = 0; i < MAX_TMP; i++) {
		if (strcmp(tmp_dirs[i], dir) == 0)
			tmp_dirs[i][0] = '\0';
	}
}

void pathf(char *out, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	int n = vsnprintf(out, PATH_MAX, fmt, ap);
	va_end(ap);
	cr_assert(n > 0 && n < PATH_MAX, "path too long");
}

/* ---- threads ------------------------------------------------------------- */

int pin_rt_cpu(void)
{
	cpu_set_t set;

	if (sysconf(_SC_NPROCESSORS_ONLN) <= RT_CPU)
		return -1;
	CPU_ZERO(&set);
	CPU_SET(RT_CPU, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

static void *bg_main(void *p)
{
	struct bg *b = p;

	if (b->flags & BG_PIN)
		pin_rt_cpu(); /* best effort: the realistic setup, not a requirement */
	if (!(b->flags & BG_MARK)) {
		b->fn(b->arg);
		return NULL;
	}
	b->mark_rc = rt_offload_mark_thread();
	b->mark_errno = errno;
	if (b->mark_rc == 0) {
		b->fn(b->arg);
		rt_offload_unmark_thread();
	}
	return NULL;
}

int bg_spawn(struct bg *b, job_fn fn, void *arg, int flags)
{
	*b = (struct bg){.fn = fn, .arg = arg, .flags = flags};
	if ((flags & BG_MARK) && !RT_OFFLOAD_AVAILABLE())
		return -1;
	return pthread_create(&b->thread, NULL, bg_main, b) == 0 ? 0 : -1;
}

int bg_wait(struct bg *b)
{
	if (pthread_join(b->thread, NULL) != 0)
		return -1;
	return b->mark_rc;
}

void bg_start(struct bg *b, job_fn fn, void *arg, int flags)
{
	if (flags & BG_MARK)
		cr_assert(RT_OFFLOAD_AVAILABLE(), "librtoffload is not loaded");
	cr_assert_eq(bg_spawn(b, fn, arg, flags), 0, "pthread_create");
}

void bg_join(struct bg *b)
{
	cr_assert_eq(pthread_join(b->thread, NULL), 0);
	cr_assert_eq(b->mark_rc, 0, "rt_offload_mark_thread: %s", strerror(b->mark_errno));
}

void run_marked(job_fn fn, void *arg)
{
	struct bg b;

	bg_start(&b, fn, arg, BG_MARK | BG_PIN);
	bg_join(&b);
}

void run_unmarked(job_fn fn, void *arg)
{
	struct bg b;

	bg_start(&b, fn, arg, 0);
	bg_join(&b);
}

static void nothing(void *arg)
{
	(void)arg;
}

void start_helpers(void)
{
	run_marked(nothing, NULL);
}

static long futex(_Atomic uint32_t *addr, int op, uint32_t val, const struct timespec *ts)
{
	return syscall(SYS_futex, addr, op, val, ts, NULL, 0);
}

void flag_set(struct flag *f)
{
	atomic_store(&f->v, 1);
	futex(&f->v, FUTEX_WAKE_PRIVATE, INT_MAX, NULL);
}

void flag_wait(struct flag *f)
{
	while (!atomic_load(&f->v))
		futex(&f->v, FUTEX_WAIT_PRIVATE, 0, NULL);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int flag_wait_timeout(struct flag *f)
{
	double end = now_s() + WAIT_S;
	struct timespec step = {0, 10 * 1000 * 1000};

	while (!atomic_load(&f->v)) {
		if (now_s() > end)
			return 0;
		futex(&f->v, FUTEX_WAIT_PRIVATE, 0, &step);
	}
	return 1;
}

/* ---- statistics -------------------------------------------------------- */

struct rt_offload_stats stats_now(void)
{
	struct rt_offload_stats s;

	cr_assert(RT_OFFLOAD_AVAILABLE(), "librtoffload is not loaded");
	cr_assert_eq(rt_offload_get_stats(&s), 0);
	return s;
}

uint64_t offloaded_now(void)
{
	return stats_now().offloaded;
}

/* ---- this process's threads, from /proc ---------------------------------- */

pid_t tid_self(void)
{
	return (pid_t)syscall(SYS_gettid);
}

int task_count(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* A small /proc file into buf; the length, or -1. */
static ssize_t read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n >= 0)
		buf[n] = '\0';
	return n;
}

int helper_tids(pid_t *out, int max)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	char path[PATH_MAX], comm[64];
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)) && n < max) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%.32s/comm", e->d_name);
		if (read_small(path, comm, sizeof(comm)) > 0 &&
		    strncmp(comm, "rtoffload/", 10) == 0)
			out[n++] = (pid_t)atoi(e->d_name);
	}
	closedir(d);
	return n;
}

int task_io(pid_t tid, uint64_t *syscr, uint64_t *syscw)
{
	char path[PATH_MAX], buf[1024];
	const char *r, *w;

	snprintf(path, sizeof(path), "/proc/self/task/%d/io", (int)tid);
	if (read_small(path, buf, sizeof(buf)) <= 0)
		return -1;
	r = strstr(buf, "syscr:");
	w = strstr(buf, "syscw:");
	if (!r || !w)
		return -1;
	*syscr = strtoull(r + 6, NULL, 10);
	*syscw = strtoull(w + 6, NULL, 10);
	return 0;
}

/* Is tid in system call nr with first argument arg0 (any if < 0)? */
static int in_syscall(pid_t tid, long nr, long arg0)
{
	char path[PATH_MAX], buf[256];
	char *end;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
	if (read_small(path, buf, sizeof(buf)) <= 0)
		return 0;
	if (strtol(buf, &end, 10) != nr || end == buf)
		return 0;
	return arg0 < 0 || strtol(end, NULL, 16) == arg0;
}

static void short_sleep(void)
{
	struct timespec ts = {0, 1000 * 1000};

	nanosleep(&ts, NULL);
}

int wait_task_in_syscall(pid_t tid, long nr, long arg0)
{
	double end = now_s() + WAIT_S;

	while (now_s() < end) {
		if (in_syscall(tid, nr, arg0))
			return 1;
		short_sleep();
	}
	return 0;
}

pid_t wait_helper_in_syscall(long nr, long arg0)
{
	double end = now_s() + WAIT_S;
	pid_t tids[64];

	while (now_s() < end) {
		int n = helper_tids(tids, 64);
		for (int i = 0; i < n; i++) {
			if (in_syscall(tids[i], nr, arg0))
				return tids[i];
		}
		short_sleep();
	}
	return 0;
}

/* ---- files --------------------------------------------------------------- */

char *slurp(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t cap = 4096, n = 0;
	char *buf;
	ssize_t r;

	if (fd < 0)
		return NULL;
	buf = malloc(cap + 1);
	while (buf && (r = read(fd, buf + n, cap - n)) > 0) {
		n += (size_t)r;
		if (n == cap)
			buf = realloc(buf, (cap *= 2) + 1);
	}
	close(fd);
	if (buf)
		buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

int spit(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, buf, len);
	close(fd);
	return n == (ssize_t)len ? 0 : -1;
}

/* ---- subprocesses -------------------------------------------------------- */

static void apply_env(char *const env[])
{
	char key[256];

	for (; env && *env; env++) {
		const char *eq = strchr(*env, '=');
		size_t n = eq ? (size_t)(eq - *env) : strlen(*env);
		if (n >= sizeof(key))
			continue;
		memcpy(key, *env, n);
		key[n] = '\0';
		if (eq)
			setenv(key, eq + 1, 1);
		else
			unsetenv(key);
	}
}

static void child_exec(char *const argv[], char *const env[], int out, int err)
{
	dup2(out, 1);
	dup2(err, 2);
	apply_env(env);
	execvp(argv[0], argv);
	_exit(127);
}

/* Append what fd has to buf (capacity len); 0 at EOF. */
static int drain(int fd, char *buf, size_t len, size_t *n)
{
	char scratch[4096];
	ssize_t r = read(fd, scratch, sizeof(scratch));

	if (r <= 0)
		return 0;
	size_t keep = (size_t)r < len - 1 - *n ? (size_t)r : len - 1 - *n;
	memcpy(buf + *n, scratch, keep);
	*n += keep;
	buf[*n] = '\0';
	return 1;
}

static void collect(int out, int err, struct proc *p, pid_t pid)
{
	struct pollfd fds[2] = {{out, POLLIN, 0}, {err, POLLIN, 0}};
	size_t no = 0, ne = 0;
	double end = now_s() + WAIT_S;

	while ((fds[0].fd >= 0 || fds[1].fd >= 0) && now_s() < end) {
		if (poll(fds, 2, 100) <= 0)
			continue;
		if (fds[0].revents && !drain(out, p->out, sizeof(p->out), &no))
			fds[0].fd = -1;
		if (fds[1].revents && !drain(err, p->err, sizeof(p->err), &ne))
			fds[1].fd = -1;
	}
	if (fds[0].fd >= 0 || fds[1].fd >= 0)
		kill(pid, SIGKILL); /* hung: the status will say so */
}

int run_proc(char *const argv[], char *const env[], struct proc *p)
{
	int out[2], err[2];
	pid_t pid;

	memset(p, 0, sizeof(*p));
	p->status = -1;
	if (pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid == 0)
		child_exec(argv, env, out[1], err[1]);
	close(out[1]);
	close(err[1]);
	if (pid > 0) {
		collect(out[0], err[0], p, pid);
		while (waitpid(pid, &p->status, 0) < 0 && errno == EINTR)
			;
	}
	close(out[0]);
	close(err[0]);
	return pid > 0 ? 0 : -1;
}

long kv(const char *text, const char *key, long def)
{
	size_t n = strlen(key);

	for (const char *s = text; (s = strstr(s, key)); s += n) {
		if ((s == text || s[-1] == ' ' || s[-1] == '\n') && s[n] == '=')
			return strtol(s + n + 1, NULL, 0);
	}
	return def;
}

const char *rto_lib_path(void)
{
	return RTOFFLOAD_LIB;
}

const char *rto_preload(void)
{
	return RTO_SANITIZER_RUNTIME " " RTOFFLOAD_LIB;
}

const char *rto_probe_path(void)
{
	return RTO_PROBE;
}
