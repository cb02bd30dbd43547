/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * stdio_buffer.c: does a stream's buffer already hold what a read wants,
 * or have room for what a write gives (a printf's, formatted on the caller
 * first: wrap_printf.c)?  Then the call is a copy in user
 * memory (glibc's own getc and putc fast paths), and a marked thread makes
 * it itself (decide.h RTO_NEED_BUFFER, route.c).
 *
 * Concurrency: the caller's path.  It reads the FILE's buffer pointers,
 * which only the stream lock's holder moves: so only when locked says the
 * caller holds that lock or the call takes none (an *_unlocked call, a
 * stream under FSETLOCKING_BYCALLER: the program vouches for the stream
 * there, as glibc does).  Bounded: at most one memchr over the buffered
 * bytes; no lock, no system call.
 */
#ifndef RTO_STDIO_BUFFER_H
#define RTO_STDIO_BUFFER_H

#include "rto_base.h"

#include <stdio.h>

/* how: the wrapper's (route.h rto_buffered_arg).  1 if f's buffer serves the call. */
RTO_HIDDEN int rto_stream_buffer_holds(FILE *f, unsigned how, int locked);

/*
 * May f's buffer ever take a write whole: a fully buffered stream, not
 * wide-oriented?  A hint, read without the lock (the buffering mode and
 * the orientation change only by setvbuf and fwide, which the program
 * makes before it writes): the printf family formats on the caller only
 * for such a stream, and rto_stream_buffer_holds() decides under the lock.
 */
RTO_HIDDEN int rto_stream_may_take_writes(FILE *f);

#endif /* RTO_STDIO_BUFFER_H */
