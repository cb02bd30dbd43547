/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The async writes' options (async_opts.h): their own copy, taken at load. */
#include "async_opts.h"
#include "options.h"

#include <string.h>

static struct {
	unsigned ring_kb;
	int full_sync;
	char paths[sizeof(((struct rto_options *)0)->async_path)];
} opt;

void rto_async_configure(const struct rto_options *o)
{
	opt.ring_kb = o->async_ring_kb;
	opt.full_sync = o->async_full == RTO_ASYNC_FULL_SYNC;
	memcpy(opt.paths, o->async_path, sizeof(opt.paths));
}

unsigned rto_async_ring_kb(void)
{
	return opt.ring_kb;
}

int rto_async_full_sync(void)
{
	return opt.full_sync;
}

const char *rto_async_path_list(void)
{
	return opt.paths;
}
