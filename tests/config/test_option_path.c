/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A PATH option's "%p" (stats_file=, trace_file=): each one becomes the
 * pid, so that every process of a tree writes its own file
 * (libsrc/common/options.h rto_options_path).  Linked to rto_common alone.
 */
#include "options.h"

#include <criterion/criterion.h>
#include <string.h>

static const char *path(const char *pattern, int pid, size_t len, int *ret)
{
	static char out[256];

	memset(out, 'x', sizeof(out));
	*ret = rto_options_path(pattern, pid, out, len);
	return out;
}

Test(option_path, each_percent_p_is_the_pid)
{
	int ret;

	cr_expect_str_eq(path("/tmp/st.%p.json", 4242, 256, &ret), "/tmp/st.4242.json");
	cr_expect_eq(ret, 0);
	cr_expect_str_eq(path("%p/%p", 7, 256, &ret), "7/7");
	cr_expect_str_eq(path("/tmp/plain", 1, 256, &ret), "/tmp/plain");
	cr_expect_str_eq(path("/tmp/a%", 1, 256, &ret), "/tmp/a%", "a lone %% stays");
	cr_expect_str_eq(path("/tmp/%d", 1, 256, &ret), "/tmp/%d", "only %%p is expanded");
	cr_expect_str_eq(path("%p", 2147483647, 256, &ret), "2147483647");
}

Test(option_path, a_path_that_does_not_fit_is_refused)
{
	int ret;

	path("/tmp/%p", 12345, 11, &ret); /* "/tmp/12345" and its NUL: 11 */
	cr_expect_eq(ret, 0);
	path("/tmp/%p", 12345, 10, &ret);
	cr_expect_eq(ret, -1);
	path("", 1, 0, &ret);
	cr_expect_eq(ret, -1, "no room for the NUL");
	cr_expect_str_eq(path("", 1, 1, &ret), "");
}
