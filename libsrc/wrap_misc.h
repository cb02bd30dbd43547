/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * wrap_misc.c: dlerror() of offloaded dlopen/dlclose.
 */
#ifndef RTO_WRAP_MISC_H
#define RTO_WRAP_MISC_H

#include "rto_base.h"

/* wrap_misc.c: an offloaded dlopen's error, for the caller's dlerror(). */
RTO_HIDDEN void rto_dlerror_set(char *msg);

#endif /* RTO_WRAP_MISC_H */
