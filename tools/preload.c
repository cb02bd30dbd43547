/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Which librtoffload to preload, and the two environment variables that
 * carry it and its options into the program and, through exec and fork,
 * into every program it starts.
 */
#include "launcher.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ld.so splits LD_PRELOAD at spaces and colons alike. */
#define PRELOAD_SEPARATORS " :"

/*
 * path made absolute with its directory resolved but its own name kept:
 * LD_PRELOAD then names librtoffload.so.0, the SONAME link, rather than
 * the versioned file behind it.  0, or an errno value.
 */
static int absolute(const char *path, char *out, size_t len)
{
	char dir[PATH_MAX], real[PATH_MAX];
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	struct stat st;

	if (slash)
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path + 1), path);
	else
		snprintf(dir, sizeof(dir), ".");
	if (*base == '\0')
		return EISDIR;
	if (!realpath(dir, real))
		return errno;
	if (snprintf(out, len, "%s/%s", strcmp(real, "/") ? real : "", base) >= (int)len)
		return ENAMETOOLONG;
	if (stat(out, &st) < 0)
		return errno;
	return S_ISREG(st.st_mode) ? 0 : EISDIR;
}

static int try_path(struct library *lib, const char *path, const char *how)
{
	int err = absolute(path, lib->path, sizeof(lib->path));

	if (err == 0)
		lib->how = how;
	return err;
}

