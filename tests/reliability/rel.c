/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Helpers of the reliability tests: see rel.h. */
#include "rel.h"

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

#ifndef REL_LIB
#error "REL_LIB: the library's build path, set by CMakeLists.txt"
#endif

/* ---- time, only for deadlines that turn a hang into a failure ------------ */

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

/* ---- files -------------------------------------------------------------- */

void rel_tmpdir(char dir[PATH_MAX])
{
	snprintf(dir, PATH_MAX, "/tmp/rto-rel-XXXXXX");
	if (!mkdtemp(dir))
		dir[0] = '\0';
}

static int rm_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (type == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

void rel_rmtree(const char *dir)
{
	if (dir && dir[0])
		nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

void rel_path(char out[PATH_MAX], const char *dir, const char *name)
{
	snprintf(out, PATH_MAX, "%s/%s", dir, name);
}

char *rel_slurp(const char *path, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap + 1);
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || !buf) {
		free(buf);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	for (;;) {
		if (n == cap) {
			char *more = realloc(buf, 2 * cap + 1);
			if (!more)
				break;
			buf = more;
			cap *= 2;
		}
		ssize_t r = read(fd, buf + n, cap - n);
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

/* ---- threads ------------------------------------------------------------ */

pid_t rel_tid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

int rel_pin(int cpu)
{
	cpu_set_t set;

	if (cpu >= sysconf(_SC_NPROCESSORS_ONLN))
		return -1;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) ? -1 : 0;
}

int rel_fifo(int prio)
{
	struct sched_param sp = {.sched_priority = prio};

	return pthread_setschedparam(pthread_self(), prio ? SCHED_FIFO : SCHED_OTHER, &sp);
}

void rel_flag_set(struct rel_flag *f)
{
	atomic_store(&f->v, 1);
	syscall(SYS_futex, &f->v, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
}

int rel_flag_is_set(struct rel_flag *f)
{
	return atomic_load(&f->v) != 0;
}

void rel_flag_wait(struct rel_flag *f)
{
	int saved = errno;

	while (!atomic_load(&f->v))
		syscall(SYS_futex, &f->v, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
	errno = saved;
}

int rel_flag_wait_s(struct rel_flag *f, double s)
{
	struct timespec step = {0, 10 * 1000 * 1000};
	double end = now_s() + s;
	int saved = errno;

	while (!atomic_load(&f->v) && now_s() < end)
		syscall(SYS_futex, &f->v, FUTEX_WAIT_PRIVATE, 0, &step, NULL, 0);
	errno = saved;
	return atomic_load(&f->v) != 0;
}

static void *thread_main(void *arg)
{
	struct rel_thread *t = arg;

	if (t->flags & REL_PIN_RT)
		rel_pin(REL_RT_CPU);
	if (t->flags & REL_PIN_HK)
		rel_pin(REL_HK_CPU);
	/* A thread inherits its creator's policy: REL_OTHER drops a FIFO one. */
	if (t->prio || (t->flags & REL_OTHER))
		t->prio_rc = rel_fifo(t->prio);
	/* Priority first: the mark captures it for ordering and inherit. */
	if (t->flags & REL_MARK)
		t->mark_rc = rt_offload_mark_thread();
	atomic_store(&t->tid, rel_tid());
	rel_flag_set(&t->started);
	if (t->mark_rc == 0 && t->prio_rc == 0)
		t->fn(t->arg);
	if (t->flags & REL_MARK)
		rt_offload_unmark_thread();
	return NULL;
}

int rel_thread_start(struct rel_thread *t, void (*fn)(void *), void *arg, int flags, int prio)
{
	memset(t, 0, sizeof(*t));
	t->fn = fn;
	t->arg = arg;
	t->flags = flags;
	t->prio = prio;
	return pthread_create(&t->thread, NULL, thread_main, t);
}

int rel_thread_join(struct rel_thread *t)
{
	int err = pthread_join(t->thread, NULL);

	if (err)
		return err;
	return t->mark_rc ? -1 : t->prio_rc;
}

int rel_thread_run(void (*fn)(void *), void *arg, int flags, int prio)
{
	struct rel_thread t;
	int err = rel_thread_start(&t, fn, arg, flags, prio);

	return err ? err : rel_thread_join(&t);
}

/* ---- /proc --------------------------------------------------------------- */

static int read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

int rel_helper_tids(pid_t *out, int max)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)) && n < max) {
		char path[PATH_MAX], comm[64];
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		if (read_small(path, comm, sizeof(comm)) == 0 &&
		    strncmp(comm, "rtoffload/", 10) == 0)
			out[n++] = (pid_t)atoi(e->d_name);
	}
	closedir(d);
	return n;
}

int rel_task_syscall(pid_t tid, long *nr, long *arg0, long *arg1)
{
	char path[64], buf[512], *p;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
	if (read_small(path, buf, sizeof(buf)) != 0 || buf[0] < '0' || buf[0] > '9')
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
	return rel_task_syscall(tid, &n, &a0, &a1) == 0 && n == nr &&
	       (arg0 == -1 || (uint32_t)a0 == (uint32_t)arg0);
}

