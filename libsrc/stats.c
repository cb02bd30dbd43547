/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Counters and round-trip histograms, per wrapped function.  Updates are
 * single atomic adds (wait-free) on the caller's path; readers sum them.
 * The exit report and stats_file are written with raw syscalls: at exit the
 * wrappers, stdio and even the helpers may be unusable.
 */
#include "rto.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rtoffload.h"

/* Log-linear bucket: 8 per power of two (12.5%), exact below 8 ns. */
static unsigned bucket_of(uint64_t ns)
{
	if (ns < RTO_HIST_SUB)
		return (unsigned)ns;
	unsigned msb = 63 - (unsigned)__builtin_clzll(ns);
	unsigned b = (msb - 2) * RTO_HIST_SUB + (unsigned)((ns >> (msb - 3)) & 7);
	return b < RTO_HIST_BUCKETS ? b : RTO_HIST_BUCKETS - 1;
}

/* The largest value that falls in bucket b. */
static uint64_t bucket_top(unsigned b)
{
	if (b < RTO_HIST_SUB)
		return b;
	unsigned msb = b / RTO_HIST_SUB + 2;
	uint64_t low = (uint64_t)(RTO_HIST_SUB + b % RTO_HIST_SUB) << (msb - 3);
	return low + ((uint64_t)1 << (msb - 3)) - 1;
}

static void raise_max(uint64_t *max, uint64_t ns)
{
	uint64_t cur = CMM_LOAD_SHARED(*max);

	/* Bounded: each failed try means someone else raised it. */
	for (int i = 0; i < 8 && ns > cur; i++) {
		uint64_t seen = uatomic_cmpxchg(max, cur, ns);
		if (seen == cur)
			return;
		cur = seen;
	}
}

void rto_stats_offloaded(struct rto_fn *fn, uint64_t ns)
{
	uatomic_inc(&fn->ctr->offloaded);
	uatomic_inc(&fn->ctr->hist[bucket_of(ns)]);
	raise_max(&fn->ctr->max_ns, ns);
}

void rto_stats_local(struct rto_fn *fn)
{
	uatomic_inc(&fn->ctr->local);
}

void rto_stats_denied(struct rto_fn *fn)
{
	uatomic_inc(&fn->ctr->denied);
}

void rto_stats_reset(void)
{
	for (struct rto_fn *const *f = __start_rto_fns; f < __stop_rto_fns; f++)
		memset((*f)->ctr, 0, sizeof(*(*f)->ctr));
}

/* ---- reading ------------------------------------------------------------- */

struct summary {
	uint64_t offloaded, local, denied, async, p50, p99, max;
};

static uint64_t percentile(const uint64_t *hist, uint64_t total, uint64_t max, unsigned pct)
{
	uint64_t want = (total * pct + 99) / 100, seen = 0;

	if (!total)
		return 0;
	for (unsigned b = 0; b < RTO_HIST_BUCKETS; b++) {
		seen += hist[b];
		if (seen >= want)
			return bucket_top(b) < max ? bucket_top(b) : max;
	}
	return max;
}

static void add_counters(struct rto_counters *sum, const struct rto_counters *c)
{
	sum->offloaded += CMM_LOAD_SHARED(c->offloaded);
	sum->local += CMM_LOAD_SHARED(c->local);
	sum->denied += CMM_LOAD_SHARED(c->denied);
	sum->async += CMM_LOAD_SHARED(c->async);
	uint64_t max = CMM_LOAD_SHARED(c->max_ns);
	if (max > sum->max_ns)
		sum->max_ns = max;
	for (unsigned b = 0; b < RTO_HIST_BUCKETS; b++)
		sum->hist[b] += CMM_LOAD_SHARED(c->hist[b]);
}

static void summarise(const struct rto_counters *c, struct summary *s)
{
	uint64_t n = 0;

	for (unsigned b = 0; b < RTO_HIST_BUCKETS; b++)
		n += c->hist[b];
	s->offloaded = c->offloaded;
	s->local = c->local;
	s->denied = c->denied;
	s->async = c->async;
	s->max = c->max_ns;
	s->p50 = percentile(c->hist, n, c->max_ns, 50);
	s->p99 = percentile(c->hist, n, c->max_ns, 99);
}

RTO_EXPORT int rt_offload_get_stats(struct rt_offload_stats *out)
{
	struct rto_counters sum; /* 2.6 KiB of stack; not TLS: initial-exec space is scarce */
	struct summary s;

	if (!out) {
		errno = EINVAL;
		return -1;
	}
	memset(&sum, 0, sizeof(sum));
	for (struct rto_fn *const *f = __start_rto_fns; f < __stop_rto_fns; f++)
		if ((*f)->cls != RTO_CLASS_INTERNAL) /* only the program's own calls */
			add_counters(&sum, (*f)->ctr);
	summarise(&sum, &s);
	memset(out, 0, sizeof(*out));
	out->offloaded = s.offloaded;
	out->local = s.local;
	out->denied = s.denied;
	out->rtt_p50_ns = s.p50;
	out->rtt_p99_ns = s.p99;
	out->rtt_max_ns = s.max;
	out->async = s.async;
	rto_thread_faults(&out->minor_faults, &out->major_faults);
	return 0;
}

