/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Counters and round-trip histograms, per wrapped function and per marked
 * thread.  Per function, updates are single atomic adds (wait-free) on the
 * caller's path; readers sum them.  Per thread, the caller counts into its
 * own TLS (struct rto_thread_stats: a plain increment, no shared line); the
 * thread table below only points at that TLS, and a thread that exits
 * leaves its final counts in its row.  The exit report and stats_file are
 * written with raw syscalls: at exit the wrappers, stdio and even the
 * helpers may be unusable.
 */
#include "backstop.h"
#include "procfs.h"
#include "options_load.h"
#include "rto_fast.h"
#include "fault_count.h"
#include "fn.h"
#include "callsite.h"
#include "resolve.h"
#include "futex.h"
#include "stats.h"
#include "report.h"
#include "real.h"
#include "rto_malloc.h"
#include "transport.h"
#include "stall.h"
#include "json.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rtoffload.h"

/* ---- the thread table ------------------------------------------------------ */

#define THREAD_ROWS 256

enum { ROW_FREE, ROW_LIVE, ROW_FOLDING, ROW_DEAD };

/*
 * A row is claimed with one atomic add when a thread is first marked
 * (never on the call path).  While the thread lives the row points at its
 * TLS; when it exits, the thread itself copies its counts into the row
 * (ROW_LIVE -> ROW_FOLDING -> ROW_DEAD).  A reader announces itself in
 * `readers` before it looks at `state`, and the exiting thread waits for
 * the readers to leave before its TLS goes away (Dekker's pattern: both
 * sides write, full barrier, read the other's word).
 */
struct row {
	int32_t state;
	int32_t readers;
	pid_t tid;
	struct rto_thread *t;	    /* ROW_LIVE: the thread's own state */
	char name[16];		    /* ROW_DEAD: its name when it exited */
	struct rto_thread_stats st; /* ROW_DEAD: its final counts */
};

static struct row rows[THREAD_ROWS];
static uint32_t rows_claimed; /* may run past THREAD_ROWS: those are "other threads" */

/* Threads beyond the table: counted here with atomics (rare by design). */
static struct {
	uint64_t threads, offloaded, local, denied, async, fallback;
	uint64_t marked_ns, minor, major; /* their finished marked intervals */
	int64_t marked_now;		  /* of them, marked right now */
} other;

static void count_thread(uint64_t *mine, uint64_t *others)
{
	if (RTO_UNLIKELY(__atomic_load_n(&rto_self.row, __ATOMIC_RELAXED) < 0))
		uatomic_inc(others);
	else
		rto_own_add(mine, 1);
}

void rto_stats_thread_marked(struct rto_thread *t, pid_t tid)
{
	if (t->row < 0) { /* beyond the table: a marked interval begins */
		uatomic_add(&other.marked_now, 1);
		return;
	}
	if (t->row > 0)
		return;
	uint32_t i = uatomic_add_return(&rows_claimed, 1) - 1;
	if (i >= THREAD_ROWS) {
		uatomic_inc(&other.threads);
		uatomic_add(&other.marked_now, 1);
		__atomic_store_n(&t->row, -1, __ATOMIC_RELAXED);
		return;
	}
	rows[i].tid = tid ? tid : (pid_t)rto_syscall(SYS_gettid);
	rows[i].t = t;
	uatomic_set(&rows[i].state, ROW_LIVE); /* full barrier: the fields first */
	__atomic_store_n(&t->row, (int)i + 1, __ATOMIC_RELAXED);
}

void rto_stats_other_interval(uint64_t ns, uint64_t minor, uint64_t major)
{
	uatomic_add(&other.marked_ns, ns);
	uatomic_add(&other.minor, minor);
	uatomic_add(&other.major, major);
	uatomic_add(&other.marked_now, -1);
}

