/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench-scale: what offloading costs as it grows, and what it costs idle.
 *
 *   throughput  N marked threads (1..16) call write() back to back with W
 *               workers (1, 2, 4): calls/s and the round trip's p99/max.
 *               The callers share the realtime CPU at SCHED_OTHER (equal
 *               SCHED_FIFO threads on one CPU would not take turns); the
 *               workers run where the library puts them (not that CPU).
 *   blocking    one marked thread reads an empty FIFO, fed 100 ms later
 *               by another thread, while three others keep calling
 *               write(); with fd_local=none both are offloaded (by default
 *               pipe and /dev/null calls run locally).  With W = 1 the
 *               others wait for the read, with W >= 2 they must not.
 *   helper_cpu  the helpers' CPU time, idle and serving one call every
 *               1 ms or 100 us, for several helper_idle_us: the price of a
 *               polling helper (io_uring's SQPOLL trade-off).
 *   unmarked    the cost of the wrappers in a thread that is not marked:
 *               loops of fputc (buffered, rarely a syscall) and lseek, with
 *               and without the library loaded.
 * The calls go to /dev/null, which the library would run locally by
 * default (a character device's write is short): fd_local=none makes them
 * travel, as writes to a disk file do.
 */
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "rtoffload.h"

static int devnull = -1;
static char buf64[64];

static void mark_or_die(void)
{
	if (!RT_OFFLOAD_AVAILABLE() || rt_offload_mark_thread() != 0) {
		fprintf(stderr, "bench-scale: cannot mark a thread (library not loaded?)\n");
		exit(1);
	}
}

static void send_library_local(void)
{
	struct rt_offload_stats st;

	if (rt_offload_get_stats && rt_offload_get_stats(&st) == 0) {
		h_send_value("lib_offloaded", (double)st.offloaded);
		h_send_value("lib_local", (double)st.local);
	}
}

/* ---- throughput: N callers ------------------------------------------------------------- */

struct caller {
	pthread_t t;
	struct h_samples s;
	uint64_t calls;
	uint64_t until; /* ticks */
	pthread_barrier_t *start;
};

static void *caller_main(void *arg)
{
	struct caller *c = arg;

	mark_or_die();
	pthread_barrier_wait(c->start);
	while (h_ticks() < c->until) {
		uint64_t t0 = h_ticks();
		if (write(devnull, buf64, sizeof(buf64)) != sizeof(buf64))
			exit(1);
		h_sample(&c->s, h_ticks() - t0);
		c->calls++;
	}
	rt_offload_unmark_thread();
	return NULL;
}

static void child_throughput(void)
{
	int n = atoi(h_opt.arg);
	uint64_t secs_ns = h_scaled(1000000000u, 500000000u);
	struct caller *c = calloc((size_t)n, sizeof(*c));
	pthread_barrier_t start;
	uint64_t total = 0;

	h_lock_memory();
	pthread_barrier_init(&start, NULL, (unsigned)n + 1);
	for (int i = 0; i < n; i++) {
		h_samples_init(&c[i].s, 4000000 / (size_t)n + 100000);
		c[i].start = &start;
		c[i].until = UINT64_MAX;
		h_thread_start(&c[i].t, caller_main, &c[i], h_opt.rt_cpu, 0);
	}
	h_sleep_ms(50); /* every caller marked, the helpers started */
	uint64_t until = h_ticks() + h_ticks_for_ns(secs_ns);
	for (int i = 0; i < n; i++)
		c[i].until = until;
	pthread_barrier_wait(&start);
	struct h_samples all;
	h_samples_init(&all, 0);
	for (int i = 0; i < n; i++) {
		pthread_join(c[i].t, NULL);
		total += c[i].calls;
	}
	for (int i = 0; i < n; i++) { /* one series: every call of every thread */
		h_samples_to_ns(&c[i].s);
		all.v = realloc(all.v, (all.n + c[i].s.n) * sizeof(uint64_t));
		memcpy(all.v + all.n, c[i].s.v, c[i].s.n * sizeof(uint64_t));
		all.n += c[i].s.n;
	}
	h_send_samples("rtt", all.v, all.n);
	h_send_value("calls_per_s", (double)total / ((double)secs_ns / 1e9));
}

/* ---- blocking: one read that waits 100 ms must not hold up the others --------------------- */

#define BLOCK_OTHERS  3
#define BLOCK_FEED_MS 100
#define BLOCK_RUN_MS  400

struct blocking {
	int fifo_rd, fifo_wr;
	uint64_t t0;			    /* ticks */
	uint64_t read_start, read_end;	    /* ticks */
	struct h_samples at[BLOCK_OTHERS];  /* when each call started, ns after t0 */
	struct h_samples rtt[BLOCK_OTHERS]; /* its round trip, ticks */
};

static struct blocking blk;

static void *blocker_main(void *unused)
{
	char c;

	(void)unused;
	mark_or_die();
	h_sleep_ms(20); /* let the others get going */
	__atomic_store_n(&blk.read_start, h_ticks(), __ATOMIC_RELEASE);
	if (read(blk.fifo_rd, &c, 1) != 1)
		perror("bench-scale: read of the FIFO");
	blk.read_end = h_ticks();
	rt_offload_unmark_thread();
	return NULL;
}

static void *feeder_main(void *unused)
{
	(void)unused;
	while (!__atomic_load_n(&blk.read_start, __ATOMIC_ACQUIRE))
		h_sleep_ms(1);
	h_sleep_ms(BLOCK_FEED_MS);
	if (write(blk.fifo_wr, "x", 1) != 1)
		perror("bench-scale: write to the FIFO");
	return NULL;
}

static void *other_main(void *arg)
{
	int i = (int)(intptr_t)arg;
	uint64_t end = blk.t0 + h_ticks_for_ns(BLOCK_RUN_MS * 1000000ull);

	mark_or_die();
	while (h_ticks() < end) {
		uint64_t t0 = h_ticks();
		if (write(devnull, buf64, sizeof(buf64)) != sizeof(buf64))
			exit(1);
		uint64_t t1 = h_ticks();
		h_sample(&blk.at[i], h_ns(t0 - blk.t0));
		h_sample(&blk.rtt[i], h_ns(t1 - t0));
		/* Sleep between calls: spinning threads sharing a CPU would time-slice, and
		 * the slices (ms) would hide what the workers do. */
		struct timespec gap = {0, 50000};
		nanosleep(&gap, NULL);
	}
	rt_offload_unmark_thread();
	return NULL;
}

static void child_blocking(void)
{
	char path[4200];
	pthread_t b, f, o[BLOCK_OTHERS];

	snprintf(path, sizeof(path), "%s/rtoffload-bench-fifo-%d", h_opt.tmp, (int)getpid());
	unlink(path);
	if (mkfifo(path, 0600) != 0) {
		perror(path);
		exit(1);
	}
	/* O_RDWR: opening does not wait for a writer, and read() then waits for data. */
	blk.fifo_rd = open(path, O_RDWR | O_CLOEXEC);
	blk.fifo_wr = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	unlink(path);
	h_lock_memory();
	for (int i = 0; i < BLOCK_OTHERS; i++) {
		h_samples_init(&blk.at[i], 20000);
		h_samples_init(&blk.rtt[i], 20000);
	}
	blk.t0 = h_ticks();
	h_thread_start(&b, blocker_main, NULL, h_opt.rt_cpu, 0);
	h_thread_start(&f, feeder_main, NULL, h_opt.hk_cpu, 0);
	for (int i = 0; i < BLOCK_OTHERS; i++)
		h_thread_start(&o[i], other_main, (void *)(intptr_t)i, h_opt.rt_cpu, 0);
	pthread_join(b, NULL);
	pthread_join(f, NULL);
	for (int i = 0; i < BLOCK_OTHERS; i++)
		pthread_join(o[i], NULL);
	h_send_value("read_ms", (double)h_ns(blk.read_end - blk.read_start) / 1e6);
	h_send_value("read_start_ms", (double)h_ns(blk.read_start - blk.t0) / 1e6);
	for (int i = 0; i < BLOCK_OTHERS; i++) {
		char name[32];
		snprintf(name, sizeof(name), "at%d", i);
		h_send_samples(name, blk.at[i].v, blk.at[i].n);
		snprintf(name, sizeof(name), "rtt%d", i);
		h_send_samples(name, blk.rtt[i].v, blk.rtt[i].n);
	}
	send_library_local();
}

/* ---- helper CPU: what a polling helper burns --------------------------------------------- */

/* arg: the spacing of calls in us, 0 for none (idle: marked, but no call). */
static void child_helper_cpu(void)
{
	uint64_t spacing_us = strtoull(h_opt.arg, NULL, 10);
	uint64_t secs_ns = h_scaled(1000000000u, 1000000000u);
	struct h_samples s;
	uint64_t busy0, total0, busy1, total1;
	int nthreads;

	h_lock_memory();
	h_pin(h_opt.rt_cpu);
	h_fifo(80);
	mark_or_die();
	h_samples_init(&s, spacing_us ? secs_ns / 1000 / spacing_us + 10 : 1);
	h_sleep_ms(100); /* the helpers have started and settled */
	uint64_t cpu0 = h_threads_cpu_ns("rtoffload", &nthreads);
	h_cpu_jiffies(h_opt.hk_cpu, &busy0, &total0);
	uint64_t t0 = h_now_ns();
	struct timespec next;
	clock_gettime(CLOCK_MONOTONIC, &next);
	while (h_now_ns() - t0 < secs_ns) {
		if (!spacing_us) {
			h_sleep_ms(10);
			continue;
		}
		next.tv_nsec += (long)spacing_us * 1000;
		while (next.tv_nsec >= 1000000000L)
			next.tv_nsec -= 1000000000L, next.tv_sec++;
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
		uint64_t a = h_ticks();
		if (write(devnull, buf64, sizeof(buf64)) != sizeof(buf64))
			exit(1);
		h_sample(&s, h_ticks() - a);
	}
	uint64_t elapsed = h_now_ns() - t0;
	uint64_t cpu1 = h_threads_cpu_ns("rtoffload", &nthreads);
	h_cpu_jiffies(h_opt.hk_cpu, &busy1, &total1);
	rt_offload_unmark_thread();
	h_samples_to_ns(&s);
	h_send_samples("rtt", s.v, s.n);
	h_send_value("helper_cpu_pct", 100.0 * (double)(cpu1 - cpu0) / (double)elapsed);
	h_send_value("helper_threads", nthreads);
	h_send_value("hk_cpu_busy_pct",
		     total1 > total0 ? 100.0 * (double)(busy1 - busy0) / (double)(total1 - total0)
				     : 0);
}

/* ---- unmarked threads: the wrappers' own cost ---------------------------------------------- */

#define LOOP_FPUTC 4000000
#define LOOP_LSEEK 1000000

/* Best of 5 loops: the least disturbed one is the one that measures the code. */
static double best_ns_per_call(int which, FILE *f)
{
	double best = 1e30;

	for (int rep = 0; rep < 5; rep++) {
		int n = which ? LOOP_LSEEK : LOOP_FPUTC;
		uint64_t t0 = h_ticks();
		for (int i = 0; i < n; i++) {
			if (which)
				lseek(devnull, 0, SEEK_CUR);
			else
				fputc('x', f);
		}
		double ns = (double)h_ns(h_ticks() - t0) / n;
		best = ns < best ? ns : best;
	}
	return best;
}

static void child_unmarked(void)
{
	static char iobuf[1 << 16];
	FILE *f = fopen("/dev/null", "we");

	setvbuf(f, iobuf, _IOFBF, sizeof(iobuf)); /* one write() per 64 KiB */
	h_lock_memory();
	h_pin(h_opt.rt_cpu);
	h_fifo(80);
	h_send_value("fputc_ns", best_ns_per_call(0, f));
	h_send_value("lseek_ns", best_ns_per_call(1, f));
	fclose(f);
}

/* ---- the parent --------------------------------------------------------------------------- */

static const int thread_counts[] = {1, 2, 4, 8, 16};
static const int worker_counts[] = {1, 2, 4};
static const int idle_us[] = {0, 50, 200, 1000, 10000};
static const int spacings_us[] = {0, 1000, 100}; /* 0: idle */

#define N_THREADS (sizeof(thread_counts) / sizeof(thread_counts[0]))
#define N_WORKERS (sizeof(worker_counts) / sizeof(worker_counts[0]))
#define N_IDLE	  (sizeof(idle_us) / sizeof(idle_us[0]))
#define N_SPACING (sizeof(spacings_us) / sizeof(spacings_us[0]))

struct cell {
	double calls_per_s;
	struct h_summary rtt;
	int ok;
};

static struct cell tput[N_THREADS][N_WORKERS];
static struct cell hcpu[N_IDLE][N_SPACING];
static double hcpu_pct[N_IDLE][N_SPACING], hk_busy[N_IDLE][N_SPACING];

static struct block_result {
	int workers;
	int ok;
	double read_ms, read_start_ms;
	struct h_summary during; /* the others' calls that overlapped the read */
	struct h_summary all;	 /* all their calls */
	uint64_t over_1ms;
	double lib_local;
} blocks[2] = {{.workers = 1}, {.workers = 2}};

static double unmarked[2][2]; /* [with lib][fputc, lseek], ns per call */

static void summarize_item(const struct h_reply *r, const char *name, struct h_summary *s)
{
	const struct h_item *it = h_reply_get(r, name);

	memset(s, 0, sizeof(*s));
	if (it && !it->is_value)
		h_summarize(it->v, it->n, s);
}

static void run_throughput(void)
{
	char opts[128], arg[16];

	/* W varies fastest: the cells compared with each other run close in time. */
	for (size_t t = 0; t < N_THREADS; t++) {
		for (size_t w = 0; w < N_WORKERS; w++) {
			snprintf(opts, sizeof(opts), "rt_cpus=%d:workers=%d:fd_local=none",
				 h_opt.rt_cpu, worker_counts[w]);
			snprintf(arg, sizeof(arg), "%d", thread_counts[t]);
			struct h_reply r = h_child_run("throughput", arg, 1, opts, 60);
			struct cell *c = &tput[t][w];
			c->ok = r.status == 0;
			c->calls_per_s = h_reply_value(&r, "calls_per_s", 0);
			summarize_item(&r, "rtt", &c->rtt);
			h_reply_free(&r);
		}
	}
}

static void add_sample(struct h_samples *s, uint64_t v)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 1024;
		s->v = realloc(s->v, s->cap * sizeof(uint64_t));
	}
	s->v[s->n++] = v;
}

