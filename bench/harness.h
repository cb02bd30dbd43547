/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The small harness every benchmark binary shares.
 *
 * A benchmark binary is one "family" (roundtrip.c, jitter.c, ...).  Its
 * parent process runs each configuration in a fresh child process (the same
 * binary, re-executed with --child), because a configuration is mostly an
 * environment: with or without LD_PRELOAD of the library, and which
 * RTOFFLOAD_OPTIONS.  The child measures, sends back named sample arrays
 * and values over a pipe (fd 3), and exits; the parent summarises, prints
 * the table, writes its JSON object and the gnuplot data files.
 *
 * To add a benchmark, follow "Adding a benchmark" in bench/README.md (a
 * complete small family, and where to register it): a child_main() that
 * measures and h_send_*()s, and a parent that h_child_run()s its
 * configurations and reports them.
 */
#ifndef BENCH_HARNESS_H
#define BENCH_HARNESS_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "json.h" /* libsrc/common/json.h */

/* ---- the command line every family accepts ------------------------------ */

struct h_opts {
	const char *mode;  /* "quick", "default" or "long" */
	double scale;	   /* 0.25, 1 or 10: multiplies durations and counts */
	int rt_cpu;	   /* --rt-cpu: the realtime CPU (default 1) */
	int hk_cpu;	   /* --hk-cpu: the housekeeping CPU (default 0) */
	const char *lib;   /* --lib: librtoffload.so; NULL: library configs skipped */
	const char *out;   /* --out: this family's JSON object */
	const char *data;  /* --data: directory for gnuplot data files */
	const char *tmp;   /* --tmp: scratch directory for files the work needs */
	const char *child; /* --child WHAT: run one configuration and exit */
	const char *arg;   /* --arg: the configuration's parameter */
	double tsc_ghz;	   /* --tsc-ghz: the parent's calibration, reused by children */
	char *self;	   /* this binary, for re-execution */
};

extern struct h_opts h_opt;

/* Parse the common flags (exits with usage on a bad one). */
void h_init(int argc, char **argv);

/* A count or duration scaled by --quick/--long, never below `floor`. */
uint64_t h_scaled(uint64_t dflt, uint64_t floor);

/* ---- time ------------------------------------------------------------------ */

/*
 * h_ticks() is the cheapest serialised timestamp there is (rdtsc after
 * lfence on x86, so it does not run ahead of the code it measures;
 * CLOCK_MONOTONIC elsewhere).  h_ns() converts with the calibration made
 * once by the parent, so every child uses the same factor.
 */
uint64_t h_now_ns(void); /* CLOCK_MONOTONIC */

static inline uint64_t h_ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
	uint32_t lo, hi;
	__asm__ __volatile__("lfence\n\trdtsc" : "=a"(lo), "=d"(hi)::"memory");
	return ((uint64_t)hi << 32) | lo;
#else
	return h_now_ns();
#endif
}

uint64_t h_ns(uint64_t ticks);
uint64_t h_ticks_for_ns(uint64_t ns);
/* Cost of one h_ticks() pair, in ns (median of many), for the record. */
uint64_t h_timer_overhead_ns(void);
/* The smallest step h_ticks() makes (a VM may scale the TSC coarsely), in ns. */
uint64_t h_timer_resolution_ns(void);
/* Busy-wait (no syscall) until h_ticks() reaches `until`. */
void h_spin_until(uint64_t until_ticks);
void h_sleep_ms(unsigned ms);

static inline void h_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__asm__ __volatile__("pause" ::: "memory");
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

/* ---- threads: pinning, SCHED_FIFO, memory -------------------------------- */

/* Pin the calling thread to one CPU.  0 or an errno value. */
int h_pin(int cpu);
/* SCHED_FIFO at prio for the calling thread (prio 0: SCHED_OTHER). */
int h_fifo(int prio);
/* mlockall(current and future) once per process; warns if refused. */
void h_lock_memory(void);

/*
 * Start a thread already pinned to `cpu` (-1: anywhere) and at SCHED_FIFO
 * `prio` (0: SCHED_OTHER) before it runs any of fn.  If the priority is
 * refused (no privilege) the thread still runs, and h_fifo_refused says so.
 */
int h_thread_start(pthread_t *t, void *(*fn)(void *), void *arg, int cpu, int prio);
extern int h_fifo_refused;

/* CPU time (ns, per-thread clocks) of our threads whose name starts with prefix. */
uint64_t h_threads_cpu_ns(const char *prefix, int *count);
/* Busy and total jiffies of one CPU from /proc/stat. */
int h_cpu_jiffies(int cpu, uint64_t *busy, uint64_t *total);
/*
 * Steal time of one CPU in ms (/proc/stat, 10 ms steps): in a VM, the time
 * the host ran something else instead of this vCPU.  A latency spike with
 * steal time behind it is the hypervisor's, not the code's.
 */
double h_cpu_steal_ms(int cpu);

/* ---- samples and their summary --------------------------------------------- */

struct h_samples {
	uint64_t *v; /* preallocated and touched: filling it never faults */
	size_t n, cap;
};

