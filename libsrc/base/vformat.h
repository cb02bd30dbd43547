/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A printf-family call formatted on its caller, into memory: the async
 * rings (async.c) and a write its stream's buffer takes (wrap_printf.c).
 *
 * Both format on the caller only when rto_vformat_in_memory() says the
 * format's conversions stay in memory; a helper formats the others.
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

/* Between '%' and the conversion: flags, width, precision, a position, '*'. */
static inline int rto_vformat_in_spec(char c)
{
	return (c >= '0' && c <= '9') || c == '$' || c == '-' || c == '+' || c == ' ' || c == '#' ||
	       c == '\'' || c == '*' || c == '.' || c == 'I';
}

static inline int rto_vformat_is_length(char c)
{
	return c == 'h' || c == 'l' || c == 'L' || c == 'q' || c == 'j' || c == 'z' || c == 'Z' ||
	       c == 't';
}

/*
 * Does every conversion of fmt stay in memory?  Not %m (strerror: its
 * message catalogue may be read from a file the first time), nor a wide
 * string or character (%ls, %lc, %S, %C: converting them may load a
 * character set's module).  Bounded by the format's length.
 */
static inline int rto_vformat_in_memory(const char *fmt)
{
	for (const char *p = fmt; *p; p++) {
		if (*p != '%')
			continue;
		if (*++p == '%')
			continue;
		while (rto_vformat_in_spec(*p))
			p++;
		int wide = 0;
		for (; rto_vformat_is_length(*p); p++)
			wide |= *p == 'l';
		if (*p == 'm' || *p == 'S' || *p == 'C' || (wide && (*p == 's' || *p == 'c')))
			return 0;
		if (!*p)
			break;
	}
	return 1;
}

#endif /* RTO_VFORMAT_H */
