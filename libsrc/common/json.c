/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The JSON writer of the library's and the tools' reports and of bench/
 * (json.h).  No libc call: rto_common calls nothing outside itself
 * (rto_common.h).
 */
#include "json.h"

void rto_json_str(rto_json_put_fn *put, void *sink, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const char *run = s; /* bytes that need no escape, not yet put */

	put(sink, "\"", 1);
	for (;; s++) {
		unsigned char c = (unsigned char)*s;
		int plain = c >= 0x20 && c != 0x7f && c != '"' && c != '\\';

		if (c && plain && s - run < RTO_JSON_PIECE_MAX)
			continue;
		if (s > run)
			put(sink, run, (size_t)(s - run));
		run = s;
		if (!c)
			break;
		if (plain)
			continue; /* a full piece was put; this byte starts the next */
		if (c == '"' || c == '\\') {
			char esc[2] = {'\\', (char)c};
			put(sink, esc, sizeof(esc));
		} else {
			char esc[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
			put(sink, esc, sizeof(esc));
		}
		run = s + 1;
	}
	put(sink, "\"", 1);
}

size_t rto_fmt_u64(char *buf, uint64_t v)
{
	char rev[20];
	size_t n = 0, len = 0;

	do
		rev[n++] = (char)('0' + v % 10);
	while (v /= 10);
	while (n)
		buf[len++] = rev[--n];
	buf[len] = '\0';
	return len;
}

size_t rto_fmt_i64(char *buf, int64_t v)
{
	if (v >= 0)
		return rto_fmt_u64(buf, (uint64_t)v);
	buf[0] = '-';
	return 1 + rto_fmt_u64(buf + 1, -(uint64_t)v); /* INT64_MIN too */
}

static void put_str(struct rto_json *j, const char *s)
{
	size_t n = 0;

	while (s[n])
		n++;
	if (n)
		j->put(j->sink, s, n);
}

/* A newline and the indentation of level d (pretty layout). */
static void newline(struct rto_json *j, int d)
{
	static const char spaces[] = "                ";

	j->put(j->sink, "\n", 1);
	for (int n = 2 * d; n > 0; n -= (int)sizeof(spaces) - 1)
		j->put(j->sink, spaces,
		       n < (int)sizeof(spaces) - 1 ? (size_t)n : sizeof(spaces) - 1);
}

/* The separator before a member, and its key. */
static void item(struct rto_json *j, const char *key)
{
	int d = j->depth;

	if (j->count[d]++)
		j->put(j->sink, ",", 1);
	if (j->pretty) {
		if (!j->inline_[d])
			newline(j, d + 1);
		else if (j->count[d] > 1)
			j->put(j->sink, " ", 1);
	}
	if (key) {
		rto_json_str(j->put, j->sink, key);
		put_str(j, j->pretty ? ": " : ":");
	}
}

static void begin(struct rto_json *j, const char *key, char open, char close, int inline_)
{
	item(j, key);
	j->put(j->sink, &open, 1);
	if (j->depth + 1 < RTO_JSON_DEPTH)
		j->depth++;
	j->count[j->depth] = 0;
	j->close[j->depth] = close;
	j->inline_[j->depth] = (unsigned char)(inline_ || j->inline_[j->depth - 1]);
}

void rto_json_open(struct rto_json *j, rto_json_put_fn *put, void *sink, int pretty)
{
	j->put = put;
	j->sink = sink;
	j->pretty = pretty;
	j->depth = 0;
	j->count[0] = 0;
	j->close[0] = '}';
	j->inline_[0] = 0;
	put(sink, "{", 1);
}

void rto_json_end(struct rto_json *j)
{
	int d = j->depth;

	if (j->pretty && !j->inline_[d] && j->count[d])
		newline(j, d);
	j->put(j->sink, &j->close[d], 1);
	if (d > 0)
		j->depth--;
}

void rto_json_close(struct rto_json *j)
{
	while (j->depth > 0)
		rto_json_end(j);
	rto_json_end(j);
	j->put(j->sink, "\n", 1);
}

void rto_json_obj(struct rto_json *j, const char *key)
{
	begin(j, key, '{', '}', 0);
}

void rto_json_obj_inline(struct rto_json *j, const char *key)
{
	begin(j, key, '{', '}', 1);
}

void rto_json_arr(struct rto_json *j, const char *key, int inline_)
{
	begin(j, key, '[', ']', inline_);
}

void rto_json_string(struct rto_json *j, const char *key, const char *val)
{
	item(j, key);
	if (val)
		rto_json_str(j->put, j->sink, val);
	else
		put_str(j, "null");
}

void rto_json_u64(struct rto_json *j, const char *key, uint64_t val)
{
	char buf[24];

	item(j, key);
	j->put(j->sink, buf, rto_fmt_u64(buf, val));
}

void rto_json_i64(struct rto_json *j, const char *key, int64_t val)
{
	char buf[24];

	item(j, key);
	j->put(j->sink, buf, rto_fmt_i64(buf, val));
}

void rto_json_bool(struct rto_json *j, const char *key, int val)
{
	item(j, key);
	put_str(j, val ? "true" : "false");
}

void rto_json_null(struct rto_json *j, const char *key)
{
	item(j, key);
	put_str(j, "null");
}

void rto_json_raw(struct rto_json *j, const char *key, const char *text)
{
	item(j, key);
	put_str(j, text);
}