void rto_stats_thread_fold(void)
{
	if (rto_self.row <= 0)
		return; /* none, or "other threads": counted there already */
	struct row *r = &rows[rto_self.row - 1];
	if (uatomic_cmpxchg(&r->state, ROW_LIVE, ROW_FOLDING) != ROW_LIVE)
		return;
	cmm_smp_mb(); /* the state, then the readers: see struct row */
	while (uatomic_read(&r->readers))
		caa_cpu_relax(); /* a reader copies a few words: bounded */
	RTO_HAND_REAL(prctl)(PR_GET_NAME, (unsigned long)r->name, 0, 0, 0);
	r->st = rto_self.st;
	uatomic_set(&r->state, ROW_DEAD); /* full barrier: the copy first */
}

/* A row as the report shows it. */
struct thread_view {
	char name[17];
	pid_t tid;
	int exited;
	struct rto_thread_stats st;
};

static void read_comm(pid_t tid, char *name, size_t len)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/task/%d/comm", (int)tid);
	if (rto_procfs_read(path, name, len) <= 0)
		snprintf(name, len, "?");
	name[strcspn(name, "\n")] = '\0';
}

/*
 * The counts of a live thread; with `current`, its current marked interval
 * too (time, faults), which reads the thread's route: a plain byte its
 * owner writes, fine at exit but a race for a reader that runs along (the
 * live view, which shows finished intervals only).
 */
static int read_live(struct row *r, struct thread_view *v, int current)
{
	struct rto_thread *t = r->t;
	uint64_t minor, major;

	uatomic_add_return(&r->readers, 1); /* full barrier: see struct row */
	int live = uatomic_read(&r->state) == ROW_LIVE;
	if (live) {
		for (size_t i = 0; i < sizeof(v->st) / sizeof(uint64_t); i++)
			((uint64_t *)&v->st)[i] = rto_read64((const uint64_t *)&t->st + i);
		if (current && rto_thread_counting() &&
		    CMM_LOAD_SHARED(t->route) != RTO_ROUTE_DIRECT &&
		    rto_thread_fault_counts(r->tid, &minor, &major) == 0) {
			uint64_t now = rto_now_ns(), mi0 = rto_read64(&t->minflt),
				 ma0 = rto_read64(&t->majflt);
			v->st.marked_ns += now > v->st.marked_at ? now - v->st.marked_at : 0;
			v->st.minor += minor > mi0 ? minor - mi0 : 0;
			v->st.major += major > ma0 ? major - ma0 : 0;
		}
	}
	uatomic_add_return(&r->readers, -1);
	return live;
}

static void view_of(struct row *r, struct thread_view *v, int current)
{
	memset(v, 0, sizeof(*v));
	v->tid = r->tid;
	if (read_live(r, v, current)) {
		/*
		 * The live view (!current) names no live thread: its publisher
		 * runs along with the program, and a descriptor it opened could
		 * take the number the program has just freed and expects back
		 * from its next open() or dup() (tar's close(1); dup(fd) == 1).
		 * Its reader reads /proc/PID/task/TID/comm itself.
		 */
		if (current)
			read_comm(r->tid, v->name, sizeof(v->name));
		return;
	}
	while (uatomic_read(&r->state) != ROW_DEAD)
		caa_cpu_relax(); /* the thread is copying its counts */
	v->exited = 1;
	v->st = r->st;
	memcpy(v->name, r->name, sizeof(r->name));
	v->name[16] = '\0';
}

static unsigned rows_used(void)
{
	uint32_t n = uatomic_read(&rows_claimed);
	return n < THREAD_ROWS ? n : THREAD_ROWS;
}

/* The next row that is filled in (a claim publishes its state last). */
static int next_row(unsigned *i, struct thread_view *v, int current)
{
	for (; *i < rows_used(); (*i)++)
		if (uatomic_read(&rows[*i].state) != ROW_FREE) {
			view_of(&rows[(*i)++], v, current);
			return 1;
		}
	return 0;
}

