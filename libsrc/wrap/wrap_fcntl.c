/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fcntl() and ioctl(): variadic, and decided by their arguments.
 *
 * fcntl by command: the lock waits (F_SETLKW, F_OFD_SETLKW) wait for
 * another process, for as long as it likes, on a helper; the other lock
 * commands go to the file system's lock manager (NFS: the network), so
 * they are decided by descriptor like read(); every other command
 * (F_GETFL, F_SETFD, F_DUPFD...) is short and bounded and runs here.
 * ioctl is decided by descriptor: a tty, a socket or a pipe answers at
 * once, a disk or a device driver may not.
 *
 * The third argument is read as a long whatever the command, as glibc
 * does: an int, a pointer or nothing, all fit (x86-64, aarch64).
 */
#include "shims_prelude.h"
#include "callsite.h"

/* Uninstrumented: a sanitizer runtime may call these while it starts (RTO_UNINSTRUMENTED,
 * rto_base.h). */

struct rto_args_fcntl {
	int ret;
	int fd, cmd;
	long arg;
};

/* F_DUPFD: the new descriptor is the same open file (fdclass.c). */
RTO_UNINSTRUMENTED static void born(struct rto_args_fcntl *a)
{
	if (a->ret >= 0 && (a->cmd == F_DUPFD || a->cmd == F_DUPFD_CLOEXEC))
		rto_fd_born_like(a->ret, a->fd);
}

RTO_UNINSTRUMENTED void rto_run_fcntl(void *p)
{
	struct rto_args_fcntl *a = p;
	a->ret = RTO_HAND_REAL(fcntl)(a->fd, a->cmd, a->arg);
	born(a);
}
RTO_FN_HAND(fcntl);

RTO_UNINSTRUMENTED void rto_run_fcntl64(void *p)
{
	struct rto_args_fcntl *a = p;
	a->ret = RTO_HAND_REAL(fcntl64)(a->fd, a->cmd, a->arg);
	born(a);
}
RTO_FN_HAND(fcntl64);

RTO_UNINSTRUMENTED static int route_fcntl(struct rto_fn *fn, int fd, int cmd, long arg)
{
	struct rto_args_fcntl a = {.fd = fd, .cmd = cmd, .arg = arg};
	int ret, wait = cmd == F_SETLKW || cmd == F_OFD_SETLKW;
	int lock = cmd == F_SETLK || cmd == F_GETLK || cmd == F_OFD_SETLK || cmd == F_OFD_GETLK;

	if (rto_direct()) {
		fn->run(&a);
		return a.ret;
	}
	RTO_WATCHED(fn, ret = (wait   ? rto_call(fn, &a, -1, NULL, 0)
			       : lock ? rto_call(fn, &a, fd, NULL, RTO_CALL_BYFD)
				      : rto_call(fn, &a, -1, NULL, RTO_CALL_SHORT))
				      ? -1
				      : a.ret);
	return ret;
}

struct rto_args_ioctl {
	int ret;
	int fd;
	unsigned long req;
	long arg;
};

RTO_UNINSTRUMENTED void rto_run_ioctl(void *p)
{
	struct rto_args_ioctl *a = p;
	a->ret = RTO_HAND_REAL(ioctl)(a->fd, a->req, a->arg);
}
RTO_FN_HAND(ioctl);

RTO_UNINSTRUMENTED static int route_ioctl(int fd, unsigned long req, long arg)
{
	struct rto_args_ioctl a = {.fd = fd, .req = req, .arg = arg};
	int ret;

	if (rto_direct())
		return RTO_HAND_REAL(ioctl)(fd, req, arg);
	RTO_WATCHED(&rto_fn_ioctl,
		    ret = rto_call(&rto_fn_ioctl, &a, fd, NULL, RTO_CALL_BYFD) ? -1 : a.ret);
	return ret;
}

#define RTO_LONG_ARG(last)              \
	long arg;                       \
	do {                            \
		va_list ap;             \
		va_start(ap, last);     \
		arg = va_arg(ap, long); \
		va_end(ap);             \
	} while (0)

/* ---- the calls ------------------------------------------------------------- */

RTO_EXPORT RTO_UNINSTRUMENTED int fcntl(int fd, int cmd, ...)
{
	RTO_LONG_ARG(cmd);
	return route_fcntl(&rto_fn_fcntl, fd, cmd, arg);
}

RTO_EXPORT RTO_UNINSTRUMENTED int fcntl64(int fd, int cmd, ...)
{
	RTO_LONG_ARG(cmd);
	return route_fcntl(&rto_fn_fcntl64, fd, cmd, arg);
}

RTO_EXPORT RTO_UNINSTRUMENTED int ioctl(int fd, unsigned long req, ...)
{
	RTO_LONG_ARG(req);
	return route_ioctl(fd, req, arg);
}
