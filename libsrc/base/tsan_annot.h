/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ThreadSanitizer and liburcu.  On x86, liburcu's uatomic operations are
 * inline assembly and CMM_LOAD_SHARED/CMM_STORE_SHARED volatile accesses:
 * ThreadSanitizer sees neither as synchronisation, so every hand-off made
 * through them (the request queue, a request's state, the async rings, the
 * helpers' counters) would look like a data race.  Built with
 * -fsanitize=thread, this header (rto_base.h includes it before liburcu's
 * queue) redefines them as the compiler's __atomic builtins, sequentially
 * consistent, at least as strong as liburcu's own (full barriers on x86),
 * which ThreadSanitizer understands.  Without it nothing changes.
 */
#ifndef RTO_TSAN_ANNOT_H
#define RTO_TSAN_ANNOT_H

#if defined(__SANITIZE_THREAD__)

#include <urcu/arch.h>
#include <urcu/system.h>
#include <urcu/uatomic.h>

#define RTO_SC __ATOMIC_SEQ_CST

#undef _CMM_LOAD_SHARED
#undef CMM_LOAD_SHARED
#undef _CMM_STORE_SHARED
#undef CMM_STORE_SHARED
#define _CMM_LOAD_SHARED(p) __atomic_load_n(&(p), RTO_SC)
#define CMM_LOAD_SHARED(p)  __atomic_load_n(&(p), RTO_SC)
#define CMM_STORE_SHARED(x, v)                          \
	__extension__({                                 \
		__typeof__(x) rto_v_ = (v);             \
		__atomic_store_n(&(x), rto_v_, RTO_SC); \
		rto_v_;                                 \
	})
#define _CMM_STORE_SHARED(x, v) CMM_STORE_SHARED(x, v)

#undef uatomic_read
#undef uatomic_set
#undef uatomic_xchg
#undef uatomic_cmpxchg
#undef uatomic_add_return
#undef uatomic_sub_return
#undef uatomic_add
#undef uatomic_sub
#undef uatomic_inc
#undef uatomic_dec
#undef uatomic_and
#undef uatomic_or
#define uatomic_read(addr)	    __atomic_load_n((addr), RTO_SC)
#define uatomic_set(addr, v)	    __atomic_store_n((addr), (v), RTO_SC)
#define uatomic_xchg(addr, v)	    __atomic_exchange_n((addr), (v), RTO_SC)
#define uatomic_add_return(addr, v) __atomic_add_fetch((addr), (v), RTO_SC)
#define uatomic_sub_return(addr, v) __atomic_sub_fetch((addr), (v), RTO_SC)
#define uatomic_add(addr, v)	    ((void)__atomic_add_fetch((addr), (v), RTO_SC))
#define uatomic_sub(addr, v)	    ((void)__atomic_sub_fetch((addr), (v), RTO_SC))
#define uatomic_inc(addr)	    uatomic_add((addr), 1)
#define uatomic_dec(addr)	    uatomic_add((addr), -1)
#define uatomic_and(addr, v)	    ((void)__atomic_and_fetch((addr), (v), RTO_SC))
#define uatomic_or(addr, v)	    ((void)__atomic_or_fetch((addr), (v), RTO_SC))
/* The value found, as liburcu's: the exchange happened if it equals old. */
#define uatomic_cmpxchg(addr, old, new_)                                                 \
	__extension__({                                                                  \
		__typeof__(*(addr)) rto_o_ = (old);                                      \
		__atomic_compare_exchange_n((addr), &rto_o_, (new_), 0, RTO_SC, RTO_SC); \
		rto_o_;                                                                  \
	})

/*
 * A request's hand-off, told to ThreadSanitizer with its own calls as well
 * (transport.c, helper.c): its atomics count for nothing while its
 * interceptors ignore the thread (inside REAL(pthread_create), a blocking
 * call), and a SIGSYS trap of the backstop taken there offloads its call
 * in that state.  __tsan_release/__tsan_acquire heed only the ignoring of
 * synchronisation, which those interceptors leave alone.
 */
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
#define RTO_TSAN_RELEASE(a) __tsan_release((void *)(a))
#define RTO_TSAN_ACQUIRE(a) __tsan_acquire((void *)(a))

#else /* !__SANITIZE_THREAD__ */

#define RTO_TSAN_RELEASE(a) ((void)0)
#define RTO_TSAN_ACQUIRE(a) ((void)0)

#endif /* __SANITIZE_THREAD__ */
#endif /* RTO_TSAN_ANNOT_H */