/*
 * The other threads' calls: one timeline file per W for the plot, a
 * summary of all of them, and one of those that overlapped the read.
 */
static void sort_blocking(struct block_result *b, const struct h_reply *r)
{
	char name[64];
	struct h_samples all = {0}, during = {0};
	double from = b->read_start_ms * 1e6, to = from + b->read_ms * 1e6; /* ns */

	snprintf(name, sizeof(name), "scale-blocking-w%d.dat", b->workers);
	FILE *f = h_data_file(name);
	for (int i = 0; i < BLOCK_OTHERS; i++) {
		char an[16], rn[16];
		snprintf(an, sizeof(an), "at%d", i);
		snprintf(rn, sizeof(rn), "rtt%d", i);
		const struct h_item *at = h_reply_get(r, an), *rtt = h_reply_get(r, rn);
		for (uint64_t j = 0; at && rtt && j < at->n && j < rtt->n; j++) {
			if (f)
				fprintf(f, "%.3f %.3f\n", (double)at->v[j] / 1e6,
					(double)rtt->v[j] / 1e3);
			add_sample(&all, rtt->v[j]);
			if ((double)at->v[j] < to && (double)(at->v[j] + rtt->v[j]) > from)
				add_sample(&during, rtt->v[j]);
		}
	}
	if (f)
		fclose(f);
	b->over_1ms = h_count_over(all.v, all.n, 1000000);
	h_summarize(all.v, all.n, &b->all);
	h_summarize(during.v, during.n, &b->during);
	h_samples_free(&all);
	h_samples_free(&during);
}

