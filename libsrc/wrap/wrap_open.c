/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* open() and openat(): variadic, so shim-gen leaves them to us. */
#include "shims_prelude.h"
#include "callsite.h"

struct rto_args_open {
	int ret;
	int dirfd; /* AT_FDCWD for open() */
	const char *path;
	int flags;
	mode_t mode;
};

/* The mode argument exists only with O_CREAT or O_TMPFILE (fcntl.h's rule). */
static int has_mode(int flags)
{
	return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE;
}

#define RTO_MODE_ARG(last, flags)               \
	mode_t mode = 0;                        \
	if (has_mode(flags)) {                  \
		va_list ap;                     \
		va_start(ap, last);             \
		mode = (mode_t)va_arg(ap, int); \
		va_end(ap);                     \
	}

/*
 * The run functions run wherever the call does (a helper, the caller, an
 * unmarked thread): the new descriptor's cached class is dropped, and
 * learnt at once where that costs no realtime thread anything (fdclass.c).
 */
void rto_run_open(void *p)
{
	struct rto_args_open *a = p;
	a->ret = RTO_HAND_REAL(open)(a->path, a->flags, a->mode);
	rto_fd_born(a->ret, -1);
}
RTO_FN_HAND(open);

void rto_run_open64(void *p)
{
	struct rto_args_open *a = p;
	a->ret = RTO_HAND_REAL(open64)(a->path, a->flags, a->mode);
	rto_fd_born(a->ret, -1);
}
RTO_FN_HAND(open64);

void rto_run_openat(void *p)
{
	struct rto_args_open *a = p;
	a->ret = RTO_HAND_REAL(openat)(a->dirfd, a->path, a->flags, a->mode);
	rto_fd_born(a->ret, -1);
}
RTO_FN_HAND(openat);

void rto_run_openat64(void *p)
{
	struct rto_args_open *a = p;
	a->ret = RTO_HAND_REAL(openat64)(a->dirfd, a->path, a->flags, a->mode);
	rto_fd_born(a->ret, -1);
}
RTO_FN_HAND(openat64);

static int route_open(struct rto_fn *fn, void (*run)(void *), int dirfd, const char *path,
		      int flags, mode_t mode)
{
	struct rto_args_open a = {.dirfd = dirfd, .path = path, .flags = flags, .mode = mode};
	int ret;

	if (rto_direct()) {
		run(&a);
		return a.ret;
	}
	unsigned how = rto_path_arg(path) | ((flags & O_ACCMODE) != O_RDONLY ? RTO_CALL_WRITES : 0);
	RTO_WATCHED(fn, ret = rto_call(fn, &a, -1, NULL, how) ? -1 : a.ret);
	return ret;
}

RTO_EXPORT int open(const char *path, int flags, ...)
{
	RTO_MODE_ARG(flags, flags);
	return route_open(&rto_fn_open, rto_run_open, AT_FDCWD, path, flags, mode);
}

RTO_EXPORT int open64(const char *path, int flags, ...)
{
	RTO_MODE_ARG(flags, flags);
	return route_open(&rto_fn_open64, rto_run_open64, AT_FDCWD, path, flags, mode);
}

RTO_EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
	RTO_MODE_ARG(flags, flags);
	return route_open(&rto_fn_openat, rto_run_openat, dirfd, path, flags, mode);
}

RTO_EXPORT int openat64(int dirfd, const char *path, int flags, ...)
{
	RTO_MODE_ARG(flags, flags);
	return route_open(&rto_fn_openat64, rto_run_openat64, dirfd, path, flags, mode);
}
