/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The process test_live.c watches: linked to the library, run with
 * policy=fsync:local,unlink:strict (and fd_local=none).  Its marked thread
 * makes 7 offloaded writes, 3 local fsyncs and 2 refused unlinks; then the
 * main thread prints the process's own rt_offload_get_stats() and the
 * marked thread's tid as key=value words, and waits.
 *
 *   live_child DIR         then waits for stdin to close, and exits
 *   live_child DIR busy    the marked thread goes on writing, one write
 *                          every 2 ms, until stdin closes
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "rtoffload.h"

static char path[4096];
static int busy;
static atomic_int done, stop;
static pid_t tid;

static void *marked(void *arg)
{
	(void)arg;
	tid = (pid_t)syscall(SYS_gettid);
	if (rt_offload_mark_thread() != 0)
		return NULL;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	for (int i = 0; i < 6; i++)
		write(fd, "x", 1);
	for (int i = 0; i < 3; i++)
		fsync(fd);
	for (int i = 0; i < 2; i++)
		unlink(path);
	atomic_store(&done, 1);
	while (busy && !atomic_load(&stop)) {
		struct timespec ts = {0, 2 * 1000 * 1000};
		write(fd, "y", 1);
		nanosleep(&ts, NULL);
	}
	rt_offload_unmark_thread();
	close(fd);
	return NULL;
}

int main(int argc, char **argv)
{
	struct rt_offload_stats s;
	pthread_t t;
	char c;

	if (argc < 2)
		return 2;
	busy = argc > 2 && !strcmp(argv[2], "busy");
	snprintf(path, sizeof(path), "%s/f", argv[1]);
	pthread_create(&t, NULL, marked, NULL);
	while (!atomic_load(&done)) {
		struct timespec ts = {0, 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	rt_offload_get_stats(&s);
	printf("pid=%d tid=%d offloaded=%lu local=%lu denied=%lu async=%lu fallback=%lu\n",
	       (int)getpid(), (int)tid, (unsigned long)s.offloaded, (unsigned long)s.local,
	       (unsigned long)s.denied, (unsigned long)s.async, (unsigned long)s.fallback);
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	atomic_store(&stop, 1);
	pthread_join(t, NULL);
	return 0;
}
