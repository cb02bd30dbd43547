/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench-logging: the logging loop of issue 30.  A thread on the realtime
 * CPU (SCHED_FIFO 80, mlockall) writes 20,000 lines with fprintf to a
 * file, calls fflush every tenth line, and pauses 200 us every 50 lines;
 * each line is timed, its fflush included when it has one, and so is each
 * fflush alone:
 *   plain      without the library: buffered stdio, a write(2) per fflush;
 *   offloaded  marked, fd_local=none: every fprintf and fflush a round trip;
 *   async      marked, policy=stdio:async: fprintf queued, fflush queued
 *              behind it (docs/async.md).
 * The target (issue 30): async p50 within 150 ns of plain, async p99 no
 * higher than plain's.
 */
#include "harness.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rtoffload.h"

static void child_main(void)
{
	long lines = (long)h_scaled(20000, 2000);
	int marked = strcmp(h_opt.child, "plain") != 0;
	struct h_samples line, flush;
	char path[4096];
	const struct timespec pause = {0, 200 * 1000};

	snprintf(path, sizeof(path), "%s/logging-%d.log", h_opt.tmp ? h_opt.tmp : "/tmp",
		 (int)getpid());
	FILE *f = fopen(path, "w");
	if (!f)
		exit(1);
	h_samples_init(&line, (size_t)lines);
	h_samples_init(&flush, (size_t)lines / 10 + 1);
	h_lock_memory();
	h_pin(h_opt.rt_cpu);
	h_fifo(80);
	if (marked && rt_offload_mark_thread() != 0)
		exit(1);
	for (long i = 0; i < lines; i++) {
		uint64_t t0 = h_ticks();
		fprintf(f, "cycle %ld: value %d, state %s\n", i, (int)(i * 7 % 1000), "running");
		if (i % 10 == 9) {
			uint64_t t1 = h_ticks();
			fflush(f);
			h_sample(&flush, h_ticks() - t1);
		}
		h_sample(&line, h_ticks() - t0);
		if (i % 50 == 49)
			nanosleep(&pause, NULL);
	}
	if (marked)
		rt_offload_unmark_thread();
	fclose(f);
	unlink(path);
	h_samples_to_ns(&line);
	h_samples_to_ns(&flush);
	h_send_samples("line", line.v, line.n);
	h_send_samples("fflush", flush.v, flush.n);
}

int main(int argc, char **argv)
{
	static const struct h_config cfg[] = {
		{"plain", NULL, 0},
		{"offloaded", "fd_local=none", 1},
		{"async", "policy=stdio:async:fd_local=none", 1},
	};
	static const char *const items[] = {"line", "fflush"};

	return h_items_main(
		argc, argv, "logging",
		"logging: fprintf to a file, fflush every tenth line (a line with its fflush)", cfg,
		sizeof(cfg) / sizeof(cfg[0]), items, sizeof(items) / sizeof(items[0]), child_main);
}
