/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The reports' row model (report_rows.c, part of rto_common: rto_common.h).
 * A report is made of rows; a row is a list of named cells (a count, a
 * signed number, a string or a list of counts), filled once from the
 * counters.  The same row then renders as JSON (each cell a member under
 * its key: rto_json_row, through json.h's writer) and as text, where the
 * caller chooses the cells and their layout by key: as columns
 * (rto_text_cols, struct rto_col) or in a sentence (rto_text_line, whose
 * "{key}" are the cells).  So a count has one name and one value in both
 * renderings, and a renderer has no counter of its own.
 *
 * A cell marked RTO_CELL_TEXT_ONLY is for the text only (a row's label,
 * an option's value quoted in a sentence): the JSON keys stay as they
 * were documented (docs/OPTIONS.md, stats_file).
 *
 * Concurrency: no state; rows belong to their caller.  Text goes through
 * the caller's sink (json.h's rto_json_put_fn): no I/O, no allocation, no
 * libc call.
 */
#ifndef RTO_REPORT_ROWS_H
#define RTO_REPORT_ROWS_H

#include "json.h"

enum rto_cell_kind { RTO_CELL_U64, RTO_CELL_I64, RTO_CELL_STR, RTO_CELL_LIST };

#define RTO_CELL_TEXT_ONLY 1u

struct rto_cell {
	const char *key;
	unsigned char kind, flags;
	unsigned n; /* RTO_CELL_LIST: its length */
	union {
		uint64_t u;
		int64_t i;
		const char *s; /* the caller's, alive while the row renders */
		const uint64_t *list;
	} v;
};

#define RTO_ROW_CELLS 24

struct rto_row {
	unsigned n;
	struct rto_cell cell[RTO_ROW_CELLS];
};

/* Appends a cell (past RTO_ROW_CELLS: dropped, a caller's bug). */
RTO_HIDDEN void rto_row_u64(struct rto_row *r, const char *key, uint64_t v);
RTO_HIDDEN void rto_row_i64(struct rto_row *r, const char *key, int64_t v);
RTO_HIDDEN void rto_row_str(struct rto_row *r, const char *key, const char *s);
RTO_HIDDEN void rto_row_list(struct rto_row *r, const char *key, const uint64_t *list, unsigned n);
/* The cell last appended is for the text only. */
RTO_HIDDEN void rto_row_text_only(struct rto_row *r);
/* The cell named key, or NULL. */
RTO_HIDDEN const struct rto_cell *rto_row_find(const struct rto_row *r, const char *key);

/* The row's cells as members of the object or array open in j. */
RTO_HIDDEN void rto_json_cells(struct rto_json *j, const struct rto_row *r);
/* The row as an object: key's member (NULL: an element of an array). */
RTO_HIDDEN void rto_json_row(struct rto_json *j, const char *key, const struct rto_row *r);

/* A text column: the cell named key, padded to width (a header says head). */
struct rto_col {
	const char *key;
	const char *head;
	unsigned char width;
	unsigned char flags; /* RTO_COL_* */
	unsigned short div;  /* a count shown divided by it (0, 1: as it is) */
};

#define RTO_COL_LEFT  1u /* left-aligned (names) */
#define RTO_COL_CEIL  2u /* the division rounds up */
#define RTO_COL_LABEL 4u /* no padding: " HEAD VALUE" (a count named in a line) */
#define RTO_COL_FLAG  8u /* HEAD as it is when the count is not 0, nothing else */

/*
 * Columns of a row, each after a space; with `first`, the first column
 * starts the line without one.  A cell the row lacks shows as empty.
 */
RTO_HIDDEN void rto_text_cols(rto_json_put_fn *put, void *sink, const struct rto_row *r,
			      const struct rto_col *cols, unsigned n, int first);
/* The columns' heads, laid out as rto_text_cols lays out their cells. */
RTO_HIDDEN void rto_text_heads(rto_json_put_fn *put, void *sink, const struct rto_col *cols,
			       unsigned n, int first);
/*
 * fmt with each "{key}" replaced by that cell of r (a list: " N" per
 * count); other bytes as they are.
 */
RTO_HIDDEN void rto_text_line(rto_json_put_fn *put, void *sink, const struct rto_row *r,
			      const char *fmt);

#endif /* RTO_REPORT_ROWS_H */
