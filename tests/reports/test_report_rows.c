/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The reports' writer and row model (libsrc/common/json.h, libsrc/common/report_rows.h),
 * byte for byte: the library's stats_file and exit table, `rtoffload stat`
 * and bench's result files are made with them, and their readers (tests,
 * scripts, plots) read those bytes.  Linked to rto_common alone.
 */
#include "json.h"
#include "report_rows.h"

#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

struct buf {
	char text[4096];
	size_t len;
	size_t most; /* the longest piece the sink was given */
};

static void put(void *sink, const char *bytes, size_t len)
{
	struct buf *b = sink;

	cr_assert_gt(len, 0, "an empty piece");
	cr_assert_leq(len, RTO_JSON_PIECE_MAX, "a piece of %zu bytes", len);
	cr_assert_lt(b->len + len, sizeof(b->text));
	memcpy(b->text + b->len, bytes, len);
	b->len += len;
	b->text[b->len] = '\0';
	if (len > b->most)
		b->most = len;
}

Test(json, compact_members_arrays_numbers_and_escapes)
{
	struct buf b = {0};
	struct rto_json j;

	rto_json_open(&j, put, &b, 0);
	rto_json_i64(&j, "pid", 42);
	rto_json_string(&j, "name", "a\"b\\c\n\x7f\xc3\xa9");
	rto_json_string(&j, "none", NULL);
	rto_json_u64(&j, "max", UINT64_MAX);
	rto_json_i64(&j, "min", INT64_MIN);
	rto_json_obj(&j, "o");
	rto_json_bool(&j, "t", 1);
	rto_json_bool(&j, "f", 0);
	rto_json_null(&j, "z");
	rto_json_end(&j);
	rto_json_arr(&j, "a", 0);
	rto_json_u64(&j, NULL, 0);
	rto_json_obj(&j, NULL);
	rto_json_end(&j);
	rto_json_arr(&j, NULL, 1);
	rto_json_end(&j);
	rto_json_end(&j);
	rto_json_raw(&j, "x", "2.5");
	rto_json_close(&j);
	cr_assert_str_eq(b.text, "{\"pid\":42,\"name\":\"a\\\"b\\\\c\\u000a\\u007f\xc3\xa9\","
				 "\"none\":null,\"max\":18446744073709551615,"
				 "\"min\":-9223372036854775808,\"o\":{\"t\":true,\"f\":false,"
				 "\"z\":null},\"a\":[0,{},[]],\"x\":2.5}\n");
}

/* bench's layout: a member a line, indented by two; inline containers on one line. */
Test(json, pretty_layout)
{
	struct buf b = {0};
	struct rto_json j;

	rto_json_open(&j, put, &b, 1);
	rto_json_string(&j, "family", "trap");
	rto_json_obj(&j, "results");
	rto_json_obj_inline(&j, "s");
	rto_json_u64(&j, "n", 5);
	rto_json_u64(&j, "p50_ns", 7);
	rto_json_end(&j);
	rto_json_arr(&j, "h", 1);
	rto_json_arr(&j, NULL, 1);
	rto_json_u64(&j, NULL, 1);
	rto_json_u64(&j, NULL, 2);
	rto_json_end(&j);
	rto_json_end(&j);
	rto_json_obj(&j, "empty");
	rto_json_end(&j);
	rto_json_end(&j);
	rto_json_close(&j);
	cr_assert_str_eq(b.text, "{\n"
				 "  \"family\": \"trap\",\n"
				 "  \"results\": {\n"
				 "    \"s\": {\"n\": 5, \"p50_ns\": 7},\n"
				 "    \"h\": [[1, 2]],\n"
				 "    \"empty\": {}\n"
				 "  }\n"
				 "}\n");
}

/* A long string goes to the sink in pieces it can take. */
Test(json, long_strings_in_pieces)
{
	struct buf b = {0};
	char s[300];

	memset(s, 'x', sizeof(s) - 1);
	s[sizeof(s) - 1] = '\0';
	rto_json_str(put, &b, s);
	cr_assert_eq(b.len, sizeof(s) - 1 + 2);
	cr_assert_leq(b.most, RTO_JSON_PIECE_MAX);
}