int rel_wait_in_syscall(pid_t tid, long nr, long arg0)
{
	double end = now_s() + REL_WAIT_S;

	while (now_s() < end) {
		if (in_syscall(tid, nr, arg0))
			return 1;
		nap_ms(2);
	}
	return 0;
}

pid_t rel_wait_helper_in_syscall(long nr, long arg0)
{
	double end = now_s() + REL_WAIT_S;
	pid_t h[64];

	while (now_s() < end) {
		int n = rel_helper_tids(h, 64);
		for (int i = 0; i < n; i++)
			if (in_syscall(h[i], nr, arg0))
				return h[i];
		nap_ms(2);
	}
	return 0;
}

int rel_parse_stat(const char *line, char *state, int *policy, int *rtprio)
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

int rel_task_sched(pid_t tid, char *state, int *policy, int *rtprio)
{
	char path[64], buf[1024];

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	if (read_small(path, buf, sizeof(buf)) != 0)
		return -1;
	return rel_parse_stat(buf, state, policy, rtprio);
}

int rel_status_has_signal(const char *status_path, const char *field, int sig)
{
	char buf[4096], *p;

	if (read_small(status_path, buf, sizeof(buf)) != 0 || !(p = strstr(buf, field)))
		return -1;
	unsigned long long mask = strtoull(p + strlen(field), NULL, 16);
	return (mask >> (sig - 1)) & 1;
}

static void dump_file(int fd, const char *task, const char *name)
{
	char path[PATH_MAX], buf[4096];

	snprintf(path, sizeof(path), "/proc/self/task/%s/%s", task, name);
	if (read_small(path, buf, sizeof(buf)) != 0)
		snprintf(buf, sizeof(buf), "(unreadable)\n");
	dprintf(fd, "  %s: %s%s", name, buf, buf[0] && buf[strlen(buf) - 1] == '\n' ? "" : "\n");
}

void rel_dump_threads(int fd)
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

/* ---- children ------------------------------------------------------------ */

static void apply_env(char *const env[])
{
	for (int i = 0; env && env[i]; i++) {
		char *eq = strchr(env[i], '=');
		if (eq) {
			char key[256];
			snprintf(key, sizeof(key), "%.*s", (int)(eq - env[i]), env[i]);
			setenv(key, eq + 1, 1);
		} else {
			unsetenv(env[i]);
		}
	}
}

/* Read both pipes to EOF (or the deadline) into p->out and p->err. */
static void collect(int out, int err, struct rel_proc *p, double end)
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

int rel_run(char *const argv[], char *const env[], struct rel_proc *p)
{
	int o[2], e[2];

	memset(p, 0, sizeof(*p));
	p->status = -1;
	if (pipe2(o, O_CLOEXEC) || pipe2(e, O_CLOEXEC))
		return -1;
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		dup2(o[1], 1);
		dup2(e[1], 2);
		apply_env(env);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(o[1]);
	close(e[1]);
	double end = now_s() + REL_WAIT_S;
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

int rel_run_scenario(const char *name, char *const env[], struct rel_proc *p)
{
	char self[PATH_MAX], sc[128];
	char *all[32];
	int n = 0;
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (len <= 0)
		return -1;
	self[len] = '\0';
	snprintf(sc, sizeof(sc), "REL_SCENARIO=%s", name);
	all[n++] = sc;
	for (int i = 0; env && env[i] && n < 31; i++)
		all[n++] = env[i];
	all[n] = NULL;
	char *argv[] = {self, NULL};
	return rel_run(argv, all, p);
}

int rel_reap(pid_t pid)
{
	double end = now_s() + REL_WAIT_S;
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

long rel_kv(const char *text, const char *key, long def)
{
	size_t kl = strlen(key);

	for (const char *p = text; (p = strstr(p, key)); p += kl) {
		if ((p == text || p[-1] == '\n' || p[-1] == ' ') && p[kl] == '=')
			return strtol(p + kl + 1, NULL, 0);
	}
	return def;
}

const char *rel_status_str(int status, char *buf, size_t len)
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

const char *rel_lib_path(void)
{
	return REL_LIB;
}

void rel_say(const char *fmt, ...)
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

/* ---- scenario dispatch --------------------------------------------------- */

extern const struct rel_scenario *const __start_rel_scenarios[] __attribute__((weak));
extern const struct rel_scenario *const __stop_rel_scenarios[] __attribute__((weak));

/*
 * Runs after the libraries' constructors (so the library has read its
 * options) and before criterion's main: a child started by
 * rel_run_scenario() runs its scenario and exits with its result.
 */
__attribute__((constructor)) static void rel_dispatch(void)
{
	const char *name = getenv("REL_SCENARIO");

	if (!name)
		return;
	for (const struct rel_scenario *const *s = __start_rel_scenarios;
	     s && s < __stop_rel_scenarios; s++) {
		if (strcmp((*s)->name, name) == 0) {
			unsetenv("REL_SCENARIO"); /* not for the programs it runs */
			exit((*s)->fn());
		}
	}
	dprintf(2, "no scenario '%s' in this program\n", name);
	_exit(126);
}
