/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The async adapters: how a wrapped write's arguments become the bytes
 * queued by the async handling, named in shim-gen/calls.tbl ("async:NAME")
 * and called by the generated wrapper with the call's own parameters, in
 * order, once rto_async_wanted() (the decision's queue question, route.c)
 * said the call is queued: a write that is not queued never gets here.
 * Each returns like rto_async_put(): 1 not queued after all (make the
 * call), 0 queued (*ret is what the call returns), -1 a deferred error
 * (errno set).
 *
 * Concurrency: the caller's path of a marked thread (no lock, no system
 * call unless the ring is full: async.c).
 */
#ifndef RTO_ASYNC_ADAPT_H
#define RTO_ASYNC_ADAPT_H

#include "async.h"
#include "glibc_file.h"

#include <string.h>
#include <sys/types.h>

/* async:bytes -- write(fd, buf, count): count bytes for fd. */
static inline int rto_async_bytes(struct rto_fn *fn, int fd, const void *buf, size_t count,
				  ssize_t *ret)
{
	*ret = (ssize_t)count;
	return rto_async_put(fn, fd, NULL, buf, count, 0);
}

/* async:items -- fwrite(buf, size, n, f): n items of size bytes. */
static inline int rto_async_items(struct rto_fn *fn, const void *buf, size_t size, size_t n,
				  FILE *f, size_t *ret)
{
	*ret = n;
	return rto_async_put(fn, -1, f, buf, size * n, 0);
}

/* async:cstring -- fputs(s, f): the string without its NUL. */
static inline int rto_async_cstring(struct rto_fn *fn, const char *s, FILE *f, int *ret)
{
	*ret = 1;
	return rto_async_put(fn, -1, f, s, strlen(s), 0);
}

/* async:line -- puts(s): the string and a newline, to stdout. */
static inline int rto_async_line(struct rto_fn *fn, const char *s, int *ret)
{
	*ret = 1;
	return rto_async_put(fn, -1, stdout, s, strlen(s), 1);
}

/* async:putc_byte -- fputc(c, f): one byte; the call returns it as unsigned char. */
static inline int rto_async_putc_byte(struct rto_fn *fn, int c, FILE *f, int *ret)
{
	char byte = (char)c;

	*ret = c & 0xff;
	return rto_async_put(fn, -1, f, &byte, 1, 0);
}

/* async:putchar_byte -- putchar(c): the same, to stdout. */
static inline int rto_async_putchar_byte(struct rto_fn *fn, int c, int *ret)
{
	return rto_async_putc_byte(fn, c, stdout, ret);
}

/*
 * async:flush -- fflush(f): a mark behind the stream's queued writes; the
 * drain flushes the stream when it gets there, in order.  fflush(NULL),
 * every stream, and a read-only stream (fflush discards its buffered
 * input, which the caller's next read must not see): the call, after what
 * is queued.
 */
static inline int rto_async_flush(struct rto_fn *fn, FILE *f, int *ret)
{
	if (!f || (f->_flags & RTO_IO_NO_WRITES))
		return 1;
	*ret = 0;
	return rto_async_put(fn, RTO_ASYNC_FLUSH, f, "", 0, 0);
}

#endif /* RTO_ASYNC_ADAPT_H */
