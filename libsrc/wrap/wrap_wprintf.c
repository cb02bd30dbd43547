/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The wide printf family: every variant funnels into vfwprintf with a
 * va_list into the waiting caller's frame (see wrap_printf.c).
 */
#include "shims_prelude.h"
#include "callsite.h"

struct rto_args_wprintf {
	int ret;
	FILE *f;
	const wchar_t *fmt;
	va_list *ap;
};

static void run_wprintf(void *p)
{
	struct rto_args_wprintf *a = p;
	a->ret = rto_real_vfwprintf(a->f, a->fmt, *a->ap);
}

#define RTO_RUN_ALIAS(fname)                                                 \
	void rto_run_##fname(void *p) __attribute__((alias("run_wprintf"))); \
	RTO_FN_HAND(fname)
RTO_RUN_ALIAS(fwprintf);
RTO_RUN_ALIAS(wprintf);
RTO_RUN_ALIAS(vfwprintf);
RTO_RUN_ALIAS(vwprintf);

static int route_wprintf(struct rto_fn *fn, FILE *f, const wchar_t *fmt, va_list ap)
{
	if (rto_direct())
		return rto_real_vfwprintf(f, fmt, ap);
	va_list copy;
	va_copy(copy, ap);
	struct rto_args_wprintf a = {.f = f, .fmt = fmt, .ap = &copy};
	int ret;
	RTO_WATCHED(fn, ret = rto_call(fn, &a, -1, f, 0) ? -1 : a.ret);
	va_end(copy);
	return ret;
}

#define RTO_WPRINTF_VA(fn, f, fmt)                       \
	do {                                             \
		va_list ap;                              \
		va_start(ap, fmt);                       \
		int ret = route_wprintf(fn, f, fmt, ap); \
		va_end(ap);                              \
		return ret;                              \
	} while (0)

/* ---- the calls ------------------------------------------------------------- */

RTO_EXPORT int fwprintf(FILE *f, const wchar_t *fmt, ...)
{
	RTO_WPRINTF_VA(&rto_fn_fwprintf, f, fmt);
}

RTO_EXPORT int wprintf(const wchar_t *fmt, ...)
{
	RTO_WPRINTF_VA(&rto_fn_wprintf, stdout, fmt);
}

RTO_EXPORT int vfwprintf(FILE *f, const wchar_t *fmt, va_list ap)
{
	return route_wprintf(&rto_fn_vfwprintf, f, fmt, ap);
}

RTO_EXPORT int vwprintf(const wchar_t *fmt, va_list ap)
{
	return route_wprintf(&rto_fn_vwprintf, stdout, fmt, ap);
}
