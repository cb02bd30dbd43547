/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench-trap: the backstop's cost (issue 12).  A system call a marked
 * thread makes behind the library's back (a syscall instruction of the
 * program's own text, as a JIT makes it) traps into the library's SIGSYS
 * handler (Syscall User Dispatch), which runs it:
 *   direct         getppid on an unmarked thread: no trap, the floor;
 *   trap, local    the same on a marked thread: trapped, run by the handler
 *                  from the library's text (syscalls.tbl: local);
 *   trap, offload  getcwd on a marked thread: trapped, run on a helper
 *                  through the queue (syscalls.tbl: offload);
 *   getcwd direct  the same getcwd on an unmarked thread, for comparison.
 * libc's syscall() of a marked thread is decided by the library without a
 * trap (issue 30):
 *   futex          syscall(SYS_futex, FUTEX_WAKE_PRIVATE) unmarked;
 *   futex, marked  the same marked: run on the caller, selector open.
 * Then the realtime loop of the other families (an absolute 1 ms
 * clock_nanosleep, the clock, a mutex, a 64-byte write to /dev/null, an
 * offloaded fprintf to a log file) runs marked, and the trapped count
 * (rt_offload_get_stats().trapped) over its steady state is divided by its
 * cycles: the traps per cycle, which must be 0.
 */
#include "harness.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "raw_syscall_asm.h" /* libsrc's: the backstop's raw call is the same text */
#include "rtoffload.h"

/* A system call from the program's own text: no wrapper sees it. */
__asm__(".pushsection .text\n" RTO_RAW_SYSCALL6_ASM(bench_syscall6) ".popsection\n");
long bench_syscall6(long nr, long a, long b, long c, long d, long e, long f);

static long getcwd_raw(void)
{
	char buf[256];
	return bench_syscall6(SYS_getcwd, (long)buf, sizeof(buf), 0, 0, 0, 0);
}

static long getppid_raw(void)
{
	return bench_syscall6(SYS_getppid, 0, 0, 0, 0, 0, 0);
}

static long futex_wake(void)
{
	static uint32_t word;
	return syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void measure(const char *name, long (*fn)(void), size_t n)
{
	struct h_samples s;

	h_samples_init(&s, n);
	for (size_t i = 0; i < n / 10; i++)
		fn(); /* warm: first use, helpers awake */
	for (size_t i = 0; i < n; i++) {
		uint64_t t0 = h_ticks();
		fn();
		h_sample(&s, h_ticks() - t0);
	}
	h_samples_to_ns(&s);
	h_send_samples(name, s.v, s.n);
}

/* The realtime loop, marked; its trapped calls per cycle after WARM cycles. */
static void loop(long cycles)
{
	enum { WARM = 20 };
	static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	static char buf64[64];
	char path[4096];
	struct rt_offload_stats a = {0}, b = {0};
	struct timespec next;

	snprintf(path, sizeof(path), "%s/trap-loop.log", h_opt.tmp ? h_opt.tmp : "/tmp");
	int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	FILE *log = fopen(path, "w");
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (long i = 0; i < cycles + WARM; i++) {
		if (i == WARM)
			rt_offload_get_stats(&a);
		next.tv_nsec += 1000000;
		if (next.tv_nsec >= 1000000000) {
			next.tv_nsec -= 1000000000;
			next.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		pthread_mutex_lock(&m);
		pthread_mutex_unlock(&m);
		if (write(null, buf64, sizeof(buf64)) != (ssize_t)sizeof(buf64))
			h_send_value("loop_bad_writes", 1);
		if (log)
			fprintf(log, "cycle %ld\n", i);
	}
	rt_offload_get_stats(&b);
	if (log) {
		fclose(log);
		unlink(path);
	}
	close(null);
	h_send_value("loop_cycles", (double)cycles);
	h_send_value("loop_traps", (double)(b.trapped - a.trapped));
}

static int child_main(void)
{
	size_t n = (size_t)h_scaled(20000, 2000);

	h_lock_memory();
	h_pin(h_opt.rt_cpu);
	h_fifo(80);
	measure("direct", getppid_raw, n);
	measure("getcwd direct", getcwd_raw, n);
	measure("futex", futex_wake, n);
	if (rt_offload_mark_thread() != 0)
		return 1;
	measure("futex, marked", futex_wake, n);
	measure("trap, local", getppid_raw, n);
	measure("trap, offload", getcwd_raw, n);
	loop((long)h_scaled(1000, 200));
	rt_offload_unmark_thread();
	return 0;
}

int main(int argc, char **argv)
{
	static const char *const rows[] = {"direct",	    "trap, local", "getcwd direct",
					   "trap, offload", "futex",	   "futex, marked"};
	struct h_json j;

	h_init(argc, argv);
	if (h_opt.child)
		return child_main();
	if (!h_opt.lib)
		return 0; /* nothing to trap without the library */
	int json = h_opt.out && hj_open(&j, h_opt.out) == 0;
	h_print_header("trap: a raw system call of a marked thread, trapped by the backstop", NULL);
	struct h_reply r = h_child_run("measure", "", 1, NULL, 300);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]) && r.status == 0; i++) {
		const struct h_item *it = h_reply_get(&r, rows[i]);
		struct h_summary s;
		if (!it)
			continue;
		h_summarize(it->v, it->n, &s);
		h_print_row(rows[i], &s);
		if (json)
			hj_summary(&j, rows[i], &s);
	}
	double cycles = h_reply_value(&r, "loop_cycles", 0),
	       traps = h_reply_value(&r, "loop_traps", -1);
	if (r.status == 0 && cycles > 0) {
		printf("realtime loop: %.0f trapped system calls in %.0f cycles (%.3f per cycle)\n",
		       traps, cycles, traps / cycles);
		if (json) {
			hj_num(&j, "loop_cycles", cycles);
			hj_num(&j, "loop_traps", traps);
			hj_num(&j, "loop_traps_per_cycle", traps / cycles);
		}
	} else {
		printf("trap: the measuring child failed (status %d)\n", r.status);
	}
	h_reply_free(&r);
	if (json)
		hj_close(&j);
	return 0;
}
