/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * init.c: the constructor.
 */
#ifndef RTO_INIT_H
#define RTO_INIT_H

#include "rto_base.h"

/* init.c: what the constructor does, for a mark that comes before it. */
RTO_HIDDEN void rto_init_once(void);

#endif /* RTO_INIT_H */
