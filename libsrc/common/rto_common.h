/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rto_common: the code the library and the launcher (tools/) share, built
 * once as a small static library (libsrc/common/rto_common.cmake), so that the
 * launcher accepts and refuses a configuration by exactly the library's
 * rules.  It offers six modules, each with its own header:
 *
 *   options.h   RTOFFLOAD_OPTIONS: struct rto_options, its defaults, the
 *               parser (pure: no I/O, no malloc; it is fuzzed)
 *   cpulist.h   CPU lists ("0-3,6"): parse, format, read from sysfs; the
 *               online CPUs; the helpers' CPUs by the library's rule
 *   validate.h  a configuration against this machine: CPUs online, helpers
 *               off the realtime CPUs, mlock=1 within RLIMIT_MEMLOCK
 *   json.h      the one JSON writer (objects, arrays, escaped strings,
 *               numbers), through the caller's sink (also compiled into
 *               bench/'s harness)
 *   proc_stat.h a CPU's steal time (the hypervisor's) from /proc/stat's text
 *   report_rows.h  the reports' row model: named cells rendered as JSON
 *               members or as text columns and sentences
 *
 * Every name has the rto_ prefix and hidden visibility.  It uses nothing
 * of the library (no rto_opt, no messages, no wrappers) and asks one thing
 * of the program it is linked into: rto_common_syscall below.
 *
 * Concurrency: no module keeps state; each works on what its caller gives
 * it, so any thread may call it.  rto_common_syscall is set once by the
 * program before its first call into rto_common.
 */
#ifndef RTO_COMMON_H
#define RTO_COMMON_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#define RTO_HIDDEN __attribute__((visibility("hidden")))

/*
 * Set by the program before it calls into rto_common: a raw system call
 * that no interposer sees.  The modules read sysfs and /proc with it, in
 * the library's constructor too, where open() and read() are the library's
 * own wrappers.  The library sets libc's syscall() behind its own
 * (options_load.c); the launcher and the fuzz target, libc's syscall().
 * A pointer the program fills, not a function it defines, so that
 * rto_common calls nothing outside itself: it stays a leaf of the
 * library's call graph (tests/routing/call_cycles.py).
 */
RTO_HIDDEN extern long (*rto_common_syscall)(long number, ...);

#endif /* RTO_COMMON_H */
