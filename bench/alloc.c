/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench-alloc: malloc+free in a marked thread on the realtime CPU
 * (SCHED_FIFO 80), while another thread on the housekeeping CPU hammers
 * malloc/free of 16 B..64 KiB and mmap/munmap of 64 KiB..1 MiB beside it.
 * One malloc(n)+free pair is timed per sample, n cycling 16 B..64 KiB.
 *
 *   pool      the library, malloc=pool (the thread's own TLSF pool)
 *   glibc     the library, malloc=glibc (today's: glibc's arena)
 *   jemalloc  the library, malloc=glibc, Debian's jemalloc preloaded after
 *             it (skipped when /usr/lib/.../libjemalloc.so.2 is missing)
 *   nolib     glibc without the library (the floor for "glibc")
 * Every configuration runs under mlockall, so the differences are the
 * allocators', not the first touch of fresh pages.
 */
#include "harness.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "rtoffload.h"

#define JEMALLOC "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"

static atomic_int stop;

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* The neighbour: what other threads of a real program do to the allocator and the mm. */
static void *hammer(void *arg)
{
	static void *slot[256];
	uint64_t s = 12345;
	(void)arg;

	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		int i = (int)(rnd(&s) % 256);
		free(slot[i]);
		slot[i] = malloc(16 + rnd(&s) % (64 * 1024));
		if (slot[i])
			memset(slot[i], 1, 64);
		if (rnd(&s) % 16 == 0) {
			size_t len = (64 * 1024) << (rnd(&s) % 5);
			void *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (m != MAP_FAILED) {
				memset(m, 1, len);
				munmap(m, len);
			}
		}
	}
	for (int i = 0; i < 256; i++)
		free(slot[i]);
	return NULL;
}

struct measure {
	uint64_t n;
	struct h_samples s;
	int marked;
};

static void *measured(void *arg)
{
	struct measure *m = arg;
	static const size_t sizes[] = {16, 64, 256, 1024, 4096, 16384, 65536, 48, 600, 32768};
	enum { NSIZES = sizeof(sizes) / sizeof(sizes[0]) };

	m->marked = RT_OFFLOAD_AVAILABLE() && rt_offload_mark_thread() == 0;
	for (uint64_t i = 0; i < 20000; i++) { /* warm-up */
		void *p = malloc(sizes[i % NSIZES]);
		*(volatile char *)p = 1;
		free(p);
	}
	for (uint64_t i = 0; i < m->n; i++) {
		size_t n = sizes[i % NSIZES];
		uint64_t t0 = h_ticks();
		void *p = malloc(n);
		*(volatile char *)p = 1;
		free(p);
		h_sample(&m->s, h_ticks() - t0);
	}
	return NULL;
}

static int child_main(void)
{
	struct measure m = {.n = h_scaled(200000, 20000)};
	pthread_t hk, rt;

	h_lock_memory();
	h_samples_init(&m.s, m.n);
	if (h_thread_start(&hk, hammer, NULL, h_opt.hk_cpu, 0) != 0 ||
	    h_thread_start(&rt, measured, &m, h_opt.rt_cpu, 80) != 0)
		return 1;
	pthread_join(rt, NULL);
	atomic_store(&stop, 1);
	pthread_join(hk, NULL);
	h_samples_to_ns(&m.s);
	h_send_value("marked", m.marked);
	h_send_samples("alloc", m.s.v, m.s.n);
	return 0;
}

struct config {
	const char *name, *options, *after;
	int with_lib;
	struct h_summary sum;
	uint64_t *v;
	size_t n;
	int ok;
};

static struct config configs[] = {
	{.name = "pool", .options = "malloc=pool:pool_kb=16384", .with_lib = 1},
	{.name = "glibc", .options = "malloc=glibc", .with_lib = 1},
	{.name = "jemalloc", .options = "malloc=glibc", .after = JEMALLOC, .with_lib = 1},
	{.name = "nolib"},
};
#define NCONF (sizeof(configs) / sizeof(configs[0]))

int main(int argc, char **argv)
{
	struct h_json j;
	h_init(argc, argv);
	if (h_opt.child)
		return child_main();
	h_print_header(
		"alloc: malloc+free in a marked thread, a neighbour hammering malloc and mmap",
		"(one malloc+free, ns)");
	for (size_t i = 0; i < NCONF; i++) {
		struct config *c = &configs[i];
		if ((c->with_lib && !h_opt.lib) || (c->after && access(c->after, R_OK) != 0)) {
			printf("%-10s skipped (%s missing)\n", c->name,
			       c->after ? c->after : "library");
			continue;
		}
		if (c->after)
			setenv("BENCH_PRELOAD_AFTER", c->after, 1);
		struct h_reply r = h_child_run("alloc", c->name, c->with_lib, c->options, 300);
		unsetenv("BENCH_PRELOAD_AFTER");
		const struct h_item *it = h_reply_get(&r, "alloc");
		if (r.status != 0 || !it || !it->n ||
		    (c->with_lib && h_reply_value(&r, "marked", 0) != 1)) {
			printf("%-10s failed\n", c->name);
			h_reply_free(&r);
			continue;
		}
		c->n = it->n;
		c->v = malloc(c->n * sizeof(*c->v));
		memcpy(c->v, it->v, c->n * sizeof(*c->v));
		h_summarize(c->v, c->n, &c->sum); /* sorts */
		c->ok = 1;
		h_print_row(c->name, &c->sum);
		h_reply_free(&r);
	}
	if (h_opt.out && hj_open(&j, h_opt.out) == 0) {
		for (size_t i = 0; i < NCONF; i++)
			if (configs[i].ok)
				hj_summary(&j, configs[i].name, &configs[i].sum);
		hj_close(&j);
	}
	if (h_opt.data) { /* alloc.dat: name p50 p99 max, for plots.gp */
		char path[4096];
		snprintf(path, sizeof(path), "%s/alloc.dat", h_opt.data);
		FILE *f = fopen(path, "w");
		if (f) {
			fprintf(f, "# config p50_ns p99_ns max_ns\n");
			for (size_t i = 0; i < NCONF; i++) {
				struct config *c = &configs[i];
				if (c->ok)
					fprintf(f, "%s %lu %lu %lu\n", c->name, c->sum.p50,
						c->sum.p99, c->sum.max);
			}
			fclose(f);
		}
	}
	return 0;
}
