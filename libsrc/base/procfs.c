/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One read of a small /proc file (stat, comm, a sysctl): the kernel makes
 * the whole text at the first read, so one read() sees all of it.
 */
#include "resolve.h"
#include "procfs.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>

long rto_procfs_read(const char *path, char *buf, size_t size)
{
	long fd = rto_syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	long n = rto_syscall(SYS_read, fd, buf, size - 1);
	rto_syscall(SYS_close, fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return n;
}

long rto_procfs_task(pid_t pid, pid_t tid, const char *file, char *buf, size_t size)
{
	char path[80];

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/%s", (int)pid, (int)tid, file);
	else
		snprintf(path, sizeof(path), "/proc/self/task/%d/%s", (int)tid, file);
	return rto_procfs_read(path, buf, size);
}

void rto_procfs_comm(pid_t pid, pid_t tid, char *name, size_t size)
{
	if (rto_procfs_task(pid, tid, "comm", name, size) <= 0)
		snprintf(name, size, "?");
	name[strcspn(name, "\n")] = '\0';
}

const char *rto_procfs_stat_field(const char *line, int n)
{
	const char *p = strrchr(line, ')');

	if (!p || p[1] != ' ' || n < 3)
		return NULL;
	p += 2; /* field 3 */
	for (int field = 3; field < n; field++) {
		p = strchr(p, ' ');
		if (!p)
			return NULL;
		p++;
	}
	return *p ? p : NULL;
}
