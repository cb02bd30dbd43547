/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * wrap_misc.c: dlerror() of offloaded dlopen/dlclose (and the wrappers
 * written by hand: mremap, the syslog family).
 *
 * Concurrency: a failed offloaded dlopen's message is made by the worker
 * and handed to its caller with the request; rto_dlerror_set() runs on
 * the caller after the call returned (route.c) and keeps it in the
 * caller's own rto_self, which only that thread's dlerror() reads and
 * frees.  The wrappers are ordinary ones (the caller's path, rto_call).
 */
#ifndef RTO_WRAP_MISC_H
#define RTO_WRAP_MISC_H

#include "rto_base.h"

/* wrap_misc.c: an offloaded dlopen's error, for the caller's dlerror(). */
RTO_HIDDEN void rto_dlerror_set(char *msg);

#endif /* RTO_WRAP_MISC_H */