int rto_stats_thread_next(unsigned *i, struct rto_thread_row *out)
{
	struct thread_view v;

	if (!next_row(i, &v, 0))
		return 0;
	memcpy(out->name, v.name, sizeof(out->name));
	out->tid = v.tid;
	out->exited = v.exited;
	out->st = v.st;
	return 1;
}

int rto_stats_table_has_room(void)
{
	return uatomic_read(&rows_claimed) < THREAD_ROWS;
}

uint64_t rto_stats_other_threads(void)
{
	return uatomic_read(&other.threads);
}

static void reset_threads(void)
{
	memset(rows, 0, sizeof(rows));
	memset(&other, 0, sizeof(other));
	rows_claimed = 0;
}

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

/* The program's own calls count for the thread; the library's requests do not. */
void rto_stats_offloaded(struct rto_fn *fn, uint64_t ns)
{
	uatomic_inc(&fn->ctr->hist[bucket_of(ns)]);
	raise_max(&fn->ctr->max_ns, ns);
	if (fn->cls != RTO_CLASS_INTERNAL)
		count_thread(&rto_self.st.offloaded, &other.offloaded);
}

void rto_stats_local(struct rto_fn *fn)
{
	uatomic_inc(&fn->ctr->local);
	if (fn->cls != RTO_CLASS_INTERNAL)
		count_thread(&rto_self.st.local, &other.local);
}

void rto_stats_denied(struct rto_fn *fn)
{
	uatomic_inc(&fn->ctr->denied);
	count_thread(&rto_self.st.denied, &other.denied);
}

/* Writes queued and rings found full (async.c), for the reports; a child keeps them. */
/* On a line of its own: every queued write adds to it, and no helper's counter shares it. */
static uint64_t async_queued __attribute__((aligned(64)));
static uint64_t async_full;

void rto_stats_async(struct rto_fn *fn)
{
	uatomic_inc(&async_queued);
	uatomic_inc(&fn->ctr->async);
	count_thread(&rto_self.st.async, &other.async);
}

void rto_stats_async_full(void)
{
	uatomic_inc(&async_full);
}

void rto_stats_async_counts(uint64_t *queued, uint64_t *full)
{
	*queued = uatomic_read(&async_queued);
	*full = uatomic_read(&async_full);
}

void rto_stats_fallback(struct rto_fn *fn)
{
	uatomic_inc(&fn->ctr->fallback);
	if (fn->cls != RTO_CLASS_INTERNAL)
		count_thread(&rto_self.st.fallback, &other.fallback);
}

/*
 * thread.c is above us: it registers what the forking thread does after
 * the reset, once, in the constructor (before any thread could fork with
 * a row): a plain pointer suffices.
 */
static void (*after_reset)(void);

void rto_stats_on_reset(void (*fn)(void))
{
	after_reset = fn;
}

/* A forked child: nothing of its parent's, and only the forking thread lives on. */
void rto_stats_reset(void)
{
	for (struct rto_fn *const *f = __start_rto_fns; f < __stop_rto_fns; f++)
		memset((*f)->ctr, 0, sizeof(*(*f)->ctr));
	reset_threads();
	rto_backstop_stats_reset();
	if (after_reset)
		after_reset(); /* the forking thread: a fresh row if it is counted */
}

/* ---- reading ------------------------------------------------------------- */

struct summary {
	uint64_t offloaded, local, denied, async, fallback, p50, p99, max;
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
	sum->local += CMM_LOAD_SHARED(c->local);
	sum->denied += CMM_LOAD_SHARED(c->denied);
	sum->async += CMM_LOAD_SHARED(c->async);
	sum->fallback += CMM_LOAD_SHARED(c->fallback);
	uint64_t max = CMM_LOAD_SHARED(c->max_ns);
	if (max > sum->max_ns)
		sum->max_ns = max;
	for (unsigned b = 0; b < RTO_HIST_BUCKETS; b++)
		sum->hist[b] += CMM_LOAD_SHARED(c->hist[b]);
}

