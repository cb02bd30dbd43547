/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reading a process's live segment (libsrc/report/live_layout.h) for
 * `rtoffload stat` and `rtoffload top`: open it, ask its publisher for a
 * fresh copy, and take a consistent copy under the seqlock.
 */
#include "live_read.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define WAIT_FRESH_MS 2000 /* a publisher that does not answer by then is stuck or gone */

/* Field 22 of /proc/PID/stat: when the process started (0: unknown). */
static uint64_t start_time(pid_t pid)
{
	char path[64], buf[1024];
	unsigned long long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	const char *p = strrchr(buf, ')'); /* the name may hold spaces */
	for (int field = 2; p && *p && field < 22; p++)
		field += *p == ' ';
	if (p)
		sscanf(p, "%llu", &v);
	return v;
}

int live_open(pid_t pid, struct live_handle *h, char *err, size_t len)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), RTO_LIVE_DIR "/" RTO_LIVE_PREFIX "%d", (int)pid);
	int fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		if (e == ENOENT && kill(pid, 0) < 0 && errno == ESRCH)
			snprintf(err, len, "no process %d", (int)pid);
		else if (e == ENOENT)
			snprintf(err, len,
				 "process %d has no live view (%s): not under librtoffload, no "
				 "helper started yet, live=0, or a set-user-ID program",
				 (int)pid, path);
		else
			snprintf(err, len, "%s: %s%s", path, strerror(e),
				 e == EACCES ? " (only its owner or root may read it)" : "");
		return -1;
	}
	if (fstat(fd, &st) < 0 || (size_t)st.st_size < sizeof(struct rto_live)) {
		snprintf(err, len, "%s: not a live segment of this version", path);
		close(fd);
		return -1;
	}
	void *p = mmap(NULL, sizeof(struct rto_live), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		snprintf(err, len, "%s: %s", path, strerror(errno));
		return -1;
	}
	h->seg = p;
	h->pid = pid;
	if (h->seg->magic != RTO_LIVE_MAGIC || h->seg->version != RTO_LIVE_VERSION ||
	    h->seg->size != sizeof(struct rto_live)) {
		snprintf(err, len, "%s: written by another version of librtoffload", path);
		live_close(h);
		return -1;
	}
	uint64_t started = start_time(pid);
	if (started && h->seg->starttime && started != h->seg->starttime) {
		snprintf(err, len,
			 "%s is stale: left by an earlier process %d (its pid now names "
			 "another)",
			 path, (int)pid);
		live_close(h);
		return -1;
	}
	return 0;
}

void live_close(struct live_handle *h)
{
	if (h->seg)
		munmap(h->seg, sizeof(struct rto_live));
	h->seg = NULL;
}

static uint32_t load32(const uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

/*
 * The copy's loads before the second read of seq.  ThreadSanitizer refuses
 * fences (-Wtsan) and cannot see the writer, another process, anyway:
 * there a compiler barrier (loads are not reordered with loads on x86).
 */
static inline void read_fence(void)
{
#ifdef __SANITIZE_THREAD__
	__asm__ __volatile__("" ::: "memory");
#else
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
#endif
}

/* Ask for a copy and wait until it is made: 0, or -1 when nobody answered. */
static int ask(struct rto_live *l)
{
	uint32_t want = __atomic_add_fetch(&l->request, 1, __ATOMIC_SEQ_CST);
	struct timespec slice = {0, 10 * 1000 * 1000};

	syscall(SYS_futex, &l->request, FUTEX_WAKE, INT32_MAX, NULL, NULL, 0);
	for (int waited = 0; waited < WAIT_FRESH_MS; waited += 10) {
		uint32_t got = load32(&l->published);
		if ((int32_t)(got - want) >= 0)
			return 0;
		syscall(SYS_futex, &l->published, FUTEX_WAIT, got, &slice, NULL, 0);
	}
	return -1;
}

/*
 * The library names only exited threads: it opens no file while the
 * program runs (libsrc/observe/stats.c).  A running one's name is in /proc.
 */
static void name_threads(struct rto_live *l)
{
	char path[96];

	for (unsigned i = 0; i < l->nthreads && i < RTO_LIVE_THREADS; i++) {
		struct rto_live_thread *t = &l->threads[i];
		if (t->exited || t->name[0])
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)l->pid, (int)t->tid);
		FILE *f = fopen(path, "re");
		if (!f || !fgets(t->name, sizeof(t->name), f))
			snprintf(t->name, sizeof(t->name), "?");
		if (f)
			fclose(f);
		t->name[strcspn(t->name, "\n")] = '\0';
	}
}

