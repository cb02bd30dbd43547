/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Wrapped calls before main (issue 6, the interposer checklist): from the
 * program's .preinit_array, which runs before every constructor, the
 * library's included (so its options are not loaded and no thread can be
 * marked yet), and from the program's own constructor, which runs after
 * the library's (with mark=main the initial thread is marked by then, so
 * its calls are offloaded and start the helpers).
 *
 * Built twice: linked to the library, and unlinked for LD_PRELOAD (the
 * API is then reached through the header's weak declarations).  Writes
 * files under $SC_DIR and reports key=value lines on stdout.  With
 * SC_PREINIT_MARK=1 it also calls rt_offload_mark_thread() from
 * .preinit_array, before the library is initialised.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rtoffload.h"

struct step {
	int fd, wrote, closed, marked, printed;
	long offloaded;
};

static struct step pre, ctor;
static int preinit_mark_rc = -2; /* -2: not tried */
static char dir[PATH_MAX];

static const char *env_in(char **envp, const char *key)
{
	size_t n = strlen(key);

	for (int i = 0; envp && envp[i]; i++)
		if (strncmp(envp[i], key, n) == 0 && envp[i][n] == '=')
			return envp[i] + n + 1;
	return NULL;
}

static uint64_t offloaded(void)
{
	struct rt_offload_stats s;

	return RT_OFFLOAD_AVAILABLE() && rt_offload_get_stats(&s) == 0 ? s.offloaded : 0;
}

/* open/write/close, then a stdio write, of dir/name: each result recorded. */
static void calls(struct step *s, const char *name)
{
	char path[PATH_MAX + 16];
	uint64_t before = offloaded();

	s->marked = RT_OFFLOAD_AVAILABLE() && rt_offload_thread_is_marked();
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	s->fd = open(path, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0600);
	s->wrote = (int)write(s->fd, name, strlen(name));
	s->closed = close(s->fd);
	strncat(path, ".stdio", sizeof(path) - strlen(path) - 1);
	FILE *f = fopen(path, "w");
	s->printed = f ? fprintf(f, "%s via stdio\n", name) : -1;
	if (f)
		fclose(f);
	s->offloaded = (long)(offloaded() - before);
}

static void preinit(int argc, char **argv, char **envp)
{
	const char *d = env_in(envp, "SC_DIR");

	(void)argc;
	(void)argv;
	snprintf(dir, sizeof(dir), "%s", d ? d : "/tmp");
	if (env_in(envp, "SC_PREINIT_MARK"))
		preinit_mark_rc = RT_OFFLOAD_AVAILABLE() ? rt_offload_mark_thread() : -3;
	calls(&pre, "preinit");
}

__attribute__((used, section(".preinit_array"))) static void (*const preinit_p)(int, char **,
										char **) = preinit;

__attribute__((constructor)) static void ctor_calls(void)
{
	calls(&ctor, "ctor");
}

static void report(const char *name, const struct step *s)
{
	printf("%s_fd_ok=%d\n%s_wrote=%d\n%s_closed=%d\n%s_printed=%d\n%s_marked=%d\n"
	       "%s_offloaded=%ld\n",
	       name, s->fd >= 0, name, s->wrote, name, s->closed, name, s->printed, name, s->marked,
	       name, s->offloaded);
}

int main(void)
{
	printf("available=%d\npreinit_mark_rc=%d\n", RT_OFFLOAD_AVAILABLE() ? 1 : 0,
	       preinit_mark_rc);
	report("preinit", &pre);
	report("ctor", &ctor);
	return 0;
}
