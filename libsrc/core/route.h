/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * route.c: the routing core: how a marked thread's call runs.
 *
 * Concurrency: rto_call() is the caller's path: no malloc, no lock, no system call but
 * FUTEX_WAKE/FUTEX_WAIT (transport.c).  The hooks are set once at load.
 */
#ifndef RTO_ROUTE_H
#define RTO_ROUTE_H

#include "rto_base.h"
#include "rto_fast.h"
#include "own_memory.h"

struct rto_fn;

/*
 * The routing core, the one place that decides how a marked thread's call
 * runs: here, on a helper, or not at all.  Every wrapper, generated or
 * written by hand, and the library's own requests (RTO_F_INTERNAL) enter
 * here; what is special about a call comes from fn->flags.
 *   fd        the call's descriptor, for RTO_F_BYFD calls; else -1
 *   stream    the FILE the call works on (stdio), or NULL
 *   callbacks nonzero when the call was given a callback (RTO_F_CALLBACKS)
 * Returns 0 when the call ran (its result is in args, errno as the call left
 * it), -1 when it was refused (errno set).
 */
/* What a wrapper knows of one call from its arguments (rto_call's how). */
enum rto_call_how {
	RTO_CALL_BYFD = 1 << 0,	     /* decided by its descriptor, like an RTO_F_BYFD row */
	RTO_CALL_SHORT = 1 << 1,     /* short and bounded with these arguments (fcntl(F_GETFL),
					sysconf(_SC_PAGESIZE)): here unless a policy says strict/warn */
	RTO_CALL_CALLBACKS = 1 << 2, /* a callback was given (RTO_F_CALLBACKS) */
	RTO_CALL_PATH = 1 << 3,	     /* rto_self.path is its path (rto_path_arg) */
	RTO_CALL_WRITES = 1 << 4,    /* opens its path for writing */
	RTO_CALL_OWNMEM = 1 << 5,    /* its range touches memory a helper runs on (own_memory.c) */
};

/*
 * A call that unmaps, moves or protects a range (munmap, mremap,
 * mprotect, madvise...): when the range touches the code or stacks a
 * helper runs on, the call runs on its caller, who alone would have met
 * the fault.  Bounded, no system call.
 */
static inline unsigned rto_range_arg(const void *addr, size_t len)
{
	return rto_own_memory_overlaps(addr, len) ? RTO_CALL_OWNMEM : 0;
}

/*
 * A call with a path: route.c reads it, guarded, once a helper is up, and
 * runs it on the caller when it names the thread's own /proc entry
 * (/proc/thread-self/...), which on a helper would be the helper's.  The
 * wrapper only stores the pointer: a bad one must give EFAULT, not a crash.
 */
static inline unsigned rto_path_arg(const char *path)
{
	rto_self.path = path;
	return RTO_CALL_PATH;
}
RTO_HIDDEN int rto_call(struct rto_fn *fn, void *args, int fd, FILE *stream, unsigned how);
/* An offloaded call's dlerror() message goes to fn (wrap_misc.c's, set at load). */
RTO_HIDDEN void rto_route_on_dlerror(void (*fn)(char *msg));

#endif /* RTO_ROUTE_H */
