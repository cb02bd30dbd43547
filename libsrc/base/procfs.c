/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One read of a small /proc file (stat, comm, a sysctl): the kernel makes
 * the whole text at the first read, so one read() sees all of it.
 */
#include "resolve.h"
#include "procfs.h"

#include <fcntl.h>
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