static void run_blocking(void)
{
	char opts[128];

	for (size_t k = 0; k < 2; k++) {
		struct block_result *b = &blocks[k];
		/* fd_local=none: the FIFO read is offloaded (by default it would run here). */
		snprintf(opts, sizeof(opts), "rt_cpus=%d:workers=%d:fd_local=none", h_opt.rt_cpu,
			 b->workers);
		struct h_reply r = h_child_run("blocking", "", 1, opts, 30);
		b->ok = r.status == 0;
		b->read_ms = h_reply_value(&r, "read_ms", 0);
		b->read_start_ms = h_reply_value(&r, "read_start_ms", 0);
		b->lib_local = h_reply_value(&r, "lib_local", 0);
		sort_blocking(b, &r);
		h_reply_free(&r);
	}
}

static void run_helper_cpu(void)
{
	char opts[128], arg[16];

	for (size_t i = 0; i < N_IDLE; i++) {
		for (size_t s = 0; s < N_SPACING; s++) {
			snprintf(opts, sizeof(opts),
				 /* idle: the helper_idle_us trade-off itself, without prediction */
				 "rt_cpus=%d:helper_cpus=%d:fd_local=none:helper_wake=idle:"
				 "helper_idle_us=%d",
				 h_opt.rt_cpu, h_opt.hk_cpu, idle_us[i]);
			snprintf(arg, sizeof(arg), "%d", spacings_us[s]);
			struct h_reply r = h_child_run("helper_cpu", arg, 1, opts, 60);
			hcpu[i][s].ok = r.status == 0;
			hcpu_pct[i][s] = h_reply_value(&r, "helper_cpu_pct", 0);
			hk_busy[i][s] = h_reply_value(&r, "hk_cpu_busy_pct", 0);
			summarize_item(&r, "rtt", &hcpu[i][s].rtt);
			h_reply_free(&r);
		}
	}
}

