/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* live_read.c: a process's live segment, for stat.c and top.c. */
#ifndef RTO_LIVE_READ_H
#define RTO_LIVE_READ_H

#include "launcher.h"
#include "live_layout.h"

#include <stdio.h>

struct live_handle {
	struct rto_live *seg; /* mapped */
	pid_t pid;
};

/* Map /dev/shm/rtoffload.PID: 0, or -1 with one line in err. */
int live_open(pid_t pid, struct live_handle *h, char *err, size_t len);
void live_close(struct live_handle *h);
/*
 * A consistent copy into *out, fresh when the publisher answered (*fresh
 * 1) or the last one it made (*fresh 0).  0, or -1 when the segment never
 * held still.
 */
int live_snapshot(struct live_handle *h, struct rto_live *out, int *fresh);

/* One function's row: since start, and since the copy `before` (NULL: since start). */
struct live_fn_view {
	const char *name;
	struct rto_live_counts total, interval;
	uint64_t p50, p99, max;		    /* round trips in the interval */
	uint64_t all_p50, all_p99, all_max; /* since start */
};
void live_fn_interval(const struct rto_live *now, const struct rto_live *before, unsigned i,
		      struct live_fn_view *v);

/*
 * stat.c: the tables of copy l; with `before`, the counts and round trips
 * since that copy, secs earlier.  Each line ends with eol.
 */
void live_print(FILE *o, const struct rto_live *l, const struct rto_live *before, double secs,
		int fresh, const char *eol);
/* A process id argument; a usage error otherwise. */
pid_t live_parse_pid(const char *s);

/* The round trips of every function over the interval since `before`. */
void live_total_interval(const struct rto_live *now, const struct rto_live *before, uint64_t *p50,
			 uint64_t *p99, uint64_t *max);

/* stat.c and top.c: `rtoffload stat|top PID ...`; argv[0] is the word. */
int live_stat_main(int argc, char **argv);
int live_top_main(int argc, char **argv);

#endif /* RTO_LIVE_READ_H */
