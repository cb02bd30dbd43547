/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * hello_offload: the smallest program that uses the API, built against an
 * installed librtoffload (examples/consumer/ with find_package,
 * `pkg-config --cflags --libs rtoffload` by hand; tests/install builds it
 * both ways).
 *
 * It marks its thread, writes a line into a file and says how many calls
 * ran on a helper.  The header's declarations are weak, so the same
 * source also runs unlinked, with the library preloaded or absent:
 *
 *   cc hello_offload.c $(pkg-config --cflags --libs rtoffload) -o hello
 *   ./hello                                    linked
 *   cc hello_offload.c $(pkg-config --cflags rtoffload) -o hello-plain
 *   LD_PRELOAD=librtoffload.so.0 ./hello-plain  preloaded
 *
 * Exit status: 0 when a call was offloaded, 1 when none was, 2 when the
 * library is not loaded.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rtoffload.h>

int main(int argc, char **argv)
{
	char path[] = "/tmp/hello_offload.XXXXXX";
	static const char line[] = "hello from a marked thread\n";
	struct rt_offload_stats st;
	int fd;

	(void)argc;
	if (!RT_OFFLOAD_AVAILABLE()) {
		fprintf(stderr, "%s: librtoffload is not loaded\n", argv[0]);
		return 2;
	}
	fd = mkstemp(path);
	if (fd < 0) {
		perror("mkstemp");
		return 1;
	}
	if (rt_offload_mark_thread() != 0) {
		fprintf(stderr, "rt_offload_mark_thread: %s\n", strerror(errno));
		return 1;
	}
	/*
	 * close and unlink run on a helper; write and fsync too, on a disk
	 * file (on tmpfs they run here: fd_local= says which kinds are local).
	 */
	if (write(fd, line, sizeof(line) - 1) != (ssize_t)(sizeof(line) - 1) || fsync(fd) != 0)
		perror("write");
	close(fd);
	unlink(path);
	rt_offload_unmark_thread();
	if (rt_offload_get_stats(&st) != 0) {
		perror("rt_offload_get_stats");
		return 1;
	}
	printf("offloaded %llu calls\n", (unsigned long long)st.offloaded);
	return st.offloaded > 0 ? 0 : 1;
}