static void summarise(const struct rto_counters *c, struct summary *s)
{
	uint64_t n = rto_counters_offloaded(c);

	s->offloaded = n;
	s->local = c->local;
	s->denied = c->denied;
	s->async = c->async;
	s->fallback = c->fallback;
	s->max = c->max_ns;
	s->p50 = percentile(c->hist, n, c->max_ns, 50);
	s->p99 = percentile(c->hist, n, c->max_ns, 99);
}

int rto_stats_get(struct rt_offload_stats *out)
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
	out->fallback = s.fallback;
	struct rto_sys_row r;
	for (unsigned pos = 0; rto_backstop_next(&pos, &r);)
		out->trapped += r.n[RTO_BS_TRAPPED];
	rto_thread_faults(&out->minor_faults, &out->major_faults);
	struct rto_stall_counts sc;
	rto_stall_counts(&sc);
	out->stalled = sc.calls;
	out->input_waits = sc.input;
	return 0;
}

RTO_EXPORT int rt_offload_get_stats(struct rt_offload_stats *out)
{
	unsigned char sel = rto_backstop_enter(); /* the library's own work (getrusage) */
	int ret = rto_stats_get(out);
	rto_backstop_leave(sel);
	return ret;
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
		long n = rto_syscall(SYS_write, o->fd, o->buf + done, o->len - done);
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
	return s->offloaded || s->local || s->denied || s->async || s->fallback;
}

/* rto_json_str's sink: its pieces are short (RTO_JSON_PIECE_MAX), out_printf keeps room. */
static void out_put(void *o, const char *bytes, size_t len)
{
	out_printf(o, "%.*s", (int)len, bytes);
}

/* A JSON string: quotes, backslashes and control bytes escaped (json.h). */
static void out_json_str(struct out *o, const char *s)
{
	rto_json_str(out_put, o, s);
}

/* The fallback column, only in a process where a call fell back (then last). */
static void fallback_cell(struct out *o, int shown, uint64_t n)
{
	if (shown)
		out_printf(o, " %10lu", n);
}

static void write_threads_table(struct out *o, int fb)
{
	struct thread_view v;
	unsigned i = 0;

	if (!uatomic_read(&rows_claimed))
		return;
	int pool = rto_pool_on(); /* malloc=pool: three more columns */
	out_printf(o, "%-16s %8s %14s %10s %10s %10s %10s %10s %10s%s%s\n", "thread", "tid",
		   "marked_us", "offloaded", "local", "denied", "async", "minor_flt", "major_flt",
		   pool ? "  pool_high_kb pool_fallbacks pool_failures" : "",
		   fb ? "   fallback" : "");
	while (next_row(&i, &v, 1)) {
		char extra[64] = "";
		if (pool)
			snprintf(extra, sizeof(extra), " %13lu %14lu %13lu",
				 (v.st.pool_high + 1023) / 1024, v.st.pool_fallbacks,
				 v.st.pool_failures);
		out_printf(o, "%-16s %8d %14lu %10lu %10lu %10lu %10lu %10lu %10lu%s", v.name,
			   (int)v.tid, v.st.marked_ns / 1000, v.st.offloaded, v.st.local,
			   v.st.denied, v.st.async, v.st.minor, v.st.major, extra);
		fallback_cell(o, fb, v.st.fallback);
		out_printf(o, "%s\n", v.exited ? " (exited)" : "");
	}
	uint64_t n = uatomic_read(&other.threads);
	if (n)
		out_printf(o,
			   "%-16s %8s %14lu %10lu %10lu %10lu %10lu %10lu %10lu (%lu threads: the "
			   "table of %d rows is full; %ld of them marked now, their current "
			   "marked time and faults not included)\n",
			   "other threads", "-", uatomic_read(&other.marked_ns) / 1000,
			   uatomic_read(&other.offloaded), uatomic_read(&other.local),
			   uatomic_read(&other.denied), uatomic_read(&other.async),
			   uatomic_read(&other.minor), uatomic_read(&other.major), n, THREAD_ROWS,
			   (long)uatomic_read(&other.marked_now));
}