/* Alternate without and with the library, three times, and keep the best of each. */
static void run_unmarked(void)
{
	for (int k = 0; k < 2; k++)
		unmarked[k][0] = unmarked[k][1] = 1e30;
	for (int rep = 0; rep < 3; rep++) {
		for (int lib = 0; lib < 2; lib++) {
			struct h_reply r = h_child_run("unmarked", "", lib, lib ? "" : NULL, 60);
			double f = h_reply_value(&r, "fputc_ns", 1e30);
			double l = h_reply_value(&r, "lseek_ns", 1e30);
			unmarked[lib][0] = f < unmarked[lib][0] ? f : unmarked[lib][0];
			unmarked[lib][1] = l < unmarked[lib][1] ? l : unmarked[lib][1];
			h_reply_free(&r);
		}
	}
}

static void print_throughput(void)
{
	char b[2][16];

	printf("\n== scale: N marked threads on CPU%d (SCHED_OTHER) x W workers: calls/s, "
	       "round trip p99 / max\n",
	       h_opt.rt_cpu);
	printf("%-8s", "threads");
	for (size_t w = 0; w < N_WORKERS; w++)
		printf("  W=%-25d", worker_counts[w]);
	printf("\n");
	for (size_t t = 0; t < N_THREADS; t++) {
		printf("%-8d", thread_counts[t]);
		for (size_t w = 0; w < N_WORKERS; w++) {
			struct cell *c = &tput[t][w];
			if (!c->ok) {
				printf("  %-27s", "failed");
				continue;
			}
			printf("  %7.0fk/s %7s %8s", c->calls_per_s / 1e3,
			       h_fmt_ns(b[0], c->rtt.p99), h_fmt_ns(b[1], c->rtt.max));
		}
		printf("\n");
	}
}