/* The directory of this executable, symlinks resolved by the kernel. */
static int exe_dir(char *buf, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", buf, len - 1);
	char *slash;

	if (n <= 0)
		return -1;
	buf[n] = '\0';
	slash = strrchr(buf, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	return 0;
}

static int try_beside(struct library *lib, const char *dir, const char *rel, const char *how)
{
	char path[PATH_MAX];

	if (snprintf(path, sizeof(path), "%s/%s/%s", dir, rel, RTO_LIBRARY_NAME) >=
	    (int)sizeof(path))
		return ENAMETOOLONG;
	return try_path(lib, path, how);
}

/*
 * RTOFFLOAD_LIBRARY, else the build tree (the launcher is built in a
 * subdirectory of the library's), else an installation relative to the
 * launcher (a prefix moved after the build), else the configured one.
 */
int library_find(struct library *lib, char *err, size_t len)
{
	const char *env = getenv("RTOFFLOAD_LIBRARY");
	char dir[PATH_MAX];
	int e;

	if (env && *env) {
		e = try_path(lib, env, "from RTOFFLOAD_LIBRARY");
		if (e == 0)
			return 0;
		snprintf(err, len, "RTOFFLOAD_LIBRARY=%s: %s", env,
			 e == EISDIR ? "not a regular file" : strerror(e));
		return -1;
	}
	if (exe_dir(dir, sizeof(dir)) == 0 &&
	    (try_beside(lib, dir, RTO_BUILD_LIBDIR, "build tree, beside this launcher") == 0 ||
	     try_beside(lib, dir, RTO_LIBDIR_FROM_BINDIR, "installed beside this launcher") == 0))
		return 0;
	if (try_path(lib, RTO_INSTALLED_LIBDIR "/" RTO_LIBRARY_NAME, "installed") == 0)
		return 0;
	snprintf(err, len,
		 "cannot find " RTO_LIBRARY_NAME
		 " beside this launcher nor in " RTO_INSTALLED_LIBDIR
		 "; set RTOFFLOAD_LIBRARY to its path");
	return -1;
}

static int same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	if (strcmp(a, b) == 0)
		return 1;
	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

static int is_rtoffload(const char *path)
{
	const char *slash = strrchr(path, '/');

	return strncmp(slash ? slash + 1 : path, "librtoffload.so", 15) == 0;
}

/* A sanitizer's runtime (GCC's libasan.so.8, libtsan.so.2..., clang's libclang_rt.asan-*). */
static int is_sanitizer_runtime(const char *path)
{
	const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
	const char *so = strstr(base, "san.so");

	if (strncmp(base, "libclang_rt.", 12) == 0)
		return strstr(base, "san") != NULL;
	return strncmp(base, "lib", 3) == 0 && so && so - base <= 6;
}

/* The next LD_PRELOAD entry of *p, malloc'd, or NULL at the end. */
static char *next_entry(const char **p)
{
	const char *s = *p + strspn(*p, PRELOAD_SEPARATORS);
	size_t n = strcspn(s, PRELOAD_SEPARATORS);

	*p = s + n;
	return n ? strndup(s, n) : NULL;
}

static int preloaded(const char *old, const char *lib)
{
	int found = 0;
	char *e;

	while (!found && (e = next_entry(&old))) {
		found = same_file(e, lib);
		free(e);
	}
	return found;
}

/*
 * Ours goes first, so its wrappers are the ones a program's calls reach
 * and another preload (a malloc, a fakeroot) sits between it and libc.
 * Only a sanitizer's runtime stays ahead of it: it must come before
 * anything it instruments (a library built with -fsanitize).  Where the
 * user has already placed ours, it stays where they put it.  A second,
 * different librtoffload is dropped: two copies would each start helpers
 * and each wrap the same calls.
 */
char *preload_compose(const char *lib, const char *old)
{
	const char *p = old ? old : "";
	int placed = !preloaded(p, lib); /* 1: ours is already written */
	char *out = NULL, *e;
	size_t n;
	FILE *f = open_memstream(&out, &n);

	if (!f)
		return NULL;
	for (const char *q = p; (e = next_entry(&q)); free(e))
		if (is_sanitizer_runtime(e))
			fprintf(f, "%s%s", ftell(f) ? ":" : "", e);
	if (placed)
		fprintf(f, "%s%s", ftell(f) ? ":" : "", lib);
	while ((e = next_entry(&p))) {
		int mine = same_file(e, lib);

		if (is_sanitizer_runtime(e))
			; /* already written */
		else if (!mine && is_rtoffload(e))
			warn_line("LD_PRELOAD: dropping %s, another librtoffload than %s", e, lib);
		else if (!mine || !placed)
			fprintf(f, "%s%s", ftell(f) ? ":" : "", e);
		placed |= mine;
		free(e);
	}
	return fclose(f) == 0 ? out : NULL;
}

static void copy_value(const char *v, const char *end, char *out, size_t len)
{
	if (end - v >= 2 && v[0] == '"' && end[-1] == '"') {
		v++;
		end--;
	}
	snprintf(out, len, "%.*s", (int)(end - v), v);
}

int options_get(const char *opts, const char *key, char *val, size_t len)
{
	size_t klen = strlen(key);
	int found = 0;

	for (const char *s = opts ? opts : "", *end; *s; s = *end ? end + 1 : end) {
		end = rto_options_segment_end(s); /* the library's rule */
		if ((size_t)(end - s) > klen && strncmp(s, key, klen) == 0 && s[klen] == '=') {
			found = 1;
			if (val)
				copy_value(s + klen + 1, end, val, len);
		}
	}
	return found;
}

/*
 * Only a value that holds a ':' (mark=name:GLOB, a stats_file path) is
 * quoted: the others read the same to any version of the library.
 */
static void put_key(FILE *f, const char *key, const char *val)
{
	long pos = ftell(f);
	int sep = pos > 0; /* after the old value, or after our previous key */

	fprintf(f, strchr(val, ':') ? "%s%s=\"%s\"" : "%s%s=%s", sep ? ":" : "", key, val);
}

/*
 * The old value comes first: the library takes the last value of a
 * repeated key, so a flag overrides what the environment said.
 */
char *options_compose(const char *old, const struct launch *l)
{
	char *out = NULL;
	char workers[16];
	size_t n, oldlen = old ? strlen(old) : 0;
	FILE *f = open_memstream(&out, &n);

	if (!f)
		return NULL;
	/* Drop a trailing ':' so the keys do not add an empty segment. */
	fprintf(f, "%.*s", (int)(oldlen && old[oldlen - 1] == ':' ? oldlen - 1 : oldlen),
		old ? old : "");
	if (l->rt_cpus)
		put_key(f, "rt_cpus", l->rt_cpus);
	if (l->helper_cpus)
		put_key(f, "helper_cpus", l->helper_cpus);
	if (l->workers) {
		snprintf(workers, sizeof(workers), "%u", l->workers);
		put_key(f, "workers", workers);
	}
	if (l->mode)
		put_key(f, "mode", l->mode);
	if (l->mark || !options_get(old, "mark", NULL, 0))
		put_key(f, "mark", l->mark ? l->mark : "rt");
	if (l->stats)
		put_key(f, "stats", "1");
	if (l->stats_file)
		put_key(f, "stats_file", l->stats_file);
	if (l->verbose)
		put_key(f, "verbosity", l->verbose > 1 ? "2" : "1");
	return fclose(f) == 0 ? out : NULL;
}
