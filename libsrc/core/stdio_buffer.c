/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a stream's buffer holds, or has room for.  glibc reads a byte as
 *
 *	fp->_IO_read_ptr >= fp->_IO_read_end ? __uflow(fp) : *fp->_IO_read_ptr++
 *
 * (_IO_getc_unlocked), fgets stops at a newline or its count within the
 * bytes between the two pointers (_IO_getline), and fread copies its bytes
 * out when they are all there (_IO_file_xsgetn): only the __uflow past the
 * end may enter the kernel.  It writes a byte as
 *
 *	fp->_IO_write_ptr >= fp->_IO_write_end ? __overflow(fp, c) : (*fp->_IO_write_ptr++ = c)
 *
 * (_IO_putc_unlocked), and fwrite, fputs and puts copy their bytes in when
 * that room takes them all (_IO_new_file_xsputn).  A line-buffered or
 * unbuffered stream keeps _IO_write_end at _IO_write_ptr, so that every
 * write reaches __overflow, which decides on flushing: it never has room.
 * Both are what the macros compiled into programs rely on.  The same test
 * here says the call will not enter the kernel.
 */
#include "stdio_buffer.h"
#include "decide.h" /* RTO_CALL_BUFLINE */
#include "glibc_file.h"
#include "route.h" /* RTO_CALL_WANT_SHIFT, RTO_CALL_WANT_MAX */

#include <string.h>

int rto_stream_buffer_holds(FILE *f, unsigned how, int locked)
{
	if (!f || (!locked && !(f->_flags & _IO_USER_LOCK)))
		return 0;
	/*
	 * glibc orders the buffer's pointers by the stream's lock, a futex
	 * Helgrind does not see (as stdio_lock.c's lock fields); its own
	 * accesses are libc's, these reads ours.
	 */
	RTO_HG_BENIGN_RACE(&f->_IO_read_ptr,
			   (size_t)((char *)(&f->_IO_write_end + 1) - (char *)&f->_IO_read_ptr));
	int put = (how & RTO_CALL_PUT) != 0;
	const char *p = put ? f->_IO_write_ptr : f->_IO_read_ptr;
	const char *end = put ? f->_IO_write_end : f->_IO_read_end;
	size_t want = (how & ~RTO_CALL_PUT) >> RTO_CALL_WANT_SHIFT;

	if (!p || end < p)
		return want == 0;
	size_t have = (size_t)(end - p);
	if (have >= want && want < RTO_CALL_WANT_MAX)
		return 1;
	return (how & RTO_CALL_BUFLINE) && memchr(p, '\n', have) != NULL;
}

int rto_stream_may_take_writes(FILE *f)
{
	if (!f)
		return 0;
	RTO_HG_BENIGN_RACE(&f->_flags, sizeof(f->_flags)); /* see above */
	RTO_HG_BENIGN_RACE(&f->_mode, sizeof(f->_mode));
	return !(__atomic_load_n(&f->_flags, __ATOMIC_RELAXED) &
		 (RTO_IO_UNBUFFERED | RTO_IO_LINE_BUF)) &&
	       __atomic_load_n(&f->_mode, __ATOMIC_RELAXED) <= 0;
}
