/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rtoffload stat PID [--json]: one copy of a process's live view, as a
 * table or as JSON; and the tables top.c refreshes (live_print).
 */
#include "live_read.h"
#include "json.h"
#include "report_rows.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "comm" of pid, for the title. */
static void comm_of(pid_t pid, char *buf, size_t len)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	buf[0] = '\0';
	f = fopen(path, "re");
	if (f) {
		if (!fgets(buf, (int)len, f))
			buf[0] = '\0';
		fclose(f);
	}
	buf[strcspn(buf, "\n")] = '\0';
}

static const struct rto_live_thread *find_thread(const struct rto_live *l, int32_t tid)
{
	for (unsigned i = 0; l && i < l->nthreads && i < RTO_LIVE_THREADS; i++)
		if (l->threads[i].tid == tid)
			return &l->threads[i];
	return NULL;
}

static struct rto_live_counts minus(struct rto_live_counts a, const struct rto_live_counts *b)
{
	if (b) {
		a.offloaded -= b->offloaded;
		a.local -= b->local;
		a.denied -= b->denied;
		a.async -= b->async;
		a.fallback -= b->fallback;
	}
	return a;
}

static void counts(FILE *o, const struct rto_live_counts *c)
{
	fprintf(o, " %10lu %10lu %10lu %10lu %10lu", (unsigned long)c->offloaded,
		(unsigned long)c->local, (unsigned long)c->denied, (unsigned long)c->async,
		(unsigned long)c->fallback);
}

void live_print(FILE *o, const struct rto_live *l, const struct rto_live *before, double secs,
		int fresh, const char *eol)
{
	char comm[32];
	struct live_fn_view v;

	comm_of(l->pid, comm, sizeof(comm));
	fprintf(o, "rtoffload: pid %d (%s)  helpers on CPU %s, %d workers%s%s", (int)l->pid, comm,
		l->helper_cpus, (int)l->workers, fresh ? "" : "  [copy not refreshed]", eol);
	if (before)
		fprintf(o,
			"counts and round trips over the last %.1f s (total since start in "
			"brackets)%s",
			secs, eol);
	else
		fprintf(o, "counts and round trips since start%s", eol);
	fprintf(o, "%s%-18s %10s %10s %10s %10s %10s %10s %10s %10s%s", eol, "function",
		"offloaded", "local", "denied", "async", "fallback", "p50_ns", "p99_ns", "max_ns",
		eol);
	for (unsigned i = 0; i < l->nfns && i < RTO_LIVE_FNS; i++) {
		live_fn_interval(l, before, i, &v);
		struct rto_live_counts c = before ? v.interval : v.total;
		if (before && !(c.offloaded | c.local | c.denied | c.async | c.fallback) &&
		    !v.total.offloaded && !v.total.denied)
			continue;
		fprintf(o, "%-18s", v.name);
		counts(o, &c);
		if (before)
			fprintf(o, " %10lu %10lu %10lu [%lu]%s", (unsigned long)v.p50,
				(unsigned long)v.p99, (unsigned long)v.max,
				(unsigned long)(v.total.offloaded + v.total.local + v.total.denied +
						v.total.async + v.total.fallback),
				eol);
		else
			fprintf(o, " %10lu %10lu %10lu%s", (unsigned long)v.all_p50,
				(unsigned long)v.all_p99, (unsigned long)v.all_max, eol);
	}
	struct rto_live_counts t = minus(l->total, before ? &before->total : NULL);
	fprintf(o, "%-18s", "total");
	counts(o, &t);
	uint64_t p50 = l->p50_ns, p99 = l->p99_ns, max = l->max_ns;
	if (before) /* the interval's, like the rows above (the library's own requests too) */
		live_total_interval(l, before, &p50, &p99, &max);
	fprintf(o, " %10lu %10lu %10lu%s", (unsigned long)p50, (unsigned long)p99,
		(unsigned long)max, eol);
	fprintf(o, "%s%-16s %8s %10s %10s %10s %10s %10s %10s %10s%s", eol, "thread", "tid",
		"offloaded", "local", "denied", "async", "fallback", "minor_flt", "major_flt", eol);
	for (unsigned i = 0; i < l->nthreads && i < RTO_LIVE_THREADS; i++) {
		const struct rto_live_thread *th = &l->threads[i],
					     *b = before ? find_thread(before, th->tid) : NULL;
		struct rto_live_counts c = minus(th->c, b ? &b->c : NULL);
		fprintf(o, "%-16.16s %8d", th->name, (int)th->tid);
		counts(o, &c);
		fprintf(o, " %10lu %10lu%s%s", (unsigned long)(th->minor - (b ? b->minor : 0)),
			(unsigned long)(th->major - (b ? b->major : 0)),
			th->exited ? " (exited)" : "", eol);
	}
	if (l->other_threads)
		fprintf(o, "(%lu more marked threads: the table is full)%s",
			(unsigned long)l->other_threads, eol);
	fprintf(o,
		"%sasync: %lu writes queued, ring full %lu times; rings: %lu of %lu KiB used in "
		"%u%s",
		eol, (unsigned long)l->async_queued, (unsigned long)l->async_full,
		(unsigned long)(l->ring_used / 1024), (unsigned long)(l->ring_cap / 1024),
		(unsigned)l->rings, eol);
	fprintf(o, "page faults while marked: %lu minor, %lu major (finished marked intervals)%s",
		(unsigned long)l->minor, (unsigned long)l->major, eol);
	fprintf(o,
		"stalls: %lu calls waited over stall_us (%lu not taken by a helper, %lu running "
		"on one, %lu taken back), %lu workers added; %lu waited for input on a helper%s",
		(unsigned long)l->stalls, (unsigned long)l->stalls_unclaimed,
		(unsigned long)l->stalls_running, (unsigned long)l->stalls_taken_back,
		(unsigned long)l->workers_grown, (unsigned long)l->input_waits, eol);
	for (unsigned i = 0; i < l->nstalled && i < sizeof(l->stalled) / sizeof(l->stalled[0]);
	     i++) {
		const struct rto_live_stall *st = &l->stalled[i];
		fprintf(o, "  %s %-18.32s thread %d, %.1f ms so far, ",
			st->input ? "WAITING" : "STALLED", st->fn, (int)st->tid,
			(double)st->ns / 1e6);
		if (st->input)
			fprintf(o, "helper tid %d waits for input%s", (int)st->helper, eol);
		else if (st->helper)
			fprintf(o, "running on helper tid %d%s", (int)st->helper, eol);
		else
			fprintf(o, "no helper took it%s", eol);
	}
}

