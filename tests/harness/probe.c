/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A program the tests run in a child process.  It is NOT linked to
 * librtoffload: it sees the API only through include/rtoffload.h's weak
 * declarations, so the same binary runs without the library and with it
 * preloaded.  It prints what it observes as key=value words; the tests
 * assert on them.
 *
 *   probe api          availability, try_mark, an offloaded write
 *   probe threads      thread count around wrapped calls, never marking
 *   probe strict DIR   a marked thread under the mode= of RTOFFLOAD_OPTIONS
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rtoffload.h"

static unsigned long long offloaded(void)
{
	struct rt_offload_stats s = {0};

	if (RT_OFFLOAD_AVAILABLE())
		rt_offload_get_stats(&s);
	return (unsigned long long)s.offloaded;
}

static unsigned long long denied(void)
{
	struct rt_offload_stats s = {0};

	if (RT_OFFLOAD_AVAILABLE())
		rt_offload_get_stats(&s);
	return (unsigned long long)s.denied;
}

static unsigned long long local(void)
{
	struct rt_offload_stats s = {0};

	if (RT_OFFLOAD_AVAILABLE())
		rt_offload_get_stats(&s);
	return (unsigned long long)s.local;
}

static int tasks(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

/* Without the library: try_mark is 0 and nothing else may be called. */
static int api(void)
{
	int avail = RT_OFFLOAD_AVAILABLE();
	int rc = rt_offload_try_mark_thread();
	int marked = avail ? rt_offload_thread_is_marked() : 0;
	unsigned long long before = offloaded(), lbefore = local();
	/* Three wrapped calls: open and close offloaded, the write by descriptor. */
	int fd = open("/dev/null", O_WRONLY);
	ssize_t n = write(fd, "x", 1);
	close(fd);
	unsigned long long after = offloaded(), lafter = local();
	int urc = rt_offload_try_unmark_thread();

	printf("available=%d try_mark=%d marked=%d wrote=%zd offloaded=%llu local=%llu "
	       "try_unmark=%d\n",
	       avail, rc, marked, n, after - before, lafter - lbefore, urc);
	return 0;
}

/* A process that never marks: the library starts no thread. */
static int threads(void)
{
	int before = tasks();
	struct addrinfo *ai = NULL;
	struct stat st;
	int fd = open("/dev/null", O_WRONLY);

	write(fd, "x", 1);
	fsync(fd);
	close(fd);
	stat("/", &st);
	fprintf(stderr, "%s", "");
	if (getaddrinfo("localhost", NULL, NULL, &ai) == 0)
		freeaddrinfo(ai);
	printf("before=%d after=%d offloaded=%llu\n", before, tasks(), offloaded());
	return 0;
}

/* Under RTOFFLOAD_OPTIONS=mode=strict: refused, then allowed per thread. */
static int strict(const char *dir)
{
	char path[4096];
	struct stat st;

	snprintf(path, sizeof(path), "%s/strict-file", dir);
	if (!RT_OFFLOAD_AVAILABLE() || rt_offload_mark_thread() != 0)
		return 2;
	errno = 0;
	int fd = open(path, O_CREAT | O_WRONLY, 0644);
	int err = errno;
	int exists = stat(path, &st) == 0; /* refused too, so ask after unmarking */
	rt_offload_unmark_thread();
	exists = stat(path, &st) == 0;
	printf("strict_open=%d strict_errno=%d strict_created=%d denied=%llu ", fd, err, exists,
	       denied());

	rt_offload_mark_thread();
	rt_offload_set_thread_mode(RT_OFFLOAD_MODE_OFFLOAD);
	unsigned long long before = offloaded();
	fd = open(path, O_CREAT | O_WRONLY, 0644);
	printf("offload_open=%d offload_count=%llu ", fd >= 0, offloaded() - before);
	if (fd >= 0)
		close(fd);
	rt_offload_unmark_thread();
	printf("created=%d\n", stat(path, &st) == 0);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "api") == 0)
		return api();
	if (argc >= 2 && strcmp(argv[1], "threads") == 0)
		return threads();
	if (argc >= 3 && strcmp(argv[1], "strict") == 0)
		return strict(argv[2]);
	fprintf(stderr, "usage: probe api|threads|strict DIR\n");
	return 64;
}
