/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The hypervisor's share a stall line states (core/stall.c): a CPU's
 * steal ticks read from /proc/stat's text (libsrc/common/proc_stat.h).
 * Linked to rto_common alone; the real file is read last, for each
 * online CPU.
 */
#include "proc_stat.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* As Linux 6.x writes it: the sum first, then one line per CPU. */
static const char stat_text[] = "cpu  3264838 3744 888382 2197040 9661 0 17472 35479 0 0\n"
				"cpu0 1664650 1780 419614 1098416 4346 0 8327 18198 0 0\n"
				"cpu1 1600188 1964 468768 1098623 5315 0 9144 17281 0 0\n"
				"cpu10 1 2 3 4 5 6 7 99 0 0\n"
				"cpu3 1 2 3 4 5 6 7\n"
				"intr 123 0 9 0 0 0\n"
				"ctxt 1234\n";

static int steal(const char *text, int cpu, uint64_t *t)
{
	return rto_proc_stat_steal(text, (long)strlen(text), cpu, t);
}

Test(steal_text, each_cpu_line_gives_its_eighth_number)
{
	uint64_t t = 0;

	cr_assert_eq(steal(stat_text, 0, &t), 0);
	cr_expect_eq(t, 18198);
	cr_assert_eq(steal(stat_text, 1, &t), 0);
	cr_expect_eq(t, 17281);
	cr_assert_eq(steal(stat_text, 10, &t), 0, "cpu10 is not cpu1's line");
	cr_expect_eq(t, 99);
}

Test(steal_text, a_cpu_not_there_or_without_steal_gives_minus_one)
{
	uint64_t t = 7;

	cr_expect_eq(steal(stat_text, 2, &t), -1, "no cpu2 line");
	cr_expect_eq(steal(stat_text, 3, &t), -1, "cpu3's line has no steal column");
	cr_expect_eq(steal(stat_text, -1, &t), -1, "not the sum's line");
	cr_expect_eq(t, 7, "nothing written on failure");
	cr_expect_eq(steal("", 0, &t), -1);
}

Test(steal_text, a_line_cut_short_is_not_read)
{
	uint64_t t = 0;
	/* Cut after "cpu1 1600188 1964 468768 1098623 5315 0 9144 1728": a shorter number. */
	const char *cut = strstr(stat_text, "17281");
	long len = (long)(cut - stat_text) + 4;

	cr_expect_eq(rto_proc_stat_steal(stat_text, len, 0, &t), 0);
	cr_expect_eq(t, 18198);
	cr_expect_eq(rto_proc_stat_steal(stat_text, len, 1, &t), -1, "cpu1's line is cut: 1728?");
	cr_expect_eq(rto_proc_stat_steal(stat_text, len, 10, &t), -1, "past the end");
}

Test(steal_text, next_gives_every_cpu_line_in_order)
{
	const char *p = stat_text, *end = stat_text + strlen(stat_text);
	int cpu, seen[3], n = 0;
	uint64_t t;

	while (n < 3 && rto_proc_stat_next(&p, end, &cpu, &t))
		seen[n++] = cpu;
	cr_assert_eq(n, 3, "cpu0, cpu1, cpu10 (cpu3 has no steal column)");
	cr_expect(seen[0] == 0 && seen[1] == 1 && seen[2] == 10);
	cr_expect_eq(rto_proc_stat_next(&p, end, &cpu, &t), 0);
}

Test(steal_text, the_machines_own_file_has_a_steal_for_every_online_cpu)
{
	static char text[65536];
	int fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);
	cr_assert_geq(fd, 0);
	ssize_t len = read(fd, text, sizeof(text) - 1);
	close(fd);
	cr_assert_gt(len, 0);
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	for (int cpu = 0, seen = 0; seen < n && cpu < 4096; cpu++) {
		char name[16];
		snprintf(name, sizeof(name), "\ncpu%d ", cpu);
		if (!strstr(text, name))
			continue; /* offline */
		uint64_t t;
		cr_expect_eq(rto_proc_stat_steal(text, (long)len, cpu, &t), 0, "cpu%d", cpu);
		seen++;
	}
}
