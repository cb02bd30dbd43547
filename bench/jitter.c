/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench-jitter: what the library is for.  A cyclictest-style measuring
 * thread (SCHED_FIFO 90, absolute clock_nanosleep every 200 us, memory
 * locked) runs on the realtime CPU.  Next to it a lower-priority realtime
 * thread (SCHED_FIFO 50) does heavy, non-deterministic work in a loop:
 * large writes then fsync and ftruncate of a file, a big MAP_POPULATE
 * mmap/munmap, a readdir of a 10000-entry directory, getaddrinfo("localhost").
 *
 * The measuring thread's wake-up latency is recorded in three
 * configurations, run in rounds (a b c a b c ...) so that drift hits all
 * alike:
 *   direct   the work runs on the realtime CPU, library not loaded;
 *   offload  the same, the work thread marked: the library runs its calls
 *            on the housekeeping CPU;
 *   ideal    the work thread runs on the housekeeping CPU, no library.
 * In the first, the kernel runs the work's syscalls on the realtime CPU
 * with preemption off in places (PREEMPT_NONE kernels: everywhere), so the
 * measuring thread waits; offload should look like ideal.
 */
#include "harness.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "rtoffload.h"

#define MEASURE_PRIO 90
#define WORK_PRIO    50
#define PERIOD_NS    200000u
#define WARMUP_NS    100000000u /* samples of the first 100 ms are not kept */
#define DIR_ENTRIES  10000
#define WRITE_BYTES  (1u << 20) /* per round of work, in 64 KiB writes */
#define MAP_BYTES    (64u << 20)

static volatile int stop;

/* ---- the measuring thread ------------------------------------------------------------ */

static struct h_samples lat;

static uint64_t ts_ns(const struct timespec *t)
{
	return (uint64_t)t->tv_sec * 1000000000u + (uint64_t)t->tv_nsec;
}

static void ts_add(struct timespec *t, uint64_t ns)
{
	t->tv_nsec += (long)ns;
	while (t->tv_nsec >= 1000000000L) {
		t->tv_nsec -= 1000000000L;
		t->tv_sec++;
	}
}

/* As cyclictest does: sleep to an absolute time, the latency is how late we woke. */
static void *measuring_thread(void *unused)
{
	struct timespec next, now;
	uint64_t keep_from;

	(void)unused;
	clock_gettime(CLOCK_MONOTONIC, &next);
	keep_from = ts_ns(&next) + WARMUP_NS;
	while (!stop) {
		ts_add(&next, PERIOD_NS);
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
		clock_gettime(CLOCK_MONOTONIC, &now);
		uint64_t late = ts_ns(&now) > ts_ns(&next) ? ts_ns(&now) - ts_ns(&next) : 0;
		if (ts_ns(&now) >= keep_from)
			h_sample(&lat, late);
	}
	return NULL;
}

/* ---- the work: every call in it is wrapped by the library --------------------------------- */

struct work {
	int marked;
	int fd;
	char dir[4096];
	char file[4096];
	char chunk[64 << 10];
	uint64_t iterations;
	uint64_t part_ns[4]; /* time spent in each kind of work, summed */
	int errors;
};

static const char *const part_names[4] = {"file", "memory", "directory", "dns"};

static void check(struct work *w, int ok)
{
	w->errors += !ok;
}

static void file_work(struct work *w)
{
	for (unsigned off = 0; off < WRITE_BYTES; off += sizeof(w->chunk))
		check(w, write(w->fd, w->chunk, sizeof(w->chunk)) == (ssize_t)sizeof(w->chunk));
	check(w, fsync(w->fd) == 0);
	check(w, ftruncate(w->fd, 0) == 0);
	check(w, lseek(w->fd, 0, SEEK_SET) == 0);
}

