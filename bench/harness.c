/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The shared benchmark harness: see harness.h for the model. */
#include "harness.h"
#include "json.h" /* libsrc/common/json.h */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct h_opts h_opt = {.mode = "default", .scale = 1.0, .rt_cpu = 1, .hk_cpu = 0};
int h_fifo_refused;

/* ---- command line ------------------------------------------------------------ */

static void usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [--quick|--long] [--rt-cpu N] [--hk-cpu N] [--lib librtoffload.so]\n"
		"          [--out FILE.json] [--data DIR] [--tmp DIR]\n"
		"Normally run by bench/run.\n",
		prog);
	exit(2);
}

static void calibrate(void);

/* Where a child sends its results: set by the parent (--result-fd), -1 when run by hand. */
static int result_fd = -1;

void h_init(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"quick", no_argument, NULL, 'q'},
		{"long", no_argument, NULL, 'L'},
		{"rt-cpu", required_argument, NULL, 'r'},
		{"hk-cpu", required_argument, NULL, 'k'},
		{"lib", required_argument, NULL, 'l'},
		{"out", required_argument, NULL, 'o'},
		{"data", required_argument, NULL, 'd'},
		{"tmp", required_argument, NULL, 't'},
		{"child", required_argument, NULL, 'c'},
		{"arg", required_argument, NULL, 'a'},
		{"tsc-ghz", required_argument, NULL, 'g'},
		{"result-fd", required_argument, NULL, 'f'},
		{NULL, 0, NULL, 0},
	};
	int c;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'q':
			h_opt.mode = "quick", h_opt.scale = 0.25;
			break;
		case 'L':
			h_opt.mode = "long", h_opt.scale = 10;
			break;
		case 'r':
			h_opt.rt_cpu = atoi(optarg);
			break;
		case 'k':
			h_opt.hk_cpu = atoi(optarg);
			break;
		case 'l':
			h_opt.lib = *optarg ? optarg : NULL;
			break;
		case 'o':
			h_opt.out = optarg;
			break;
		case 'd':
			h_opt.data = optarg;
			break;
		case 't':
			h_opt.tmp = optarg;
			break;
		case 'c':
			h_opt.child = optarg;
			break;
		case 'a':
			h_opt.arg = optarg;
			break;
		case 'g':
			h_opt.tsc_ghz = atof(optarg);
			break;
		case 'f':
			result_fd = atoi(optarg);
			break;
		default:
			usage(argv[0]);
		}
	}
	if (optind != argc)
		usage(argv[0]);
	h_opt.self = realpath("/proc/self/exe", NULL);
	if (!h_opt.self)
		h_opt.self = argv[0];
	if (h_opt.tmp == NULL)
		h_opt.tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	calibrate();
}

uint64_t h_scaled(uint64_t dflt, uint64_t floor)
{
	uint64_t v = (uint64_t)((double)dflt * h_opt.scale);

	return v < floor ? floor : v;
}

/* ---- time ------------------------------------------------------------------------ */

uint64_t h_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Ticks per ns against CLOCK_MONOTONIC over 50 ms; children reuse the parent's. */
static void calibrate(void)
{
#if defined(__x86_64__) || defined(__i386__)
	if (h_opt.tsc_ghz > 0)
		return;
	uint64_t t0 = h_now_ns(), k0 = h_ticks();
	while (h_now_ns() - t0 < 50000000)
		;
	uint64_t t1 = h_now_ns(), k1 = h_ticks();
	h_opt.tsc_ghz = (double)(k1 - k0) / (double)(t1 - t0);
#else
	h_opt.tsc_ghz = 1.0;
#endif
}

uint64_t h_ns(uint64_t ticks)
{
	return (uint64_t)((double)ticks / h_opt.tsc_ghz + 0.5);
}

