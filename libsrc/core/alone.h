/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * alone.c: the library's threads end, so that a call the kernel allows
 * only a thread alone in its process (a user namespace entered, a mount
 * namespace joined) succeeds as it does without the library.
 *
 * Concurrency: rto_alone() runs on the calling thread, in a wrapper after
 * the kernel refused its call, and does something only when every other
 * thread of the process is one of ours: no program thread can offload
 * meanwhile, and a signal handler's calls run on the caller (BUSY).  It
 * stores rto_q->leave, wakes each thread of ours, which sees it and ends,
 * waits until the start routine of each has returned (own_thread.c's rows,
 * read with acquire) and zeroes the queue, as a forked child's; then it
 * waits, 1 s at most, until the kernel has let the last one go.
 * rto_alone_on_leave() is called once at load, before any of our threads
 * runs.
 */
#ifndef RTO_ALONE_H
#define RTO_ALONE_H

#include "rto_base.h"

/* 1: the library's threads have ended (make the call again); 0: nothing done. */
RTO_HIDDEN int rto_alone(void);
/* The live publisher's wake and its end (report/live.c, registered by init.c). */
RTO_HIDDEN void rto_alone_on_leave(void (*leave)(void), void (*left)(void));

#endif /* RTO_ALONE_H */