static void write_sites_table(struct out *o)
{
	struct rto_site_row s;
	unsigned pos = 0;

	while (rto_callsite_next(&pos, &s)) {
		if (!strcmp(s.event, "offload"))
			out_printf(o,
				   "rtoffload: site %-24s %-8s %-16s count %lu avg_ns %lu max_ns "
				   "%lu\n",
				   s.where, s.event, s.fn, s.count,
				   s.count ? s.total_ns / s.count : 0, s.max_ns);
		else if (!strcmp(s.event, "fault"))
			out_printf(o,
				   "rtoffload: site %-24s %-8s %-16s count %lu minor %lu major "
				   "%lu%s\n",
				   s.where, s.event, s.fn, s.count, s.minor, s.major,
				   s.suppressed ? " (suppressed)" : "");
		else
			out_printf(o, "rtoffload: site %-24s %-8s %-16s count %lu%s\n", s.where,
				   s.event, s.fn, s.count, s.suppressed ? " (suppressed)" : "");
	}
}

/* Marked threads' request slots (transport.c): a thread without one goes through the queue. */
static void write_slot_counts(struct out *o)
{
	unsigned most, held;

	rto_slots_counts(rto_q, &most, &held);
	if (most)
		out_printf(o, "request slots: %u of %u claimed at most, %u held at exit\n", most,
			   RTO_SLOTS, held);
}

/* helper_wake=predict: where periodic bursts fell, and how late the helper's naps ended. */
struct predict_view {
	struct rto_predict_counts c;
	uint64_t naps, asleep, window_ns, overshoot_ns, arrive_ns;
};

/* 1: m is ours, taken within about a millisecond. */
static int lock_briefly(pthread_mutex_t *m)
{
	uint32_t never = 0;

	for (int i = 0; i < 100; i++) {
		if (rto_mutex_trylock(m) == 0)
			return 1;
		rto_futex_wait_ns(&never, 0, 10000); /* 10 us: a helper on this CPU may run */
	}
	return 0;
}

/* 1: v holds a copy (predict on, helpers started, at least one nap). */
static int predict_snapshot(struct predict_view *v)
{
	if (rto_opt.helper_wake != RTO_WAKE_PREDICT || !rto_q || !CMM_LOAD_SHARED(rto_q->ready))
		return 0;
	/*
	 * A copy under the lock the helpers write them under (predict.c),
	 * which they hold for microseconds.  Tried for a millisecond at most:
	 * a helper that holds it longer (stopped, or never to run again)
	 * leaves these diagnostic lines out rather than the exit waiting.
	 */
	struct rto_predict *live = &rto_q->predict;
	if (!lock_briefly(&live->lock))
		return 0;
	*v = (struct predict_view){
		.c = live->counts,
		.naps = live->naps,
		.asleep = live->grows, /* a burst that came during a nap grows the window */
		.window_ns = live->window_ns,
		.overshoot_ns = live->overshoot_ns,
		.arrive_ns = live->arrive_ns,
	};
	rto_mutex_unlock(&live->lock);
	return v->naps > 0;
}

