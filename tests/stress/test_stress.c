/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Eight marked threads hammer write/fsync/fprintf at once, each to files
 * of its own and all to one shared O_APPEND file and one shared stream.
 * Nothing may be lost, duplicated, torn or reordered within a thread:
 * every line is checked afterwards.  An fprintf that its stream's buffer
 * has room for runs on its thread (stdio_buffer.c), the others on helpers
 * that flush the same streams meanwhile: both under the stream's lock.
 */
#include "harness.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define THREADS	   8
#define LINES	   2000
#define SYNC_EVERY 100

struct shared {
	char dir[PATH_MAX];
	int append_fd; /* O_APPEND: every write(2) lands whole at the end */
	FILE *stream;  /* stdio's lock keeps each fprintf's line whole */
};

struct worker {
	struct shared *sh;
	int id;
	int calls, failures;
};

#define DO(w, ok)                       \
	do {                            \
		(w)->calls++;           \
		(w)->failures += !(ok); \
	} while (0)

static void worker_job(void *arg)
{
	struct worker *w = arg;
	char path[PATH_MAX + 32], line[64];

	snprintf(path, sizeof(path), "%s/own%d", w->sh->dir, w->id);
	int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);
	DO(w, fd >= 0);
	snprintf(path, sizeof(path), "%s/stream%d", w->sh->dir, w->id);
	FILE *f = fopen(path, "w");
	DO(w, f != NULL);
	if (fd < 0 || !f)
		return;
	for (int i = 0; i < LINES; i++) {
		int n = snprintf(line, sizeof(line), "t%d w%d\n", w->id, i);
		DO(w, write(fd, line, (size_t)n) == n);
		n = snprintf(line, sizeof(line), "T%d W%d\n", w->id, i);
		DO(w, write(w->sh->append_fd, line, (size_t)n) == n);
		DO(w, fprintf(f, "t%d p%d\n", w->id, i) > 0);
		DO(w, fprintf(w->sh->stream, "T%d P%d\n", w->id, i) > 0);
		if (i % SYNC_EVERY == SYNC_EVERY - 1) {
			DO(w, fsync(fd) == 0);
			DO(w, fdatasync(w->sh->append_fd) == 0);
			DO(w, fflush(f) == 0);
		}
	}
	DO(w, fclose(f) == 0);
	DO(w, close(fd) == 0);
}

/* own file of one thread: exactly its lines, in order. */
static void check_own(const char *dir, const char *name, int id, const char *fmt)
{
	char path[PATH_MAX], line[64];
	size_t len, at = 0;

	pathf(path, "%s/%s%d", dir, name, id);
	char *s = slurp(path, &len);
	cr_assert_not_null(s, "%s missing", path);
	for (int i = 0; i < LINES; i++) {
		int n = snprintf(line, sizeof(line), fmt, id, i);
		if (at + (size_t)n > len || memcmp(s + at, line, (size_t)n) != 0) {
			cr_expect_fail("%s: line %d is not \"%.*s\"", path, i, n - 1, line);
			break;
		}
		at += (size_t)n;
	}
	cr_expect_eq(at, len, "%s: %zu extra bytes", path, len - at);
	free(s);
}

/* shared file: every thread's lines, each once, whole, in that thread's order. */
static void check_shared(const char *path, char kind)
{
	int next[THREADS] = {0};
	size_t len;
	char *s = slurp(path, &len), *save = NULL;
	int bad = 0;

	cr_assert_not_null(s);
	for (char *l = strtok_r(s, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		int t, i;
		char k;
		if (sscanf(l, "T%d %c%d", &t, &k, &i) != 3 || k != kind || t < 0 || t >= THREADS ||
		    i != next[t]) {
			if (bad++ == 0)
				cr_expect_fail("%s: unexpected line \"%s\"", path, l);
			continue;
		}
		next[t]++;
	}
	for (int t = 0; t < THREADS; t++)
		cr_expect_eq(next[t], LINES, "%s: thread %d has %d lines", path, t, next[t]);
	free(s);
}

Test(stress, eight_marked_threads_lose_nothing, .timeout = 200)
{
	struct shared sh;
	struct worker w[THREADS];
	struct bg b[THREADS];
	char path[PATH_MAX], spath[PATH_MAX];

	tmp_make(sh.dir);
	pathf(path, "%s/append", sh.dir);
	pathf(spath, "%s/shared-stream", sh.dir);
	sh.append_fd = open(path, O_CREAT | O_WRONLY | O_APPEND | O_CLOEXEC, 0644);
	sh.stream = fopen(spath, "w");
	cr_assert(sh.append_fd >= 0 && sh.stream);
	start_helpers();
	struct rt_offload_stats a = stats_now();

	for (int i = 0; i < THREADS; i++) {
		w[i] = (struct worker){.sh = &sh, .id = i};
		bg_start(&b[i], worker_job, &w[i], BG_MARK); /* not pinned: 8 on 2 CPUs */
	}
	int calls = 0;
	for (int i = 0; i < THREADS; i++) {
		bg_join(&b[i]);
		cr_expect_eq(w[i].failures, 0, "thread %d: %d calls failed", i, w[i].failures);
		calls += w[i].calls;
	}
	struct rt_offload_stats z = stats_now();
	/* Each call counted once: offloaded, or an fprintf its buffer had room for, here. */
	uint64_t offloaded = z.offloaded - a.offloaded, local = z.local - a.local;
	cr_expect_eq(offloaded + local, (uint64_t)calls, "offloaded %lu and local %lu for %d calls",
		     offloaded, local, calls);
	cr_expect_leq(local, (uint64_t)(2 * THREADS * LINES),
		      "local %lu: more than the fprintf calls", local);
	cr_expect_eq(z.denied - a.denied, 0);

	cr_assert_eq(fclose(sh.stream), 0);
	close(sh.append_fd);
	for (int i = 0; i < THREADS; i++) {
		check_own(sh.dir, "own", i, "t%d w%d\n");
		check_own(sh.dir, "stream", i, "t%d p%d\n");
	}
	check_shared(path, 'W');
	check_shared(spath, 'P');
	tmp_remove(sh.dir);
}
