/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * resolve.c / real.c: finding libc's functions (the mechanism behind real.h).
 *
 * Concurrency: rto_resolve_all() fills every pointer at load, before any thread is marked;
 * pointers are read relaxed (CMM_LOAD_SHARED), racing stores store the
 * same value.
 */
#ifndef RTO_RESOLVE_H
#define RTO_RESOLVE_H

#include "rto_base.h"
#include "report.h"

/*
 * The real (next) definition of a libc function.  The pointer starts at a
 * stub that resolves it, so a call made before our constructor (from an
 * earlier library's constructor) still works; rto_resolve_all() fills every
 * pointer before the first thread is marked, so no realtime caller ever
 * runs dlsym.
 */
#define RTO_REAL(ret, fname, params, args)                                \
	static ret rto_lazy_##fname params;                               \
	RTO_HIDDEN ret(*rto_real_##fname) params = rto_lazy_##fname;      \
	RTO_UNINSTRUMENTED static ret rto_lazy_##fname params             \
	{                                                                 \
		void *p_ = rto_resolve(#fname, (void *)rto_lazy_##fname); \
		if (!p_)                                                  \
			rto_die(70, "libc has no '%s'", #fname);          \
		CMM_STORE_SHARED(rto_real_##fname, (__typeof__(p_))p_);   \
		return rto_real_##fname args;                             \
	}

/* resolve.c: the next definition of name, or NULL (also when it is self). */
RTO_HIDDEN RTO_UNINSTRUMENTED void *rto_resolve(const char *name, void *self);
/* Set p from name when libc has it; keep p otherwise. */
#define RTO_RESOLVE(p, name, self)                                  \
	do {                                                        \
		void *rto_p_ = rto_resolve(name, self);             \
		if (rto_p_)                                         \
			CMM_STORE_SHARED(p, (__typeof__(p))rto_p_); \
	} while (0)
/* For hand-written variadic wrappers, whose pointer starts NULL. */
#define RTO_HAND_REAL(fname)               \
	(CMM_LOAD_SHARED(rto_real_##fname) \
		 ?: (rto_resolve_all(), CMM_LOAD_SHARED(rto_real_##fname)))
/* shims.c (generated): fill every rto_real_* pointer. */
RTO_HIDDEN void rto_resolve_all(void);

/*
 * A raw system call through libc's syscall(), never our interceptor
 * (wrap_syscall.c).  The launcher shares cpulist.c, options.c and report.c and
 * has no interceptor: there it is libc's syscall().
 */
#ifdef RTOFFLOAD_BUILDING
RTO_HIDDEN extern long (*rto_real_syscall)(long number, ...);
#define rto_syscall(...) RTO_HAND_REAL(syscall)(__VA_ARGS__)
#else
#define rto_syscall syscall
#endif

#endif /* RTO_RESOLVE_H */
