/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The one JSON writer (json.c, part of rto_common: rto_common.h) of the
 * library's stats_file, `rtoffload stat --json` (tools/) and the
 * benchmarks' result files (bench/).  It writes through the caller's sink,
 * so it does no I/O and allocates nothing itself: the library's exit
 * report writes into its own buffer, the tools into a FILE.  Numbers are
 * formatted here too (rto_common calls no libc); a caller with a number
 * of its own form (bench's doubles) puts it with rto_json_raw().
 *
 * Two layouts: compact (no whitespace: the library and the tools, whose
 * consumers read them byte for byte in tests) and pretty (bench: a member
 * per line, indented by two, inline arrays on one line).
 *
 * Concurrency: no state but the caller's struct rto_json; reentrant and
 * thread-safe if the sink is.
 */
#ifndef RTO_JSON_H
#define RTO_JSON_H

#include "rto_common.h"

#include <stddef.h>
#include <stdint.h>

/* Appends len bytes (never 0, at most RTO_JSON_PIECE_MAX) to the sink. */
typedef void rto_json_put_fn(void *sink, const char *bytes, size_t len);

#define RTO_JSON_PIECE_MAX 64

/*
 * s as a JSON string, quotes included: '"' and '\\' escaped with a
 * backslash, control bytes and DEL as \u00XX, every other byte (UTF-8
 * included) as it is.
 */
RTO_HIDDEN void rto_json_str(rto_json_put_fn *put, void *sink, const char *s);

/* Nesting the writer follows; deeper is a caller's bug (members go to the deepest). */
#define RTO_JSON_DEPTH 16

struct rto_json {
	rto_json_put_fn *put;
	void *sink;
	int pretty;
	int depth;
	unsigned count[RTO_JSON_DEPTH]; /* members written at each level */
	char close[RTO_JSON_DEPTH];
	unsigned char inline_[RTO_JSON_DEPTH]; /* pretty: on one line */
};

/* Starts a document: its root object is open. */
RTO_HIDDEN void rto_json_open(struct rto_json *j, rto_json_put_fn *put, void *sink, int pretty);
/* Closes what is open, the root too, and ends the line. */
RTO_HIDDEN void rto_json_close(struct rto_json *j);

/* Every member below takes its key; NULL for an element of an array. */
RTO_HIDDEN void rto_json_obj(struct rto_json *j, const char *key);
/* An object the pretty layout keeps on one line (compact: rto_json_obj). */
RTO_HIDDEN void rto_json_obj_inline(struct rto_json *j, const char *key);
/* inline_: pretty layout keeps the array on one line (compact is always). */
RTO_HIDDEN void rto_json_arr(struct rto_json *j, const char *key, int inline_);
/* Closes the innermost object or array. */
RTO_HIDDEN void rto_json_end(struct rto_json *j);
/* A string (escaped: rto_json_str), or null for NULL. */
RTO_HIDDEN void rto_json_string(struct rto_json *j, const char *key, const char *val);
RTO_HIDDEN void rto_json_u64(struct rto_json *j, const char *key, uint64_t val);
RTO_HIDDEN void rto_json_i64(struct rto_json *j, const char *key, int64_t val);
RTO_HIDDEN void rto_json_bool(struct rto_json *j, const char *key, int val);
RTO_HIDDEN void rto_json_null(struct rto_json *j, const char *key);
/* text as it is (a number the caller formatted); at most RTO_JSON_PIECE_MAX bytes. */
RTO_HIDDEN void rto_json_raw(struct rto_json *j, const char *key, const char *text);

/* v in decimal into buf (at least 21 bytes, NUL-terminated); its length. */
RTO_HIDDEN size_t rto_fmt_u64(char *buf, uint64_t v);
RTO_HIDDEN size_t rto_fmt_i64(char *buf, int64_t v);

#endif /* RTO_JSON_H */