static void write_predict_counts(struct out *o)
{
	struct predict_view v;

	if (!predict_snapshot(&v))
		return;
	out_printf(o,
		   "predict: periodic bursts in window %lu, before it %lu, in it while the helper "
		   "napped %lu, after it %lu (%lu planned from a wake hint); window %lu ns, naps "
		   "late by %lu ns (p95), hinted bursts late by %lu ns (p99)\n",
		   v.c.in_window, v.c.before_window, v.c.nap_late, v.c.after_window, v.c.hinted,
		   v.window_ns, v.overshoot_ns, v.arrive_ns);
	out_printf(o, "predict: %lu naps; ended late by <5/10/20/40/80/160/more us:", v.naps);
	for (unsigned b = 0; b < RTO_PRED_LATE_BUCKETS; b++)
		out_printf(o, " %lu", v.c.late_hist[b]);
	out_printf(o, "; %lu bursts came during a nap\n", v.asleep);
	out_printf(o, "predict: bursts that found the nap overdue, by how much, the same buckets:");
	for (unsigned b = 0; b < RTO_PRED_LATE_BUCKETS; b++)
		out_printf(o, " %lu", v.c.overrun_hist[b]);
	out_printf(o, "\n");
}

static void write_json_predict(struct out *o)
{
	struct predict_view v;

	if (!predict_snapshot(&v))
		return;
	out_printf(o,
		   ",\"predict\":{\"in_window\":%lu,\"before_window\":%lu,\"nap_late\":%lu,"
		   "\"after_window\":%lu,\"during_nap\":%lu,\"naps\":%lu,\"window_ns\":%lu,"
		   "\"late_p95_ns\":%lu,\"hinted\":%lu,\"arrive_p99_ns\":%lu,\"late_hist\":[",
		   v.c.in_window, v.c.before_window, v.c.nap_late, v.c.after_window, v.asleep,
		   v.naps, v.window_ns, v.overshoot_ns, v.c.hinted, v.arrive_ns);
	for (unsigned b = 0; b < RTO_PRED_LATE_BUCKETS; b++)
		out_printf(o, "%s%lu", b ? "," : "", v.c.late_hist[b]);
	out_printf(o, "],\"overrun_hist\":[");
	for (unsigned b = 0; b < RTO_PRED_LATE_BUCKETS; b++)
		out_printf(o, "%s%lu", b ? "," : "", v.c.overrun_hist[b]);
	out_printf(o, "]}");
}

/* The backstop's trapped system calls, one row each (none: no table). */
static void write_syscalls_table(struct out *o)
{
	struct rto_sys_row r;
	unsigned pos = 0;
	int first = 1;

	while (rto_backstop_next(&pos, &r)) {
		if (first)
			out_printf(o, "%-18s %10s %10s %10s %10s\n", "system call", "trapped",
				   "offloaded", "local", "denied");
		first = 0;
		out_printf(o, "%-18s %10lu %10lu %10lu %10lu\n", r.name, r.n[RTO_BS_TRAPPED],
			   r.n[RTO_BS_OFFLOADED], r.n[RTO_BS_LOCAL], r.n[RTO_BS_DENIED]);
	}
}

static void write_json_syscalls(struct out *o)
{
	struct rto_sys_row r;
	unsigned pos = 0;
	const char *sep = "";

	out_printf(o, ",\"syscalls\":[");
	while (rto_backstop_next(&pos, &r)) {
		out_printf(o,
			   "%s{\"name\":\"%s\",\"trapped\":%lu,\"offloaded\":%lu,\"local\":%lu,"
			   "\"denied\":%lu}",
			   sep, r.name, r.n[RTO_BS_TRAPPED], r.n[RTO_BS_OFFLOADED],
			   r.n[RTO_BS_LOCAL], r.n[RTO_BS_DENIED]);
		sep = ",";
	}
	out_printf(o, "]");
}

static void write_stall_counts(struct out *o)
{
	struct rto_stall_counts c;

	rto_stall_counts(&c);
	if (!c.calls && !c.grown && !c.input && !c.moved)
		return;
	out_printf(o,
		   "stalls: %lu calls waited over stall_us=%lu (%lu not taken by a helper, %lu "
		   "running on one, %lu taken back by their caller), %lu workers added, %lu "
		   "moved off a busy CPU; %lu calls waited for input on a helper as their caller "
		   "would have (not stalls)\n",
		   c.calls, (unsigned long)rto_opt.stall_us, c.unclaimed, c.running, c.taken_back,
		   c.grown, c.moved, c.input);
}

