/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A program that dlopen()s the library instead of preloading or linking
 * it (issue 6, the interposer checklist).  Expected, and documented in
 * README.md: it works, cleanly, but intercepts nothing the program itself
 * calls.  The program's references to write() & co were bound to libc when
 * it was loaded, and a library loaded later comes after libc in the
 * lookup scope even with RTLD_GLOBAL; only a pointer taken from the
 * library's handle with dlsym() reaches its wrappers.  The API works
 * (dlsym), marking works, helpers start, exit is clean, and dlclose()
 * leaves the library in place (-z nodelete: helpers keep running code).
 *
 * SC_DLOPEN_GLOBAL=1 opens with RTLD_GLOBAL.  Reports key=value lines.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rtoffload.h"

static int (*api_mark)(void);
static int (*api_stats)(struct rt_offload_stats *);
static ssize_t (*lib_write)(int, const void *, size_t);

struct result {
	const char *path;
	int mark_rc;
	long program_offloaded, library_offloaded;
	ssize_t program_wrote, library_wrote;
};

static uint64_t offloaded(void)
{
	struct rt_offload_stats s = {0};

	api_stats(&s);
	return s.offloaded;
}

static void *marked_thread(void *arg)
{
	struct result *r = arg;
	int fd = open(r->path, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0600);

	r->mark_rc = api_mark();
	uint64_t a = offloaded();
	r->program_wrote = write(fd, "program\n", 8); /* bound to libc at load */
	uint64_t b = offloaded();
	r->library_wrote = lib_write(fd, "library\n", 8); /* the library's wrapper */
	uint64_t c = offloaded();
	r->program_offloaded = (long)(b - a);
	r->library_offloaded = (long)(c - b);
	close(fd);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *lib = argc > 1 ? argv[1] : RTOFFLOAD_LIB;
	int global = getenv("SC_DLOPEN_GLOBAL") != NULL;
	struct result r = {.path = argc > 2 ? argv[2] : "/tmp/rto_dlopen_prog.out"};
	pthread_t t;

	void *h = dlopen(lib, RTLD_NOW | (global ? RTLD_GLOBAL : RTLD_LOCAL));
	if (!h) {
		printf("dlopen=0\nerror=%s\n", dlerror());
		return 0;
	}
	api_mark = (int (*)(void))dlsym(h, "rt_offload_mark_thread");
	api_stats = (int (*)(struct rt_offload_stats *))dlsym(h, "rt_offload_get_stats");
	lib_write = (ssize_t(*)(int, const void *, size_t))dlsym(h, "write");
	if (!api_mark || !api_stats || !lib_write) {
		printf("dlopen=1\ndlsym=0\n");
		return 2;
	}
	pthread_create(&t, NULL, marked_thread, &r);
	pthread_join(t, NULL);
	printf("dlopen=1\ndlsym=1\nmark_rc=%d\nprogram_wrote=%zd\nlibrary_wrote=%zd\n"
	       "program_offloaded=%ld\nlibrary_offloaded=%ld\n",
	       r.mark_rc, r.program_wrote, r.library_wrote, r.program_offloaded,
	       r.library_offloaded);
	printf("dlclose=%d\n", dlclose(h));
	fflush(stdout);
	return 0;
}
