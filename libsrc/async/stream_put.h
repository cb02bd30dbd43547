/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * stream_put.c: a marked thread's async write to a stream goes into the
 * stream's own buffer on the caller, as glibc's would, when glibc would
 * not enter the kernel for it (libio's _IO_new_file_xsputn: it fits, and
 * a line-buffered stream gets no newline).  Otherwise the write is queued
 * for a helper to make on the stream (async.c), and the buffer is closed
 * to glibc's inline macros until the helper has made it.
 *
 * Concurrency: the caller's path of a marked thread.  rto_stream_put_begin()
 * takes the stream's lock with ftrylockfile() (never waits: the caller's
 * own lock, or a free one), rto_stream_put_end() gives it back; between
 * them the stream is the caller's, as in any stdio call.  No system call
 * (funlockfile() wakes a thread that waits for the lock, as glibc's
 * unlock does).
 */
#ifndef RTO_STREAM_PUT_H
#define RTO_STREAM_PUT_H

#include "rto_base.h"

#include <stddef.h>
#include <stdio.h>

/* What rto_stream_put_begin() found. */
enum rto_stream_put {
	RTO_STREAM_OURS,   /* locked, and a stream this file can buffer for */
	RTO_STREAM_BUSY,   /* another thread holds its lock: queue for a helper */
	RTO_STREAM_OTHER,  /* no descriptor (fmemopen, fopencookie), or wide: the same */
	RTO_STREAM_UNREADY /* not writing yet, no buffer, read-ahead: the same */
};

/* Lock f and say whether it is RTO_STREAM_OURS (else it is left unlocked). */
RTO_HIDDEN int rto_stream_put_begin(FILE *f);
/*
 * 1: glibc would copy len bytes of data (and a newline if nl: puts) into
 * f's buffer and enter no kernel.
 */
RTO_HIDDEN int rto_stream_put_fits(const FILE *f, const char *data, size_t len, int nl);
/* Copy them in, as glibc would (rto_stream_put_fits() said so). */
RTO_HIDDEN void rto_stream_put_append(FILE *f, const char *data, size_t len, int nl);
/*
 * A write to f is queued behind the buffer: until the helper makes it,
 * glibc's inline macros (putc_unlocked) find no room and call __overflow,
 * which comes after it (async.c).  The helper's call writes the buffer
 * out first and opens it again, as glibc opens it after any flush.
 */
RTO_HIDDEN void rto_stream_put_close(FILE *f);
RTO_HIDDEN void rto_stream_put_end(FILE *f);

#endif /* RTO_STREAM_PUT_H */