static void print_blocking(void)
{
	char b[6][16];

	printf("\n== blocking: a read() that waits %d ms in one marked thread, %d others calling "
	       "write()\n",
	       BLOCK_FEED_MS, BLOCK_OTHERS);
	printf("%-8s %8s | %-35s | %-35s\n", "", "", "others' calls during the read",
	       "all the others' calls");
	printf("%-8s %8s | %6s %9s %9s %9s | %6s %9s %9s %6s\n", "workers", "read", "n", "p50",
	       "p99", "max", "n", "p99", "max", ">1ms");
	for (size_t k = 0; k < 2; k++) {
		struct block_result *x = &blocks[k];
		if (!x->ok) {
			printf("%-8d failed\n", x->workers);
			continue;
		}
		printf("%-8d %6.1fms | %6llu %9s %9s %9s | %6llu %9s %9s %6llu\n", x->workers,
		       x->read_ms, (unsigned long long)x->during.n, h_fmt_ns(b[0], x->during.p50),
		       h_fmt_ns(b[1], x->during.p99), h_fmt_ns(b[2], x->during.max),
		       (unsigned long long)x->all.n, h_fmt_ns(b[3], x->all.p99),
		       h_fmt_ns(b[4], x->all.max), (unsigned long long)x->over_1ms);
	}
}

