/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * automark.c: mark=: marks threads by policy.
 */
#ifndef RTO_AUTOMARK_H
#define RTO_AUTOMARK_H

#include "rto_base.h"

/* automark.c: mark= for programs that cannot call the API. */
RTO_HIDDEN void rto_automark_init(void);

#endif /* RTO_AUTOMARK_H */