uint64_t h_ticks_for_ns(uint64_t ns)
{
	return (uint64_t)((double)ns * h_opt.tsc_ghz);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

uint64_t h_timer_overhead_ns(void)
{
	enum { N = 10001 };
	static uint64_t d[N];

	for (int i = 0; i < N; i++) {
		uint64_t t0 = h_ticks();
		d[i] = h_ticks() - t0;
	}
	qsort(d, N, sizeof(d[0]), cmp_u64);
	return h_ns(d[N / 2]);
}

uint64_t h_timer_resolution_ns(void)
{
	uint64_t best = UINT64_MAX, prev = h_ticks();

	for (int i = 0; i < 10000; i++) {
		uint64_t t = h_ticks();
		if (t != prev && t - prev < best)
			best = t - prev;
		prev = t;
	}
	return h_ns(best);
}

void h_spin_until(uint64_t until_ticks)
{
	while (h_ticks() < until_ticks)
		h_cpu_relax();
}

void h_sleep_ms(unsigned ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* ---- threads ------------------------------------------------------------------------ */

int h_pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

int h_fifo(int prio)
{
	struct sched_param sp = {.sched_priority = prio};
	int err = pthread_setschedparam(pthread_self(), prio ? SCHED_FIFO : SCHED_OTHER, &sp);

	if (err && prio)
		h_fifo_refused = 1;
	return err;
}

void h_lock_memory(void)
{
	static int done;

	if (done++)
		return;
	if (mlockall(MCL_CURRENT | MCL_FUTURE) != 0)
		fprintf(stderr, "bench: mlockall: %s (results may include page faults)\n",
			strerror(errno));
}

/*
 * The new thread is born on its CPU and at its priority (attributes, not
 * calls made by the thread itself): a thread created by a realtime thread
 * would otherwise start on its creator's CPU, at its creator's priority,
 * and wait there behind it, forever if the creator then spins.
 */
static int attr_for(pthread_attr_t *a, int cpu, int prio)
{
	struct sched_param sp = {.sched_priority = prio};
	cpu_set_t set;

	pthread_attr_init(a);
	if (cpu >= 0) {
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		pthread_attr_setaffinity_np(a, sizeof(set), &set);
	}
	pthread_attr_setinheritsched(a, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(a, prio ? SCHED_FIFO : SCHED_OTHER);
	return pthread_attr_setschedparam(a, &sp);
}

int h_thread_start(pthread_t *t, void *(*fn)(void *), void *arg, int cpu, int prio)
{
	pthread_attr_t a;
	int err;

	attr_for(&a, cpu, prio);
	err = pthread_create(t, &a, fn, arg);
	if (err == EPERM && prio) { /* no realtime privilege: run anyway, and say so */
		h_fifo_refused = 1;
		pthread_attr_destroy(&a);
		attr_for(&a, cpu, 0);
		err = pthread_create(t, &a, fn, arg);
	}
	pthread_attr_destroy(&a);
	return err;
}

/* The kernel's per-thread CPU clock (what pthread_getcpuclockid builds): ns, not jiffies. */
static uint64_t task_cpu_ns(int tid)
{
	clockid_t clk = (clockid_t)((~(unsigned)tid << 3) | 6);
	struct timespec ts;

	if (clock_gettime(clk, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int task_name(int tid, char *name, size_t len)
{
	char path[64];
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/task/%d/comm", tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, name, len - 1);
	close(fd);
	if (n <= 0)
		return -1;
	name[n] = 0;
	name[strcspn(name, "\n")] = 0;
	return 0;
}

uint64_t h_threads_cpu_ns(const char *prefix, int *count)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	uint64_t sum = 0;
	char name[32];

	*count = 0;
	if (!d)
		return 0;
	while ((e = readdir(d)) != NULL) {
		int tid = atoi(e->d_name);
		if (tid <= 0 || task_name(tid, name, sizeof(name)) != 0)
			continue;
		if (strncmp(name, prefix, strlen(prefix)) == 0) {
			sum += task_cpu_ns(tid);
			(*count)++;
		}
	}
	closedir(d);
	return sum;
}

/* The 8 first counters of the "cpuN" line of /proc/stat, in jiffies. */
static int cpu_stat(int cpu, unsigned long long v[8])
{
	FILE *f = fopen("/proc/stat", "re");
	char line[512], want[16];
	int found = 0;

	if (!f)
		return -1;
	snprintf(want, sizeof(want), "cpu%d ", cpu);
	while (!found && fgets(line, sizeof(line), f)) {
		if (strncmp(line, want, strlen(want)) != 0)
			continue;
		memset(v, 0, 8 * sizeof(v[0]));
		sscanf(line + strlen(want), "%llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1],
		       &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
		found = 1;
	}
	fclose(f);
	return found ? 0 : -1;
}

double h_cpu_steal_ms(int cpu)
{
	unsigned long long v[8];

	if (cpu_stat(cpu, v) != 0)
		return 0;
	return (double)v[7] * 1000.0 / (double)sysconf(_SC_CLK_TCK);
}

int h_cpu_jiffies(int cpu, uint64_t *busy, uint64_t *total)
{
	unsigned long long v[8];

	if (cpu_stat(cpu, v) != 0)
		return -1;
	*total = v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
	*busy = *total - v[3] - v[4]; /* minus idle and iowait */
	return 0;
}

/* ---- samples -------------------------------------------------------------------------- */

void h_samples_init(struct h_samples *s, size_t cap)
{
	s->v = calloc(cap ? cap : 1, sizeof(uint64_t));
	if (!s->v) {
		fprintf(stderr, "bench: out of memory for %zu samples\n", cap);
		exit(1);
	}
	memset(s->v, 0xff, cap * sizeof(uint64_t)); /* fault every page in now */
	s->n = 0;
	s->cap = cap;
}

void h_samples_free(struct h_samples *s)
{
	free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
}

void h_samples_to_ns(struct h_samples *s)
{
	for (size_t i = 0; i < s->n; i++)
		s->v[i] = h_ns(s->v[i]);
}

static uint64_t rank(const uint64_t *sorted, size_t n, double q)
{
	size_t i = (size_t)ceil(q * (double)n);

	return sorted[i ? i - 1 : 0];
}

void h_summarize(uint64_t *v, size_t n, struct h_summary *s)
{
	double sum = 0;

	memset(s, 0, sizeof(*s));
	if (n == 0)
		return;
	qsort(v, n, sizeof(v[0]), cmp_u64);
	for (size_t i = 0; i < n; i++)
		sum += (double)v[i];
	*s = (struct h_summary){
		.n = n,
		.min = v[0],
		.p50 = rank(v, n, 0.50),
		.p90 = rank(v, n, 0.90),
		.p99 = rank(v, n, 0.99),
		.p999 = rank(v, n, 0.999),
		.max = v[n - 1],
		.mean = sum / (double)n,
	};
}

uint64_t h_count_over(const uint64_t *v, size_t n, uint64_t limit)
{
	uint64_t c = 0;

	for (size_t i = 0; i < n; i++)
		c += v[i] > limit;
	return c;
}

/* ---- parent and child: records over a pipe ----------------------------------------------- */

enum { REC_SAMPLES = 1, REC_VALUE = 2 };

struct rec_head {
	char name[56];
	uint32_t kind;
	uint32_t pad;
	uint64_t n; /* samples that follow, or 1 double for a value */
};

#define RESULT_FD 3

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int have_parent(void)
{
	return result_fd >= 0;
}

static void send_rec(const char *name, uint32_t kind, const void *data, uint64_t n, size_t size)
{
	struct rec_head h = {.kind = kind, .n = n};

	snprintf(h.name, sizeof(h.name), "%s", name);
	if (write_all(result_fd, &h, sizeof(h)) != 0 || write_all(result_fd, data, size) != 0) {
		fprintf(stderr, "bench: lost the parent: %s\n", strerror(errno));
		exit(1);
	}
}

void h_send_samples(const char *name, const uint64_t *v, size_t n)
{
	if (!have_parent()) { /* run by hand: say what would be sent */
		struct h_summary s;
		uint64_t *copy = malloc((n ? n : 1) * sizeof(*v));
		memcpy(copy, v, n * sizeof(*v));
		h_summarize(copy, n, &s);
		h_print_row(name, &s);
		free(copy);
		return;
	}
	send_rec(name, REC_SAMPLES, v, n, n * sizeof(*v));
}

void h_send_value(const char *name, double value)
{
	if (!have_parent()) {
		printf("%-28s %.6g\n", name, value);
		return;
	}
	send_rec(name, REC_VALUE, &value, 1, sizeof(value));
}

/*
 * In the child, before its exec.  BENCH_EXTRA_OPTIONS (e.g. live=0) is
 * appended to every configuration's options, to compare one option's cost
 * across the whole run: it comes last, so it wins.
 */
static void set_env(int with_lib, const char *options)
{
	const char *extra = getenv("BENCH_EXTRA_OPTIONS");
	char all[4096];
	/* BENCH_PRELOAD_AFTER: another preload after the library (bench-alloc: jemalloc). */
	const char *after = getenv("BENCH_PRELOAD_AFTER");
	char both[2 * 4096 + 2];
	if (with_lib && h_opt.lib && after && *after) {
		snprintf(both, sizeof(both), "%s %s", h_opt.lib, after);
		setenv("LD_PRELOAD", both, 1);
	} else if (with_lib && h_opt.lib)
		setenv("LD_PRELOAD", h_opt.lib, 1);
	else
		unsetenv("LD_PRELOAD");
	if (options && extra && *extra) {
		snprintf(all, sizeof(all), "%s%s%s", options, *options ? ":" : "", extra);
		options = all;
	}
	if (options)
		setenv("RTOFFLOAD_OPTIONS", options, 1);
	else
		unsetenv("RTOFFLOAD_OPTIONS");
}

/* fork + exec with the child's `target_fd` writing into the returned pipe. */
static pid_t spawn(char *const argv[], int with_lib, const char *options, int target_fd, int *rfd)
{
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) != 0)
		return -1;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		dup2(p[1], target_fd); /* dup2 clears O_CLOEXEC on the copy */
		set_env(with_lib, options);
		execv(argv[0], argv);
		fprintf(stderr, "bench: exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(p[1]);
	if (pid < 0) {
		close(p[0]);
		return -1;
	}
	*rfd = p[0];
	return pid;
}

/* Read until EOF or the deadline (then kill); returns the exit status or -1. */
static int collect(pid_t pid, int fd, int timeout_s, char **out, size_t *outlen)
{
	uint64_t deadline = h_now_ns() + (uint64_t)timeout_s * 1000000000u;
	size_t cap = 1 << 16, len = 0;
	char *buf = malloc(cap);
	int status, killed = 0;

	for (;;) {
		int64_t left_ms = ((int64_t)deadline - (int64_t)h_now_ns()) / 1000000;
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		if (left_ms <= 0 || poll(&pfd, 1, (int)left_ms) == 0) {
			fprintf(stderr, "bench: child %d still running after %d s: killed\n", pid,
				timeout_s);
			kill(pid, SIGKILL);
			killed = 1;
			break;
		}
		if (len == cap)
			buf = realloc(buf, cap *= 2);
		ssize_t n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (len == cap)
		buf = realloc(buf, cap + 1);
	buf[len] = 0; /* text output can be parsed as a string */
	*out = buf;
	*outlen = len;
	if (killed || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

int h_run_program(char *const argv[], int with_lib, const char *options, int timeout_s, char **out,
		  size_t *outlen)
{
	int fd;
	pid_t pid = spawn(argv, with_lib, options, 1, &fd);

	*out = NULL;
	*outlen = 0;
	if (pid < 0)
		return -1;
	return collect(pid, fd, timeout_s, out, outlen);
}

static void parse_records(struct h_reply *r, const char *buf, size_t len)
{
	size_t off = 0;

	while (off + sizeof(struct rec_head) <= len) {
		struct rec_head h;
		memcpy(&h, buf + off, sizeof(h));
		off += sizeof(h);
		size_t size = h.kind == REC_VALUE ? sizeof(double) : h.n * sizeof(uint64_t);
		if (off + size > len)
			break; /* truncated: the child died mid-record */
		r->items = realloc(r->items, (r->count + 1) * sizeof(*r->items));
		struct h_item *it = &r->items[r->count++];
		memset(it, 0, sizeof(*it));
		memcpy(it->name, h.name, sizeof(it->name));
		it->name[sizeof(it->name) - 1] = 0;
		if (h.kind == REC_VALUE) {
			it->is_value = 1;
			memcpy(&it->value, buf + off, sizeof(double));
		} else {
			it->n = h.n;
			it->v = malloc(size ? size : 1);
			memcpy(it->v, buf + off, size);
		}
		off += size;
	}
}

struct h_reply h_child_run(const char *what, const char *arg, int with_lib, const char *options,
			   int timeout_s)
{
	struct h_reply r = {.status = -1};
	char ghz[32], rt[16], hk[16], rfd[16];
	char *argv[24];
	int i = 0, fd;

	snprintf(ghz, sizeof(ghz), "%.9f", h_opt.tsc_ghz);
	snprintf(rt, sizeof(rt), "%d", h_opt.rt_cpu);
	snprintf(hk, sizeof(hk), "%d", h_opt.hk_cpu);
	snprintf(rfd, sizeof(rfd), "%d", RESULT_FD);
	argv[i++] = h_opt.self;
	if (h_opt.scale != 1.0)
		argv[i++] = h_opt.scale < 1.0 ? "--quick" : "--long";
	char *pairs[][2] = {{"--child", (char *)what}, {"--arg", (char *)(arg ? arg : "")},
			    {"--tsc-ghz", ghz},	       {"--rt-cpu", rt},
			    {"--hk-cpu", hk},	       {"--tmp", (char *)h_opt.tmp},
			    {"--result-fd", rfd}};
	for (size_t k = 0; k < sizeof(pairs) / sizeof(pairs[0]); k++) {
		argv[i++] = pairs[k][0];
		argv[i++] = pairs[k][1];
	}
	argv[i] = NULL;

	pid_t pid = spawn(argv, with_lib, options, RESULT_FD, &fd);
	if (pid < 0)
		return r;
	char *buf;
	size_t len;
	r.status = collect(pid, fd, timeout_s, &buf, &len);
	parse_records(&r, buf, len);
	free(buf);
	return r;
}

const struct h_item *h_reply_get(const struct h_reply *r, const char *name)
{
	for (size_t i = 0; i < r->count; i++)
		if (strcmp(r->items[i].name, name) == 0)
			return &r->items[i];
	return NULL;
}

double h_reply_value(const struct h_reply *r, const char *name, double dflt)
{
	const struct h_item *it = h_reply_get(r, name);

	return it && it->is_value ? it->value : dflt;
}

void h_reply_free(struct h_reply *r)
{
	for (size_t i = 0; i < r->count; i++)
		free(r->items[i].v);
	free(r->items);
	r->items = NULL;
	r->count = 0;
}

void h_reply_merge(struct h_reply *into, struct h_reply *from)
{
	for (size_t i = 0; i < from->count; i++) {
		struct h_item *it = &from->items[i];
		struct h_item *old = (struct h_item *)h_reply_get(into, it->name);
		if (!old) { /* take the item over, samples and all */
			into->items = realloc(into->items, (into->count + 1) * sizeof(*it));
			into->items[into->count++] = *it;
			it->v = NULL;
		} else if (!it->is_value && !old->is_value) {
			old->v = realloc(old->v, (old->n + it->n) * sizeof(uint64_t) + 1);
			memcpy(old->v + old->n, it->v, it->n * sizeof(uint64_t));
			old->n += it->n;
		}
	}
	if (into->status == 0) /* 0 only if every round succeeded */
		into->status = from->status;
	h_reply_free(from);
}

/* ---- JSON ---------------------------------------------------------------------------------- */

/* The writer's sink (libsrc/common/json.h: the library's, the tools' and bench's one writer). */
static void file_put(void *f, const char *bytes, size_t len)
{
	fwrite(bytes, 1, len, f);
}

int hj_open(struct h_json *j, const char *path)
{
	j->f = fopen(path, "we");
	if (!j->f) {
		fprintf(stderr, "bench: %s: %s\n", path, strerror(errno));
		return -1;
	}
	rto_json_open(&j->w, file_put, j->f, 1);
	return 0;
}

void hj_end(struct h_json *j)
{
	rto_json_end(&j->w);
}

void hj_close(struct h_json *j)
{
	rto_json_close(&j->w);
	fclose(j->f);
	j->f = NULL;
}

void hj_obj(struct h_json *j, const char *key)
{
	rto_json_obj(&j->w, key);
}

void hj_arr(struct h_json *j, const char *key, int inline_)
{
	rto_json_arr(&j->w, key, inline_);
}

void hj_str(struct h_json *j, const char *key, const char *val)
{
	rto_json_string(&j->w, key, val);
}

void hj_u64(struct h_json *j, const char *key, uint64_t val)
{
	rto_json_u64(&j->w, key, val);
}

/* A double as bench always wrote it (%.6g; null when not finite): the writer takes it raw. */
void hj_num(struct h_json *j, const char *key, double val)
{
	char buf[32];

	if (!isfinite(val)) {
		rto_json_null(&j->w, key);
		return;
	}
	snprintf(buf, sizeof(buf), "%.6g", val);
	rto_json_raw(&j->w, key, buf);
}

void hj_bool(struct h_json *j, const char *key, int val)
{
	rto_json_bool(&j->w, key, val);
}

void hj_null(struct h_json *j, const char *key)
{
	rto_json_null(&j->w, key);
}

void hj_summary(struct h_json *j, const char *key, const struct h_summary *s)
{
	rto_json_obj_inline(&j->w, key);
	hj_u64(j, "n", s->n);
	hj_u64(j, "min_ns", s->min);
	hj_u64(j, "p50_ns", s->p50);
	hj_u64(j, "p90_ns", s->p90);
	hj_u64(j, "p99_ns", s->p99);
	hj_u64(j, "p99.9_ns", s->p999);
	hj_u64(j, "max_ns", s->max);
	hj_num(j, "mean_ns", s->mean);
	hj_end(j);
}

void hj_histogram(struct h_json *j, const char *key, const uint64_t *sorted, size_t n)
{
	hj_arr(j, key, 1);
	for (size_t i = 0; i < n;) {
		uint64_t bin = sorted[i] / 1000, count = 0;
		while (i < n && sorted[i] / 1000 == bin)
			i++, count++;
		hj_arr(j, NULL, 1);
		hj_u64(j, NULL, bin);
		hj_u64(j, NULL, count);
		hj_end(j);
	}
	hj_end(j);
}

/* ---- output ---------------------------------------------------------------------------------- */

FILE *h_data_file(const char *name)
{
	char path[4096];
	FILE *f;

	if (!h_opt.data)
		return NULL;
	snprintf(path, sizeof(path), "%s/%s", h_opt.data, name);
	f = fopen(path, "we");
	if (!f)
		fprintf(stderr, "bench: %s: %s\n", path, strerror(errno));
	return f;
}

/*
 * Each non-empty 1 us bin, and an empty one either side of every run of
 * them, so that a step plot drops to the floor between sparse outliers
 * instead of drawing a plateau across the gap.
 */
void h_histogram_dat(const char *name, const char *comment, const uint64_t *sorted, size_t n)
{
	FILE *f = h_data_file(name);
	uint64_t prev = UINT64_MAX; /* the last bin written */

	if (!f)
		return;
	fprintf(f, "# %s\n# latency_us samples (1 us bins)\n", comment);
	for (size_t i = 0; i < n;) {
		uint64_t bin = sorted[i] / 1000, count = 0;
		while (i < n && sorted[i] / 1000 == bin)
			i++, count++;
		if (bin > 0 && (prev == UINT64_MAX || bin - 1 > prev))
			fprintf(f, "%llu 0\n", (unsigned long long)(bin - 1));
		fprintf(f, "%llu %llu\n", (unsigned long long)bin, (unsigned long long)count);
		if (i == n || sorted[i] / 1000 > bin + 1)
			fprintf(f, "%llu 0\n", (unsigned long long)(bin + 1));
		prev = bin + 1;
	}
	fclose(f);
}

const char *h_fmt_ns(char buf[16], uint64_t ns)
{
	if (ns < 10000)
		snprintf(buf, 16, "%lluns", (unsigned long long)ns);
	else if (ns < 10000000)
		snprintf(buf, 16, "%.1fus", (double)ns / 1e3);
	else if (ns < 10000000000ull)
		snprintf(buf, 16, "%.2fms", (double)ns / 1e6);
	else
		snprintf(buf, 16, "%.2fs", (double)ns / 1e9);
	return buf;
}

const char *h_fmt_pretty(char buf[16], uint64_t ns)
{
	static const char *const units[] = {"ns", "us", "ms", "s"};
	double v = (double)ns;
	int u = 0;

	while (v >= 1000 && u < 3)
		v /= 1000, u++;
	if (u == 0 || v >= 100)
		snprintf(buf, 16, "%.0f %s", v, units[u]);
	else if (v >= 10)
		snprintf(buf, 16, "%.1f %s", v, units[u]);
	else
		snprintf(buf, 16, "%.2f %s", v, units[u]);
	return buf;
}

void h_print_header(const char *title, const char *unit)
{
	printf("\n== %s%s%s\n", title, unit ? " " : "", unit ? unit : "");
	printf("%-32s %8s %9s %9s %9s %9s %9s\n", "configuration", "n", "p50", "p90", "p99",
	       "p99.9", "max");
}

void h_print_row(const char *label, const struct h_summary *s)
{
	char b[6][16];

	printf("%-32s %8llu %9s %9s %9s %9s %9s\n", label, (unsigned long long)s->n,
	       h_fmt_ns(b[0], s->p50), h_fmt_ns(b[1], s->p90), h_fmt_ns(b[2], s->p99),
	       h_fmt_ns(b[3], s->p999), h_fmt_ns(b[4], s->max));
	fflush(stdout);
}

void h_report_items(struct h_reply *r, const char *config, const char *const *items, size_t n,
		    struct h_json *j)
{
	for (size_t k = 0; k < n; k++) {
		const struct h_item *it = h_reply_get(r, items[k]);
		char label[64];
		struct h_summary s;

		if (!it)
			continue;
		snprintf(label, sizeof(label), "%s %s", config, items[k]);
		h_summarize(it->v, it->n, &s);
		h_print_row(label, &s);
		if (j)
			hj_summary(j, label, &s);
	}
}

int h_items_main(int argc, char **argv, const char *family, const char *title,
		 const struct h_config *cfg, size_t ncfg, const char *const *items, size_t nitems,
		 void (*child_main)(void))
{
	struct h_json j;

	h_init(argc, argv);
	if (h_opt.child) {
		child_main();
		return 0;
	}
	int json = h_opt.out && hj_open(&j, h_opt.out) == 0;
	h_print_header(title, NULL);
	for (size_t c = 0; c < ncfg; c++) {
		if (cfg[c].lib && !h_opt.lib)
			continue;
		struct h_reply r = h_child_run(cfg[c].name, "", cfg[c].lib, cfg[c].options, 300);
		if (r.status == 0)
			h_report_items(&r, cfg[c].name, items, nitems, json ? &j : NULL);
		else
			printf("%s: %s: the measuring child failed (status %d)\n", family,
			       cfg[c].name, r.status);
		h_reply_free(&r);
	}
	if (json)
		hj_close(&j);
	return 0;
}
