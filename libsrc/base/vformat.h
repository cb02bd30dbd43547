/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A printf-family call formatted on its caller, into memory: the async
 * rings (async.c) and a write its stream's buffer takes (wrap_printf.c).
 *
 * Concurrency: none of its own; vsnprintf's.  The caller's va_list is left
 * as it was (a copy is formatted), so the call can still go to a helper.
 */
#ifndef RTO_VFORMAT_H
#define RTO_VFORMAT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

int __vsnprintf_chk(char *s, size_t maxlen, int flag, size_t slen, const char *fmt, va_list ap);

/* fmt with ap into out (size bytes): vsnprintf, or __vsnprintf_chk at a __*_chk call's level. */
static inline int rto_vformat(char *out, size_t size, int flag, const char *fmt, va_list ap)
{
	va_list copy;

	va_copy(copy, ap);
	int n = flag < 0 ? vsnprintf(out, size, fmt, copy)
			 : __vsnprintf_chk(out, size, flag, size, fmt, copy);
	va_end(copy);
	return n;
}

#endif /* RTO_VFORMAT_H */
