/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * on_strict=: what a refused call does besides failing.
 *   errno   (default) the call fails with RT_OFFLOAD_STRICT_ERRNO; that is all
 *   signal  RT_OFFLOAD_SIGDEBUG also goes to the calling thread, naming the call
 *   abort   the report is printed and the process dies of SIGABRT
 */
#include "harness.h"

#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "rtoffload.h"

TestSuite(on_strict, .init = child_setup, .fini = child_teardown, .timeout = 60);

static void sigdebug(const char *opts)
{
	char name[64];
	struct run r;

	RUN_CHILD(&r, opts, "sigdebug", child_dir);
	assert_child_exit0(&r);
	cr_expect_eq(out_long(r.out, NULL, "ret", 0), -1, "%s", r.out);
	cr_expect_eq(out_long(r.out, NULL, "errno", 0), RT_OFFLOAD_STRICT_ERRNO, "%s", r.out);
	cr_expect_eq(out_long(r.out, NULL, "handled", 0), 1, "signal not handled once: %s", r.out);
#ifndef __SANITIZE_THREAD__
	/* ThreadSanitizer runs a handler at the thread's next interceptor, not at once. */
	cr_expect_eq(out_long(r.out, NULL, "handled_at_return", 0), 1,
		     "the signal had not arrived when the call returned: %s", r.out);
#endif
	cr_expect_eq(out_long(r.out, NULL, "handler_tid", 0),
		     out_long(r.out, NULL, "thread_tid", -1), "not the calling thread: %s", r.out);
	cr_expect_eq(out_long(r.out, NULL, "signo", 0), RT_OFFLOAD_SIGDEBUG, "%s", r.out);
	cr_expect_eq(out_long(r.out, NULL, "code", 0), SI_QUEUE, "%s", r.out);
	cr_expect_str_eq(out_word(r.out, NULL, "name", name, sizeof(name)), "fsync",
			 "si_value.sival_ptr: %s", r.out);
	cr_expect_eq(json_count(&r, "fsync", "denied"), 1);
	run_free(&r);
}

Test(on_strict, signal_goes_to_the_calling_thread_naming_the_call)
{
	sigdebug("policy=fsync:strict:on_strict=signal");
}

/* The thread's mode, not a policy, refuses the call: the same signal. */
Test(on_strict, signal_in_strict_mode)
{
	NEED_DISK(); /* fsync of a tmpfs file runs locally, even in strict mode */
	sigdebug("mode=strict:on_strict=signal");
}

/* The default: no signal (the child's handler would count it). */
Test(on_strict, errno_sends_nothing)
{
	struct run r;

	RUN_CHILD(&r, "policy=fsync:strict", "sigdebug", child_dir);
	assert_child_exit0(&r);
	cr_expect_eq(out_long(r.out, NULL, "errno", 0), RT_OFFLOAD_STRICT_ERRNO, "%s", r.out);
	cr_expect_eq(out_long(r.out, NULL, "handled", -1), 0, "%s", r.out);
	run_free(&r);
}

Test(on_strict, abort_reports_then_dies_of_sigabrt)
{
	char head[128];
	struct run r;

	RUN_CHILD(&r, "policy=fsync:strict:on_strict=abort", "sites", child_dir, "1", "0", "0");
	cr_assert(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGABRT,
		  "status 0x%x, stderr:\n%s", r.status, r.err);
	snprintf(head, sizeof(head), "==%d==rtoffload: strict 'fsync' from realtime thread 'ctl'",
		 r.pid);
	cr_expect_eq(count_of(r.err, head), 1, "no '%s' in:\n%s", head, r.err);
	cr_expect_eq(count_of(r.err, "SUMMARY: rtoffload: strict 'fsync' in save_state_a\n"), 1,
		     "%s", r.err);
	cr_expect_eq(r.out[0], '\0', "the program went on after the refused call: %s", r.out);
	run_free(&r);
}
