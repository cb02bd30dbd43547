/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The kernel's struct sigaction on x86-64, as rt_sigaction(2) takes it
 * (not glibc's: its handler, flags, restorer and a 64-bit mask, in that
 * order).  backstop.c installs the SIGSYS handler with it through a raw
 * call; backstop_trap.c reads and answers a trapped rt_sigaction with it.
 *
 * Concurrency: a plain type, no state.
 */
#ifndef RTO_KERNEL_SIGACTION_H
#define RTO_KERNEL_SIGACTION_H

#include <stdint.h>

struct ksa {
	void *handler;
	unsigned long flags;
	void *restorer;
	uint64_t mask;
};

#endif /* RTO_KERNEL_SIGACTION_H */
