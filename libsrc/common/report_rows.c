/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The reports' row model and its two renderings (report_rows.h).  No libc
 * call: rto_common calls nothing outside itself (rto_common.h).
 */
#include "report_rows.h"

/* The new cell, or NULL past RTO_ROW_CELLS. */
static struct rto_cell *add(struct rto_row *r, const char *key, enum rto_cell_kind kind)
{
	if (r->n >= RTO_ROW_CELLS)
		return 0;
	struct rto_cell *c = &r->cell[r->n++];

	c->key = key;
	c->kind = (unsigned char)kind;
	c->flags = 0;
	c->n = 0;
	return c;
}

void rto_row_u64(struct rto_row *r, const char *key, uint64_t v)
{
	struct rto_cell *c = add(r, key, RTO_CELL_U64);

	if (c)
		c->v.u = v;
}

void rto_row_i64(struct rto_row *r, const char *key, int64_t v)
{
	struct rto_cell *c = add(r, key, RTO_CELL_I64);

	if (c)
		c->v.i = v;
}

void rto_row_str(struct rto_row *r, const char *key, const char *s)
{
	struct rto_cell *c = add(r, key, RTO_CELL_STR);

	if (c)
		c->v.s = s;
}

void rto_row_list(struct rto_row *r, const char *key, const uint64_t *list, unsigned n)
{
	struct rto_cell *c = add(r, key, RTO_CELL_LIST);

	if (c) {
		c->v.list = list;
		c->n = n;
	}
}

void rto_row_text_only(struct rto_row *r)
{
	if (r->n)
		r->cell[r->n - 1].flags |= RTO_CELL_TEXT_ONLY;
}

static int same(const char *a, const char *b, unsigned blen)
{
	unsigned i = 0;

	for (; i < blen; i++)
		if (a[i] != b[i])
			return 0;
	return a[i] == '\0';
}

static unsigned len_of(const char *s)
{
	unsigned n = 0;

	while (s[n])
		n++;
	return n;
}

static const struct rto_cell *find(const struct rto_row *r, const char *key, unsigned len)
{
	for (unsigned i = 0; i < r->n; i++)
		if (same(r->cell[i].key, key, len))
			return &r->cell[i];
	return 0;
}

const struct rto_cell *rto_row_find(const struct rto_row *r, const char *key)
{
	return find(r, key, len_of(key));
}

/* ---- JSON ------------------------------------------------------------------ */

void rto_json_cells(struct rto_json *j, const struct rto_row *r)
{
	for (unsigned i = 0; i < r->n; i++) {
		const struct rto_cell *c = &r->cell[i];

		if (c->flags & RTO_CELL_TEXT_ONLY)
			continue;
		switch (c->kind) {
		case RTO_CELL_U64:
			rto_json_u64(j, c->key, c->v.u);
			break;
		case RTO_CELL_I64:
			rto_json_i64(j, c->key, c->v.i);
			break;
		case RTO_CELL_STR:
			rto_json_string(j, c->key, c->v.s);
			break;
		case RTO_CELL_LIST:
			rto_json_arr(j, c->key, 1);
			for (unsigned k = 0; k < c->n; k++)
				rto_json_u64(j, 0, c->v.list[k]);
			rto_json_end(j);
			break;
		}
	}
}

void rto_json_row(struct rto_json *j, const char *key, const struct rto_row *r)
{
	rto_json_obj(j, key);
	rto_json_cells(j, r);
	rto_json_end(j);
}

/* ---- text ------------------------------------------------------------------ */

/* s (len bytes), in pieces a sink takes. */
static void put_n(rto_json_put_fn *put, void *sink, const char *s, unsigned len)
{
	while (len) {
		unsigned n = len < RTO_JSON_PIECE_MAX ? len : RTO_JSON_PIECE_MAX;
		put(sink, s, n);
		s += n;
		len -= n;
	}
}

