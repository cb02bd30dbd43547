/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A tiny legacy program for the cases where librtoffload must simply not be
 * there: a static binary, a set-user-ID binary, a program that clears its
 * environment.  Built by run_legacy.sh with the system compiler, knows
 * nothing of the library.
 *
 *   probe secure    print AT_SECURE, the ids, and whether the library's API
 *                   resolves in this process (dlsym(RTLD_DEFAULT)); then I/O
 *   probe io        file I/O only (what a static binary does)
 *   probe clearenv  clearenv(), file I/O, then run `env` through system():
 *                   the child must see an empty environment
 *
 * Output is deterministic: no pids, times or addresses.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifndef PROBE_STATIC
#include <dlfcn.h>
#include <sys/auxv.h>
#endif

static int io(void)
{
	char path[] = "probe.tmp";
	FILE *f = fopen(path, "w");
	if (!f) {
		perror("fopen");
		return 1;
	}
	for (int i = 0; i < 2000; i++)
		fprintf(f, "line %d %x\n", i, i * 2654435761u);
	fflush(f);
	if (fsync(fileno(f)) != 0)
		perror("fsync");
	fclose(f);

	struct stat st;
	if (stat(path, &st) != 0) {
		perror("stat");
		return 1;
	}
	int fd = open(path, O_RDONLY);
	if (fd < 0) {
		perror("open");
		return 1;
	}
	unsigned long sum = 0;
	char buf[4096];
	ssize_t n;
	while ((n = read(fd, buf, sizeof buf)) > 0)
		for (ssize_t i = 0; i < n; i++)
			sum = sum * 31 + (unsigned char)buf[i];
	close(fd);
	printf("io: size=%lld sum=%lx\n", (long long)st.st_size, sum);

	int entries = 0;
	DIR *d = opendir(".");
	if (d) {
		while (readdir(d))
			entries++;
		closedir(d);
	}
	printf("io: dir entries=%d\n", entries);
	unlink(path);
	printf("io: unlinked=%d\n", access(path, F_OK) != 0);
	return 0;
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "io";

	if (strcmp(what, "secure") == 0) {
#ifndef PROBE_STATIC
		printf("AT_SECURE=%lu\n", getauxval(AT_SECURE));
		printf("ruid=%d euid=%d\n", (int)getuid(), (int)geteuid());
		printf("library=%s\n",
		       dlsym(RTLD_DEFAULT, "rt_offload_mark_thread") ? "present" : "absent");
		fflush(stdout);
#endif
		return io();
	}
	if (strcmp(what, "clearenv") == 0) {
		clearenv();
		int ret = io();
		fflush(stdout);
		int st = system("exec env");
		printf("system: status=%d\n", st);
		return ret;
	}
	return io();
}