static void print_helper_cpu(void)
{
	char b[2][16];

	printf("\n== helper CPU cost by helper_idle_us: helper threads' CPU %% (round trip "
	       "p50/p99)\n");
	printf("%-15s %-24s %-24s %-24s\n", "helper_idle_us", "idle", "1 call / 1 ms",
	       "1 call / 100 us");
	for (size_t i = 0; i < N_IDLE; i++) {
		printf("%-15d", idle_us[i]);
		for (size_t s = 0; s < N_SPACING; s++) {
			if (!hcpu[i][s].ok) {
				printf(" %-24s", "failed");
			} else if (!spacings_us[s]) {
				printf(" %5.1f%%%18s", hcpu_pct[i][s], "");
			} else {
				printf(" %5.1f%% (%s/%s)%*s", hcpu_pct[i][s],
				       h_fmt_ns(b[0], hcpu[i][s].rtt.p50),
				       h_fmt_ns(b[1], hcpu[i][s].rtt.p99), 2, "");
			}
		}
		printf("\n");
	}
}

static void print_unmarked(void)
{
	printf("\n== unmarked thread, wrapped call in a loop (best of 15 loops): without -> with "
	       "the library\n");
	printf("fputc (buffered): %.2f -> %.2f ns/call (%+.2f ns, x%.3f)\n", unmarked[0][0],
	       unmarked[1][0], unmarked[1][0] - unmarked[0][0], unmarked[1][0] / unmarked[0][0]);
	printf("lseek (syscall):  %.1f -> %.1f ns/call (%+.2f ns, x%.3f)\n", unmarked[0][1],
	       unmarked[1][1], unmarked[1][1] - unmarked[0][1], unmarked[1][1] / unmarked[0][1]);
}

