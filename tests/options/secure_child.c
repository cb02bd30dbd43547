/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The child of test_secure.c, linked to the library; run as a set-user-ID
 * copy by another user (AT_SECURE), and plainly for comparison, with
 * mark=main:fd_local=none:live=1: its main thread is marked from the
 * constructor, and its open() is offloaded, so the helpers (and the live
 * publisher, where there is one) have started before it looks for its
 * segment.  Prints key=value words:
 *   secure=AT_SECURE seg=1|0 (/dev/shm/rtoffload.PID exists) open=0|-1
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/auxv.h>
#include <unistd.h>

int main(void)
{
	char seg[64];
	int fd = open("/dev/null", O_RDONLY);

	if (fd >= 0)
		close(fd);
	snprintf(seg, sizeof(seg), "/dev/shm/rtoffload.%d", (int)getpid());
	printf("secure=%lu seg=%d open=%d\n", getauxval(AT_SECURE), access(seg, F_OK) == 0,
	       fd >= 0 ? 0 : -1);
	return 0;
}
