/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What every internal header needs: the feature macros, liburcu (inline
 * fast paths, LGPL), and the attribute macros (hidden, initial-exec TLS,
 * uninstrumented).  No declaration of any module: those are in the
 * module's own header (options.h, route.h, ...); rto_fast.h is the fast
 * path the wrappers inline.
 */
#ifndef RTO_BASE_H
#define RTO_BASE_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <limits.h>
#include <pthread.h>

#define _LGPL_SOURCE	    /* inline wfcq fast paths; we are LGPL too */
#include "tsan_annot.h"	    /* under ThreadSanitizer: liburcu's atomics as __atomic */
#include "helgrind_annot.h" /* the valgrind build: those atomics as Helgrind's edges */
#include <urcu/wfcqueue.h>

#define RTO_HIDDEN	__attribute__((visibility("hidden")))
#define RTO_EXPORT	__attribute__((visibility("default")))
#define RTO_LIKELY(x)	__builtin_expect(!!(x), 1)
#define RTO_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define RTO_TLS		__attribute__((tls_model("initial-exec")))
/*
 * No sanitizer instrumentation: code a sanitizer runtime may reach before
 * it is initialised (TSan's start-up installs its signal handlers through
 * sigaction(), ASan's log_path= makes its directory with mkdir(): both our
 * wrappers, instrumented code there crashes on shadow memory that does not
 * exist yet), and the first steps of our signal trampoline.  Nothing else.
 */
#define RTO_UNINSTRUMENTED __attribute__((no_sanitize("address", "thread", "undefined")))

#define RTO_CACHELINE 64

#endif /* RTO_BASE_H */
