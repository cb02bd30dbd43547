/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench-stdio: a realtime thread's stdio on a file, as a control loop
 * reads a recipe or a trajectory and records its samples.  From the
 * realtime CPU (SCHED_FIFO 80, mlockall), a 256 KiB file of 32-byte lines
 * (the stream's own 4 KiB buffer) read twice, once a byte at a time with
 * fgetc, once a line at a time with fgets; then written again, a 32-byte
 * record per fwrite; each call is timed:
 *   plain   without the library;
 *   marked  marked: a read its stream's buffer holds, a write it has room
 *           for, runs on the caller (calls.tbl's "buffered:", a copy, no
 *           kernel entry); the call that runs the buffer dry or fills it
 *           is offloaded (one per 4 KiB).
 * Before such calls ran there, every call was a round trip;
 * bench/run --lib OLD_LIBRARY --only stdio measures a library built so.
 */
#include "harness.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rtoffload.h"

#define LINE_BYTES 32

static void write_input(const char *path, long lines)
{
	FILE *f = fopen(path, "w");

	if (!f)
		exit(1);
	for (long i = 0; i < lines; i++) /* 32 bytes: "%08ld axis=3 pos=%011ld\n" */
		fprintf(f, "%08ld axis=%d pos=%011ld\n", i, (int)(i % 6), i * 7919 % 100000000);
	if (fclose(f) != 0)
		exit(1);
}

static void child_main(void)
{
	long lines = (long)h_scaled(8192, 1024), bytes = lines * LINE_BYTES;
	int marked = strcmp(h_opt.child, "plain") != 0;
	struct h_samples byte, line, record;
	char path[4096], out[4096 + 8], buf[64];
	long sum = 0;

	snprintf(path, sizeof(path), "%s/stdio-%d.txt", h_opt.tmp ? h_opt.tmp : "/tmp",
		 (int)getpid());
	write_input(path, lines);
	FILE *f = fopen(path, "r");
	if (!f)
		exit(1);
	h_samples_init(&byte, (size_t)bytes);
	h_samples_init(&line, (size_t)lines);
	h_samples_init(&record, (size_t)lines);
	snprintf(out, sizeof(out), "%s.out", path);
	FILE *w = fopen(out, "w");
	if (!w)
		exit(1);
	h_lock_memory();
	h_pin(h_opt.rt_cpu);
	h_fifo(80);
	if (marked && rt_offload_mark_thread() != 0)
		exit(1);
	for (long i = 0; i < bytes; i++) {
		uint64_t t0 = h_ticks();
		int c = fgetc(f);
		h_sample(&byte, h_ticks() - t0);
		sum += c;
	}
	rewind(f);
	for (long i = 0; i < lines; i++) {
		uint64_t t0 = h_ticks();
		char *s = fgets(buf, sizeof(buf), f);
		h_sample(&line, h_ticks() - t0);
		sum += s ? s[0] : 0;
	}
	for (long i = 0; i < lines; i++) {
		memset(buf, (int)('a' + i % 26), LINE_BYTES);
		uint64_t t0 = h_ticks();
		size_t n = fwrite(buf, LINE_BYTES, 1, w);
		h_sample(&record, h_ticks() - t0);
		sum += (long)n;
	}
	if (marked)
		rt_offload_unmark_thread();
	fclose(f);
	if (fclose(w) != 0)
		exit(1);
	unlink(path);
	unlink(out);
	if (sum == 0) /* the reads read something */
		exit(1);
	h_samples_to_ns(&byte);
	h_samples_to_ns(&line);
	h_samples_to_ns(&record);
	h_send_samples("fgetc", byte.v, byte.n);
	h_send_samples("fgets", line.v, line.n);
	h_send_samples("fwrite", record.v, record.n);
}

int main(int argc, char **argv)
{
	static const struct h_config cfg[] = {
		{"plain", NULL, 0},
		{"marked", "", 1},
	};
	static const char *const items[] = {"fgetc", "fgets", "fwrite"};

	return h_items_main(
		argc, argv, "stdio",
		"stdio: a file of 32-byte lines read by fgetc, by fgets, written by fwrite", cfg,
		sizeof(cfg) / sizeof(cfg[0]), items, sizeof(items) / sizeof(items[0]), child_main);
}
