/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * report.c: the library's own messages (no stdio).
 *
 * Concurrency: Any thread, but not the caller's path (a write system call).
 */
#ifndef RTO_REPORT_H
#define RTO_REPORT_H

#include "rto_base.h"

/* verbosity=: messages above it are not said (set by options.c at load). */
RTO_HIDDEN extern int rto_report_level;
/* One line to stderr, without stdio (usable anywhere but the caller path). */
RTO_HIDDEN void rto_say(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
RTO_HIDDEN _Noreturn void rto_die(int status, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif /* RTO_REPORT_H */
