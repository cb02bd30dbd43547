/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The request's first cache line: what travels in it besides the header.
 * Included by transport.h (struct rto_req); shim-gen sizes each call's
 * arguments into its descriptor with RTO_ARGS_INLINE_SIZE.
 *
 * A call's arguments and result (struct rto_args_NAME, made by the
 * wrapper on the caller's stack) are copied into the request when they
 * fit, and back after DONE: the worker then touches one line of the
 * caller's (the request's first) instead of two or three (the request's
 * and the arguments', which may straddle two lines), and the result,
 * errno and the DONE word return in that one line.
 *
 * Concurrency: a request belongs to its caller (on its stack) except
 * between the enqueue and DONE, when its worker has it.  The caller
 * writes the flags and the inline arguments before the enqueue, which
 * publishes them; the worker writes the result, errno and RTO_RQ_FAULTED
 * before it stores DONE; the caller reads them after it saw DONE
 * (transport.c's state exchange orders both ways).  RTO_RQ_TAKEN is the
 * caller's, once it won the request back from the queue (on_stall=local).
 * rto_req_key() (transport.c) is pure; a kick reads the workers' rows
 * without a lock (transport.c's worker_running(): a rare look, the answer
 * may be stale at once).
 */
#ifndef RTO_REQUEST_H
#define RTO_REQUEST_H

#include <stdint.h>

#define RTO_REQ_INLINE 32 /* bytes of arguments that travel inside the request */

/* The size of args_type when it can travel inline (fits, aligned at most 8), else 0. */
#define RTO_ARGS_INLINE_SIZE(args_type) \
	(sizeof(args_type) <= RTO_REQ_INLINE && _Alignof(args_type) <= 8 ? sizeof(args_type) : 0)

/* struct rto_req's flags: set by the caller before the enqueue, but RTO_RQ_FAULTED. */
enum rto_req_flag {
	RTO_RQ_INLINE = 1 << 0,	 /* the arguments are in inl[], not at args */
	RTO_RQ_LENT = 1 << 1,	 /* stream is set: its lock is lent */
	RTO_RQ_LOCALE = 1 << 2,	 /* locale is set: not the global locale */
	RTO_RQ_FAULTED = 1 << 3, /* the worker's: the call faulted, the caller runs it again */
	RTO_RQ_BURST =
		1 << 4, /* the caller's first call in RTO_PRED_BURST_NS (predict.h): a new burst */
	RTO_RQ_TAKEN = 1 << 5, /* on_stall=local: its caller took it back and ran it */
	RTO_RQ_HERE = 1 << 6,  /* the caller waits on one of the workers' CPUs: no poll after */
};

/*
 * The caller's identity for predict.c in 16 bits: a hash of its TLS
 * address, never 0.  transport.c makes it as it posts the request (the
 * request's key), once per offload.
 */
RTO_HIDDEN uint16_t rto_req_key(const void *tls);

#endif
