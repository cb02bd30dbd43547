/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * trace_opts.c: the trace module's options (trace_file=, trace_ring_kb=,
 * trace=), copied once at load (rto_trace_configure, init.c), before any
 * thread is traced; trace.c reads them here rather than the library's
 * whole option struct.
 *
 * Concurrency: written once at load, read-only afterwards: any thread.
 */
#ifndef RTO_TRACE_OPTS_H
#define RTO_TRACE_OPTS_H

#include "rto_base.h"

struct rto_options;

RTO_HIDDEN void rto_trace_configure(const struct rto_options *o);
/* trace_file=: the Chrome trace-event JSON's path ("%p": the pid), "" for none. */
RTO_HIDDEN const char *rto_trace_file(void);
/* trace_ring_kb=: each traced thread's ring. */
RTO_HIDDEN unsigned rto_trace_ring_kb(void);
/* trace=lttng: the LTTng-UST tracepoints are asked for. */
RTO_HIDDEN int rto_trace_lttng(void);

#endif /* RTO_TRACE_OPTS_H */
