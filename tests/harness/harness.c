/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The harness (harness.h): files, threads, flags, /proc, subprocesses, scenarios. */
#include "harness.h"

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

/* Only for deadlines that turn a hang into a failure. */
static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void nap_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

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

void path_join(char *out, const char *dir, const char *name)
{
	snprintf(out, PATH_MAX, "%s/%s", dir, name);
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

int pin_cpu(int cpu)
{
	cpu_set_t set;

	if (cpu >= sysconf(_SC_NPROCESSORS_ONLN))
		return -1;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) ? -1 : 0;
}

int set_fifo(int prio)
{
	struct sched_param sp = {.sched_priority = prio};

	return pthread_setschedparam(pthread_self(), prio ? SCHED_FIFO : SCHED_OTHER, &sp);
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

static void *thread_main(void *arg)
{
	struct test_thread *t = arg;

	if (t->flags & TH_PIN_RT)
		pin_cpu(RT_CPU);
	if (t->flags & TH_PIN_HK)
		pin_cpu(HK_CPU);
	/* A thread inherits its creator's policy: TH_OTHER drops a FIFO one. */
	if (t->prio || (t->flags & TH_OTHER))
		t->prio_rc = set_fifo(t->prio);
	/* Priority first: the mark captures it for ordering and inherit. */
	if (t->flags & TH_MARK)
		t->mark_rc = rt_offload_mark_thread();
	atomic_store(&t->tid, tid_self());
	flag_set(&t->started);
	if (t->mark_rc == 0 && t->prio_rc == 0)
		t->fn(t->arg);
	if (t->flags & TH_MARK)
		rt_offload_unmark_thread();
	return NULL;
}

int thread_start(struct test_thread *t, job_fn fn, void *arg, int flags, int prio)
{
	memset(t, 0, sizeof(*t));
	t->fn = fn;
	t->arg = arg;
	t->flags = flags;
	t->prio = prio;
	return pthread_create(&t->thread, NULL, thread_main, t);
}

int thread_join(struct test_thread *t)
{
	int err = pthread_join(t->thread, NULL);

	if (err)
		return err;
	return t->mark_rc ? -1 : t->prio_rc;
}

int thread_run(job_fn fn, void *arg, int flags, int prio)
{
	struct test_thread t;
	int err = thread_start(&t, fn, arg, flags, prio);

	return err ? err : thread_join(&t);
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

int flag_is_set(struct flag *f)
{
	return atomic_load(&f->v) != 0;
}

void flag_wait(struct flag *f)
{
	int saved = errno;

	while (!atomic_load(&f->v))
		futex(&f->v, FUTEX_WAIT_PRIVATE, 0, NULL);
	errno = saved;
}

int flag_wait_s(struct flag *f, double s)
{
	struct timespec step = {0, 10 * 1000 * 1000};
	double end = now_s() + s;
	int saved = errno;

	while (!atomic_load(&f->v) && now_s() < end)
		futex(&f->v, FUTEX_WAIT_PRIVATE, 0, &step);
	errno = saved;
	return atomic_load(&f->v) != 0;
}

int flag_wait_timeout(struct flag *f)
{
	return flag_wait_s(f, WAIT_S);
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

int task_syscall(pid_t tid, long *nr, long *arg0, long *arg1)
{
	char path[64], buf[512], *p;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
	if (read_small(path, buf, sizeof(buf)) <= 0 || buf[0] < '0' || buf[0] > '9')
		return -1; /* "running", or gone */
	*nr = strtol(buf, &p, 10);
	*arg0 = (long)strtoul(p, &p, 16);
	*arg1 = (long)strtoul(p, &p, 16);
	return 0;
}

static int in_syscall(pid_t tid, long nr, long arg0)
{
	long n, a0, a1;

	/* int arguments show zero-extended (AT_FDCWD as 0xffffff9c): compare 32 bits. */
	return task_syscall(tid, &n, &a0, &a1) == 0 && n == nr &&
	       (arg0 == -1 || (uint32_t)a0 == (uint32_t)arg0);
}

int wait_task_in_syscall(pid_t tid, long nr, long arg0)
{
	double end = now_s() + WAIT_S;

	while (now_s() < end) {
		if (in_syscall(tid, nr, arg0))
			return 1;
		nap_ms(1);
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
		nap_ms(1);
	}
	return 0;
}

int parse_stat(const char *line, char *state, int *policy, int *rtprio)
{
	const char *p = strrchr(line, ')'); /* comm may hold spaces */
	long field[64];
	int n = 0;

	if (!p || p[1] != ' ' || !p[2])
		return -1;
	*state = p[2];
	p += 3;
	/* Fields 4.. after the state; rt_priority is field 40, policy 41. */
	while (n < 64 && *p) {
		char *end;
		field[n++] = strtol(p, &end, 10);
		if (end == p)
			break;
		p = end;
	}
	if (n < 38)
		return -1;
	*rtprio = (int)field[40 - 4];
	*policy = (int)field[41 - 4];
	return 0;
}

int task_sched(pid_t tid, char *state, int *policy, int *rtprio)
{
	char path[64], buf[1024];

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	if (read_small(path, buf, sizeof(buf)) <= 0)
		return -1;
	return parse_stat(buf, state, policy, rtprio);
}

int status_has_signal(const char *status_path, const char *field, int sig)
{
	char buf[4096], *p;

	if (read_small(status_path, buf, sizeof(buf)) <= 0 || !(p = strstr(buf, field)))
		return -1;
	unsigned long long mask = strtoull(p + strlen(field), NULL, 16);
	return (mask >> (sig - 1)) & 1;
}

static void dump_file(int fd, const char *task, const char *name)
{
	char path[PATH_MAX], buf[4096];

	snprintf(path, sizeof(path), "/proc/self/task/%s/%s", task, name);
	if (read_small(path, buf, sizeof(buf)) < 0)
		snprintf(buf, sizeof(buf), "(unreadable)\n");
	dprintf(fd, "  %s: %s%s", name, buf, buf[0] && buf[strlen(buf) - 1] == '\n' ? "" : "\n");
}

void dump_threads(int fd)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;

	dprintf(fd, "==== watchdog: state of every thread of pid %d ====\n", (int)getpid());
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		dprintf(fd, "thread %s\n", e->d_name);
		dump_file(fd, e->d_name, "comm");
		dump_file(fd, e->d_name, "wchan");
		dump_file(fd, e->d_name, "syscall");
		dump_file(fd, e->d_name, "stat");
		dump_file(fd, e->d_name, "stack");
	}
	if (d)
		closedir(d);
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

void write_file(const char *path, const char *text)
{
	cr_assert_eq(spit(path, text, strlen(text)), 0, "write %s: %s", path, strerror(errno));
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

/* Read both pipes to EOF (or the deadline) into p->out and p->err. */
static void collect(int out, int err, struct proc *p, double end)
{
	size_t no = 0, ne = 0;
	struct pollfd pf[2] = {{out, POLLIN, 0}, {err, POLLIN, 0}};

	while ((pf[0].fd >= 0 || pf[1].fd >= 0) && now_s() < end) {
		if (poll(pf, 2, 100) <= 0)
			continue;
		for (int i = 0; i < 2; i++) {
			if (pf[i].fd < 0 || !pf[i].revents)
				continue;
			char *buf = i ? p->err : p->out;
			size_t *n = i ? &ne : &no;
			size_t cap = (i ? sizeof(p->err) : sizeof(p->out)) - 1;
			char scratch[4096];
			ssize_t r = *n < cap ? read(pf[i].fd, buf + *n, cap - *n)
					     : read(pf[i].fd, scratch, sizeof(scratch));
			if (r <= 0)
				pf[i].fd = -1;
			else if (*n < cap)
				*n += (size_t)r;
		}
	}
	p->out[no] = '\0';
	p->err[ne] = '\0';
}

int run_proc(char *const argv[], char *const env[], struct proc *p)
{
	int o[2], e[2];

	memset(p, 0, sizeof(*p));
	p->status = -1;
	if (pipe2(o, O_CLOEXEC))
		return -1;
	if (pipe2(e, O_CLOEXEC)) {
		close(o[0]);
		close(o[1]);
		return -1;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		dup2(o[1], 1);
		dup2(e[1], 2);
		apply_env(env);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(o[1]);
	close(e[1]);
	if (pid < 0) {
		close(o[0]);
		close(e[0]);
		return -1;
	}
	double end = now_s() + WAIT_S;
	collect(o[0], e[0], p, end);
	close(o[0]);
	close(e[0]);
	while (waitpid(pid, &p->status, WNOHANG) == 0) {
		if (now_s() >= end) {
			p->timed_out = 1;
			kill(pid, SIGKILL);
			waitpid(pid, &p->status, 0);
			break;
		}
		nap_ms(5);
	}
	return 0;
}

int run_scenario(const char *name, char *const env[], struct proc *p)
{
	char self[PATH_MAX], sc[128];
	char *all[32];
	int n = 0;
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (len <= 0)
		return -1;
	self[len] = '\0';
	snprintf(sc, sizeof(sc), "RTO_TEST_SCENARIO=%s", name);
	all[n++] = sc;
	for (int i = 0; env && env[i] && n < 31; i++)
		all[n++] = env[i];
	all[n] = NULL;
	char *argv[] = {self, NULL};
	return run_proc(argv, all, p);
}

int reap_code(pid_t pid)
{
	double end = now_s() + WAIT_S;
	int status = 0;

	while (now_s() < end) {
		pid_t r = waitpid(pid, &status, WNOHANG);
		if (r == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
		if (r < 0)
			return -1000;
		nap_ms(2);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return -SIGKILL;
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

const char *status_str(int status, char *buf, size_t len)
{
	if (status == -1)
		snprintf(buf, len, "not collected");
	else if (WIFEXITED(status))
		snprintf(buf, len, "exited %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, len, "killed by %s", strsignal(WTERMSIG(status)));
	else
		snprintf(buf, len, "status 0x%x", status);
	return buf;
}

const char *rto_lib_path(void)
{
	return RTOFFLOAD_LIB;
}

const char *rto_preload(void)
{
	return RTO_SANITIZER_RUNTIME " " RTOFFLOAD_LIB;
}

const char *rto_sanitizer_runtime(void)
{
	return RTO_SANITIZER_RUNTIME;
}

const char *rto_probe_path(void)
{
	return RTO_PROBE;
}

/* ---- scenarios ------------------------------------------------------------ */

void say(const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > (int)sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	/* The raw system call: never offloaded, whatever thread says it. */
	syscall(SYS_write, 1, line, (size_t)n);
}

extern const struct scenario *const __start_rto_scenarios[] __attribute__((weak));
extern const struct scenario *const __stop_rto_scenarios[] __attribute__((weak));

/*
 * Runs after the libraries' constructors (so the library has read its
 * options) and before criterion's main: a child started by run_scenario()
 * runs its scenario and exits with its result.
 */
__attribute__((constructor)) static void scenario_dispatch(void)
{
	const char *name = getenv("RTO_TEST_SCENARIO");

	if (!name)
		return;
	for (const struct scenario *const *s = __start_rto_scenarios; s && s < __stop_rto_scenarios;
	     s++) {
		if (strcmp((*s)->name, name) == 0) {
			unsetenv("RTO_TEST_SCENARIO"); /* not for the programs it runs */
			exit((*s)->fn());
		}
	}
	dprintf(2, "no scenario '%s' in this program\n", name);
	_exit(126);
}
