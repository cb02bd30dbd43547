/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * JSON strings (json.c, part of rto_common: rto_common.h): the one
 * escaper of the library's stats_file, `rtoffload stat --json` (tools/)
 * and the benchmarks' result files (bench/).  It writes through the
 * caller's sink, so it does no I/O and allocates nothing itself: the
 * library's exit report writes into its own buffer, the tools into a FILE.
 *
 * Concurrency: no state; reentrant and thread-safe if the sink is.
 */
#ifndef RTO_JSON_H
#define RTO_JSON_H

#include "rto_common.h"

#include <stddef.h>

/* Appends len bytes (never 0, at most RTO_JSON_PIECE_MAX) to the sink. */
typedef void rto_json_put_fn(void *sink, const char *bytes, size_t len);

#define RTO_JSON_PIECE_MAX 64

/*
 * s as a JSON string, quotes included: '"' and '\\' escaped with a
 * backslash, control bytes and DEL as \u00XX, every other byte (UTF-8
 * included) as it is.
 */
RTO_HIDDEN void rto_json_str(rto_json_put_fn *put, void *sink, const char *s);

#endif /* RTO_JSON_H */
