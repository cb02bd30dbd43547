/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * signals.c: interrupting offloaded calls, the worker's signals, faults.
 *
 * Concurrency: rto_signal_kick() is the caller's side; the rest runs on workers.
 */
#ifndef RTO_SIGNALS_H
#define RTO_SIGNALS_H

#include "rto_base.h"

struct rto_req;

/* signals.c: interrupting a blocking offloaded call like the kernel would. */
#define RTO_SIG_INTERRUPT SIGRTMAX
RTO_HIDDEN int rto_signal_interrupts(int sig);
/* Send RTO_SIG_INTERRUPT to worker tid (no-op for 0).  Caller side. */
RTO_HIDDEN void rto_signal_kick(int tid);
/* Worker side: take a kick still pending, so that it cannot end the next call. */
RTO_HIDDEN void rto_signal_take_kick(void);
/* Before the first helper starts: RTO_SIG_INTERRUPT's handler and the fault trampolines. */
RTO_HIDDEN void rto_signal_install(void);
RTO_HIDDEN void rto_signal_worker_init(void);
/* At the start of the library's other long-lived threads: RTO_SIG_INTERRUPT unblocked. */
RTO_HIDDEN void rto_signal_own_thread_init(void);
/* fn runs in every library thread that takes RTO_SIG_INTERRUPT (cred_mirror.c's). */
RTO_HIDDEN void rto_signal_on_interrupt(void (*fn)(void));
/* The process is traced: faults without a handler of the program's keep the default action. */
RTO_HIDDEN void rto_signal_faults_plain(void);
RTO_HIDDEN int rto_signal_worker_tid(void);
/* 1: sig's action is SIG_DFL (lifetime.c). */
RTO_HIDDEN int rto_signal_is_default(int sig);
/*
 * How deep this thread is in the program's signal handlers that came
 * through the trampoline (sigaction, signal): 0 outside them.  Written by
 * this thread only (initial-exec TLS, async-signal-safe to read).
 */
RTO_HIDDEN extern __thread int rto_signal_handler_depth RTO_TLS;
/* Run r's call; a fault inside it comes back as its signal number, else 0. */
RTO_HIDDEN int rto_signal_run_guarded(struct rto_req *r);
/*
 * Caller side: copy n bytes from a pointer the program gave; 0, or -1 if
 * reading it faulted or could not be guarded (then nothing was read).
 */
RTO_HIDDEN int rto_signal_copy_guarded(void *dst, const void *src, size_t n);

#endif /* RTO_SIGNALS_H */
