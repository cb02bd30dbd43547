/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What tar czf does to start gzip, many times over, for test_live.c: fork,
 * then in the child move descriptors with close(n) + dup(x), relying on
 * dup() returning the lowest free number (n), as tar's xdup2() does (it
 * calls abort() otherwise), then exec.  Linked to the library and run with
 * mark=all:fd_local=none:live=1, so the child's close() is offloaded and
 * starts the child's helpers and live publisher right in that window.
 * The child then execs this program again as "leaf" (as tar execs gzip
 * under the same LD_PRELOAD), which makes an offloaded call and exits.
 *
 *   fork_exec N     N children one after the other; prints
 *                   "children=N ok=K first_bad=STATUS left=L" and exits 0
 *                   (STATUS as waitpid gives it, -1 when all were fine;
 *                   L: children whose /dev/shm/rtoffload.PID remained)
 *   fork_exec leaf  one offloaded open() and close(), exit 0
 *
 * A child exits 3 when dup() gave another number, 4 when a call failed,
 * 127 when the exec failed.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MOVES 256 /* close+dup pairs per child: they span the publisher's start */

static void child(void)
{
	int p[2];

	if (pipe(p) < 0)
		_exit(4);
	for (int i = 0; i < MOVES; i++) {
		int into = i % 2 ? p[0] : p[1];
		if (close(into) < 0)
			_exit(4);
		int got = dup(i % 2 ? p[1] : p[0]);
		if (got != into) {
			fprintf(stderr, "fork_exec: dup() gave %d, not %d, at move %d\n", got, into,
				i);
			_exit(3);
		}
	}
	execl("/proc/self/exe", "fork_exec", "leaf", (char *)NULL);
	_exit(127);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 0, ok = 0, first_bad = -1, left = 0;
	char seg[64];

	if (argc > 1 && !strcmp(argv[1], "leaf")) {
		int fd = open("/dev/null", O_RDONLY);
		return fd >= 0 && close(fd) == 0 ? 0 : 4;
	}

	for (int i = 0; i < n; i++) {
		int status = -1;
		pid_t pid = fork();
		if (pid < 0)
			break;
		if (pid == 0)
			child();
		if (waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
		    WEXITSTATUS(status) == 0)
			ok++;
		else if (first_bad == -1)
			first_bad = status;
		snprintf(seg, sizeof(seg), "/dev/shm/rtoffload.%d", (int)pid);
		if (access(seg, F_OK) == 0) {
			left++;
			fprintf(stderr, "left: %s\n", seg);
		}
	}
	printf("children=%d ok=%d first_bad=%d left=%d\n", n, ok, first_bad, left);
	return 0;
}
