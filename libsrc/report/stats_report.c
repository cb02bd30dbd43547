/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The exit report and stats_file (stats_report.h).  Each section is a row,
 * or a row per function, thread, system call or call site, filled once
 * from the counters (report_rows.h); the table on stderr lays out the
 * cells it shows by key, stats_file writes every cell under its key.  So
 * the two renderings cannot disagree on a count, and a new count is one
 * cell, in both.
 */
#include "stats_report.h"
#include "stats.h"
#include "backstop.h"
#include "callsite.h"
#include "fn.h"
#include "futex.h"
#include "options.h"
#include "real.h"
#include "report.h"
#include "report_rows.h"
#include "rto_malloc.h"
#include "stall.h"
#include "transport.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rtoffload.h"

/*
 * stats=, stats_file=, and what its lines quote: copied once at load
 * (rto_stats_report_configure), read-only afterwards.
 */
static struct {
	int stats;
	char stats_file[PATH_MAX];
	uint64_t stall_us;
	int predict; /* helper_wake=predict */
} opt;

void rto_stats_report_configure(const struct rto_options *o)
{
	opt.stats = o->stats;
	memcpy(opt.stats_file, o->stats_file, sizeof(opt.stats_file));
	opt.stall_us = o->stall_us;
	opt.predict = o->helper_wake == RTO_WAKE_PREDICT;
}

/* ---- the output: a buffer written with raw system calls ------------------------------------ */

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

/* The renderers' sink (json.h): pieces of at most RTO_JSON_PIECE_MAX bytes. */
static void out_put(void *sink, const char *bytes, size_t len)
{
	struct out *o = sink;

	if (o->len + len > sizeof(o->buf))
		out_flush(o);
	memcpy(o->buf + o->len, bytes, len);
	o->len += len;
}

static void text(struct out *o, const struct rto_row *r, const char *fmt)
{
	rto_text_line(out_put, o, r, fmt);
}

