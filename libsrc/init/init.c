/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Load time: options, the real libc functions, the queue mapping.  No
 * thread is started here: a process that never marks a thread keeps the
 * threads it had (helpers start with the first mark, mark.c).
 */
#include "options_load.h"
#include "mark.h"
#include "automark.h"
#include "async.h"
#include "policy.h"
#include "callsite.h"
#include "resolve.h"
#include "route.h"
#include "self.h"
#include "fdclass.h"
#include "helper.h"
#include "transport.h"
#include "stdio_lock.h"
#include "wrap_misc.h"
#include "sanitizer.h"
#include "init.h"
#include "fork.h"
#include "stats.h"
#include "stats_report.h"
#include "lifetime.h"
#include "cred_mirror.h"
#include "own_memory.h"
#include "rto_malloc.h"

#include "backstop.h"
#include "signals.h"
#include "live.h"
#include "alone.h"
#include "stall.h"
#include "fault_count.h"
#include "wake_hint.h"
#include "trace.h"
#include "trace_opts.h"
#include "async_opts.h"

#include <stdlib.h>
#include <sys/mman.h>

/* What the process writes at its end, whoever ends it (lifetime.c too). */
static void write_out(void)
{
	rto_async_at_exit();	  /* nothing accepted is lost */
	rto_pool_events_flush(1); /* malloc=pool: their sites, before the report lists them */
	rto_stats_report_at_exit();
	rto_trace_at_exit(); /* trace_file=: the rest, and the JSON closed */
}

/* With the helpers: live=1's publisher, and the stall watchdog (stall_us). */
static void helpers_started(const cpu_set_t *cpus, unsigned workers)
{
	static const struct rto_stall_remedies remedies = {rto_helpers_grow, rto_helpers_move_off};

	rto_live_start(cpus, workers);
	rto_stall_start(&remedies);
}

/*
 * Each module its own copy of the options it follows, from its own unit
 * (options.h): rto_opt is read here and where it is loaded, nowhere else.
 * Right after the load, before any of them runs (each copy is read-only
 * afterwards).
 */
static void configure(const struct rto_options *o)
{
	rto_helpers_configure(o); /* helper_idle_us in ns for predict.c too */
	rto_transport_configure(o);
	rto_stall_configure(o);
	rto_thread_configure(o);
	rto_thread_faults_configure(o);
	rto_automark_configure(o);
	rto_fork_configure(o);
	rto_backstop_configure(o);
	rto_wake_hint_configure(o);
	rto_live_configure(o);
	rto_stats_report_configure(o);
	rto_malloc_configure(o);
	rto_pool_configure(o);
	rto_heap_recipe_configure(o);
	rto_trace_configure(o);
	rto_async_configure(o);
	rto_self_configure(o);
	rto_route_configure(o);
	rto_fd_configure(o);
	rto_trap_configure(o);
}

void rto_init_once(void)
{
	static int done;

	if (done)
		return;
	done = 1;
	rto_options_load(); /* a bad option ends the program: exit 78 */
	configure(&rto_opt);
	rto_sanitizer_init();
	rto_resolve_all();
	rto_policy_load(&rto_opt);   /* policy=, policy_file=: exit 78 on a bad rule */
	rto_callsite_init(&rto_opt); /* report_path=, suppressions= */
	rto_fork_init(rto_stats_reset);
	rto_cred_mirror_init(rto_lifetime_app_threads); /* before any library thread starts */
	rto_own_memory_init();
	rto_lifetime_init(write_out); /* helpers do not keep the process alive */
	rto_stream_selftest();
	rto_thread_init();
	rto_slots_init();
	rto_async_init();      /* async_path= */
	rto_fd_init(rto_call); /* classify descriptors where they are born? (strict, async_path) */
	rto_malloc_init();     /* malloc=pool: the pools' address range, before mlockall */
	/* backstop=: does this kernel have Syscall User Dispatch? */
	rto_backstop_init(rto_backstop_sigsys, rto_signal_program_action);
	/* Traced from the start (gdb, strace): a fault keeps the kernel's action (signals.c). */
	if (CMM_LOAD_SHARED(rto_backstop_traced))
		rto_signal_faults_plain();
	/* The limit was checked (validate.c); any other refusal is as fatal. */
	if (rto_opt.mlock && mlockall(MCL_CURRENT | MCL_FUTURE) != 0)
		rto_die(RTO_EXIT_CONFIG, "RTOFFLOAD_OPTIONS: mlock=1: mlockall failed: %m");
	rto_helpers_on_start(helpers_started); /* the live publisher, the stall watchdog */
	rto_alone_on_leave(rto_live_leave, rto_live_left); /* ... and their end (alone.c) */
	rto_route_on_dlerror(rto_dlerror_set);
	rto_trace_init();    /* trace_file=, trace=lttng: before any mark */
	rto_automark_init(); /* mark=: may mark this thread; helpers start on first use */
}

__attribute__((constructor)) static void rto_init(void)
{
	rto_init_once();
}

__attribute__((destructor)) static void rto_fini(void)
{
	unsigned char sel = rto_backstop_enter(); /* the library's own work: none of it traps */
	write_out();
	rto_free_defer_drain(1u << 22); /* malloc=pool: frees marked threads left to worker 0 */
	rto_live_at_exit();		/* no segment is left behind */
	rto_backstop_leave(sel);
}
