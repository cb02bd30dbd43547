/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The census workloads: ordinary libc work a realtime thread is tempted to
 * do, one small job each, with what it calls.  Shared by the census
 * (test_census.c) and, for issue 12, a backstop test: each job is plain C
 * with no criterion and no assertion, and reports only whether its calls
 * gave the expected results.
 */
#ifndef RTO_TEST_CENSUS_WORKLOADS_H
#define RTO_TEST_CENSUS_WORKLOADS_H

#include <limits.h>

struct census_fx {
	char dir[PATH_MAX];  /* a scratch directory of its own */
	char text[PATH_MAX]; /* dir/text: "alpha 1\nbeta 2\ngamma 3\n" */
};

struct census_work {
	const char *name;  /* what it does */
	const char *calls; /* the libc calls it makes, as the user writes them */
	/* 0 when every call gave what it should, else a line number (nonzero). */
	int (*run)(const struct census_fx *fx);
	/*
	 * Why this workload may reach the kernel on the marked thread at its
	 * first use (a calls.tbl row's note), or NULL: never.
	 */
	const char *first_use;
};

extern const struct census_work census_works[];
extern const unsigned census_nworks;
/* What no wrapper catches: raw syscall()s, libc's internal calls (backstop_works.c). */
extern const struct census_work census_backstop_works[];
extern const unsigned census_backstop_nworks;

/* The fixture (unmarked thread): 0, or -1. */
int census_setup(struct census_fx *fx, const char *dir);

#endif
