/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * stall_probe.c: is a late call's worker waiting for input, as its caller
 * would have waited, or held up (runnable but not running, uninterruptible,
 * asleep on something else)?
 *
 * Concurrency: stall.c's watchdog only (one thread asks at a time); the
 * looking runs on a thread of the probe's own, never on a caller's path.
 */
#ifndef RTO_STALL_PROBE_H
#define RTO_STALL_PROBE_H

#include "rto_base.h"

/*
 * 1: the worker tid sleeps interruptibly in a call that may wait for ever
 * on input or on a peer (a read of a pipe, socket, tty or other character
 * device, a FIFO's open, accept, poll, a wait for a child...).  0: anything
 * else.  -1: no answer within ns (the probe thread not started yet or
 * not run on a loaded machine, or still inside a look at a hung file).
 */
RTO_HIDDEN int rto_stall_probe_waits(pid_t tid, long ns);
/*
 * The state letter of /proc/<pid>/task/<tid>/stat ('R', 'S', 'D'...), or
 * '?'.  Any thread that may open a descriptor for a moment (stall.c's
 * scanner, which has a table of its own).
 */
RTO_HIDDEN char rto_stall_task_state(pid_t tid);
/*
 * 1: the worker tid is runnable but not running (state R, and the kernel
 * says it is not on a CPU: another task holds its CPU), with *cpu the
 * CPU it waits for.  0: anything else, or the look took longer than ns.
 */
RTO_HIDDEN int rto_stall_probe_starved(pid_t tid, int *cpu, long ns);
/* A new process (stall.c's start, also in a forked child): no probe thread yet. */
RTO_HIDDEN void rto_stall_probe_reset(void);
/* The probe thread, if running, ends: rto_q->leave is set (alone.c, through stall.c). */
RTO_HIDDEN void rto_stall_probe_leave(void);

#endif /* RTO_STALL_PROBE_H */
