/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The scanf family: every variant funnels into vfscanf or
 * __isoc99_vfscanf with a va_list, which points into the waiting caller's
 * frame (see wrap_printf.c).  The stream's lock is lent like fgets's.
 */
#include "shims_prelude.h"
#include "callsite.h"

/*
 * <stdio.h> renames fscanf to __isoc99_fscanf (and so on) in C99 mode:
 * each wrapper gets its exported name from an asm label instead.
 */
#define RTO_SCANF_DEF(fname, params)                           \
	RTO_EXPORT int rto_def_##fname params __asm__(#fname); \
	int rto_def_##fname params

struct rto_args_scanf {
	int ret;
	int iso; /* __isoc99_: C99 %a, not the GNU allocation flag */
	FILE *f;
	const char *fmt;
	va_list *ap;
};

static void run_scanf(void *p)
{
	struct rto_args_scanf *a = p;
	a->ret = a->iso ? rto_real___isoc99_vfscanf(a->f, a->fmt, *a->ap)
			: rto_real_vfscanf(a->f, a->fmt, *a->ap);
}

#define RTO_RUN_ALIAS(fname)                                               \
	void rto_run_##fname(void *p) __attribute__((alias("run_scanf"))); \
	RTO_FN_HAND(fname)
RTO_RUN_ALIAS(fscanf);
RTO_RUN_ALIAS(scanf);
RTO_RUN_ALIAS(vfscanf);
RTO_RUN_ALIAS(vscanf);
RTO_RUN_ALIAS(__isoc99_fscanf);
RTO_RUN_ALIAS(__isoc99_scanf);
RTO_RUN_ALIAS(__isoc99_vfscanf);
RTO_RUN_ALIAS(__isoc99_vscanf);

static int route_scanf(struct rto_fn *fn, FILE *f, int iso, const char *fmt, va_list ap)
{
	if (rto_direct())
		return iso ? rto_real___isoc99_vfscanf(f, fmt, ap) : rto_real_vfscanf(f, fmt, ap);
	va_list copy;
	va_copy(copy, ap);
	struct rto_args_scanf a = {.iso = iso, .f = f, .fmt = fmt, .ap = &copy};
	int ret;
	RTO_WATCHED(fn, ret = rto_call(fn, &a, -1, f, 0) ? EOF : a.ret);
	va_end(copy);
	return ret;
}

#define RTO_SCANF_VA(fn, f, iso, fmt)                       \
	do {                                                \
		va_list ap;                                 \
		va_start(ap, fmt);                          \
		int ret = route_scanf(fn, f, iso, fmt, ap); \
		va_end(ap);                                 \
		return ret;                                 \
	} while (0)

/* ---- the calls ------------------------------------------------------------- */

RTO_SCANF_DEF(fscanf, (FILE * f, const char *fmt, ...))
{
	RTO_SCANF_VA(&rto_fn_fscanf, f, 0, fmt);
}

RTO_SCANF_DEF(scanf, (const char *fmt, ...))
{
	RTO_SCANF_VA(&rto_fn_scanf, stdin, 0, fmt);
}

RTO_SCANF_DEF(vfscanf, (FILE * f, const char *fmt, va_list ap))
{
	return route_scanf(&rto_fn_vfscanf, f, 0, fmt, ap);
}

RTO_SCANF_DEF(vscanf, (const char *fmt, va_list ap))
{
	return route_scanf(&rto_fn_vscanf, stdin, 0, fmt, ap);
}

RTO_SCANF_DEF(__isoc99_fscanf, (FILE * f, const char *fmt, ...))
{
	RTO_SCANF_VA(&rto_fn___isoc99_fscanf, f, 1, fmt);
}

RTO_SCANF_DEF(__isoc99_scanf, (const char *fmt, ...))
{
	RTO_SCANF_VA(&rto_fn___isoc99_scanf, stdin, 1, fmt);
}

RTO_SCANF_DEF(__isoc99_vfscanf, (FILE * f, const char *fmt, va_list ap))
{
	return route_scanf(&rto_fn___isoc99_vfscanf, f, 1, fmt, ap);
}

RTO_SCANF_DEF(__isoc99_vscanf, (const char *fmt, va_list ap))
{
	return route_scanf(&rto_fn___isoc99_vscanf, stdin, 1, fmt, ap);
}
