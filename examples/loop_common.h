/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What rt_loop and legacy_loop share: the command line, the realtime
 * set-up steps, the periodic loop with its work, the probe thread beside
 * it, and the latency report.  Nothing here knows about librtoffload, so
 * legacy_loop stays a program that was never written for it.
 */
#ifndef LOOP_COMMON_H
#define LOOP_COMMON_H

#include <sched.h>
#include <stdint.h>
#include <stdio.h>

/* An extra on/off flag of one program (rt_loop's --offload). */
struct loop_flag {
	const char *name;
	const char *help;
	int *value;
};

struct loop_cfg {
	const char *prog;
	unsigned duration_s;	       /* --duration */
	unsigned period_us;	       /* --period */
	unsigned flush_every;	       /* --flush-every: fflush of the log every N cycles */
	unsigned task_every;	       /* --task-every: a periodic task every N cycles, 0 = none */
	unsigned snapshot_kib;	       /* --snapshot-kib: size of the state snapshot */
	unsigned sync_every;	       /* --sync-every: fdatasync every N snapshots */
	int cpu;		       /* --cpu, -1: the second allowed CPU, or the only one */
	int probe_cpu;		       /* --probe-cpu, -1: the loop's */
	const char *histogram;	       /* --histogram: the probe's histogram goes there */
	int prio;		       /* --prio: SCHED_FIFO priority */
	unsigned probe_period_us;      /* --probe-period: the probe's period, 0 = no probe */
	int probe_prio;		       /* --probe-prio: its SCHED_FIFO priority */
	const char *dir;	       /* --dir: where the log and data files go */
	const struct loop_flag *flags; /* NULL-terminated, or NULL */
};

/* What the realtime set-up got; the report shows it. */
struct loop_rt {
	int locked;	   /* mlockall done */
	int cpu;	   /* pinned to it, or -1 */
	int fifo;	   /* SCHED_FIFO priority, 0: normal priority */
	char unlocked[80]; /* why memory is not locked, when it is not */
};

/* Defaults, then argv.  Exits with a usage message on a bad argument. */
void loop_parse_args(struct loop_cfg *cfg, int argc, char **argv);

/* One line "prog: message" on stderr. */
void loop_note(const struct loop_cfg *cfg, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* mlockall(MCL_CURRENT | MCL_FUTURE), or rt->unlocked says why not. */
void loop_lock_memory(struct loop_rt *rt);
/* The CPU the loop runs on: --cpu, else the second CPU we may use. */
int loop_choose_cpu(const struct loop_cfg *cfg);
/*
 * One line for what the realtime set-up could not get: SCHED_FIFO (its
 * errno in fifo_err, 0 if granted) or locked memory.  Nothing if all went.
 */
void loop_rt_notes(const struct loop_cfg *cfg, const struct loop_rt *rt, int fifo_err);
/* Pin the calling thread, make it SCHED_FIFO, then loop_rt_notes(). */
void loop_rt_self(const struct loop_cfg *cfg, struct loop_rt *rt);

struct loop;

/* Everything the loop touches, made before it runs: files, buffers, samples. */
struct loop *loop_open(const struct loop_cfg *cfg);
/*
 * The probe: a thread on the loop's CPU, SCHED_FIFO above the loop, that
 * does what cyclictest does and nothing else: sleep to an absolute
 * deadline, note how late it woke.  It stands for the other, more urgent
 * realtime work of that CPU; what the loop's calls do to the CPU shows in
 * its wake-ups.  It records while loop_run() runs.  Start it before the
 * loop, join it after; both do nothing with --probe-period 0.
 */
void loop_probe_start(struct loop *l, int cpu);
void loop_probe_join(struct loop *l);
/* The periodic loop itself: the realtime part. */
void loop_run(struct loop *l);
/* The latency report, "label: value" lines (examples/demo.sh joins them). */
void loop_report(struct loop *l, const struct loop_rt *rt, FILE *out);
/* The probe's wake-up latencies in 1 us bins, "us count" lines, to --histogram. */
void loop_write_histogram(const struct loop *l);
void loop_close(struct loop *l);

/* One report line, aligned like loop_report()'s. */
void loop_report_line(FILE *out, const char *label, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* A duration in ns as microseconds with one decimal, into buf. */
const char *loop_us(char *buf, size_t len, int64_t ns);

#endif /* LOOP_COMMON_H */