static void write_json_stalls(struct out *o)
{
	struct rto_stall_counts c;

	rto_stall_counts(&c);
	out_printf(o,
		   ",\"stalls\":{\"calls\":%lu,\"unclaimed\":%lu,\"running\":%lu,"
		   "\"taken_back\":%lu,\"workers_added\":%lu,\"now\":%u,\"input\":%lu,"
		   "\"input_now\":%u,\"workers_moved\":%lu}",
		   c.calls, c.unclaimed, c.running, c.taken_back, c.grown, c.now, c.input,
		   c.input_now, c.moved);
}

static void write_table(struct out *o)
{
	struct summary s;

	struct rt_offload_stats t;
	rto_stats_get(&t);
	int fb = t.fallback > 0;

	out_printf(o, "rtoffload: pid %d\n%-18s %10s %10s %10s %10s %10s %10s %10s%s\n",
		   (int)getpid(), "function", "offloaded", "local", "denied", "async", "p50_ns",
		   "p99_ns", "max_ns", fb ? "   fallback" : "");
	for (struct rto_fn *const *f = __start_rto_fns; f < __stop_rto_fns; f++) {
		summarise((*f)->ctr, &s);
		if (!used(&s))
			continue;
		out_printf(o, "%-18s %10lu %10lu %10lu %10lu %10lu %10lu %10lu", (*f)->name,
			   s.offloaded, s.local, s.denied, s.async, s.p50, s.p99, s.max);
		fallback_cell(o, fb, s.fallback);
		out_printf(o, "\n");
	}
	out_printf(o, "%-18s %10lu %10lu %10lu %10lu %10lu %10lu %10lu", "total", t.offloaded,
		   t.local, t.denied, t.async, t.rtt_p50_ns, t.rtt_p99_ns, t.rtt_max_ns);
	fallback_cell(o, fb, t.fallback);
	out_printf(o, "\n");
	if (fb)
		out_printf(o,
			   "fallback: %lu calls ran on their caller: no helper thread could "
			   "start\n",
			   t.fallback);
	out_printf(o, "page faults while marked: %lu minor, %lu major\n", t.minor_faults,
		   t.major_faults);
	uint64_t queued, full;
	rto_stats_async_counts(&queued, &full);
	if (queued || full)
		out_printf(o, "async: %lu writes queued, ring full %lu times\n", queued, full);
	write_stall_counts(o);
	write_predict_counts(o);
	write_slot_counts(o);
	write_syscalls_table(o);
	write_threads_table(o, fb);
	write_sites_table(o);
}

static void write_json_counts(struct out *o, const struct rto_thread_stats *st)
{
	out_printf(o,
		   "\"marked_ns\":%lu,\"offloaded\":%lu,\"local\":%lu,\"denied\":%lu,\"async\":%lu,"
		   "\"fallback\":%lu,\"minor_faults\":%lu,\"major_faults\":%lu,\"pool_high_bytes\":"
		   "%lu,"
		   "\"pool_fallbacks\":%lu,\"pool_failures\":%lu",
		   st->marked_ns, st->offloaded, st->local, st->denied, st->async, st->fallback,
		   st->minor, st->major, st->pool_high, st->pool_fallbacks, st->pool_failures);
}

