/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The printf family.  Every variant funnels into vfprintf or
 * __vfprintf_chk with a va_list.  On x86-64 and aarch64 a va_list points
 * into the caller's frame, which stays alive while the caller waits, so
 * the worker can read the arguments where they are: no copy.
 *
 * A write that the stream's buffer takes whole is the exception
 * (calls.tbl "buffered:format"): formatted on the caller into a line on
 * its stack, it is put into the buffer there, under the stream's lock
 * taken as the call takes it (decide.h RTO_NEED_BUFFER, stdio_buffer.c):
 * a copy, no kernel entry.  Only for a fully buffered byte stream, a line
 * shorter than RTO_PRINTF_LINE, and a format whose conversions stay in
 * memory (vformat.h rto_vformat_in_memory()).  A helper formats the rest, as
 * before.
 */
#include "shims_prelude.h"
#include "callsite.h"
#include "stdio_buffer.h"
#include "vformat.h"

#include <string.h>

#define RTO_PRINTF_LINE 512

struct rto_args_printf {
	int ret;
	int flag; /* fortify level for __*_chk; -1 for the plain calls */
	FILE *f;
	const char *fmt;
	va_list *ap;
	/* The call formatted on the caller (NULL: not), n bytes; self: that caller's. */
	const char *line;
	int n;
	const struct rto_thread *self;
};

static void run_printf(void *p)
{
	struct rto_args_printf *a = p;
	/* On the caller that formatted it (the buffer's room, or a verdict to run here). */
	if (a->line && a->self == &rto_self) {
		size_t n = (size_t)a->n;
		a->ret = rto_real_fwrite(a->line, 1, n, a->f) == n ? a->n : -1;
		return;
	}
	if (a->flag < 0)
		a->ret = rto_real_vfprintf(a->f, a->fmt, *a->ap);
	else
		a->ret = rto_real___vfprintf_chk(a->f, a->flag, a->fmt, *a->ap);
}

#define RTO_RUN_ALIAS(fname)                                                \
	void rto_run_##fname(void *p) __attribute__((alias("run_printf"))); \
	RTO_FN_HAND(fname)
RTO_RUN_ALIAS(printf);
RTO_RUN_ALIAS(fprintf);
RTO_RUN_ALIAS(vprintf);
RTO_RUN_ALIAS(vfprintf);
RTO_RUN_ALIAS(__printf_chk);
RTO_RUN_ALIAS(__fprintf_chk);
RTO_RUN_ALIAS(__vprintf_chk);
RTO_RUN_ALIAS(__vfprintf_chk);

/* The call formatted into line (RTO_PRINTF_LINE bytes): its length, or -1. */
static int format_line(char *line, int flag, const char *fmt, va_list ap)
{
	int n = rto_vformat(line, RTO_PRINTF_LINE, flag, fmt, ap);
	return n < RTO_PRINTF_LINE ? n : -1;
}

/* A marked thread's printf: queued (async), served by the buffer, or through rto_call. */
static int routed_printf(struct rto_fn *fn, FILE *f, int flag, const char *fmt, va_list ap)
{
	if (rto_async_wanted(fn, -1, f)) {
		int ret, q = rto_async_vprintf(fn, f, flag, fmt, ap, &ret);
		if (q <= 0)
			return q ? -1 : ret;
	}
	char line[RTO_PRINTF_LINE];
	struct rto_args_printf a = {.flag = flag, .f = f, .fmt = fmt};
	unsigned how = 0;
	if (rto_stream_may_take_writes(f) && rto_vformat_in_memory(fmt)) {
		int n = format_line(line, flag, fmt, ap);
		if (n >= 0) {
			a.line = line;
			a.n = n;
			a.self = &rto_self;
			how = rto_buffered_put_arg((size_t)n);
		}
	}
	va_list copy;
	va_copy(copy, ap);
	a.ap = &copy;
	int ret = rto_call(fn, &a, -1, f, how) ? -1 : a.ret;
	va_end(copy);
	return ret;
}

static int route_printf(struct rto_fn *fn, FILE *f, int flag, const char *fmt, va_list ap)
{
	if (rto_direct()) {
		rto_async_order(); /* what marked threads queued goes first */
		return flag < 0 ? rto_real_vfprintf(f, fmt, ap)
				: rto_real___vfprintf_chk(f, flag, fmt, ap);
	}
	int ret;
	RTO_WATCHED(fn, ret = routed_printf(fn, f, flag, fmt, ap));
	return ret;
}

#define RTO_PRINTF_VA(fn, f, flag, last, fmt)                 \
	do {                                                  \
		va_list ap;                                   \
		va_start(ap, last);                           \
		int ret = route_printf(fn, f, flag, fmt, ap); \
		va_end(ap);                                   \
		return ret;                                   \
	} while (0)

RTO_EXPORT int printf(const char *fmt, ...)
{
	RTO_PRINTF_VA(&rto_fn_printf, stdout, -1, fmt, fmt);
}

RTO_EXPORT int fprintf(FILE *f, const char *fmt, ...)
{
	RTO_PRINTF_VA(&rto_fn_fprintf, f, -1, fmt, fmt);
}

RTO_EXPORT int __printf_chk(int flag, const char *fmt, ...)
{
	RTO_PRINTF_VA(&rto_fn___printf_chk, stdout, flag, fmt, fmt);
}

RTO_EXPORT int __fprintf_chk(FILE *f, int flag, const char *fmt, ...)
{
	RTO_PRINTF_VA(&rto_fn___fprintf_chk, f, flag, fmt, fmt);
}

RTO_EXPORT int vprintf(const char *fmt, va_list ap)
{
	return route_printf(&rto_fn_vprintf, stdout, -1, fmt, ap);
}

RTO_EXPORT int vfprintf(FILE *f, const char *fmt, va_list ap)
{
	return route_printf(&rto_fn_vfprintf, f, -1, fmt, ap);
}

RTO_EXPORT int __vprintf_chk(int flag, const char *fmt, va_list ap)
{
	return route_printf(&rto_fn___vprintf_chk, stdout, flag, fmt, ap);
}

RTO_EXPORT int __vfprintf_chk(FILE *f, int flag, const char *fmt, va_list ap)
{
	return route_printf(&rto_fn___vfprintf_chk, f, flag, fmt, ap);
}
