/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A marked thread's async write to a stream, on the caller when glibc
 * would only copy it into the stream's buffer (libio/fileops.c,
 * _IO_new_file_xsputn): it fits in the room left, and, for a line-buffered
 * stream, holds no newline.  The copy is what glibc's own call would have
 * made, under the stream's lock; no kernel entry, no helper.
 *
 * Any other write (one that fills the buffer, a line, an unbuffered
 * stream's, an fflush with bytes to write) is queued for a helper, which
 * makes the call on the stream (async.c): so every kernel write of a stream
 * is glibc's, under the stream's lock, from its buffer, in the buffer's
 * order.  Until the helper gets there the buffer is closed to glibc's
 * inline macros (putc_unlocked, putchar_unlocked: compiled into the
 * program, no call): they find no room and call __overflow, a wrapped call
 * that comes after what the thread queued.  When the calls' bytes all
 * reached the buffer later, on a helper, the macros' went ahead of them:
 * `id` printed "groups=65534\n(nogroup)", tar -tv its newlines a line late.
 *
 * The layout read here is glibc's struct _IO_FILE (bits/types/struct_FILE.h,
 * public, unchanged since glibc 2.1) and libio's flags (glibc_file.h).
 */
#include "stream_put.h"
#include "glibc_file.h"

#include <string.h>

/*
 * ftrylockfile() and funlockfile(), unless the program said it locks the
 * stream itself.  glibc's stream lock is a futex the sanitizers do not
 * see: the edges are told to ThreadSanitizer and Helgrind here, so that
 * two marked threads' copies into one buffer are seen in their order.
 */
static int lock(FILE *f)
{
	if (f->_flags & _IO_USER_LOCK)
		return 0;
	if (ftrylockfile(f) != 0)
		return -1;
	RTO_TSAN_ACQUIRE(f->_lock);
	RTO_HG_ACQUIRE(f->_lock);
	return 0;
}

static void unlock(FILE *f)
{
	if (f->_flags & _IO_USER_LOCK)
		return;
	RTO_HG_RELEASE(f->_lock);
	RTO_TSAN_RELEASE(f->_lock);
	funlockfile(f);
}

/*
 * Writing, its buffer allocated (glibc allocates it, with an fstat, at the
 * first write: a helper's), no read-ahead or ungetc() backup area to give
 * back first, byte-oriented, no column to track (old C++ streams').  Not
 * _vtable_offset: glibc leaves it unset where it has no 2.0 ABI to keep
 * (_IO_vtable_offset() is 0 on x86-64; AddressSanitizer's malloc showed
 * 0xbe there).
 */
static int ready(const FILE *f)
{
	return (f->_flags & RTO_IO_CURRENTLY_PUTTING) && f->_IO_buf_base && f->_IO_write_base &&
	       f->_IO_write_base <= f->_IO_write_ptr && f->_IO_write_ptr <= f->_IO_buf_end &&
	       f->_IO_read_end == f->_IO_write_base && !f->_IO_save_base && !f->_markers &&
	       f->_cur_column == 0 && f->_mode <= 0;
}

int rto_stream_put_begin(FILE *f)
{
	/*
	 * glibc orders the stream's fields and its buffer by the stream's
	 * lock, a futex Helgrind does not see (stdio_buffer.c says the same):
	 * a helper's fwrite under it and our copy under it, and the checks
	 * here before it of what an fopen set (_fileno, _flags, _mode).
	 */
	RTO_HG_BENIGN_RACE(f, sizeof(*f));
	if (f->_fileno < 0 || f->_mode > 0)
		return RTO_STREAM_OTHER; /* a cookie's or memory stream, or wide */
	if (f->_flags & RTO_IO_NO_WRITES)
		return RTO_STREAM_UNREADY; /* the call fails with EBADF: a helper makes it */
	if (lock(f) != 0)
		return RTO_STREAM_BUSY;
	if (!ready(f)) {
		unlock(f);
		return RTO_STREAM_UNREADY;
	}
	RTO_HG_BENIGN_RACE(f->_IO_buf_base, (size_t)(f->_IO_buf_end - f->_IO_buf_base));
	return RTO_STREAM_OURS;
}

void rto_stream_put_end(FILE *f)
{
	unlock(f);
}

int rto_stream_put_fits(const FILE *f, const char *data, size_t len, int nl)
{
	if (f->_flags & RTO_IO_UNBUFFERED)
		return 0;
	/* A line-buffered stream keeps _IO_write_end shut (the macros call __overflow). */
	if (f->_flags & RTO_IO_LINE_BUF)
		return !nl && len <= (size_t)(f->_IO_buf_end - f->_IO_write_ptr) &&
		       !memchr(data, '\n', len);
	return f->_IO_write_end > f->_IO_write_ptr &&
	       len + (nl != 0) <= (size_t)(f->_IO_write_end - f->_IO_write_ptr);
}

void rto_stream_put_append(FILE *f, const char *data, size_t len, int nl)
{
	memcpy(f->_IO_write_ptr, data, len);
	f->_IO_write_ptr += len;
	if (nl)
		*f->_IO_write_ptr++ = '\n';
	if (f->_mode == 0)
		f->_mode = -1; /* byte-oriented from now on, as fwrite's _IO_fwide(f, -1) */
}

void rto_stream_put_close(FILE *f)
{
	if (f->_IO_write_end > f->_IO_write_ptr)
		f->_IO_write_end = f->_IO_write_ptr;
}