static void thread_row(struct rto_row *r)
{
	r->n = 0;
	rto_row_str(r, "thread", "rows-a");
	rto_row_i64(r, "tid", 1234);
	rto_row_i64(r, "exited", 1);
	rto_row_u64(r, "marked_ns", 26464094);
	rto_row_u64(r, "offloaded", 2);
	rto_row_u64(r, "pool_high_bytes", 1025);
	rto_row_str(r, "label", "text only");
	rto_row_text_only(r);
}

/* Every cell under its key, in order; a text-only cell is not in the JSON. */
Test(rows, json_has_every_cell_but_the_text_only_ones)
{
	struct buf b = {0};
	struct rto_json j;
	struct rto_row r;
	static const uint64_t hist[] = {1, 0, 7};

	thread_row(&r);
	rto_row_list(&r, "hist", hist, 3);
	rto_json_open(&j, put, &b, 0);
	rto_json_arr(&j, "threads", 0);
	rto_json_row(&j, NULL, &r);
	rto_json_end(&j);
	rto_json_close(&j);
	cr_assert_str_eq(b.text, "{\"threads\":[{\"thread\":\"rows-a\",\"tid\":1234,\"exited\":1,"
				 "\"marked_ns\":26464094,\"offloaded\":2,\"pool_high_bytes\":1025,"
				 "\"hist\":[1,0,7]}]}\n");
}

/* Columns as printf's %-16s %8d %14lu would lay them out, scaled, flagged, labelled. */
Test(rows, text_columns_and_heads)
{
	static const struct rto_col cols[] = {
		{"thread", "thread", 16, RTO_COL_LEFT, 0},
		{"tid", "tid", 8, 0, 0},
		{"marked_ns", "marked_us", 14, 0, 1000},
		{"pool_high_bytes", "pool_high_kb", 13, RTO_COL_CEIL, 1024},
		{"missing", "missing", 4, 0, 0},
		{"exited", " (exited)", 0, RTO_COL_FLAG, 0},
		{"offloaded", "offloaded", 0, RTO_COL_LABEL, 0},
	};
	struct buf b = {0};
	struct rto_row r;

	thread_row(&r);
	rto_text_heads(put, &b, cols, 7, 1);
	cr_assert_str_eq(b.text, "thread                tid      marked_us  pool_high_kb missing");
	b.len = 0;
	rto_text_cols(put, &b, &r, cols, 7, 1);
	cr_assert_str_eq(b.text, "rows-a               1234          26464             2     "
				 " (exited) offloaded 2");
	b.len = 0;
	rto_text_cols(put, &b, &r, cols, 1, 0); /* not first: a space before it too */
	cr_assert_str_eq(b.text, " rows-a          ");
}

/* A sentence's {key} are the row's cells; a list is " N" per count; an unknown key is empty. */
Test(rows, text_lines)
{
	static const uint64_t hist[] = {0, 3};
	struct buf b = {0};
	struct rto_row r;

	thread_row(&r);
	rto_row_list(&r, "hist", hist, 2);
	rto_text_line(put, &b, &r,
		      "{thread} ({tid}): {offloaded} offloaded, {label}; late:{hist};{nope}.\n");
	cr_assert_str_eq(b.text, "rows-a (1234): 2 offloaded, text only; late: 0 3;.\n");
}

/* A row takes RTO_ROW_CELLS cells; more are dropped, not written past its end. */
Test(rows, cells_past_the_end_are_dropped)
{
	struct rto_row r = {.n = 0};

	for (unsigned i = 0; i < RTO_ROW_CELLS + 3; i++)
		rto_row_u64(&r, "k", i);
	rto_row_text_only(&r);
	cr_assert_eq(r.n, RTO_ROW_CELLS);
	cr_assert_eq(r.cell[RTO_ROW_CELLS - 1].v.u, RTO_ROW_CELLS - 1);
	cr_assert_not_null(rto_row_find(&r, "k"));
	cr_assert_null(rto_row_find(&r, "kk"));
}