static void json_throughput(struct h_json *j)
{
	hj_obj(j, "throughput");
	hj_str(j, "about",
	       "N marked threads on the realtime CPU (SCHED_OTHER) calling write() "
	       "back to back; workers placed by the library");
	hj_arr(j, "cells", 0);
	for (size_t t = 0; t < N_THREADS; t++) {
		for (size_t w = 0; w < N_WORKERS; w++) {
			hj_obj(j, NULL);
			hj_u64(j, "threads", (uint64_t)thread_counts[t]);
			hj_u64(j, "workers", (uint64_t)worker_counts[w]);
			hj_bool(j, "ran", tput[t][w].ok);
			hj_num(j, "calls_per_s", tput[t][w].calls_per_s);
			hj_summary(j, "rtt", &tput[t][w].rtt);
			hj_end(j);
		}
	}
	hj_end(j);
	hj_end(j);
}

static void json_blocking(struct h_json *j)
{
	hj_obj(j, "blocking");
	hj_str(j, "about",
	       "one marked thread read()s an empty FIFO fed after 100 ms; 3 other "
	       "marked threads call write() meanwhile");
	hj_arr(j, "runs", 0);
	for (size_t k = 0; k < 2; k++) {
		hj_obj(j, NULL);
		hj_u64(j, "workers", (uint64_t)blocks[k].workers);
		hj_bool(j, "ran", blocks[k].ok);
		hj_num(j, "read_ms", blocks[k].read_ms);
		hj_num(j, "read_start_ms", blocks[k].read_start_ms);
		hj_summary(j, "others_rtt_during_read", &blocks[k].during);
		hj_summary(j, "others_rtt", &blocks[k].all);
		hj_u64(j, "others_over_1ms", blocks[k].over_1ms);
		hj_num(j, "library_local_calls", blocks[k].lib_local);
		hj_end(j);
	}
	hj_end(j);
	hj_end(j);
}

static void json_helper_cpu(struct h_json *j)
{
	hj_obj(j, "helper_cpu");
	hj_str(j, "about",
	       "CPU time of the library's threads / wall time, one marked thread "
	       "idle or calling write() every 1 ms or 100 us (clock_nanosleep between)");
	hj_arr(j, "cells", 0);
	for (size_t i = 0; i < N_IDLE; i++) {
		for (size_t s = 0; s < N_SPACING; s++) {
			hj_obj(j, NULL);
			hj_u64(j, "helper_idle_us", (uint64_t)idle_us[i]);
			hj_u64(j, "call_every_us", (uint64_t)spacings_us[s]);
			hj_bool(j, "ran", hcpu[i][s].ok);
			hj_num(j, "helper_cpu_pct", hcpu_pct[i][s]);
			hj_num(j, "hk_cpu_busy_pct", hk_busy[i][s]);
			if (spacings_us[s])
				hj_summary(j, "rtt", &hcpu[i][s].rtt);
			hj_end(j);
		}
	}
	hj_end(j);
	hj_end(j);
}

static void json_unmarked(struct h_json *j)
{
	hj_obj(j, "unmarked");
	hj_str(j, "about",
	       "ns per wrapped call in an unmarked thread, best of 15 loops, "
	       "without and with the library preloaded");
	hj_num(j, "fputc_ns_without", unmarked[0][0]);
	hj_num(j, "fputc_ns_with", unmarked[1][0]);
	hj_num(j, "fputc_ratio", unmarked[1][0] / unmarked[0][0]);
	hj_num(j, "lseek_ns_without", unmarked[0][1]);
	hj_num(j, "lseek_ns_with", unmarked[1][1]);
	hj_num(j, "lseek_ratio", unmarked[1][1] / unmarked[0][1]);
	hj_end(j);
}

