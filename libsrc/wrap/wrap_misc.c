/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* mremap() and the syslog family: variadic or va_list, so written by hand. */
#include "shims_prelude.h"
#include "rto_malloc.h"
#include "callsite.h"

#include <stdlib.h>
#include <sys/mman.h>

/* ---- mremap --------------------------------------------------------------- */

struct rto_args_mremap {
	void *ret;
	void *addr;
	size_t len, newlen;
	int flags;
	void *newaddr; /* only with MREMAP_FIXED */
};

void rto_run_mremap(void *p)
{
	struct rto_args_mremap *a = p;
	a->ret = RTO_HAND_REAL(mremap)(a->addr, a->len, a->newlen, a->flags, a->newaddr);
}
RTO_FN_HAND(mremap);

RTO_EXPORT void *mremap(void *addr, size_t len, size_t newlen, int flags, ...)
{
	void *newaddr = NULL;
	if (flags & MREMAP_FIXED) {
		va_list ap;
		va_start(ap, flags);
		newaddr = va_arg(ap, void *);
		va_end(ap);
	}
	if (rto_direct())
		return RTO_HAND_REAL(mremap)(addr, len, newlen, flags, newaddr);
	struct rto_args_mremap a = {
		.addr = addr, .len = len, .newlen = newlen, .flags = flags, .newaddr = newaddr};
	void *ret;
	RTO_WATCHED(&rto_fn_mremap,
		    ret = rto_call(&rto_fn_mremap, &a, -1, NULL, rto_range_arg(addr, len))
				  ? MAP_FAILED
				  : a.ret);
	return ret;
}

/* ---- syslog ----------------------------------------------------------------- */

struct rto_args_syslog {
	int prio;
	int flag; /* -1: vsyslog, else __vsyslog_chk */
	const char *fmt;
	va_list *ap;
};

static void run_syslog(void *p)
{
	struct rto_args_syslog *a = p;
	if (a->flag < 0)
		rto_real_vsyslog(a->prio, a->fmt, *a->ap);
	else
		rto_real___vsyslog_chk(a->prio, a->flag, a->fmt, *a->ap);
}

void rto_run_syslog(void *p) __attribute__((alias("run_syslog")));
RTO_FN_HAND(syslog);
void rto_run___syslog_chk(void *p) __attribute__((alias("run_syslog")));
RTO_FN_HAND(__syslog_chk);
void rto_run_vsyslog(void *p) __attribute__((alias("run_syslog")));
RTO_FN_HAND(vsyslog);
void rto_run___vsyslog_chk(void *p) __attribute__((alias("run_syslog")));
RTO_FN_HAND(__vsyslog_chk);

static void route_syslog(struct rto_fn *fn, int prio, int flag, const char *fmt, va_list ap)
{
	if (rto_direct()) {
		if (flag < 0)
			rto_real_vsyslog(prio, fmt, ap);
		else
			rto_real___vsyslog_chk(prio, flag, fmt, ap);
		return;
	}
	va_list copy;
	va_copy(copy, ap);
	struct rto_args_syslog a = {.prio = prio, .flag = flag, .fmt = fmt, .ap = &copy};
	RTO_WATCHED(fn, rto_call(fn, &a, -1, NULL, 0));
	va_end(copy);
}

RTO_EXPORT void syslog(int prio, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	route_syslog(&rto_fn_syslog, prio, -1, fmt, ap);
	va_end(ap);
}

RTO_EXPORT void __syslog_chk(int prio, int flag, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	route_syslog(&rto_fn___syslog_chk, prio, flag, fmt, ap);
	va_end(ap);
}

RTO_EXPORT void vsyslog(int prio, const char *fmt, va_list ap)
{
	route_syslog(&rto_fn_vsyslog, prio, -1, fmt, ap);
}

RTO_EXPORT void __vsyslog_chk(int prio, int flag, const char *fmt, va_list ap)
{
	route_syslog(&rto_fn___vsyslog_chk, prio, flag, fmt, ap);
}

/* ---- dlerror ----------------------------------------------------------------- */

/*
 * dlerror() is per thread, and an offloaded dlopen() fails on a worker: the
 * worker hands its message over (helper.c) and the caller's next dlerror()
 * returns it, once, as glibc's would.
 */
static __thread char *dlerror_returned RTO_TLS; /* freed at the next call */
static pthread_key_t dlerror_key;		/* frees both when the thread exits */
static pthread_once_t dlerror_once = PTHREAD_ONCE_INIT;

static void dlerror_thread_exit(void *unused)
{
	(void)unused;
	rto_free(rto_self.dlerror);
	rto_self.dlerror = NULL;
	rto_free(dlerror_returned);
	dlerror_returned = NULL;
}

static void dlerror_key_create(void)
{
	pthread_key_create(&dlerror_key, dlerror_thread_exit);
}

void rto_dlerror_set(char *msg)
{
	rto_free(rto_self.dlerror);
	rto_self.dlerror = msg;
	pthread_once(&dlerror_once, dlerror_key_create);
	pthread_setspecific(dlerror_key, &dlerror_key); /* non-NULL: the destructor runs */
}

RTO_EXPORT char *dlerror(void)
{
	rto_free(dlerror_returned);
	dlerror_returned = NULL;
	if (!rto_self.dlerror)
		return rto_real_dlerror();
	dlerror_returned = rto_self.dlerror;
	rto_self.dlerror = NULL;
	rto_real_dlerror(); /* and clear any older one of this thread */
	return dlerror_returned;
}
