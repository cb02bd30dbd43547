/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Issue 13's rows, family by family: each case direct and marked, same
 * result, errno and effects (tests/harness/families.c), offloaded or local as
 * calls.tbl says.  The cases are in families_*.c of this folder.
 */
#include "more.h"

#include <criterion/criterion.h>

Test(families_more, desc, .timeout = TEST_TIMEOUT)
{
	check_family("desc (issue 13)", more_desc_cases, more_desc_count, 0);
}

Test(families_more, path, .timeout = TEST_TIMEOUT)
{
	check_family("path (issue 13)", more_path_cases, more_path_count, 0);
}

Test(families_more, stdio, .timeout = TEST_TIMEOUT)
{
	check_family("stdio (issue 13)", more_stdio_cases, more_stdio_count, 0);
}

Test(families_more, names, .timeout = TEST_TIMEOUT)
{
	check_family("names (issue 13)", more_names_cases, more_names_count, 0);
}

Test(families_more, net, .timeout = TEST_TIMEOUT)
{
	check_family("net (issue 13)", more_net_cases, more_net_count, 0);
}

Test(families_more, process, .timeout = TEST_TIMEOUT)
{
	check_family("process (issue 13)", more_process_cases, more_process_count, 0);
}

Test(families_more, rtsafe, .timeout = TEST_TIMEOUT)
{
	check_family("rtsafe (issue 13)", more_rtsafe_cases, more_rtsafe_count, 0);
}
