/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A seccomp filter is per thread unless installed with TSYNC.  A marked
 * thread that installs one for itself expects it to hold for its own
 * calls; offloaded, they would run on a helper the filter does not cover.
 * So such a thread runs its calls itself from then on (route.c), under its
 * filter.  Seen: the filter present at its first mark (PR_GET_SECCOMP),
 * and filters installed later through prctl(PR_SET_SECCOMP) or glibc's
 * rto_syscall(SYS_seccomp, ...).  A TSYNC filter covers the helpers too: the
 * calls stay offloaded.
 */
#include "rto_fast.h"
#include "callsite.h"
#include "resolve.h"
#include "seccomp.h"
#include "backstop.h"
#include "real.h"

#include <errno.h>

#include <linux/seccomp.h>
#include <stdarg.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

/* A raw call from the library's text: the thread may be armed already, and it never traps. */
void rto_seccomp_check_at_mark(void)
{
	if (rto_bs_raw(SYS_prctl, PR_GET_SECCOMP, 0, 0, 0, 0, 0) == SECCOMP_MODE_FILTER)
		rto_self.own_filter = 1;
}

/*
 * The caller passed as many arguments as its system call takes, and we
 * read six, as glibc's own syscall() does in assembly: the extra reads
 * land in the caller's frame, which AddressSanitizer would call an
 * underflow.  Not instrumented for that reason only.
 */
RTO_EXPORT __attribute__((no_sanitize("address"))) long syscall(long nr, ...)
{
	long a[6];
	va_list ap;

	/* syscall() takes up to six long-sized arguments: pass them on. */
	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	long ret = RTO_HAND_REAL(syscall)(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	if (RTO_UNLIKELY(nr == SYS_seccomp) && ret >= 0 && a[0] == SECCOMP_SET_MODE_FILTER &&
	    !(a[1] & SECCOMP_FILTER_FLAG_TSYNC))
		rto_self.own_filter = 1;
	return ret;
}
