/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * glibc's FILE flags that its installed headers do not name (libio.h):
 * read from a stream's _flags where the library asks what a stream is.
 * <bits/types/struct_FILE.h> names _IO_USER_LOCK itself.  Part of glibc's
 * ABI: the values have not changed since libio came in (glibc 2.0).
 *
 * Concurrency: none; constants.
 */
#ifndef RTO_GLIBC_FILE_H
#define RTO_GLIBC_FILE_H

#define RTO_IO_UNBUFFERED	 0x0002 /* _IO_UNBUFFERED: setvbuf(_IONBF), stderr */
#define RTO_IO_NO_WRITES	 0x0008 /* _IO_NO_WRITES: opened for reading only */
#define RTO_IO_LINE_BUF		 0x0200 /* _IO_LINE_BUF: setvbuf(_IOLBF), a terminal */
#define RTO_IO_CURRENTLY_PUTTING 0x0800 /* _IO_CURRENTLY_PUTTING: in writing mode */

#endif /* RTO_GLIBC_FILE_H */