static void write_json_threads(struct out *o)
{
	struct thread_view v;
	unsigned i = 0;
	const char *sep = "";

	out_printf(o, ",\"threads\":[");
	while (next_row(&i, &v, 1)) {
		out_printf(o, "%s{\"thread\":", sep);
		out_json_str(o, v.name);
		out_printf(o, ",\"tid\":%d,\"exited\":%d,", (int)v.tid, v.exited);
		write_json_counts(o, &v.st);
		out_printf(o, "}");
		sep = ",";
	}
	struct rto_thread_stats st = {
		.offloaded = uatomic_read(&other.offloaded),
		.local = uatomic_read(&other.local),
		.denied = uatomic_read(&other.denied),
		.async = uatomic_read(&other.async),
		.fallback = uatomic_read(&other.fallback),
		.marked_ns = uatomic_read(&other.marked_ns),
		.minor = uatomic_read(&other.minor),
		.major = uatomic_read(&other.major),
	};
	out_printf(o, "],\"other_threads\":{\"threads\":%lu,\"table_rows\":%d,\"marked_now\":%ld,",
		   uatomic_read(&other.threads), THREAD_ROWS,
		   (long)uatomic_read(&other.marked_now));
	write_json_counts(o, &st);
	out_printf(o, "}");
}

static void write_json_sites(struct out *o)
{
	struct rto_site_row s;
	unsigned pos = 0;
	const char *sep = "";

	out_printf(o, ",\"sites\":[");
	while (rto_callsite_next(&pos, &s)) {
		out_printf(o, "%s{\"where\":", sep);
		out_json_str(o, s.where);
		out_printf(
			o,
			",\"event\":\"%s\",\"function\":\"%s\",\"count\":%lu,\"suppressed\":%d,"
			"\"avg_ns\":%lu,\"max_ns\":%lu,\"minor_faults\":%lu,\"major_faults\":%lu}",
			s.event, s.fn, s.count, s.suppressed, s.count ? s.total_ns / s.count : 0,
			s.max_ns, s.minor, s.major);
		sep = ",";
	}
	out_printf(o, "]");
}

static void write_json(struct out *o)
{
	struct rt_offload_stats t;
	struct summary s;
	const char *sep = "";

	rto_stats_get(&t);
	out_printf(o,
		   "{\"pid\":%d,\"totals\":{\"offloaded\":%lu,\"local\":%lu,\"denied\":%lu,"
		   "\"async\":%lu,\"fallback\":%lu,\"p50_ns\":%lu,\"p99_ns\":%lu,\"max_ns\":%lu,"
		   "\"minor_faults\":%lu,\"major_faults\":%lu},\"calls\":[",
		   (int)getpid(), t.offloaded, t.local, t.denied, t.async, t.fallback, t.rtt_p50_ns,
		   t.rtt_p99_ns, t.rtt_max_ns, t.minor_faults, t.major_faults);
	for (struct rto_fn *const *f = __start_rto_fns; f < __stop_rto_fns; f++) {
		summarise((*f)->ctr, &s);
		if (!used(&s))
			continue;
		out_printf(o,
			   "%s{\"name\":\"%s\",\"offloaded\":%lu,\"local\":%lu,\"denied\":%lu,"
			   "\"async\":%lu,\"fallback\":%lu,\"p50_ns\":%lu,\"p99_ns\":%lu,"
			   "\"max_ns\":%lu}",
			   sep, (*f)->name, s.offloaded, s.local, s.denied, s.async, s.fallback,
			   s.p50, s.p99, s.max);
		sep = ",";
	}
	out_printf(o, "]");
	write_json_stalls(o);
	write_json_predict(o);
	write_json_syscalls(o);
	write_json_threads(o);
	write_json_sites(o);
	out_printf(o, "}\n");
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
	}
	if (!rto_opt.stats_file[0])
		return;
	if (expand_path(rto_opt.stats_file, path, sizeof(path)) != 0) {
		rto_say(0, "stats_file: path too long");
		return;
	}
	o.fd = (int)rto_syscall(SYS_openat, AT_FDCWD, path,
				O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (o.fd < 0) {
		rto_say(0, "stats_file: cannot write '%s': %s", path, strerror(errno));
		return;
	}
	write_json(&o);
	out_flush(&o);
	rto_syscall(SYS_close, o.fd);
}