int live_snapshot(struct live_handle *h, struct rto_live *out, int *fresh)
{
	struct rto_live *l = h->seg;

	*fresh = ask(l) == 0;
	for (int tries = 0; tries < 1000; tries++) {
		uint32_t s0 = load32(&l->seq);
		if (s0 & 1) {
			usleep(100);
			continue;
		}
		memcpy(out, l, sizeof(*out));
		read_fence();
		if (load32(&l->seq) == s0) {
			name_threads(out);
			return 0;
		}
	}
	return -1;
}

static uint64_t percentile(const uint64_t *hist, uint64_t max, unsigned pct)
{
	uint64_t total = 0, seen = 0;

	for (unsigned b = 0; b < RTO_HIST_BUCKETS; b++)
		total += hist[b];
	if (!total)
		return 0;
	uint64_t want = (total * pct + 99) / 100;
	for (unsigned b = 0; b < RTO_HIST_BUCKETS; b++) {
		seen += hist[b];
		if (seen >= want) {
			uint64_t top = rto_live_bucket_top(b);
			return max && top > max ? max : top;
		}
	}
	return max;
}

/* The same function in an earlier copy, or NULL. */
static const struct rto_live_fn *find_fn(const struct rto_live *l, const char *name)
{
	for (unsigned i = 0; l && i < l->nfns && i < RTO_LIVE_FNS; i++)
		if (!strcmp(l->fns[i].name, name))
			return &l->fns[i];
	return NULL;
}

void live_fn_interval(const struct rto_live *now, const struct rto_live *before, unsigned i,
		      struct live_fn_view *v)
{
	static uint64_t hist[RTO_HIST_BUCKETS];
	const struct rto_live_fn *f = &now->fns[i], *b = find_fn(before, f->name);
	uint64_t n = 0;

	v->name = f->name;
	v->total = f->c;
	v->interval = f->c;
	for (unsigned k = 0; k < RTO_HIST_BUCKETS; k++)
		hist[k] = f->hist[k] - (b ? b->hist[k] : 0);
	if (b) {
		v->interval.offloaded -= b->c.offloaded;
		v->interval.local -= b->c.local;
		v->interval.denied -= b->c.denied;
		v->interval.async -= b->c.async;
		v->interval.fallback -= b->c.fallback;
	}
	for (unsigned k = 0; k < RTO_HIST_BUCKETS; k++)
		n += hist[k];
	v->p50 = percentile(hist, f->max_ns, 50);
	v->p99 = percentile(hist, f->max_ns, 99);
	/* The interval's largest: the top of its highest bucket (the maximum is since start). */
	v->max = 0;
	for (unsigned k = RTO_HIST_BUCKETS; n && k-- > 0;)
		if (hist[k]) {
			uint64_t top = rto_live_bucket_top(k);
			v->max = top < f->max_ns ? top : f->max_ns;
			break;
		}
	v->all_p50 = percentile(f->hist, f->max_ns, 50);
	v->all_p99 = percentile(f->hist, f->max_ns, 99);
	v->all_max = f->max_ns;
}

void live_total_interval(const struct rto_live *now, const struct rto_live *before, uint64_t *p50,
			 uint64_t *p99, uint64_t *max)
{
	static uint64_t hist[RTO_HIST_BUCKETS];
	uint64_t top = 0;

	memset(hist, 0, sizeof(hist));
	for (unsigned i = 0; i < now->nfns && i < RTO_LIVE_FNS; i++) {
		const struct rto_live_fn *f = &now->fns[i], *b = find_fn(before, f->name);
		for (unsigned k = 0; k < RTO_HIST_BUCKETS; k++)
			hist[k] += f->hist[k] - (b ? b->hist[k] : 0);
		top = f->max_ns > top ? f->max_ns : top;
	}
	*p50 = percentile(hist, top, 50);
	*p99 = percentile(hist, top, 99);
	*max = 0;
	for (unsigned k = RTO_HIST_BUCKETS; k-- > 0;)
		if (hist[k]) {
			*max = rto_live_bucket_top(k) < top ? rto_live_bucket_top(k) : top;
			break;
		}
}
