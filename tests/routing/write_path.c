/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One offloaded write, N times: a marked thread writes one byte N times
 * to FILE.  path_files.py runs it under callgrind for two N, and the
 * files whose instructions grow with N are the ones a write crosses
 * (docs/ARCHITECTURE.md, "The path of one call").  With GAP_US, each
 * write comes GAP_US after the last one returned (a busy wait on the
 * vDSO clock, no call of the library's): each begins a burst, as a
 * periodic loop's does.
 *
 *   write_path FILE N [GAP_US]
 */
#include <rtoffload.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: write_path FILE N [GAP_US]\n");
		return 2;
	}
	long n = strtol(argv[2], NULL, 10);
	long long gap_ns = argc == 4 ? strtoll(argv[3], NULL, 10) * 1000 : 0;
	int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || n <= 0) {
		perror(argv[1]);
		return 2;
	}
	if (rt_offload_mark_thread() != 0) {
		fprintf(stderr, "write_path: rt_offload_mark_thread failed\n");
		return 1;
	}
	for (long i = 0; i < n; i++) {
		if (write(fd, "x", 1) != 1) {
			perror("write");
			return 1;
		}
		for (long long end = now_ns() + gap_ns; gap_ns && now_ns() < end;)
			;
	}
	rt_offload_unmark_thread();
	/* Every byte reached the file: the writes were made, wherever they ran. */
	if (lseek(fd, 0, SEEK_END) != n) {
		fprintf(stderr, "write_path: the file has not %ld bytes\n", n);
		return 1;
	}
	return close(fd) == 0 ? 0 : 1;
}
