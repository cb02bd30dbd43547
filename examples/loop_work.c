/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The loop's work (loop_work.h).  Each task is what control loops really
 * do, written the plain way, and each enters the kernel for a path that,
 * with preempt=none or voluntary, can hold the CPU well past 100 us:
 *
 *   snapshot   the state saved the safe way: a new file (open O_TRUNC),
 *              a few MiB written (a page-cache copy: pages allocated and
 *              filled), close, rename over the previous one (whose pages
 *              are freed then); every few snapshots an fdatasync before
 *              the close makes one durable (not every one: the disk and
 *              the machine's other users would pay for it);
 *   buffers    a 16 MiB buffer mapped with MAP_POPULATE and unmapped
 *              (pages allocated and zeroed, then freed);
 *   config     the config file read with fopen/fgets/fclose;
 *   directory  a directory of 1000 entries scanned (opendir/readdir);
 *   name       "localhost" resolved with getaddrinfo (NSS, /etc/hosts:
 *              loopback only, no network);
 *   log        one fprintf every cycle, fflush every few.
 *
 * Nothing here knows about librtoffload: legacy_loop uses it too.
 */
#define _GNU_SOURCE
#include "loop_work.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "loop_common.h"

#define BUFFER_SIZE	  (16u << 20)
#define DIRECTORY_ENTRIES 1000
#define CONFIG_LINES	  40

static int64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* Counted, not printed: stdio in the loop is what the loop is about. */
static void failed(struct loop_work *w, const char *what)
{
	if (w->errors++ == 0) {
		w->first_errno = errno;
		w->first_failed = what;
	}
}

static void save_snapshot(struct loop_work *w)
{
	int fd = open(w->snapshot_tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0) {
		failed(w, "snapshot open");
		return;
	}
	for (size_t off = 0; off < w->state_size;) {
		ssize_t n = write(fd, w->state + off, w->state_size - off);
		if (n <= 0) {
			failed(w, "snapshot write");
			break;
		}
		off += (size_t)n;
	}
	if (w->snapshots++ % w->cfg->sync_every == 0 && fdatasync(fd) != 0)
		failed(w, "snapshot fdatasync");
	if (close(fd) != 0)
		failed(w, "snapshot close");
	if (rename(w->snapshot_tmp, w->snapshot) != 0)
		failed(w, "snapshot rename");
}

static void map_buffers(struct loop_work *w)
{
	void *p = mmap(NULL, BUFFER_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	if (p == MAP_FAILED) {
		failed(w, "mmap");
		return;
	}
	if (munmap(p, BUFFER_SIZE) != 0)
		failed(w, "munmap");
}

static void read_config(struct loop_work *w)
{
	FILE *f = fopen(w->config, "re");
	char line[128];
	unsigned keys = 0;

	if (!f) {
		failed(w, "config fopen");
		return;
	}
	while (fgets(line, sizeof(line), f))
		keys += strchr(line, '=') != NULL;
	if (keys != CONFIG_LINES) {
		errno = EINVAL;
		failed(w, "config read");
	}
	fclose(f);
}

static void scan_directory(struct loop_work *w)
{
	DIR *d = opendir(w->directory);
	unsigned n = 0;

	if (!d) {
		failed(w, "opendir");
		return;
	}
	while (readdir(d))
		n++;
	if (n < DIRECTORY_ENTRIES) {
		errno = ENOENT;
		failed(w, "readdir");
	}
	closedir(d);
}

static void resolve_name(struct loop_work *w)
{
	struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *res = NULL;
	int err = getaddrinfo("localhost", NULL, &hints, &res);

	if (err) {
		errno = err == EAI_SYSTEM ? errno : EHOSTUNREACH;
		failed(w, "getaddrinfo");
	}
	if (res)
		freeaddrinfo(res);
}

static void log_line(struct loop_work *w, uint64_t cycle, int64_t wake_ns)
{
	if (fprintf(w->log, "cycle %llu wake %lld ns\n", (unsigned long long)cycle,
		    (long long)wake_ns) < 0)
		failed(w, "fprintf");
	if (cycle % w->cfg->flush_every == w->cfg->flush_every - 1 && fflush(w->log) != 0)
		failed(w, "fflush");
}

static void timed(struct loop_work *w, enum loop_task t, int64_t start)
{
	int64_t d = now_ns() - start;
	struct loop_task_time *tt = &w->time[t];

	tt->n++;
	tt->sum_ns += d;
	if (d > tt->max_ns)
		tt->max_ns = d;
}

static void (*const periodic[])(struct loop_work *) = {
	[LOOP_TASK_SNAPSHOT] = save_snapshot, [LOOP_TASK_BUFFERS] = map_buffers,
	[LOOP_TASK_CONFIG] = read_config,     [LOOP_TASK_DIRECTORY] = scan_directory,
	[LOOP_TASK_NAME] = resolve_name,
};

void loop_work_cycle(struct loop_work *w, uint64_t cycle, int64_t wake_ns)
{
	const unsigned every = w->cfg->task_every;
	int64_t t0 = now_ns();

	log_line(w, cycle, wake_ns);
	timed(w, LOOP_TASK_LOG, t0);
	if (every == 0 || cycle % every != every - 1)
		return;
	/* The periodic tasks in turn, one per `every` cycles. */
	enum loop_task t =
		LOOP_TASK_SNAPSHOT + (enum loop_task)((cycle / every) % (LOOP_TASKS - 1));
	t0 = now_ns();
	periodic[t](w);
	timed(w, t, t0);
}

/* ---- set-up ---------------------------------------------------------------- */

static void path_in(char *buf, const struct loop_cfg *cfg, const char *what)
{
	snprintf(buf, PATH_MAX, "%s/%s.%s", cfg->dir, cfg->prog, what);
}

static void write_config(const struct loop_work *w)
{
	FILE *f = fopen(w->config, "we");

	if (!f) {
		loop_note(w->cfg, "%s: %s", w->config, strerror(errno));
		exit(1);
	}
	fprintf(f, "# %s: the settings the loop reads back now and then\n", w->cfg->prog);
	for (unsigned i = 0; i < CONFIG_LINES; i++)
		fprintf(f, "gain_%02u = %u.%03u\n", i, i / 10, (i * 37) % 1000);
	if (fclose(f) != 0) {
		loop_note(w->cfg, "%s: %s", w->config, strerror(errno));
		exit(1);
	}
}

/* The directory of DIRECTORY_ENTRIES files; kept between runs in one --dir. */
static void make_directory(const struct loop_work *w)
{
	char path[PATH_MAX + 16];
	struct stat st;

	/* Made by an earlier run in the same --dir: the demo's 30-odd runs. */
	snprintf(path, sizeof(path), "%s/item%04u", w->directory, DIRECTORY_ENTRIES - 1);
	if (stat(path, &st) == 0)
		return;
	if (mkdir(w->directory, 0755) != 0 && errno != EEXIST) {
		loop_note(w->cfg, "%s: %s", w->directory, strerror(errno));
		exit(1);
	}
	for (unsigned i = 0; i < DIRECTORY_ENTRIES; i++) {
		snprintf(path, sizeof(path), "%s/item%04u", w->directory, i);
		int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		if (fd < 0) {
			loop_note(w->cfg, "%s: %s", path, strerror(errno));
			exit(1);
		}
		close(fd);
	}
}

void loop_work_open(struct loop_work *w, const struct loop_cfg *cfg)
{
	char path[PATH_MAX];

	memset(w, 0, sizeof(*w));
	w->cfg = cfg;
	path_in(path, cfg, "log");
	w->log = fopen(path, "we");
	if (!w->log) {
		loop_note(cfg, "%s: %s", path, strerror(errno));
		exit(1);
	}
	path_in(w->snapshot, cfg, "snapshot");
	path_in(w->snapshot_tmp, cfg, "snapshot.new");
	path_in(w->config, cfg, "conf");
	path_in(w->directory, cfg, "d");
	w->state_size = (size_t)cfg->snapshot_kib << 10;
	w->state = malloc(w->state_size);
	if (!w->state) {
		loop_note(cfg, "out of memory");
		exit(1);
	}
	memset(w->state, 0x5a, w->state_size); /* fault every page in now, not in the loop */
	write_config(w);
	make_directory(w);
	/* Once before the loop: NSS modules loaded, files there, as in a real program. */
	for (int t = LOOP_TASK_SNAPSHOT; t < LOOP_TASKS; t++)
		periodic[t](w);
	if (w->errors) {
		loop_note(cfg, "%s: %s", w->first_failed, strerror(w->first_errno));
		exit(1);
	}
}

void loop_work_close(struct loop_work *w)
{
	fclose(w->log);
	free(w->state);
}

/* ---- report ----------------------------------------------------------------- */

void loop_work_report(const struct loop_work *w, FILE *out)
{
	static const char *const label[LOOP_TASKS] = {
		[LOOP_TASK_LOG] = "work log:",
		[LOOP_TASK_SNAPSHOT] = "work snapshot:",
		[LOOP_TASK_BUFFERS] = "work buffers:",
		[LOOP_TASK_CONFIG] = "work config:",
		[LOOP_TASK_DIRECTORY] = "work directory:",
		[LOOP_TASK_NAME] = "work name:",
	};
	char what[LOOP_TASKS][96];

	snprintf(what[LOOP_TASK_LOG], sizeof(what[0]), "fprintf every cycle, fflush every %u",
		 w->cfg->flush_every);
	snprintf(what[LOOP_TASK_SNAPSHOT], sizeof(what[0]),
		 "save %u KiB: open, write, close, rename; fdatasync every %u",
		 w->cfg->snapshot_kib, w->cfg->sync_every);
	snprintf(what[LOOP_TASK_BUFFERS], sizeof(what[0]), "mmap %u MiB (MAP_POPULATE), munmap",
		 BUFFER_SIZE >> 20);
	snprintf(what[LOOP_TASK_CONFIG], sizeof(what[0]), "fopen, fgets %u lines, fclose",
		 CONFIG_LINES + 1);
	snprintf(what[LOOP_TASK_DIRECTORY], sizeof(what[0]),
		 "opendir, readdir %u entries, closedir", DIRECTORY_ENTRIES);
	snprintf(what[LOOP_TASK_NAME], sizeof(what[0]), "getaddrinfo(\"localhost\"), freeaddrinfo");
	for (int t = 0; t < LOOP_TASKS; t++) {
		const struct loop_task_time *tt = &w->time[t];
		double avg = tt->n ? (double)tt->sum_ns / (double)tt->n / 1000 : 0;
		loop_report_line(out, label[t], "%llu, avg %.1f us, max %.1f us (%s)",
				 (unsigned long long)tt->n, avg, (double)tt->max_ns / 1000,
				 what[t]);
	}
	if (w->errors)
		loop_report_line(out, "failed calls:", "%u (first: %s: %s)", w->errors,
				 w->first_failed, strerror(w->first_errno));
}
