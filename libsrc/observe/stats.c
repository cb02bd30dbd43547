/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Counters and round-trip histograms, per wrapped function and per marked
 * thread.  Per function, updates are single atomic adds (wait-free) on the
 * caller's path; readers sum them.  Per thread, the caller counts into its
 * own TLS (struct rto_thread_stats: a plain increment, no shared line); the
 * thread table below only points at that TLS, and a thread that exits
 * leaves its final counts in its row.  The readers below sum and copy
 * them; stats_report.c renders them at exit, live.c for the live view.
 */
#include "backstop.h"
#include "procfs.h"
#include "rto_fast.h"
#include "fault_count.h"
#include "fn.h"
#include "resolve.h"
#include "futex.h"
#include "stats.h"
#include "real.h"
#include "stall.h"

#include <errno.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rtoffload.h"

/* ---- the thread table ------------------------------------------------------ */

#define THREAD_ROWS RTO_STATS_THREAD_ROWS

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
			rto_procfs_comm(0, r->tid, v->name, sizeof(v->name));
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

int rto_stats_thread_next(unsigned *i, struct rto_thread_row *out, int current)
{
	struct thread_view v;

	if (!next_row(i, &v, current))
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

int rto_stats_threads_seen(void)
{
	return uatomic_read(&rows_claimed) != 0;
}

void rto_stats_other_counts(struct rto_stats_other *o)
{
	*o = (struct rto_stats_other){
		.threads = uatomic_read(&other.threads),
		.marked_now = uatomic_read(&other.marked_now),
		.st =
			{
				.offloaded = uatomic_read(&other.offloaded),
				.local = uatomic_read(&other.local),
				.denied = uatomic_read(&other.denied),
				.async = uatomic_read(&other.async),
				.fallback = uatomic_read(&other.fallback),
				.marked_ns = uatomic_read(&other.marked_ns),
				.minor = uatomic_read(&other.minor),
				.major = uatomic_read(&other.major),
			},
	};
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
 * mark.c is above us: it registers what the forking thread does after
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

static void summarise(const struct rto_counters *c, struct rto_stats_summary *s)
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
	struct rto_stats_summary s;

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

void rto_stats_fn_summary(const struct rto_fn *fn, struct rto_stats_summary *s)
{
	summarise(fn->ctr, s);
}
