/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The trace module's options (trace_opts.h): its own copy, taken at load. */
#include "trace_opts.h"
#include "options.h"

#include <string.h>

static struct {
	char file[PATH_MAX];
	unsigned ring_kb;
	int lttng;
} opt;

void rto_trace_configure(const struct rto_options *o)
{
	memcpy(opt.file, o->trace_file, sizeof(opt.file));
	opt.ring_kb = o->trace_ring_kb;
	opt.lttng = o->trace == RTO_TRACE_OPT_LTTNG;
}

const char *rto_trace_file(void)
{
	return opt.file;
}

unsigned rto_trace_ring_kb(void)
{
	return opt.ring_kb;
}

int rto_trace_lttng(void)
{
	return opt.lttng;
}
