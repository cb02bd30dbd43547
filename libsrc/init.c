/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Load time: options, the real libc functions, the queue mapping.  No
 * thread is started here: a process that never marks a thread keeps the
 * threads it had (helpers start with the first mark, thread.c).
 */
#include "rto.h"
#include "lifetime.h"
#include "rto_malloc.h"

#include "backstop.h"
#include "live.h"

#include <stdlib.h>
#include <sys/mman.h>

void rto_init_once(void)
{
	static int done;

	if (done)
		return;
	done = 1;
	rto_options_load(); /* a bad option ends the program: exit 78 */
	rto_sanitizer_init();
	rto_resolve_all();
	rto_policy_load();   /* policy=, policy_file=: exit 78 on a bad rule */
	rto_callsite_init(); /* report_path=, suppressions= */
	rto_fork_init();
	rto_lifetime_init(); /* helpers do not keep the process alive */
	rto_stream_selftest();
	rto_thread_init();
	rto_async_init();    /* async_path= */
	rto_fd_init();	     /* classify descriptors where they are born? (strict, async_path) */
	rto_malloc_init();   /* malloc=pool: the pools' address range, before mlockall */
	rto_backstop_init(); /* backstop=: does this kernel have Syscall User Dispatch? */
	/* The limit was checked (validate.c); any other refusal is as fatal. */
	if (rto_opt.mlock && mlockall(MCL_CURRENT | MCL_FUTURE) != 0)
		rto_die(RTO_EXIT_CONFIG, "RTOFFLOAD_OPTIONS: mlock=1: mlockall failed: %m");
	rto_automark_init(); /* mark=: may mark this thread; helpers start on first use */
}

__attribute__((constructor)) static void rto_init(void)
{
	rto_init_once();
}

__attribute__((destructor)) static void rto_fini(void)
{
	rto_async_at_exit(); /* nothing accepted is lost */
	rto_stats_at_exit();
	rto_live_at_exit(); /* no segment is left behind */
}