/* ---- exit report ---------------------------------------------------------- */

struct out {
	int fd;
	size_t len;
	char buf[4096];
};

static void out_flush(struct out *o)
{
	size_t done = 0;

	while (done < o->len) {
		long n = syscall(SYS_write, o->fd, o->buf + done, o->len - done);
		if (n <= 0)
			break;
		done += (size_t)n;
	}
	o->len = 0;
}

static void out_printf(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void out_printf(struct out *o, const char *fmt, ...)
{
	va_list ap;

	if (o->len > sizeof(o->buf) - 512)
		out_flush(o);
	va_start(ap, fmt);
	int n = vsnprintf(o->buf + o->len, sizeof(o->buf) - o->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->len += (size_t)n < sizeof(o->buf) - o->len ? (size_t)n
							      : sizeof(o->buf) - o->len - 1;
}

static int used(const struct summary *s)
{
	return s->offloaded || s->local || s->denied || s->async;
}

static void write_table(struct out *o)
{
	struct summary s;

	out_printf(o, "rtoffload: pid %d\n%-18s %10s %10s %10s %10s %10s %10s %10s\n",
		   (int)getpid(), "function", "offloaded", "local", "denied", "async", "p50_ns",
		   "p99_ns", "max_ns");
	for (struct rto_fn *const *f = __start_rto_fns; f < __stop_rto_fns; f++) {
		summarise((*f)->ctr, &s);
		if (used(&s))
			out_printf(o, "%-18s %10lu %10lu %10lu %10lu %10lu %10lu %10lu\n",
				   (*f)->name, s.offloaded, s.local, s.denied, s.async, s.p50,
				   s.p99, s.max);
	}
	struct rt_offload_stats t;
	rt_offload_get_stats(&t);
	out_printf(o, "%-18s %10lu %10lu %10lu %10lu %10lu %10lu %10lu\n", "total", t.offloaded,
		   t.local, t.denied, t.async, t.rtt_p50_ns, t.rtt_p99_ns, t.rtt_max_ns);
	out_printf(o, "page faults while marked: %lu minor, %lu major\n", t.minor_faults,
		   t.major_faults);
	uint64_t queued, full;
	rto_async_counts(&queued, &full);
	if (queued || full)
		out_printf(o, "async: %lu writes queued, ring full %lu times\n", queued, full);
}

static void write_json(struct out *o)
{
	struct rt_offload_stats t;
	struct summary s;
	const char *sep = "";

	rt_offload_get_stats(&t);
	out_printf(
		o,
		"{\"pid\":%d,\"totals\":{\"offloaded\":%lu,\"local\":%lu,\"denied\":%lu,"
		"\"async\":%lu,\"p50_ns\":%lu,\"p99_ns\":%lu,\"max_ns\":%lu,\"minor_faults\":%lu,"
		"\"major_faults\":%lu},\"calls\":[",
		(int)getpid(), t.offloaded, t.local, t.denied, t.async, t.rtt_p50_ns, t.rtt_p99_ns,
		t.rtt_max_ns, t.minor_faults, t.major_faults);
	for (struct rto_fn *const *f = __start_rto_fns; f < __stop_rto_fns; f++) {
		summarise((*f)->ctr, &s);
		if (!used(&s))
			continue;
		out_printf(o,
			   "%s{\"name\":\"%s\",\"offloaded\":%lu,\"local\":%lu,\"denied\":%lu,"
			   "\"async\":%lu,\"p50_ns\":%lu,\"p99_ns\":%lu,\"max_ns\":%lu}",
			   sep, (*f)->name, s.offloaded, s.local, s.denied, s.async, s.p50, s.p99,
			   s.max);
		sep = ",";
	}
	out_printf(o, "]}\n");
}

/* stats_file: "%p" becomes the pid, so each process of a tree has its own. */
static int expand_path(const char *pattern, char *path, size_t len)
{
	size_t n = 0;

	for (const char *p = pattern; *p; p++) {
		int w = (p[0] == '%' && p[1] == 'p')
				? snprintf(path + n, len - n, "%d", (int)getpid())
				: snprintf(path + n, len - n, "%c", *p);
		if (w < 0 || (size_t)w >= len - n)
			return -1;
		n += (size_t)w;
		if (p[0] == '%' && p[1] == 'p')
			p++;
	}
	return 0;
}

void rto_stats_at_exit(void)
{
	static struct out o; /* 4 KiB: exit may run on a small stack */
	char path[PATH_MAX];

	if (rto_opt.stats) {
		o.fd = 2;
		write_table(&o);
		out_flush(&o);
		rto_callsite_at_exit(2);
	}
	if (!rto_opt.stats_file[0])
		return;
	if (expand_path(rto_opt.stats_file, path, sizeof(path)) != 0) {
		rto_say(0, "stats_file: path too long");
		return;
	}
	o.fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
			    0644);
	if (o.fd < 0) {
		rto_say(0, "stats_file: cannot write '%s': %s", path, strerror(errno));
		return;
	}
	write_json(&o);
	out_flush(&o);
	syscall(SYS_close, o.fd);
}