static void write_plot_data(void)
{
	FILE *f = h_data_file("scale-throughput.dat");

	if (f) {
		fprintf(f, "# threads then calls/s for W=1 W=2 W=4\n");
		for (size_t t = 0; t < N_THREADS; t++) {
			fprintf(f, "%d", thread_counts[t]);
			for (size_t w = 0; w < N_WORKERS; w++)
				fprintf(f, " %.0f", tput[t][w].calls_per_s);
			fprintf(f, "\n");
		}
		fclose(f);
	}
	f = h_data_file("scale-helper-cpu.dat");
	if (f) {
		fprintf(f,
			"# helper_idle_us (0 as 1); helper CPU %% idle, 1 call/ms, 1 call/100us; "
			"round trip p50 and p99 (us) at 1 call/ms, then at 1 call/100us\n");
		for (size_t i = 0; i < N_IDLE; i++)
			fprintf(f, "%d %.2f %.2f %.2f %.3f %.3f %.3f %.3f\n",
				idle_us[i] ? idle_us[i] : 1, hcpu_pct[i][0], hcpu_pct[i][1],
				hcpu_pct[i][2], (double)hcpu[i][1].rtt.p50 / 1e3,
				(double)hcpu[i][1].rtt.p99 / 1e3, (double)hcpu[i][2].rtt.p50 / 1e3,
				(double)hcpu[i][2].rtt.p99 / 1e3);
		fclose(f);
	}
}

/* scale.md: the sentences of docs/PERFORMANCE.md, from this run. */
static void write_markdown(void)
{
	FILE *f = h_data_file("scale.md");
	char b[2][16];

	if (!f)
		return;
	fprintf(f,
		"Unmarked threads: `fputc` %.2f -> %.2f ns per call with the library (x%.3f), "
		"`lseek` %.1f -> %.1f ns (x%.3f).\n",
		unmarked[0][0], unmarked[1][0], unmarked[1][0] / unmarked[0][0], unmarked[0][1],
		unmarked[1][1], unmarked[1][1] / unmarked[0][1]);
	if (blocks[0].ok && blocks[1].ok)
		fprintf(f,
			"While a read waits %d ms in one marked thread, 3 others keep calling: "
			"with one worker %llu of their calls overlap the wait (max %s), with two "
			"%llu (max %s).\n",
			BLOCK_FEED_MS, (unsigned long long)blocks[0].during.n,
			h_fmt_pretty(b[0], blocks[0].during.max),
			(unsigned long long)blocks[1].during.n,
			h_fmt_pretty(b[1], blocks[1].during.max));
	fprintf(f, "Helpers' CPU while idle, by `helper_idle_us`:");
	for (size_t i = 0; i < N_IDLE; i++)
		fprintf(f, "%s %d: %.1f%%", i ? "," : "", idle_us[i], hcpu_pct[i][0]);
	fprintf(f, "; serving 1 call per 100 us:");
	for (size_t i = 0; i < N_IDLE; i++)
		fprintf(f, "%s %d: %.1f%%", i ? "," : "", idle_us[i], hcpu_pct[i][2]);
	fprintf(f, ".\n");
	fclose(f);
}

static int child_main(void)
{
	static const struct {
		const char *name;
		void (*fn)(void);
	} children[] = {
		{"throughput", child_throughput},
		{"blocking", child_blocking},
		{"helper_cpu", child_helper_cpu},
		{"unmarked", child_unmarked},
	};

	devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	for (size_t i = 0; i < sizeof(children) / sizeof(children[0]); i++) {
		if (strcmp(children[i].name, h_opt.child) == 0) {
			children[i].fn();
			return 0;
		}
	}
	fprintf(stderr, "bench-scale: unknown child %s\n", h_opt.child);
	return 2;
}

int main(int argc, char **argv)
{
	struct h_json j;

	h_init(argc, argv);
	if (h_opt.child)
		return child_main();
	if (!h_opt.lib) {
		printf("\n== scale: skipped (no library)\n");
		return 0;
	}
	run_throughput();
	run_blocking();
	run_helper_cpu();
	run_unmarked();
	print_throughput();
	print_blocking();
	print_helper_cpu();
	print_unmarked();
	if (h_opt.out && hj_open(&j, h_opt.out) == 0) {
		json_throughput(&j);
		json_blocking(&j);
		json_helper_cpu(&j);
		json_unmarked(&j);
		hj_close(&j);
	}
	write_plot_data();
	write_markdown();
	return 0;
}