static void cols(struct out *o, const struct rto_row *r, const struct rto_col *c, unsigned n,
		 int first)
{
	rto_text_cols(out_put, o, r, c, n, first);
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* ---- the rows -------------------------------------------------------------------------------- */

static void counts_row(struct rto_row *r, const struct rto_stats_summary *s)
{
	rto_row_u64(r, "offloaded", s->offloaded);
	rto_row_u64(r, "local", s->local);
	rto_row_u64(r, "denied", s->denied);
	rto_row_u64(r, "async", s->async);
	rto_row_u64(r, "fallback", s->fallback);
	rto_row_u64(r, "p50_ns", s->p50);
	rto_row_u64(r, "p99_ns", s->p99);
	rto_row_u64(r, "max_ns", s->max);
}

/* 1: fn has counts (a function never called has no row). */
static int fn_row(struct rto_row *r, const struct rto_fn *fn)
{
	struct rto_stats_summary s;

	rto_stats_fn_summary(fn, &s);
	r->n = 0;
	rto_row_str(r, "name", fn->name);
	counts_row(r, &s);
	return s.offloaded || s.local || s.denied || s.async || s.fallback;
}

/* The program's calls, all functions (rt_offload_get_stats()). */
static void totals_row(struct rto_row *r, const struct rt_offload_stats *t)
{
	struct rto_stats_summary s = {
		.offloaded = t->offloaded,
		.local = t->local,
		.denied = t->denied,
		.async = t->async,
		.fallback = t->fallback,
		.p50 = t->rtt_p50_ns,
		.p99 = t->rtt_p99_ns,
		.max = t->rtt_max_ns,
	};

	r->n = 0;
	rto_row_str(r, "name", "total");
	rto_row_text_only(r);
	counts_row(r, &s);
	rto_row_u64(r, "minor_faults", t->minor_faults);
	rto_row_u64(r, "major_faults", t->major_faults);
}

static void stalls_row(struct rto_row *r, const struct rto_stall_counts *c)
{
	r->n = 0;
	rto_row_u64(r, "calls", c->calls);
	rto_row_u64(r, "unclaimed", c->unclaimed);
	rto_row_u64(r, "running", c->running);
	rto_row_u64(r, "taken_back", c->taken_back);
	rto_row_u64(r, "workers_added", c->grown);
	rto_row_u64(r, "now", c->now);
	rto_row_u64(r, "input", c->input);
	rto_row_u64(r, "input_now", c->input_now);
	rto_row_u64(r, "workers_moved", c->moved);
	rto_row_u64(r, "stall_us", opt.stall_us);
	rto_row_text_only(r);
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
	if (!opt.predict || !rto_q || !CMM_LOAD_SHARED(rto_q->ready))
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

/* The row of v (whose histograms it points at). */
static void predict_row(struct rto_row *r, const struct predict_view *v)
{
	r->n = 0;
	rto_row_u64(r, "in_window", v->c.in_window);
	rto_row_u64(r, "before_window", v->c.before_window);
	rto_row_u64(r, "nap_late", v->c.nap_late);
	rto_row_u64(r, "after_window", v->c.after_window);
	rto_row_u64(r, "during_nap", v->asleep);
	rto_row_u64(r, "naps", v->naps);
	rto_row_u64(r, "nap_sleeps", v->c.nap_sleeps);
	rto_row_u64(r, "window_ns", v->window_ns);
	rto_row_u64(r, "late_p95_ns", v->overshoot_ns);
	rto_row_u64(r, "hinted", v->c.hinted);
	rto_row_u64(r, "arrive_p99_ns", v->arrive_ns);
	rto_row_list(r, "late_hist", v->c.late_hist, RTO_PRED_LATE_BUCKETS);
	rto_row_list(r, "overrun_hist", v->c.overrun_hist, RTO_PRED_LATE_BUCKETS);
}

static void syscall_row(struct rto_row *r, const struct rto_sys_row *s)
{
	r->n = 0;
	rto_row_str(r, "name", s->name);
	rto_row_u64(r, "trapped", s->n[RTO_BS_TRAPPED]);
	rto_row_u64(r, "offloaded", s->n[RTO_BS_OFFLOADED]);
	rto_row_u64(r, "local", s->n[RTO_BS_LOCAL]);
	rto_row_u64(r, "denied", s->n[RTO_BS_DENIED]);
}

static void thread_counts(struct rto_row *r, const struct rto_thread_stats *st)
{
	rto_row_u64(r, "marked_ns", st->marked_ns);
	rto_row_u64(r, "offloaded", st->offloaded);
	rto_row_u64(r, "local", st->local);
	rto_row_u64(r, "denied", st->denied);
	rto_row_u64(r, "async", st->async);
	rto_row_u64(r, "fallback", st->fallback);
	rto_row_u64(r, "minor_faults", st->minor);
	rto_row_u64(r, "major_faults", st->major);
	rto_row_u64(r, "pool_high_bytes", st->pool_high);
	rto_row_u64(r, "pool_fallbacks", st->pool_fallbacks);
	rto_row_u64(r, "pool_failures", st->pool_failures);
}

static void thread_row(struct rto_row *r, const struct rto_thread_row *t)
{
	r->n = 0;
	rto_row_str(r, "thread", t->name);
	rto_row_i64(r, "tid", t->tid);
	rto_row_i64(r, "exited", t->exited);
	thread_counts(r, &t->st);
}

/* The threads beyond the table, as a row of it. */
static void other_row(struct rto_row *r, const struct rto_stats_other *o)
{
	r->n = 0;
	rto_row_str(r, "thread", "other threads");
	rto_row_text_only(r);
	rto_row_str(r, "tid", "-");
	rto_row_text_only(r);
	rto_row_u64(r, "threads", o->threads);
	rto_row_i64(r, "table_rows", RTO_STATS_THREAD_ROWS);
	rto_row_i64(r, "marked_now", o->marked_now);
	thread_counts(r, &o->st);
}

static void site_row(struct rto_row *r, const struct rto_site_row *s)
{
	r->n = 0;
	rto_row_str(r, "where", s->where);
	rto_row_str(r, "event", s->event);
	rto_row_str(r, "function", s->fn);
	rto_row_u64(r, "count", s->count);
	rto_row_i64(r, "suppressed", s->suppressed);
	rto_row_u64(r, "avg_ns", s->count ? s->total_ns / s->count : 0);
	rto_row_u64(r, "max_ns", s->max_ns);
	rto_row_u64(r, "minor_faults", s->minor);
	rto_row_u64(r, "major_faults", s->major);
}

/* ---- the table (stats=1) ----------------------------------------------------------------------
 */

static const struct rto_col fn_cols[] = {
	{"name", "function", 18, RTO_COL_LEFT, 0},
	{"offloaded", "offloaded", 10, 0, 0},
	{"local", "local", 10, 0, 0},
	{"denied", "denied", 10, 0, 0},
	{"async", "async", 10, 0, 0},
	{"p50_ns", "p50_ns", 10, 0, 0},
	{"p99_ns", "p99_ns", 10, 0, 0},
	{"max_ns", "max_ns", 10, 0, 0},
};

/* The fallback column, only in a process where a call fell back (then last). */
static const struct rto_col fallback_col[] = {{"fallback", "fallback", 10, 0, 0}};

static const struct rto_col syscall_cols[] = {
	{"name", "system call", 18, RTO_COL_LEFT, 0},
	{"trapped", "trapped", 10, 0, 0},
	{"offloaded", "offloaded", 10, 0, 0},
	{"local", "local", 10, 0, 0},
	{"denied", "denied", 10, 0, 0},
};

static const struct rto_col thread_cols[] = {
	{"thread", "thread", 16, RTO_COL_LEFT, 0},
	{"tid", "tid", 8, 0, 0},
	{"marked_ns", "marked_us", 14, 0, 1000},
	{"offloaded", "offloaded", 10, 0, 0},
	{"local", "local", 10, 0, 0},
	{"denied", "denied", 10, 0, 0},
	{"async", "async", 10, 0, 0},
	{"minor_faults", "minor_flt", 10, 0, 0},
	{"major_faults", "major_flt", 10, 0, 0},
};

/* malloc=pool: three more columns. */
static const struct rto_col pool_cols[] = {
	{"pool_high_bytes", "pool_high_kb", 13, RTO_COL_CEIL, 1024},
	{"pool_fallbacks", "pool_fallbacks", 14, 0, 0},
	{"pool_failures", "pool_failures", 13, 0, 0},
};

static const struct rto_col exited_col[] = {{"exited", " (exited)", 0, RTO_COL_FLAG, 0}};

static const struct rto_col site_cols[] = {
	{"where", "where", 24, RTO_COL_LEFT, 0},
	{"event", "event", 8, RTO_COL_LEFT, 0},
	{"function", "function", 16, RTO_COL_LEFT, 0},
	{"count", "count", 0, RTO_COL_LABEL, 0},
};

static const struct rto_col site_offload_cols[] = {
	{"avg_ns", "avg_ns", 0, RTO_COL_LABEL, 0},
	{"max_ns", "max_ns", 0, RTO_COL_LABEL, 0},
};

static const struct rto_col site_fault_cols[] = {
	{"minor_faults", "minor", 0, RTO_COL_LABEL, 0},
	{"major_faults", "major", 0, RTO_COL_LABEL, 0},
	{"suppressed", " (suppressed)", 0, RTO_COL_FLAG, 0},
};

static const struct rto_col site_other_cols[] = {
	{"suppressed", " (suppressed)", 0, RTO_COL_FLAG, 0},
};

static void heads(struct out *o, const struct rto_col *c, unsigned n, int first)
{
	rto_text_heads(out_put, o, c, n, first);
}

static void text_threads(struct out *o, int fb)
{
	struct rto_row r;
	struct rto_thread_row t;
	struct rto_stats_other other;
	unsigned i = 0;

	if (!rto_stats_threads_seen())
		return;
	int pool = rto_pool_on();
	heads(o, thread_cols, N(thread_cols), 1);
	if (pool)
		heads(o, pool_cols, N(pool_cols), 0);
	if (fb)
		heads(o, fallback_col, N(fallback_col), 0);
	out_put(o, "\n", 1);
	while (rto_stats_thread_next(&i, &t, 1)) {
		thread_row(&r, &t);
		cols(o, &r, thread_cols, N(thread_cols), 1);
		if (pool)
			cols(o, &r, pool_cols, N(pool_cols), 0);
		if (fb)
			cols(o, &r, fallback_col, N(fallback_col), 0);
		cols(o, &r, exited_col, N(exited_col), 0);
		out_put(o, "\n", 1);
	}
	rto_stats_other_counts(&other);
	if (!other.threads)
		return;
	other_row(&r, &other);
	cols(o, &r, thread_cols, N(thread_cols), 1);
	text(o, &r,
	     " ({threads} threads: the table of {table_rows} rows is full; {marked_now} of them "
	     "marked now, their current marked time and faults not included)\n");
}

static void text_sites(struct out *o)
{
	struct rto_row r;
	struct rto_site_row s;
	unsigned pos = 0;

	while (rto_callsite_next(&pos, &s)) {
		site_row(&r, &s);
		out_put(o, "rtoffload: site", 15);
		cols(o, &r, site_cols, N(site_cols), 0);
		if (!strcmp(s.event, "offload"))
			cols(o, &r, site_offload_cols, N(site_offload_cols), 0);
		else if (!strcmp(s.event, "fault"))
			cols(o, &r, site_fault_cols, N(site_fault_cols), 0);
		else
			cols(o, &r, site_other_cols, N(site_other_cols), 0);
		out_put(o, "\n", 1);
	}
}

/* The backstop's trapped system calls, one row each (none: no table). */
static void text_syscalls(struct out *o)
{
	struct rto_row r;
	struct rto_sys_row s;
	unsigned pos = 0;
	int first = 1;

	while (rto_backstop_next(&pos, &s)) {
		if (first) {
			heads(o, syscall_cols, N(syscall_cols), 1);
			out_put(o, "\n", 1);
		}
		first = 0;
		syscall_row(&r, &s);
		cols(o, &r, syscall_cols, N(syscall_cols), 1);
		out_put(o, "\n", 1);
	}
}

static void write_table(struct out *o)
{
	struct rto_row r;
	struct rt_offload_stats t;
	rto_stats_get(&t);
	int fb = t.fallback > 0;
	struct rto_row title = {.n = 0};
	rto_row_i64(&title, "pid", getpid());
	text(o, &title, "rtoffload: pid {pid}\n");
	heads(o, fn_cols, N(fn_cols), 1);
	if (fb)
		heads(o, fallback_col, N(fallback_col), 0);
	out_put(o, "\n", 1);
	for (struct rto_fn *const *f = __start_rto_fns; f < __stop_rto_fns; f++) {
		if (!fn_row(&r, *f))
			continue;
		cols(o, &r, fn_cols, N(fn_cols), 1);
		if (fb)
			cols(o, &r, fallback_col, N(fallback_col), 0);
		out_put(o, "\n", 1);
	}
	totals_row(&r, &t);
	cols(o, &r, fn_cols, N(fn_cols), 1);
	if (fb)
		cols(o, &r, fallback_col, N(fallback_col), 0);
	out_put(o, "\n", 1);
	if (fb)
		text(o, &r,
		     "fallback: {fallback} calls ran on their caller: no helper thread could "
		     "start\n");
	text(o, &r, "page faults while marked: {minor_faults} minor, {major_faults} major\n");

	struct rto_row a = {.n = 0};
	uint64_t queued, full;
	rto_stats_async_counts(&queued, &full);
	rto_row_u64(&a, "queued", queued);
	rto_row_u64(&a, "full", full);
	if (queued || full)
		text(o, &a, "async: {queued} writes queued, ring full {full} times\n");

	struct rto_stall_counts sc;
	rto_stall_counts(&sc);
	stalls_row(&r, &sc);
	if (sc.calls || sc.grown || sc.input || sc.moved)
		text(o, &r,
		     "stalls: {calls} calls waited over stall_us={stall_us} ({unclaimed} not "
		     "taken by a helper, {running} running on one, {taken_back} taken back by "
		     "their caller), {workers_added} workers added, {workers_moved} moved off a "
		     "busy CPU; {input} calls waited for input on a helper as their caller would "
		     "have (not stalls)\n");

	struct predict_view pv;
	if (predict_snapshot(&pv)) {
		predict_row(&r, &pv);
		text(o, &r,
		     "predict: periodic bursts in window {in_window}, before it {before_window}, "
		     "in it while the helper napped {nap_late}, after it {after_window} ({hinted} "
		     "planned from a wake hint); window {window_ns} ns, naps late by "
		     "{late_p95_ns} ns (p95), hinted bursts late by {arrive_p99_ns} ns (p99)\n"
		     "predict: {naps} naps in {nap_sleeps} sleeps; ended late by "
		     "<5/10/20/40/80/160/more us:{late_hist}; "
		     "{during_nap} bursts came during a nap\n"
		     "predict: bursts that found the nap overdue, by how much, the same "
		     "buckets:{overrun_hist}\n");
	}

	/* Marked threads' request slots (transport.c): a thread without one goes through the queue.
	 */
	unsigned most, held;
	rto_slots_counts(rto_q, &most, &held);
	struct rto_row sl = {.n = 0};
	rto_row_u64(&sl, "most", most);
	rto_row_u64(&sl, "slots", RTO_SLOTS);
	rto_row_u64(&sl, "held", held);
	if (most)
		text(o, &sl,
		     "request slots: {most} of {slots} claimed at most, {held} held at exit\n");

	text_syscalls(o);
	text_threads(o, fb);
	text_sites(o);
}

/* ---- stats_file (JSON) ------------------------------------------------------------------------
 */

static void write_json(struct out *o)
{
	struct rto_json j;
	struct rto_row r;
	struct rt_offload_stats t;
	unsigned pos = 0;

	rto_stats_get(&t);
	rto_json_open(&j, out_put, o, 0);
	rto_json_i64(&j, "pid", getpid());
	totals_row(&r, &t);
	rto_json_row(&j, "totals", &r);
	rto_json_arr(&j, "calls", 0);
	for (struct rto_fn *const *f = __start_rto_fns; f < __stop_rto_fns; f++)
		if (fn_row(&r, *f))
			rto_json_row(&j, NULL, &r);
	rto_json_end(&j);

	struct rto_stall_counts sc;
	rto_stall_counts(&sc);
	stalls_row(&r, &sc);
	rto_json_row(&j, "stalls", &r);

	struct predict_view pv;
	if (predict_snapshot(&pv)) {
		predict_row(&r, &pv);
		rto_json_row(&j, "predict", &r);
	}

	struct rto_sys_row s;
	rto_json_arr(&j, "syscalls", 0);
	while (rto_backstop_next(&pos, &s)) {
		syscall_row(&r, &s);
		rto_json_row(&j, NULL, &r);
	}
	rto_json_end(&j);

	struct rto_thread_row th;
	struct rto_stats_other other;
	unsigned i = 0;
	rto_json_arr(&j, "threads", 0);
	while (rto_stats_thread_next(&i, &th, 1)) {
		thread_row(&r, &th);
		rto_json_row(&j, NULL, &r);
	}
	rto_json_end(&j);
	rto_stats_other_counts(&other);
	other_row(&r, &other);
	rto_json_row(&j, "other_threads", &r);

	struct rto_site_row site;
	pos = 0;
	rto_json_arr(&j, "sites", 0);
	while (rto_callsite_next(&pos, &site)) {
		site_row(&r, &site);
		rto_json_row(&j, NULL, &r);
	}
	rto_json_end(&j);
	rto_json_close(&j);
}

void rto_stats_report_at_exit(void)
{
	static struct out o; /* 4 KiB: exit may run on a small stack */
	char path[PATH_MAX];

	if (opt.stats) {
		o.fd = 2;
		write_table(&o);
		out_flush(&o);
	}
	if (!opt.stats_file[0])
		return;
	if (rto_options_path(opt.stats_file, (int)getpid(), path, sizeof(path)) != 0) {
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