void h_samples_init(struct h_samples *s, size_t cap);
void h_samples_free(struct h_samples *s);
static inline void h_sample(struct h_samples *s, uint64_t x)
{
	if (s->n < s->cap)
		s->v[s->n++] = x;
}
/* Convert every sample from ticks to ns, in place. */
void h_samples_to_ns(struct h_samples *s);

struct h_summary {
	uint64_t n, min, p50, p90, p99, p999, max;
	double mean;
};

/* Nearest-rank percentiles of the full array (sorted in place). */
void h_summarize(uint64_t *v, size_t n, struct h_summary *s);
/* How many samples are > limit. */
uint64_t h_count_over(const uint64_t *v, size_t n, uint64_t limit);

/* ---- parent and child ------------------------------------------------------- */

/* One named result a child sent. */
struct h_item {
	char name[56];
	int is_value;
	double value;
	uint64_t n;
	uint64_t *v; /* samples, ns */
};

struct h_reply {
	int status; /* the child's exit status, or -1 if killed or not run */
	size_t count;
	struct h_item *items;
};

/*
 * Run this binary again as `--child what --arg arg`, with LD_PRELOAD=lib
 * when with_lib, RTOFFLOAD_OPTIONS=options (unset if NULL), killed after
 * timeout_s.  Returns what it sent (status -1 and nothing if it failed).
 */
struct h_reply h_child_run(const char *what, const char *arg, int with_lib, const char *options,
			   int timeout_s);
/* Run any program the same way, its stdout into *out (malloc'd, NUL-terminated). */
int h_run_program(char *const argv[], int with_lib, const char *options, int timeout_s, char **out,
		  size_t *outlen);
const struct h_item *h_reply_get(const struct h_reply *r, const char *name);
double h_reply_value(const struct h_reply *r, const char *name, double dflt);
void h_reply_free(struct h_reply *r);
/*
 * Add a later round's reply to *into: samples join the series of the same
 * name, new items are added, values keep the first round's; the status
 * stays 0 only if every round succeeded.  *from is freed.
 */
void h_reply_merge(struct h_reply *into, struct h_reply *from);

/* Child side: send to the parent (or print, when run by hand). */
void h_send_samples(const char *name, const uint64_t *v, size_t n);
void h_send_value(const char *name, double value);

/*
 * ---- JSON (a streaming writer: keys in order, commas handled) -------------
 * libsrc/common/json.h's writer in its pretty layout, into a file.
 */

struct h_json {
	FILE *f;
	struct rto_json w;
};

int hj_open(struct h_json *j, const char *path); /* opens the root object */
void hj_close(struct h_json *j);		 /* closes it and the file */
void hj_obj(struct h_json *j, const char *key);	 /* key NULL inside an array */
void hj_arr(struct h_json *j, const char *key, int inline_);
void hj_end(struct h_json *j);
void hj_str(struct h_json *j, const char *key, const char *val);
void hj_u64(struct h_json *j, const char *key, uint64_t val);
void hj_num(struct h_json *j, const char *key, double val);
void hj_bool(struct h_json *j, const char *key, int val);
void hj_null(struct h_json *j, const char *key);
void hj_summary(struct h_json *j, const char *key, const struct h_summary *s);
/* 1 us bins of samples (ns), as [[us, count], ...] for the non-empty bins. */
void hj_histogram(struct h_json *j, const char *key, const uint64_t *sorted, size_t n);

/* ---- output ------------------------------------------------------------------ */

/* A gnuplot data file in --data, or NULL (no --data). */
FILE *h_data_file(const char *name);
/* An OSADL-style histogram data file of sorted ns samples: "us count" per 1 us bin. */
void h_histogram_dat(const char *name, const char *comment, const uint64_t *sorted, size_t n);
/* "1234" ns as "1234", "12.3k", "4.56M" for compact tables. */
const char *h_fmt_ns(char buf[16], uint64_t ns);
/* The same with 3 significant digits and a space, as the README writes them: "1.29 us". */
const char *h_fmt_pretty(char buf[16], uint64_t ns);
/* One table row: label and the summary's n p50 p90 p99 p99.9 max. */
void h_print_row(const char *label, const struct h_summary *s);
/*
 * A configuration's reply, one row per item: labelled "config item",
 * summarised (the samples sorted in place), printed, and added to *j
 * (NULL: printed only).  An item the reply lacks is skipped.
 */
void h_report_items(struct h_reply *r, const char *config, const char *const *items, size_t n,
		    struct h_json *j);
void h_print_header(const char *title, const char *unit);

/* A configuration of a family whose child sends named sample sets (h_send_samples). */
struct h_config {
	const char *name;    /* the rows' label: "plain", "marked"... */
	const char *options; /* RTOFFLOAD_OPTIONS for the child (NULL: none) */
	int lib;	     /* 1: the child runs under the library (skipped without --lib) */
};
/*
 * The whole main() of such a family: h_init(), then in the child
 * child_main(); in the parent, the header (title), each configuration's
 * child run (300 s at most) and its items reported (h_report_items), or
 * one line saying it failed.  Returns main()'s status.
 */
int h_items_main(int argc, char **argv, const char *family, const char *title,
		 const struct h_config *cfg, size_t ncfg, const char *const *items, size_t nitems,
		 void (*child_main)(void));

#endif /* BENCH_HARNESS_H */
