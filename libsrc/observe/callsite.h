/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * callsite.c: realtime call sites: reports, suppressions, faults:warn.
 *
 * Concurrency: rto_callsite_event() runs on a marked thread but is off the realtime
 * budget by design: it reports (unwinds, writes) what the user asked to see.
 */
#ifndef RTO_CALLSITE_H
#define RTO_CALLSITE_H

#include "rto_base.h"

struct rto_fn;

/* callsite.c: where does realtime code make this call? */
enum rto_event {
	RTO_EVENT_WARN,
	RTO_EVENT_STRICT,
	RTO_EVENT_OFFLOAD,
	RTO_EVENT_FAULT,
	RTO_EVENT_POOL_FULL, /* malloc=pool: the pool had no block (malloc.c) */
	RTO_EVENT_TRAP	     /* report_traps=1: a system call trapped (backstop_trap.c) */
};
/* Report (once per call site, then count) that fn was called from here. */
RTO_HIDDEN void rto_callsite_event(int event, struct rto_fn *fn, uint64_t ns);
struct rto_options;
RTO_HIDDEN void rto_callsite_init(const struct rto_options *o);
/* on_strict=abort ends with fn() (async.c's abort, at load), which does not return. */
RTO_HIDDEN void rto_callsite_on_abort(void (*fn)(void));

/* One call site, for the exit report (stats.c). */
struct rto_site_row {
	const char *where, *event, *fn;
	uint64_t count, total_ns, max_ns; /* offload: round trips */
	uint64_t minor, major;		  /* fault: faults taken at the site's calls */
	int suppressed;
};
/* The site after *pos (start at 0): 1 and *row, or 0 at the end. */
RTO_HIDDEN int rto_callsite_next(unsigned *pos, struct rto_site_row *row);

/*
 * faults:warn (policy=): a marked thread's page faults across each wrapped
 * call are measured (getrusage RUSAGE_THREAD before and after: a diagnostic
 * mode, two system calls per call) and a call that faulted is reported as
 * event 'fault'.  RTO_WATCHED(fn, stmt) runs a wrapper's routed part.
 */
RTO_HIDDEN extern int rto_fault_watch;
struct rto_fault_mark {
	uint64_t minor, major, excluded;
};
RTO_HIDDEN void rto_fault_begin(struct rto_fault_mark *m);
RTO_HIDDEN void rto_fault_end(struct rto_fault_mark *m, struct rto_fn *fn);
#define RTO_WATCHED(fn, stmt)                          \
	do {                                           \
		if (RTO_UNLIKELY(rto_fault_watch)) {   \
			struct rto_fault_mark rto_fm_; \
			rto_fault_begin(&rto_fm_);     \
			stmt;                          \
			rto_fault_end(&rto_fm_, (fn)); \
		} else {                               \
			stmt;                          \
		}                                      \
	} while (0)

/*
 * For malloc=pool's pool_full events (pool_events.c): count events of fn
 * that happened at return address ip on some realtime thread; the first
 * time, name and report it.  Not on the caller's path: worker 0 or exit.
 */
RTO_HIDDEN void rto_callsite_at_ip(int event, struct rto_fn *fn, uintptr_t ip, uint64_t count);

/* A report another part made whole (stall.c), where reports go, within report_max. */
RTO_HIDDEN void rto_callsite_report(const char *line, size_t n);
/* The descriptor reports go to (stderr, or report_path's). */
RTO_HIDDEN int rto_callsite_report_fd(void);

#endif /* RTO_CALLSITE_H */