/* The writer's sink (libsrc/common/json.h: the library's stats_file writes through the same
 * writer). */
static void file_put(void *f, const char *bytes, size_t len)
{
	fwrite(bytes, 1, len, f);
}

/*
 * The JSON as rows (libsrc/common/report_rows.h, the model of the library's own
 * stats_file): a row per section, function, thread and stalled call.
 */
static void counts_row(struct rto_row *r, const struct rto_live_counts *c)
{
	rto_row_u64(r, "offloaded", c->offloaded);
	rto_row_u64(r, "local", c->local);
	rto_row_u64(r, "denied", c->denied);
	rto_row_u64(r, "async", c->async);
	rto_row_u64(r, "fallback", c->fallback);
}

static void print_json(FILE *o, const struct rto_live *l, int fresh)
{
	struct rto_json j;
	struct rto_row r;
	struct live_fn_view v;

	r.n = 0;
	rto_row_i64(&r, "pid", l->pid);
	rto_row_i64(&r, "fresh", fresh);
	rto_row_str(&r, "helper_cpus", l->helper_cpus);
	rto_row_i64(&r, "workers", l->workers);
	rto_json_open(&j, file_put, o, 0);
	rto_json_cells(&j, &r);
	r.n = 0;
	counts_row(&r, &l->total);
	rto_row_u64(&r, "p50_ns", l->p50_ns);
	rto_row_u64(&r, "p99_ns", l->p99_ns);
	rto_row_u64(&r, "max_ns", l->max_ns);
	rto_row_u64(&r, "minor_faults", l->minor);
	rto_row_u64(&r, "major_faults", l->major);
	rto_json_row(&j, "totals", &r);
	rto_json_arr(&j, "calls", 0);
	for (unsigned i = 0; i < l->nfns && i < RTO_LIVE_FNS; i++) {
		live_fn_interval(l, NULL, i, &v);
		r.n = 0;
		rto_row_str(&r, "name", v.name);
		counts_row(&r, &v.total);
		rto_row_u64(&r, "p50_ns", v.all_p50);
		rto_row_u64(&r, "p99_ns", v.all_p99);
		rto_row_u64(&r, "max_ns", v.all_max);
		rto_json_row(&j, NULL, &r);
	}
	rto_json_end(&j);
	rto_json_arr(&j, "threads", 0);
	for (unsigned i = 0; i < l->nthreads && i < RTO_LIVE_THREADS; i++) {
		const struct rto_live_thread *t = &l->threads[i];
		char name[18];
		snprintf(name, sizeof(name), "%s", t->name);
		r.n = 0;
		rto_row_str(&r, "thread", name);
		rto_row_i64(&r, "tid", t->tid);
		rto_row_i64(&r, "exited", t->exited);
		rto_row_u64(&r, "marked_ns", t->marked_ns);
		counts_row(&r, &t->c);
		rto_row_u64(&r, "minor_faults", t->minor);
		rto_row_u64(&r, "major_faults", t->major);
		rto_json_row(&j, NULL, &r);
	}
	rto_json_end(&j);
	rto_json_u64(&j, "other_threads", l->other_threads);
	r.n = 0;
	rto_row_u64(&r, "queued", l->async_queued);
	rto_row_u64(&r, "ring_full", l->async_full);
	rto_row_u64(&r, "ring_used_bytes", l->ring_used);
	rto_row_u64(&r, "ring_bytes", l->ring_cap);
	rto_row_u64(&r, "rings", l->rings);
	rto_json_row(&j, "async", &r);
	r.n = 0;
	rto_row_u64(&r, "calls", l->stalls);
	rto_row_u64(&r, "unclaimed", l->stalls_unclaimed);
	rto_row_u64(&r, "running", l->stalls_running);
	rto_row_u64(&r, "taken_back", l->stalls_taken_back);
	rto_row_u64(&r, "workers_added", l->workers_grown);
	rto_row_u64(&r, "input", l->input_waits);
	rto_json_obj(&j, "stalls");
	rto_json_cells(&j, &r);
	rto_json_arr(&j, "now", 0);
	for (unsigned i = 0; i < l->nstalled && i < sizeof(l->stalled) / sizeof(l->stalled[0]);
	     i++) {
		char fn[33];
		snprintf(fn, sizeof(fn), "%s", l->stalled[i].fn);
		r.n = 0;
		rto_row_str(&r, "fn", fn);
		rto_row_i64(&r, "tid", l->stalled[i].tid);
		rto_row_i64(&r, "helper", l->stalled[i].helper);
		rto_row_u64(&r, "ns", l->stalled[i].ns);
		rto_row_i64(&r, "input", l->stalled[i].input);
		rto_json_row(&j, NULL, &r);
	}
	rto_json_close(&j);
}

