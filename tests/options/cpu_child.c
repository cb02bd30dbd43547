/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The child of test_cpu_offline.c, linked to the library and run with
 * helper_cpus=1:workers=1:fd_local=none: its main thread marks itself,
 * opens DIR/f and makes WRITES offloaded writes; says "ready"; waits for
 * a line on stdin (the test takes CPU 1 offline meanwhile); makes WRITES
 * more; unmarks and prints key=value words: how many writes returned 1,
 * how many calls the helpers ran (rt_offload_get_stats), and the CPU the
 * helper thread was last seen on (/proc/self/task/TID/stat, field 39).
 *
 *   cpu_child DIR
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rtoffload.h"

#define WRITES 50

/* The CPU the thread named rtoffload/0 last ran on, or -1. */
static int helper_cpu(void)
{
	char path[300], buf[1024];
	struct dirent *d;
	DIR *dir = opendir("/proc/self/task");
	int cpu = -1;

	while (dir && (d = readdir(dir))) {
		snprintf(path, sizeof(path), "/proc/self/task/%s/stat", d->d_name);
		FILE *f = fopen(path, "re");
		size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
		if (f)
			fclose(f);
		buf[n] = '\0';
		char *p = strrchr(buf, ')');
		if (!strstr(buf, "(rtoffload/0)") || !p)
			continue;
		for (int field = 2; *p && field < 39; p++)
			field += *p == ' ';
		cpu = atoi(p);
	}
	if (dir)
		closedir(dir);
	return cpu;
}

static int writes(int fd)
{
	int ok = 0;

	for (int i = 0; i < WRITES; i++)
		ok += write(fd, "x", 1) == 1;
	return ok;
}

int main(int argc, char **argv)
{
	struct rt_offload_stats s0, s1;
	char path[4096], line[16];

	if (argc < 2)
		return 2;
	snprintf(path, sizeof(path), "%s/f", argv[1]);
	if (rt_offload_mark_thread() != 0)
		return 3;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	int before = writes(fd);
	rt_offload_unmark_thread();
	printf("ready before=%d helper_cpu=%d\n", before, helper_cpu());
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 4;
	rt_offload_get_stats(&s0);
	rt_offload_mark_thread();
	int after = writes(fd);
	rt_offload_unmark_thread();
	rt_offload_get_stats(&s1);
	close(fd);
	printf("after=%d offloaded=%lu helper_cpu=%d\n", after,
	       (unsigned long)(s1.offloaded - s0.offloaded), helper_cpu());
	return 0;
}