static void pad(rto_json_put_fn *put, void *sink, unsigned n)
{
	static const char spaces[] = "                                ";

	while (n) {
		unsigned k = n < sizeof(spaces) - 1 ? n : (unsigned)sizeof(spaces) - 1;
		put(sink, spaces, k);
		n -= k;
	}
}

/* s in width columns: left- or right-aligned, never cut (printf's %-*s, %*s). */
static void field(rto_json_put_fn *put, void *sink, const char *s, unsigned width, int left)
{
	unsigned len = len_of(s);

	if (!left && len < width)
		pad(put, sink, width - len);
	put_n(put, sink, s, len);
	if (left && len < width)
		pad(put, sink, width - len);
}

/* A cell's value as text (a list: its counts, each after a space). */
static const char *value_of(const struct rto_cell *c, const struct rto_col *col, char *buf)
{
	if (!c)
		return "";
	switch (c->kind) {
	case RTO_CELL_U64: {
		uint64_t v = c->v.u, d = col && col->div > 1 ? col->div : 1;
		rto_fmt_u64(buf, col && (col->flags & RTO_COL_CEIL) ? (v + d - 1) / d : v / d);
		return buf;
	}
	case RTO_CELL_I64:
		rto_fmt_i64(buf, c->v.i);
		return buf;
	case RTO_CELL_STR:
		return c->v.s ? c->v.s : "";
	}
	return "";
}

static int nonzero(const struct rto_cell *c)
{
	return c && (c->kind == RTO_CELL_STR ? c->v.s && c->v.s[0] : c->v.u != 0);
}

static void put_list(rto_json_put_fn *put, void *sink, const struct rto_cell *c)
{
	char buf[24];

	for (unsigned k = 0; k < c->n; k++) {
		put(sink, " ", 1);
		put(sink, buf, rto_fmt_u64(buf, c->v.list[k]));
	}
}

void rto_text_cols(rto_json_put_fn *put, void *sink, const struct rto_row *r,
		   const struct rto_col *cols, unsigned n, int first)
{
	char buf[24];

	for (unsigned i = 0; i < n; i++) {
		const struct rto_col *col = &cols[i];
		const struct rto_cell *c = rto_row_find(r, col->key);

		if (col->flags & RTO_COL_FLAG) {
			if (nonzero(c))
				put_n(put, sink, col->head, len_of(col->head));
			continue;
		}
		if (i || !first)
			put(sink, " ", 1);
		if (col->flags & RTO_COL_LABEL) {
			put_n(put, sink, col->head, len_of(col->head));
			put(sink, " ", 1);
		}
		if (c && c->kind == RTO_CELL_LIST)
			put_list(put, sink, c);
		else
			field(put, sink, value_of(c, col, buf),
			      col->flags & RTO_COL_LABEL ? 0 : col->width,
			      col->flags & RTO_COL_LEFT);
	}
}

void rto_text_heads(rto_json_put_fn *put, void *sink, const struct rto_col *cols, unsigned n,
		    int first)
{
	for (unsigned i = 0; i < n; i++) {
		if (cols[i].flags & (RTO_COL_FLAG | RTO_COL_LABEL))
			continue;
		if (i || !first)
			put(sink, " ", 1);
		field(put, sink, cols[i].head, cols[i].width, cols[i].flags & RTO_COL_LEFT);
	}
}

void rto_text_line(rto_json_put_fn *put, void *sink, const struct rto_row *r, const char *fmt)
{
	char buf[24];

	while (*fmt) {
		const char *run = fmt;

		while (*fmt && *fmt != '{')
			fmt++;
		put_n(put, sink, run, (unsigned)(fmt - run));
		if (!*fmt)
			break;
		const char *key = ++fmt;
		while (*fmt && *fmt != '}')
			fmt++;
		const struct rto_cell *c = find(r, key, (unsigned)(fmt - key));
		if (c && c->kind == RTO_CELL_LIST)
			put_list(put, sink, c);
		else
			field(put, sink, value_of(c, 0, buf), 0, 1);
		if (*fmt)
			fmt++;
	}
}