/* A pid: digits only, and a live process or not, the segment decides. */
pid_t live_parse_pid(const char *s)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);

	if (!*s || *end || errno || v <= 0 || v > 1 << 22)
		fail(STATUS_USAGE, "'%s' is not a process id", s);
	return (pid_t)v;
}

int live_stat_main(int argc, char **argv)
{
	static struct rto_live copy;
	struct live_handle h;
	char err[PATH_MAX + 128];
	const char *pid_arg = NULL;
	int json = 0, fresh;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			json = 1;
		else if (!pid_arg && argv[i][0] != '-')
			pid_arg = argv[i];
		else
			fail(STATUS_USAGE,
			     "stat: unexpected argument '%s' (usage: rtoffload stat "
			     "PID [--json])",
			     argv[i]);
	}
	if (!pid_arg)
		fail(STATUS_USAGE, "stat: which process? (usage: rtoffload stat PID [--json])");
	if (live_open(live_parse_pid(pid_arg), &h, err, sizeof(err)) < 0)
		fail(1, "%s", err);
	if (live_snapshot(&h, &copy, &fresh) < 0)
		fail(1, "pid %s: the live view never held still", pid_arg);
	live_close(&h);
	if (json)
		print_json(stdout, &copy, fresh);
	else
		live_print(stdout, &copy, NULL, 0, fresh, "\n");
	return fflush(stdout) == 0 ? 0 : 1;
}
