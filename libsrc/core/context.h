/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * context.c: a thread's own kernel context, which a helper would not carry.
 *
 * Concurrency: rto_self.own_ctx is written by its own thread only (a
 * wrapper, the backstop's handler, its mark) and read by it (route.c,
 * backstop_trap.c, async.c, fdclass.c).
 */
#ifndef RTO_CONTEXT_H
#define RTO_CONTEXT_H

#include "rto_base.h"

/*
 * Why a thread's calls run on it (rto_self.own_ctx): a per-thread
 * attribute that changes what a system call means, which it changed and
 * the helpers do not have.
 */
enum rto_ctx {
	RTO_CTX_SECCOMP = 1 << 0,   /* a seccomp filter (or strict mode) of its own */
	RTO_CTX_FSIDS = 1 << 1,	    /* setfsuid/setfsgid: its own file-system ids */
	RTO_CTX_CAPS = 1 << 2,	    /* capset: capabilities of its own */
	RTO_CTX_LANDLOCK = 1 << 3,  /* landlock_restrict_self: a Landlock domain */
	RTO_CTX_NS = 1 << 4,	    /* setns: a namespace it joined */
	RTO_CTX_UNSHARE = 1 << 5,   /* unshare: its own files, fs (cwd, umask) or namespaces */
	RTO_CTX_IOPRIO = 1 << 6,    /* ioprio_set: its own I/O priority */
	RTO_CTX_MEMPOLICY = 1 << 7, /* set_mempolicy: its own NUMA memory policy */
	RTO_CTX_LSM = 1 << 8,	    /* /proc/thread-self/attr written: LSM attributes */
	RTO_CTX_KEYS = 1 << 9,	    /* add_key, request_key, keyctl: keyrings of its own */
};

/* The thread has (or no longer has) this reason: said once per thread and reason. */
RTO_HIDDEN void rto_ctx_set(unsigned why);
/* A system call it made returned ret: note what it changed (the syscall() wrapper, the trap). */
RTO_HIDDEN void rto_ctx_after_syscall(long nr, const long *a, long ret);
/*
 * unshare or setns gave ret (-1 and errno EINVAL, or EUSERS): 1 when the library's
 * threads were in the way and have ended (alone.c), so that the call is
 * made again, and what it changes is not the thread's alone.
 */
RTO_HIDDEN int rto_ctx_needs_alone(long nr, const long *a, long ret);
/* At its first mark: what it changed before (seccomp filter, fs ids, capabilities). */
RTO_HIDDEN void rto_ctx_check_at_mark(void);

#endif /* RTO_CONTEXT_H */
