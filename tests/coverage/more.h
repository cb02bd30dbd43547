/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The case tables of issue 13's rows, one file per area (tests/coverage). */
#ifndef RTO_TEST_MORE_H
#define RTO_TEST_MORE_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#ifndef _LARGEFILE64_SOURCE
#define _LARGEFILE64_SOURCE
#endif
#include "families.h"

#include <errno.h>

extern const struct fcase more_desc_cases[], more_path_cases[], more_stdio_cases[],
	more_names_cases[], more_net_cases[], more_process_cases[], more_rtsafe_cases[];
extern const size_t more_desc_count, more_path_count, more_stdio_count, more_names_count,
	more_net_count, more_process_count, more_rtsafe_count;

#endif
