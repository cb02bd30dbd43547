/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sem_open() and mq_open(): variadic (a mode and more with O_CREAT), so
 * written by hand.  Both look a name up in a file system (/dev/shm, the
 * mqueue mount) and may create it: offloaded.
 */
#include "shims_prelude.h"
#include "callsite.h"

struct rto_args_sem_open {
	sem_t *ret;
	const char *name;
	int flags;
	mode_t mode;
	unsigned int value;
};

void rto_run_sem_open(void *p)
{
	struct rto_args_sem_open *a = p;
	a->ret = RTO_HAND_REAL(sem_open)(a->name, a->flags, a->mode, a->value);
}
RTO_FN_HAND(sem_open);

struct rto_args_mq_open {
	mqd_t ret;
	const char *name;
	int flags;
	mode_t mode;
	struct mq_attr *attr;
};

/* A message queue descriptor is a descriptor: its cached class goes. */
void rto_run_mq_open(void *p)
{
	struct rto_args_mq_open *a = p;
	a->ret = RTO_HAND_REAL(mq_open)(a->name, a->flags, a->mode, a->attr);
	rto_fd_born(a->ret, -1);
}
RTO_FN_HAND(mq_open);

/* The optional arguments exist only with O_CREAT. */
#define RTO_CREAT_ARGS(last, flags, T2, second) \
	mode_t mode = 0;                        \
	T2 second = 0;                          \
	if ((flags)&O_CREAT) {                  \
		va_list ap;                     \
		va_start(ap, last);             \
		mode = (mode_t)va_arg(ap, int); \
		second = va_arg(ap, T2);        \
		va_end(ap);                     \
	}

static int route(struct rto_fn *fn, void *a)
{
	int refused;
	RTO_WATCHED(fn, refused = rto_call(fn, a, -1, NULL, 0));
	return refused;
}

/* ---- the calls ------------------------------------------------------------- */

RTO_EXPORT sem_t *sem_open(const char *name, int flags, ...)
{
	RTO_CREAT_ARGS(flags, flags, unsigned int, value);
	struct rto_args_sem_open a = {SEM_FAILED, name, flags, mode, value};
	return rto_direct()		     ? (rto_run_sem_open(&a), a.ret)
	       : route(&rto_fn_sem_open, &a) ? SEM_FAILED
					     : a.ret;
}

RTO_EXPORT mqd_t mq_open(const char *name, int flags, ...)
{
	RTO_CREAT_ARGS(flags, flags, struct mq_attr *, attr);
	struct rto_args_mq_open a = {-1, name, flags, mode, attr};
	return rto_direct()		    ? (rto_run_mq_open(&a), a.ret)
	       : route(&rto_fn_mq_open, &a) ? -1
					    : a.ret;
}
