/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * stats_report.c: the exit report (stats=1, a table on stderr) and
 * stats_file= (the same rows as JSON), rendered from stats.c's counters
 * and the other modules' readers through one row model (report_rows.h).
 *
 * Concurrency: once, at exit (init.c's write_out), on whichever thread
 * ends the process: never on the caller's path.  It writes with raw
 * system calls: at exit the wrappers, stdio and even the helpers may be
 * unusable.
 */
#ifndef RTO_STATS_REPORT_H
#define RTO_STATS_REPORT_H

#include "rto_base.h"

RTO_HIDDEN void rto_stats_report_at_exit(void);

struct rto_options;
/* stats=, stats_file=, once at load (init.c), before anything here runs. */
RTO_HIDDEN void rto_stats_report_configure(const struct rto_options *o);

#endif /* RTO_STATS_REPORT_H */
