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
#include "decide.h" /* enum rto_call_how */

struct rto_fn;

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
RTO_HIDDEN extern __thread const char *rto_call_path RTO_TLS;
static inline unsigned rto_path_arg(const char *path)
{
	rto_call_path = path;
	return RTO_CALL_PATH;
}
/*
 * A stream read or write (calls.tbl's "buffered:") of want bytes, or for a
 * read with line, fewer up to a newline (fgets): route.c runs it on the
 * caller when the stream's buffer holds them, or has room for them
 * (stdio_buffer.c), as glibc's own getc and putc macros would, with no
 * kernel entry.  The count travels in how's bits RTO_CALL_WANT_SHIFT to
 * 30, and RTO_CALL_PUT in bit 31, not in the thread's state, so a signal
 * handler's call in between cannot change them.  A count past
 * RTO_CALL_WANT_MAX is more than a stream buffer holds: such a call is not
 * asked about, but a line, by its newline only.
 */
#define RTO_CALL_WANT_SHIFT 8
#define RTO_CALL_WANT_MAX   ((1u << 23) - 1)
#define RTO_CALL_PUT	    (1u << 31)
static inline unsigned rto_buffered_arg(size_t want, int line)
{
	if (want > RTO_CALL_WANT_MAX) {
		if (!line)
			return 0;
		want = RTO_CALL_WANT_MAX;
	}
	return RTO_CALL_BUFFERED | (line ? RTO_CALL_BUFLINE : 0) |
	       (unsigned)want << RTO_CALL_WANT_SHIFT;
}
static inline unsigned rto_buffered_put_arg(size_t want)
{
	return want > RTO_CALL_WANT_MAX ? 0 : RTO_CALL_PUT | rto_buffered_arg(want, 0);
}
/* fread's size * n, saturated: an overflow wants more than any buffer holds. */
static inline size_t rto_items_bytes(size_t size, size_t n)
{
	size_t bytes;
	return __builtin_mul_overflow(size, n, &bytes) ? (size_t)-1 : bytes;
}
/*
 * The routing core: carries out, for a marked thread's call, what
 * rto_decide() (decide.h) says: here, on a helper, or not at all.  Every
 * wrapper, generated or written by hand, and the library's own requests
 * (RTO_F_INTERNAL) enter here; what is special about a call comes from
 * fn->flags and how (enum rto_call_how, decide.h).
 *   fd        the call's descriptor (a by-descriptor call decides by it), or -1
 *   stream    the FILE the call works on (stdio), or NULL
 *   how       what the wrapper knows from the arguments (enum rto_call_how)
 * Returns 0 when the call ran (its result is in args, errno as the call left
 * it), -1 when it was refused (errno set).
 */
RTO_HIDDEN int rto_call(struct rto_fn *fn, void *args, int fd, FILE *stream, unsigned how);

/*
 * Does this write (to fd, or to stream f) go through the async ring?  The
 * decision's queue question (decide.h), asked by route.c, where every
 * marked call's decision is carried out; async.c's admit() checks only
 * what the ring says (a deferred error, no ring).
 */
RTO_HIDDEN int rto_async_wanted(const struct rto_fn *fn, int fd, FILE *f);
struct rto_options;
/* report_offloads= and children=, copied at load (before any call is routed). */
RTO_HIDDEN void rto_route_configure(const struct rto_options *o);
/* An offloaded call's dlerror() message goes to fn (wrap_misc.c's, set at load). */
RTO_HIDDEN void rto_route_on_dlerror(void (*fn)(char *msg));
/*
 * Each call of the program that rto_call() routes first calls fn with its
 * descriptor, stream and how (async.c's, set with a thread's first ring:
 * the thread's own queued writes to what the call touches go first).
 */
RTO_HIDDEN void rto_route_before_call(void (*fn)(int fd, FILE *stream, unsigned how));
/*
 * The same for a call rto_call() does not route: a marked thread's trapped
 * system call (trap/), on descriptor fd (-1: none), RTO_CALL_PATH when it
 * may name any file.  The backstop's selector allows.
 */
RTO_HIDDEN void rto_route_order(int fd, unsigned how);

#endif /* RTO_ROUTE_H */
