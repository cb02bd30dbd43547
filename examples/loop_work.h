/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The work of the examples' loop besides waking up: what a real control
 * loop does and what, on a kernel without full preemption, holds its CPU
 * in the kernel.  Every cycle it logs a line; every few cycles it does one
 * of the periodic tasks, in turn: save a state snapshot, map and unmap a
 * buffer, read its config file, scan a directory, resolve a name.
 */
#ifndef LOOP_WORK_H
#define LOOP_WORK_H

#include <limits.h>
#include <stdint.h>
#include <stdio.h>

struct loop_cfg;

enum loop_task {
	LOOP_TASK_LOG, /* every cycle */
	LOOP_TASK_SNAPSHOT,
	LOOP_TASK_BUFFERS,
	LOOP_TASK_CONFIG,
	LOOP_TASK_DIRECTORY,
	LOOP_TASK_NAME,
	LOOP_TASKS
};

struct loop_task_time {
	uint64_t n;
	int64_t sum_ns, max_ns;
};

struct loop_work {
	const struct loop_cfg *cfg;
	FILE *log;   /* one fprintf per cycle */
	char *state; /* the state the snapshot saves, touched before the loop */
	size_t state_size;
	uint64_t snapshots; /* saved so far: every --sync-every'th is made durable */
	unsigned errors;    /* failed calls; the first one is reported */
	int first_errno;
	const char *first_failed;
	struct loop_task_time time[LOOP_TASKS];
	char snapshot[PATH_MAX], snapshot_tmp[PATH_MAX], config[PATH_MAX], directory[PATH_MAX];
};

/* Files, buffers and the directory, then each task once (NSS loaded...). */
void loop_work_open(struct loop_work *w, const struct loop_cfg *cfg);
/* One cycle's work; `cycle` counts the cycles run, from 0. */
void loop_work_cycle(struct loop_work *w, uint64_t cycle, int64_t wake_ns);
/* "work TASK:" report lines: what it is, how often it ran, how long it took. */
void loop_work_report(const struct loop_work *w, FILE *out);
void loop_work_close(struct loop_work *w);

#endif /* LOOP_WORK_H */