static void memory_work(struct work *w)
{
	void *p = mmap(NULL, MAP_BYTES, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	check(w, p != MAP_FAILED);
	if (p != MAP_FAILED)
		check(w, munmap(p, MAP_BYTES) == 0);
}

static void directory_work(struct work *w)
{
	DIR *d = opendir(w->dir);
	int n = 0;

	check(w, d != NULL);
	if (!d)
		return;
	while (readdir(d))
		n++;
	check(w, n >= DIR_ENTRIES);
	closedir(d);
}

static void name_work(struct work *w)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res = NULL;

	check(w, getaddrinfo("localhost", "80", &hints, &res) == 0);
	if (res)
		freeaddrinfo(res);
}

static void *work_thread(void *arg)
{
	struct work *w = arg;

	if (w->marked && rt_offload_mark_thread() != 0) {
		perror("rt_offload_mark_thread");
		exit(1);
	}
	void (*const parts[4])(struct work *) = {file_work, memory_work, directory_work, name_work};

	while (!stop) {
		for (int i = 0; i < 4; i++) {
			uint64_t t0 = h_now_ns();
			parts[i](w);
			w->part_ns[i] += h_now_ns() - t0;
		}
		w->iterations++;
	}
	rt_offload_try_unmark_thread();
	return NULL;
}

/* ---- one configuration for one round: the child ------------------------------------------- */

