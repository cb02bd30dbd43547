/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Every internal header, for the generated wrappers (shims.c, real.c) and
 * the launcher.  Library sources include only the headers they use.
 *
 * The path of one call, file by file:
 *   shims.c (generated from shim-gen/calls.tbl)  the wrapper: marked? -> rto_call()
 *   route.c      decides: local, offload or refuse (strict)
 *   transport.c  caller side: request on the stack, wfcq enqueue, futex wait
 *   helper.c     worker side: dequeue by priority, run the real call, wake
 */
#ifndef RTO_H
#define RTO_H

#include "rto_base.h"
#include "options.h"
#include "cpulist.h"
#include "rto_fast.h"
#include "self.h"
#include "mark.h"
#include "fault_count.h"
#include "automark.h"
#include "own_thread.h"
#include "fn.h"
#include "async.h"
#include "async_path.h"
#include "policy.h"
#include "callsite.h"
#include "resolve.h"
#include "route.h"
#include "fdclass.h"
#include "transport.h"
#include "dns_state.h"
#include "helper.h"
#include "stdio_lock.h"
#include "signals.h"
#include "wrap_misc.h"
#include "context.h"
#include "sanitizer.h"
#include "init.h"
#include "fork.h"
#include "futex.h"
#include "stats.h"
#include "report.h"

#endif /* RTO_H */
