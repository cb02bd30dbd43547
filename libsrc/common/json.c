/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * JSON strings for the library's and the tools' reports (json.h).  No
 * libc call: rto_common calls nothing outside itself (rto_common.h).
 */
#include "json.h"

void rto_json_str(rto_json_put_fn *put, void *sink, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const char *run = s; /* bytes that need no escape, not yet put */

	put(sink, "\"", 1);
	for (;; s++) {
		unsigned char c = (unsigned char)*s;
		int plain = c >= 0x20 && c != 0x7f && c != '"' && c != '\\';

		if (c && plain && s - run < RTO_JSON_PIECE_MAX)
			continue;
		if (s > run)
			put(sink, run, (size_t)(s - run));
		run = s;
		if (!c)
			break;
		if (plain)
			continue; /* a full piece was put; this byte starts the next */
		if (c == '"' || c == '\\') {
			char esc[2] = {'\\', (char)c};
			put(sink, esc, sizeof(esc));
		} else {
			char esc[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
			put(sink, esc, sizeof(esc));
		}
		run = s + 1;
	}
	put(sink, "\"", 1);
}