static int child_main(void)
{
	static struct work w;
	pthread_t m, t;
	int on_rt = strcmp(h_opt.child, "ideal") != 0;
	unsigned secs = (unsigned)atoi(h_opt.arg);

	w.marked = strcmp(h_opt.child, "offload") == 0;
	if (w.marked && !RT_OFFLOAD_AVAILABLE()) {
		fprintf(stderr, "bench-jitter: the library is not loaded\n");
		return 1;
	}
	snprintf(w.dir, sizeof(w.dir), "%s/dir", h_opt.tmp);
	snprintf(w.file, sizeof(w.file), "%s/file", h_opt.tmp);
	w.fd = open(w.file, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (w.fd < 0) {
		perror(w.file);
		return 1;
	}
	memset(w.chunk, 'x', sizeof(w.chunk));
	h_samples_init(&lat, (size_t)secs * (1000000000u / PERIOD_NS) + 1000);
	h_lock_memory();
	/* This thread only waits; off the realtime CPU, and above the work so it can stop it. */
	h_fifo(WORK_PRIO + 10);
	h_pin(h_opt.hk_cpu);

	double steal0 = h_cpu_steal_ms(h_opt.rt_cpu);
	uint64_t t0 = h_now_ns();
	h_thread_start(&m, measuring_thread, NULL, h_opt.rt_cpu, MEASURE_PRIO);
	h_thread_start(&t, work_thread, &w, on_rt ? h_opt.rt_cpu : h_opt.hk_cpu, WORK_PRIO);
	h_sleep_ms(secs * 1000);
	stop = 1;
	pthread_join(m, NULL);
	pthread_join(t, NULL);
	double elapsed = (double)(h_now_ns() - t0) / 1e9;
	h_send_value("steal_ms", h_cpu_steal_ms(h_opt.rt_cpu) - steal0);

	h_send_samples("latency", lat.v, lat.n);
	h_send_value("work_iterations_per_s", (double)w.iterations / elapsed);
	h_send_value("work_errors", w.errors);
	for (int i = 0; i < 4; i++) { /* where the work's time goes: ms per iteration */
		char name[32];
		snprintf(name, sizeof(name), "%s_ms", part_names[i]);
		h_send_value(name,
			     w.iterations ? (double)w.part_ns[i] / 1e6 / (double)w.iterations : 0);
	}
	h_send_value("fifo", !h_fifo_refused);
	struct rt_offload_stats st;
	if (w.marked && rt_offload_get_stats(&st) == 0) { /* did the work really travel? */
		h_send_value("lib_offloaded", (double)st.offloaded);
		h_send_value("lib_local", (double)st.local);
	}
	struct statfs fs; /* the library runs calls on tmpfs files locally (fd_local) */
	h_send_value("file_on_tmpfs", fstatfs(w.fd, &fs) == 0 && fs.f_type == TMPFS_MAGIC);
	close(w.fd);
	unlink(w.file);
	return 0;
}

/* ---- the parent: rounds, then the report ------------------------------------------------------
 */

struct config {
	const char *name;
	int with_lib;
	const char *about;
	struct h_samples all; /* every round's samples */
	double iters_per_s;   /* summed over rounds, divided at the end */
	double part_ms[4];    /* the same, ms per iteration by kind of work */
	double steal_ms;      /* the realtime vCPU's steal time, summed over rounds */
	int rounds_ok;
	int errors;
	double lib_offloaded, lib_local; /* the library's counters, summed over rounds */
	int on_tmpfs;
};

static struct config configs[] = {
	{.name = "direct", .about = "work on the realtime CPU, no library"},
	{.name = "offload",
	 .with_lib = 1,
	 .about = "work on the realtime CPU, thread marked: calls run on the helper"},
	{.name = "ideal", .about = "work on the housekeeping CPU, no library"},
};

#define NCONFIGS (sizeof(configs) / sizeof(configs[0]))

static unsigned rounds(void)
{
	return strcmp(h_opt.mode, "quick") == 0 ? 2 : strcmp(h_opt.mode, "long") == 0 ? 10 : 4;
}

static unsigned round_secs(void)
{
	return strcmp(h_opt.mode, "quick") == 0 ? 2 : strcmp(h_opt.mode, "long") == 0 ? 30 : 4;
}

/* The scratch area: a directory of DIR_ENTRIES empty files, and room for the file. */
static char *make_workspace(void)
{
	static char ws[4096];
	char path[4200];

	snprintf(ws, sizeof(ws), "%s/rtoffload-bench-XXXXXX", h_opt.tmp);
	if (!mkdtemp(ws)) {
		perror(ws);
		exit(1);
	}
	snprintf(path, sizeof(path), "%s/dir", ws);
	mkdir(path, 0700);
	for (int i = 0; i < DIR_ENTRIES; i++) {
		snprintf(path, sizeof(path), "%s/dir/entry-%05d", ws, i);
		int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
		if (fd >= 0)
			close(fd);
	}
	return ws;
}

static void remove_workspace(const char *ws)
{
	char path[4200];

	for (int i = 0; i < DIR_ENTRIES; i++) {
		snprintf(path, sizeof(path), "%s/dir/entry-%05d", ws, i);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/dir", ws);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/file", ws);
	unlink(path);
	rmdir(ws);
}

static void append(struct config *c, const struct h_item *it)
{
	size_t need = c->all.n + it->n;

	if (need > c->all.cap) {
		c->all.v = realloc(c->all.v, need * sizeof(uint64_t));
		c->all.cap = need;
	}
	memcpy(c->all.v + c->all.n, it->v, it->n * sizeof(uint64_t));
	c->all.n += it->n;
}

static const char *options(void)
{
	static char buf[128];

	snprintf(buf, sizeof(buf), "rt_cpus=%d:helper_cpus=%d", h_opt.rt_cpu, h_opt.hk_cpu);
	return buf;
}

static void run_round(unsigned r)
{
	char arg[16];

	snprintf(arg, sizeof(arg), "%u", round_secs());
	for (size_t i = 0; i < NCONFIGS; i++) {
		struct config *c = &configs[i];
		if (c->with_lib && !h_opt.lib)
			continue;
		struct h_reply rep =
			h_child_run(c->name, arg, c->with_lib, c->with_lib ? options() : NULL,
				    (int)round_secs() + 60);
		const struct h_item *it = h_reply_get(&rep, "latency");
		if (rep.status == 0 && it) {
			append(c, it);
			c->iters_per_s += h_reply_value(&rep, "work_iterations_per_s", 0);
			c->steal_ms += h_reply_value(&rep, "steal_ms", 0);
			for (int k = 0; k < 4; k++) {
				char name[32];
				snprintf(name, sizeof(name), "%s_ms", part_names[k]);
				c->part_ms[k] += h_reply_value(&rep, name, 0);
			}
			c->errors += (int)h_reply_value(&rep, "work_errors", 0);
			c->lib_offloaded += h_reply_value(&rep, "lib_offloaded", 0);
			c->lib_local += h_reply_value(&rep, "lib_local", 0);
			c->on_tmpfs |= h_reply_value(&rep, "file_on_tmpfs", 0) != 0;
			c->rounds_ok++;
		} else {
			fprintf(stderr, "bench-jitter: round %u, %s failed (status %d)\n", r + 1,
				c->name, rep.status);
		}
		h_reply_free(&rep);
	}
}

static void print_table(struct h_summary *s)
{
	char b[4][16];

	printf("\n== jitter: wake-up latency of a SCHED_FIFO thread on CPU%d, period %u us, "
	       "%u rounds x %u s\n",
	       h_opt.rt_cpu, PERIOD_NS / 1000, rounds(), round_secs());
	printf("%-10s %9s %9s %9s %9s %9s %8s %8s %8s %8s %8s\n", "config", "samples", "p50", "p99",
	       "p99.9", "max", ">50us", ">100us", ">1ms", "work/s", "steal");
	for (size_t i = 0; i < NCONFIGS; i++) {
		struct config *c = &configs[i];
		if (!c->rounds_ok) {
			printf("%-10s (not run%s)\n", c->name,
			       c->with_lib && !h_opt.lib ? ": no library" : "");
			continue;
		}
		printf("%-10s %9llu %9s %9s %9s %9s %8llu %8llu %8llu %8.1f %6.0fms\n", c->name,
		       (unsigned long long)s[i].n, h_fmt_ns(b[0], s[i].p50),
		       h_fmt_ns(b[1], s[i].p99), h_fmt_ns(b[2], s[i].p999),
		       h_fmt_ns(b[3], s[i].max),
		       (unsigned long long)h_count_over(c->all.v, c->all.n, 50000),
		       (unsigned long long)h_count_over(c->all.v, c->all.n, 100000),
		       (unsigned long long)h_count_over(c->all.v, c->all.n, 1000000),
		       c->iters_per_s / c->rounds_ok, c->steal_ms);
	}
	printf("work, ms per iteration:");
	for (int k = 0; k < 4; k++)
		printf("%s%s", k ? " / " : " ", part_names[k]);
	printf("\n");
	for (size_t i = 0; i < NCONFIGS; i++) {
		struct config *c = &configs[i];
		if (!c->rounds_ok)
			continue;
		printf("  %-8s", c->name);
		for (int k = 0; k < 4; k++)
			printf(" %8.2f", c->part_ms[k] / c->rounds_ok);
		printf("\n");
	}
	for (size_t i = 0; i < NCONFIGS; i++) {
		struct config *c = &configs[i];
		if (c->with_lib && c->rounds_ok)
			printf("%s: the library ran %.0f of the work's calls on the helper, %.0f "
			       "locally\n",
			       c->name, c->lib_offloaded, c->lib_local);
		if (c->on_tmpfs && c->with_lib)
			printf("warning: the work file is on tmpfs, whose calls the library runs "
			       "locally: set TMPDIR to a disk\n");
	}
}

static void write_json(struct h_summary *s)
{
	struct h_json j;

	if (!h_opt.out || hj_open(&j, h_opt.out) != 0)
		return;
	hj_str(&j, "about",
	       "wake-up latency of a SCHED_FIFO 90 thread (absolute clock_nanosleep) "
	       "on the realtime CPU while a SCHED_FIFO 50 thread does heavy work");
	hj_u64(&j, "period_ns", PERIOD_NS);
	hj_u64(&j, "rounds", rounds());
	hj_u64(&j, "round_s", round_secs());
	hj_str(&j, "work",
	       "1 MiB of 64 KiB writes + fsync + ftruncate; 64 MiB MAP_POPULATE mmap + "
	       "munmap; readdir of 10000 entries; getaddrinfo(localhost)");
	hj_str(&j, "library_options", options());
	hj_arr(&j, "configs", 0);
	for (size_t i = 0; i < NCONFIGS; i++) {
		struct config *c = &configs[i];
		hj_obj(&j, NULL);
		hj_str(&j, "name", c->name);
		hj_str(&j, "about", c->about);
		hj_u64(&j, "rounds_ok", (uint64_t)c->rounds_ok);
		hj_summary(&j, "latency", &s[i]);
		hj_u64(&j, "over_50us", h_count_over(c->all.v, c->all.n, 50000));
		hj_u64(&j, "over_100us", h_count_over(c->all.v, c->all.n, 100000));
		hj_u64(&j, "over_1ms", h_count_over(c->all.v, c->all.n, 1000000));
		hj_num(&j, "work_iterations_per_s",
		       c->rounds_ok ? c->iters_per_s / c->rounds_ok : 0);
		hj_u64(&j, "work_errors", (uint64_t)c->errors);
		if (c->with_lib) {
			hj_num(&j, "library_offloaded", c->lib_offloaded);
			hj_num(&j, "library_local", c->lib_local);
		}
		hj_bool(&j, "work_file_on_tmpfs", c->on_tmpfs);
		hj_num(&j, "rt_cpu_steal_ms", c->steal_ms);
		hj_obj(&j, "work_ms_per_iteration");
		for (int k = 0; k < 4; k++)
			hj_num(&j, part_names[k], c->rounds_ok ? c->part_ms[k] / c->rounds_ok : 0);
		hj_end(&j);
		hj_histogram(&j, "histogram_us", c->all.v, c->all.n);
		hj_end(&j);
	}
	hj_end(&j);
	hj_close(&j);
}

/* jitter-<config>.dat: "latency_us count" per 1 us bin, as OSADL plots them. */
static void write_histograms(void)
{
	char name[64], comment[256];

	for (size_t i = 0; i < NCONFIGS; i++) {
		struct config *c = &configs[i];
		snprintf(name, sizeof(name), "jitter-%s.dat", c->name);
		snprintf(comment, sizeof(comment), "%s: %s", c->name, c->about);
		h_histogram_dat(name, comment, c->all.v, c->all.n); /* sorted by h_summarize */
	}
}

/* jitter.md: the table of docs/PERFORMANCE.md, from this run. */
static void write_markdown(struct h_summary *s)
{
	static const char *const labels[] = {
		"I/O done directly on the realtime CPU",
		"same thread, calls offloaded by the library",
		"ideal: I/O thread on the housekeeping CPU",
	};
	FILE *f = h_data_file("jitter.md");
	char b[4][16];

	if (!f)
		return;
	fprintf(f,
		"| SCHED_FIFO %u us loop on CPU %d, heavy I/O thread beside it | p50 | p99 | p99.9 "
		"| max | > 100 us | > 1 ms |\n|---|---|---|---|---|---|---|\n",
		PERIOD_NS / 1000, h_opt.rt_cpu);
	for (size_t i = 0; i < NCONFIGS; i++) {
		struct config *c = &configs[i];
		if (!c->rounds_ok)
			continue;
		fprintf(f, "| %s | %s | %s | %s | %s | %llu | %llu |\n", labels[i],
			h_fmt_pretty(b[0], s[i].p50), h_fmt_pretty(b[1], s[i].p99),
			h_fmt_pretty(b[2], s[i].p999), h_fmt_pretty(b[3], s[i].max),
			(unsigned long long)h_count_over(c->all.v, c->all.n, 100000),
			(unsigned long long)h_count_over(c->all.v, c->all.n, 1000000));
	}
	fclose(f);
}

int main(int argc, char **argv)
{
	struct h_summary s[NCONFIGS];

	h_init(argc, argv);
	if (h_opt.child)
		return child_main();
	const char *ws = make_workspace();
	h_opt.tmp = ws; /* the children work there */
	for (unsigned r = 0; r < rounds(); r++)
		run_round(r);
	remove_workspace(ws);
	for (size_t i = 0; i < NCONFIGS; i++)
		h_summarize(configs[i].all.v, configs[i].all.n, &s[i]);
	print_table(s);
	write_json(s);
	write_histograms();
	write_markdown(s);
	return 0;
}
