/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef RTOFFLOAD_H
#define RTOFFLOAD_H

/*
 * librtoffload: run the non-deterministic libc calls of realtime threads
 * on a helper thread pinned to a housekeeping CPU.
 *
 * A thread is "marked" (realtime) by rt_offload_mark_thread(), or by policy
 * (RTOFFLOAD_OPTIONS mark=...).  In a marked thread, wrapped calls such as
 * write(), fsync(), fprintf() or getaddrinfo() are packed into a request on
 * the caller's stack, handed to a helper through liburcu's wait-free queue,
 * executed there, and their result and errno come back over a futex.
 * Unmarked threads call libc directly.
 *
 * Concurrency contract of the API below:
 *
 *   function                       thread-safe  async-signal-safe  realtime-safe
 *   rt_offload_mark_thread         yes          no (1)             yes (1)
 *   rt_offload_unmark_thread       yes          yes                yes
 *   rt_offload_thread_is_marked    yes          yes                yes
 *   rt_offload_set_thread_mode     yes          yes                yes
 *   rt_offload_get_stats           yes          no                 no (2)
 *
 *   (1) The first mark in a process (and the first after a fork) starts
 *       the helper threads: pthread_create, affinity and scheduling
 *       syscalls; a thread's first mark also reads its priority and
 *       signal mask.  Every later mark and every unmark only flips a
 *       thread-local flag, except with stats=1 or stats_file= (page
 *       faults are then counted: one getrusage() per mark and unmark).
 *   (2) Walks the per-function counters; takes no lock but reads a few
 *       kilobytes.  Call it outside the realtime loop.
 *
 * Every function acts on the calling thread only.
 *
 * Running without the library: every declaration below is weak, so an
 * application that does not link -lrtoffload still links and runs; it can
 * test RT_OFFLOAD_AVAILABLE() before calling, or use the rt_offload_try_*
 * helpers, which do nothing when the library is absent.
 */

#include <errno.h>
#include <signal.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The library itself defines these strongly; applications see them weak. */
#ifdef RTOFFLOAD_BUILDING
#define RT_OFFLOAD_WEAK
#else
#define RT_OFFLOAD_WEAK __attribute__((weak))
#endif

/* Thread modes, for rt_offload_set_thread_mode(). */
#define RT_OFFLOAD_MODE_OFFLOAD 0 /* non-deterministic calls are offloaded (default) */
#define RT_OFFLOAD_MODE_STRICT	1 /* they are refused: not executed at all */

/*
 * The errno a refused call fails with in strict mode.  The call's usual
 * failure value is returned (-1, NULL, EOF, or EAI_SYSTEM for getaddrinfo).
 */
#define RT_OFFLOAD_STRICT_ERRNO EPERM

/*
 * With on_strict=signal, a refused call also sends this signal to the
 * calling thread (as Xenomai's SIGDEBUG), with si_value.sival_ptr pointing
 * to the name of the refused function.
 */
#define RT_OFFLOAD_SIGDEBUG SIGXCPU

struct rt_offload_stats {
	uint64_t offloaded; /* calls run on a helper for a marked thread */
	uint64_t local;	    /* wrapped calls a marked thread ran itself (allow-list) */
	uint64_t denied;    /* calls refused in strict mode */
	/* Round trip of offloaded calls, caller's enqueue to caller's return. */
	uint64_t rtt_p50_ns;
	uint64_t rtt_p99_ns;
	uint64_t rtt_max_ns;
	/* Page faults taken by threads while marked (traps, not system calls). */
	uint64_t minor_faults;
	uint64_t major_faults;
	/* Writes queued by the async handling (policy=stdio:async...). */
	uint64_t async;
	/*
	 * Calls that would have been offloaded but ran on the caller because
	 * no helper thread could be started (said once on stderr).
	 */
	uint64_t fallback;
	/*
	 * System calls of marked threads that no wrapper caught and the
	 * backstop trapped (Syscall User Dispatch; 0 with backstop=off).
	 */
	uint64_t trapped;
	/*
	 * Calls that waited longer than stall_us for a helper or on one
	 * (said once per site on stderr; on_stall=local ones included).
	 */
	uint64_t stalled;
	/*
	 * Calls that waited longer than stall_us on a helper that waited for
	 * input (a pipe, a socket, a tty, a FIFO's open, accept, poll...), as
	 * their caller would have without the library: counted, not said, not
	 * in stalled.
	 */
	uint64_t input_waits;
	uint64_t reserved[3]; /* zero; room to grow without breaking the ABI */
};

/*
 * Mark the calling thread realtime: from now on its non-deterministic
 * wrapped calls run on a helper (or are refused, in strict mode).
 * Returns 0, or -1 with errno set (EAGAIN: the helpers could not be
 * started; said once on stderr, and not tried again in this process, so
 * every later mark fails the same way at once).
 */
int rt_offload_mark_thread(void) RT_OFFLOAD_WEAK;

/* Unmark the calling thread: its calls run directly again.  Returns 0. */
int rt_offload_unmark_thread(void) RT_OFFLOAD_WEAK;

/* 1 if the calling thread is marked, 0 otherwise. */
int rt_offload_thread_is_marked(void) RT_OFFLOAD_WEAK;

/*
 * Set the calling thread's mode: RT_OFFLOAD_MODE_OFFLOAD or
 * RT_OFFLOAD_MODE_STRICT.  The mode applies while the thread is marked.
 * Returns 0, or -1 with errno EINVAL for an unknown mode.
 */
int rt_offload_set_thread_mode(int mode) RT_OFFLOAD_WEAK;

/*
 * Fill *out with the process-wide totals since start (or since the last
 * fork, in a child).  Returns 0, or -1 with errno EINVAL if out is NULL.
 */
int rt_offload_get_stats(struct rt_offload_stats *out) RT_OFFLOAD_WEAK;

#ifndef RTOFFLOAD_BUILDING
/* True when the library is loaded (preloaded or linked). */
#define RT_OFFLOAD_AVAILABLE() (rt_offload_mark_thread != 0)

/* Mark the calling thread if the library is there; 0 when it is not. */
static inline int rt_offload_try_mark_thread(void)
{
	return RT_OFFLOAD_AVAILABLE() ? rt_offload_mark_thread() : 0;
}

static inline int rt_offload_try_unmark_thread(void)
{
	return rt_offload_unmark_thread != 0 ? rt_offload_unmark_thread() : 0;
}
#endif

#ifdef __cplusplus
}
#endif

#endif /* RTOFFLOAD_H */
