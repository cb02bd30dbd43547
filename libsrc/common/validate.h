/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Start-time checks of a configuration against this machine (validate.c,
 * part of rto_common: rto_common.h): what the option parser cannot know.
 * Shared with the launcher's check, so that `rtoffload check` refuses
 * exactly what the library refuses.
 *
 * Concurrency: no state; reads the machine (sysfs, limits) through
 * rto_common_syscall.  The library runs it once at load
 * (options_load.c), the launcher in its one thread.
 */
#ifndef RTO_VALIDATE_H
#define RTO_VALIDATE_H

#include "cpulist.h"
#include "options.h"
#include "rto_common.h"

#include <stdint.h>

/*
 * rt_cpus= and helper_cpus= against the online CPUs, and against each
 * other.  Returns 0, or -1 with one line naming the key in err.
 */
RTO_HIDDEN int rto_validate_cpus(const struct rto_options *o, const cpu_set_t *online, char *err,
				 size_t len);

/* What decides whether mlockall(MCL_CURRENT) can succeed (the kernel's rule). */
struct rto_memlock {
	uint64_t vm_bytes;    /* the address space now (VmSize) */
	uint64_t limit_bytes; /* RLIMIT_MEMLOCK's soft limit; UINT64_MAX: unlimited */
	int cap_ipc_lock;     /* CAP_IPC_LOCK in the effective set */
};

/* The calling process's; raw system calls only (it runs in the constructor). */
RTO_HIDDEN void rto_memlock_self(struct rto_memlock *m);
/* mlock=1 with *m: 0, or -1 with one line naming the key in err. */
RTO_HIDDEN int rto_validate_mlock(const struct rto_memlock *m, char *err, size_t len);

#endif /* RTO_VALIDATE_H */
