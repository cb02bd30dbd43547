/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the generated wrappers (shims.c, real.c) need: the library's headers
 * they use, each with what it gives them, and the libc types of calls.tbl.
 */
#ifndef RTO_SHIMS_PRELUDE_H
#define RTO_SHIMS_PRELUDE_H

#undef _FORTIFY_SOURCE /* we define __read_chk and friends ourselves */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#ifndef _LARGEFILE64_SOURCE
#define _LARGEFILE64_SOURCE
#endif
#include "rto_fast.h" /* rto_direct() */
#include "fn.h"	      /* struct rto_fn, its classes and flags */
#include "decide.h"   /* RTO_CALL_*: the call's hints */
#include "route.h"    /* rto_call(), rto_path_arg(), rto_range_arg() */
#include "fdclass.h"  /* forget: and born: in calls.tbl */
#include "callsite.h" /* faults:warn: rto_fault_watch() */
#include "request.h"  /* RTO_ARGS_INLINE_SIZE */
#include "async.h"    /* rto_async_wanted(), barriers */

#include "real.h"	   /* rto_real_* and rto_fn_* (generated shims.h) */
#include "async_adapt.h"   /* async:NAME in calls.tbl */
#include "wake_hint.h"	   /* wake: and timeout: in calls.tbl */
#include "timerfd_track.h" /* timerfd: in calls.tbl */
#include "timer_track.h"   /* timer: in calls.tbl */
#include "random_short.h"  /* short:random= in calls.tbl */

/* The descriptor of a directory stream, for "forget:dir:D" (NULL: -1). */
static inline int rto_fd_of_dir(DIR *d)
{
	return d ? dirfd(d) : -1;
}

/* glibc may define these as macros over the functions we wrap. */
#undef putc
#undef getc
#undef putchar
#undef putc_unlocked
#undef putchar_unlocked
#undef fputc_unlocked
#undef fread_unlocked
#undef fwrite_unlocked
#undef getc_unlocked
#undef getchar_unlocked
#undef fgetc_unlocked
#undef getchar

#endif
