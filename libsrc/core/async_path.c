/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * async_path=: the prefixes whose files' writes go through the async ring,
 * and the match of a descriptor's path against them (fdclass.c, policy.c).
 * Set once at load (async.c's init), read-only afterwards.
 */
#include "async_opts.h"
#include "async_path.h"
#include "real.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#define MAX_PATHS 16 /* options.c allows no more */

int rto_async_paths;
static char prefixes[MAX_PATHS][PATH_MAX];
static size_t prefix_len[MAX_PATHS];

/*
 * Each prefix as the kernel will show the files under it: resolved when it
 * exists (symlinks, "..": /proc/self/fd shows the real path), else as
 * given; trailing '/' dropped ("/" stays).
 */
void rto_async_path_init(void)
{
	const char *s = rto_async_path_list();

	for (int i = 0; *s && i < MAX_PATHS; i++) {
		size_t n = strcspn(s, ",");
		char given[PATH_MAX];
		snprintf(given, sizeof(given), "%.*s", (int)n, s);
		if (!rto_real_realpath(given, prefixes[i]))
			snprintf(prefixes[i], sizeof(prefixes[i]), "%s", given);
		size_t len = strlen(prefixes[i]);
		while (len > 1 && prefixes[i][len - 1] == '/')
			prefixes[i][--len] = '\0';
		prefix_len[i] = len;
		rto_async_paths = i + 1;
		s += n + (s[n] == ',');
	}
}

int rto_async_path_match(const char *path)
{
	for (int i = 0; i < rto_async_paths; i++) {
		size_t n = prefix_len[i];
		if (strncmp(path, prefixes[i], n) == 0 &&
		    (path[n] == '\0' || path[n] == '/' || n == 1))
			return 1;
	}
	return 0;
}
