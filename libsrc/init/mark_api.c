/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The thread API of include/rtoffload.h: mark, unmark, mode.  Above
 * init.c (a mark may come before our constructor) and mark.c.
 */
#include "backstop.h"
#include "rto_fast.h"
#include "self.h"
#include "mark.h"
#include "callsite.h"
#include "helper.h"
#include "init.h"
#include "fork.h"
#include "route_state.h"

#include <errno.h>

#include "rtoffload.h"

RTO_EXPORT int rt_offload_mark_thread(void)
{
	int saved = errno;

	rto_init_once(); /* marked from a constructor that ran before ours */
	if (rto_helper_is_self()) {
		errno = EPERM; /* a helper serving itself would deadlock */
		return -1;
	}
	if (RTO_UNLIKELY(rto_fork_no_threads)) {
		errno = EAGAIN; /* no helper can start in this process (fork.c) */
		return -1;
	}
	if (rto_helpers_start() != 0)
		return -1;
	rto_thread_capture(&rto_self);
	rto_self.by_policy = 0;
	if (rto_self.route == RTO_ROUTE_DIRECT)
		rto_thread_marked();
	rto_route_mark();
	errno = saved;
	return 0;
}

RTO_EXPORT int rt_offload_unmark_thread(void)
{
	unsigned char sel = rto_backstop_enter(); /* the library's own work */
	rto_self.by_policy = 0;
	if (rto_self.route != RTO_ROUTE_DIRECT)
		rto_thread_unmarked();
	rto_backstop_leave(sel);
	rto_route_unmark(); /* last: unmarked, the selector allows */
	return 0;
}

RTO_EXPORT int rt_offload_thread_is_marked(void)
{
	return rto_self.route != RTO_ROUTE_DIRECT;
}

RTO_EXPORT int rt_offload_set_thread_mode(int mode)
{
	if (mode != RT_OFFLOAD_MODE_OFFLOAD && mode != RT_OFFLOAD_MODE_STRICT) {
		errno = EINVAL;
		return -1;
	}
	int was = rto_thread_mode();
	unsigned char sel = rto_backstop_enter(); /* the library's own work */
	rto_self.mode = (unsigned char)(mode + 1);
	if (rto_self.route != RTO_ROUTE_DIRECT && was != mode)
		rto_thread_strict_prepare(mode); /* marked already: learn its descriptors now */
	rto_backstop_leave(sel);
	return 0;
}
