/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rt_loop: a 1 kHz SCHED_FIFO control loop that uses the librtoffload API.
 *
 * The loop logs every cycle with fprintf and, every few cycles, saves a
 * state snapshot, maps a buffer, reads its config, scans a directory or
 * resolves a name (loop_work.c); a probe thread
 * on the same CPU, at a higher priority, measures what that costs the
 * CPU's other realtime work.  With --offload the loop marks its thread
 * (the probe's is never marked), so that when the library is loaded
 * those calls run on a helper on another CPU.  It does not link the
 * library: the header's weak declarations let the same binary run
 * without it, and
 *
 *   LD_PRELOAD=.../librtoffload.so rt_loop --offload
 *
 * runs it with.  At the end it prints the loop's latencies and, when the
 * library is there, the library's own counters.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "loop_common.h"
#include "rtoffload.h"

/*
 * Mark last: the library starts its helpers on the first mark and keeps
 * them off the CPUs the marking thread is pinned to, so pin first; and
 * the helper runs each request at the caller's priority as captured at
 * mark time (helper_priority=inherit), so be SCHED_FIFO first.
 */
static const char *mark(const struct loop_cfg *cfg, int wanted)
{
	if (!wanted) {
		/* RTOFFLOAD_OPTIONS mark=rt marks us when we become SCHED_FIFO. */
		int by_policy = RT_OFFLOAD_AVAILABLE() && rt_offload_thread_is_marked();
		return by_policy ? "yes (by mark=)" : "no";
	}
	if (!RT_OFFLOAD_AVAILABLE()) {
		loop_note(cfg,
			  "--offload: librtoffload is not loaded (LD_PRELOAD it): not offloading");
		return "no (library not loaded)";
	}
	if (rt_offload_try_mark_thread() != 0) {
		loop_note(cfg, "rt_offload_mark_thread: %s: not offloading", strerror(errno));
		return "no (mark failed)";
	}
	return "yes";
}

static void report_library(FILE *out)
{
	struct rt_offload_stats st;
	char us[32];

	if (!RT_OFFLOAD_AVAILABLE()) {
		loop_report_line(out, "librtoffload:", "not loaded");
		return;
	}
	if (rt_offload_get_stats(&st) != 0) {
		loop_report_line(out, "librtoffload:", "no stats: %s", strerror(errno));
		return;
	}
	loop_report_line(out, "calls offloaded:", "%llu", (unsigned long long)st.offloaded);
	loop_report_line(out, "writes queued async:", "%llu", (unsigned long long)st.async);
	loop_report_line(out, "calls run locally:", "%llu", (unsigned long long)st.local);
	loop_report_line(out, "calls denied:", "%llu", (unsigned long long)st.denied);
	loop_report_line(out, "offload round trip p50:", "%s",
			 loop_us(us, sizeof(us), (int64_t)st.rtt_p50_ns));
	loop_report_line(out, "offload round trip p99:", "%s",
			 loop_us(us, sizeof(us), (int64_t)st.rtt_p99_ns));
	loop_report_line(out, "offload round trip max:", "%s",
			 loop_us(us, sizeof(us), (int64_t)st.rtt_max_ns));
}

int main(int argc, char **argv)
{
	int offload = 0;
	const struct loop_flag flags[] = {
		{"offload", "mark the loop's thread for librtoffload, when it is loaded", &offload},
		{NULL, NULL, NULL},
	};
	struct loop_cfg cfg = {.flags = flags};
	struct loop_rt rt = {0};
	struct loop *l;

	loop_parse_args(&cfg, argc, argv);
	loop_lock_memory(&rt);
	l = loop_open(&cfg);
	loop_rt_self(&cfg, &rt);
	/* A thread of its own: the mark below is the loop thread's alone. */
	loop_probe_start(l, cfg.probe_cpu >= 0 ? cfg.probe_cpu
			    : rt.cpu >= 0      ? rt.cpu
					       : loop_choose_cpu(&cfg));
	const char *marked = mark(&cfg, offload);

	loop_run(l);
	loop_probe_join(l);

	/* Unmarked again, the report's own stdio does not count as offloaded. */
	rt_offload_try_unmark_thread();
	loop_report_line(stdout, "offloading:", "%s", marked);
	loop_report(l, &rt, stdout);
	report_library(stdout);
	loop_write_histogram(l);
	loop_close(l);
	return 0;
}
