/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The dprintf family: formatted writes to a descriptor, decided by the
 * descriptor like write() (a pipe or socket: here; a disk file: a helper).
 * Every variant funnels into vdprintf or __vdprintf_chk.
 */
#include "shims_prelude.h"
#include "callsite.h"

struct rto_args_dprintf {
	int ret;
	int fd;
	int flag; /* fortify level for __*_chk; -1 for the plain calls */
	const char *fmt;
	va_list *ap;
};

static void run_dprintf(void *p)
{
	struct rto_args_dprintf *a = p;
	a->ret = a->flag < 0 ? rto_real_vdprintf(a->fd, a->fmt, *a->ap)
			     : rto_real___vdprintf_chk(a->fd, a->flag, a->fmt, *a->ap);
}

#define RTO_RUN_ALIAS(fname)                                                 \
	void rto_run_##fname(void *p) __attribute__((alias("run_dprintf"))); \
	RTO_FN_HAND(fname)
RTO_RUN_ALIAS(dprintf);
RTO_RUN_ALIAS(vdprintf);
RTO_RUN_ALIAS(__dprintf_chk);
RTO_RUN_ALIAS(__vdprintf_chk);

static int route_dprintf(struct rto_fn *fn, int fd, int flag, const char *fmt, va_list ap)
{
	if (rto_direct()) {
		rto_async_order(); /* what marked threads queued goes first, as for write() */
		return flag < 0 ? rto_real_vdprintf(fd, fmt, ap)
				: rto_real___vdprintf_chk(fd, flag, fmt, ap);
	}
	va_list copy;
	va_copy(copy, ap);
	struct rto_args_dprintf a = {.fd = fd, .flag = flag, .fmt = fmt, .ap = &copy};
	int ret;
	RTO_WATCHED(fn, ret = rto_call(fn, &a, fd, NULL, RTO_CALL_BYFD) ? -1 : a.ret);
	va_end(copy);
	return ret;
}

#define RTO_DPRINTF_VA(fn, fd, flag, fmt)                       \
	do {                                                    \
		va_list ap;                                     \
		va_start(ap, fmt);                              \
		int ret = route_dprintf(fn, fd, flag, fmt, ap); \
		va_end(ap);                                     \
		return ret;                                     \
	} while (0)

/* ---- the calls ------------------------------------------------------------- */

RTO_EXPORT int dprintf(int fd, const char *fmt, ...)
{
	RTO_DPRINTF_VA(&rto_fn_dprintf, fd, -1, fmt);
}

RTO_EXPORT int __dprintf_chk(int fd, int flag, const char *fmt, ...)
{
	RTO_DPRINTF_VA(&rto_fn___dprintf_chk, fd, flag, fmt);
}

RTO_EXPORT int vdprintf(int fd, const char *fmt, va_list ap)
{
	return route_dprintf(&rto_fn_vdprintf, fd, -1, fmt, ap);
}

RTO_EXPORT int __vdprintf_chk(int fd, int flag, const char *fmt, va_list ap)
{
	return route_dprintf(&rto_fn___vdprintf_chk, fd, flag, fmt, ap);
}
