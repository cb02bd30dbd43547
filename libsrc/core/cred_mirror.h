/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cred_mirror.c: the library's threads take on the capability state of a
 * program with one thread of its own when it changes it, so that glibc's
 * setuid() broadcast finds every thread alike.
 *
 * Concurrency: rto_cred_mirror() on a program thread, after a successful
 * capset() or capability prctl(); it signals each library thread and waits
 * (bounded) for each to answer.  Not on a realtime caller's path.
 */
#ifndef RTO_CRED_MIRROR_H
#define RTO_CRED_MIRROR_H

#include "rto_base.h"

/* Once, in the constructor, before any library thread starts: how many threads the program has. */
RTO_HIDDEN void rto_cred_mirror_init(int (*program_threads)(void));
/* After system call nr with arguments a succeeded on a program thread. */
RTO_HIDDEN void rto_cred_mirror(long nr, const long *a);

#endif /* RTO_CRED_MIRROR_H */
