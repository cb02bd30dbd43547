/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * seccomp.c: a thread's own seccomp filter.
 */
#ifndef RTO_SECCOMP_H
#define RTO_SECCOMP_H

#include "rto_base.h"

/* seccomp.c: a thread's own seccomp filter must keep applying to its calls. */
RTO_HIDDEN void rto_seccomp_check_at_mark(void);

#endif /* RTO_SECCOMP_H */
