/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Helgrind annotations for liburcu's atomics, and the few other client
 * requests of the valgrind build, in that build only: CMake's
 * RTOFFLOAD_VALGRIND=ON defines RTO_VALGRIND (tests/sanitizers/README.md).
 * Without it this header defines no-ops: the normal build, and so every
 * realtime caller, makes no client request.
 *
 * Included from rto_base.h before <urcu/wfcqueue.h>: liburcu's queue code is
 * static inline (_LGPL_SOURCE), so it is compiled into our objects and
 * picks these definitions up, as our own uses of the macros do.
 *
 * Helgrind sees neither atomics nor fences, only plain loads, plain
 * stores and locked instructions (which VEX turns into a compare-and-swap,
 * and Helgrind counts as a read).  So, for each atomic access to address A:
 *   - a store (CMM_STORE_SHARED, uatomic_set) becomes an atomic exchange,
 *     a locked instruction like the read-modify-writes: two atomic accesses
 *     never count as a race, a plain access against an atomic one still
 *     does.  ANNOTATE_HAPPENS_BEFORE(A) precedes it: what the thread did
 *     before the store is published by it (liburcu's pattern: the data,
 *     cmm_smp_wmb(), the store);
 *   - a load (CMM_LOAD_SHARED, uatomic_read) is followed by
 *     ANNOTATE_HAPPENS_AFTER(A): what the thread does next sees what was
 *     published at A (the load, cmm_smp_rmb(), the data);
 *   - an exchange, a compare-and-swap or an add_return (full barriers in
 *     liburcu) gets both;
 *   - uatomic_add/inc/dec/and/or (no barrier in liburcu's contract) stay
 *     liburcu's locked instructions, unannotated: atomic, but they order
 *     nothing, so statistics counters do not hide races between threads
 *     that merely count.
 * Each address is thus a release/acquire point, a little stronger than
 * the fences around it.  The edge starts before the store, so it does not
 * cover the store itself: a word that one thread stores atomically and
 * another later overwrites plainly is reported, even when ordered (a
 * queue node used again); such words are stored with CMM_STORE_SHARED.
 *
 * The other tools' headers (tsan_annot.h) redefine the same macros for
 * their own builds; at most one of them is ever active.
 */
#ifndef RTO_HELGRIND_ANNOT_H
#define RTO_HELGRIND_ANNOT_H

#ifdef RTO_VALGRIND

#ifdef __SANITIZE_THREAD__
#error "RTO_VALGRIND and ThreadSanitizer exclude each other (tsan_annot.h)"
#endif

#include <valgrind/helgrind.h>
#include <valgrind/valgrind.h>
#include <urcu/system.h>
#include <urcu/uatomic.h>

/* Publish what this thread did so far at address a / see what was published there. */
#define RTO_HG_RELEASE(a) ANNOTATE_HAPPENS_BEFORE((void *)(a))
#define RTO_HG_ACQUIRE(a) ANNOTATE_HAPPENS_AFTER((void *)(a))

/*
 * [a, a+n) is raced on by design, by third-party code or by our use of it:
 * Helgrind stops checking it (each use says why).
 */
#define RTO_HG_BENIGN_RACE(a, n) ANNOTATE_BENIGN_RACE_SIZED((a), (n), "")

/*
 * A statement whose errors are the tool's, not ours (each use says why):
 * Valgrind reports none while it runs, in this thread.
 */
#define RTO_VG_NO_ERRORS(stmt)                    \
	do {                                      \
		VALGRIND_DISABLE_ERROR_REPORTING; \
		stmt;                             \
		VALGRIND_ENABLE_ERROR_REPORTING;  \
	} while (0)

/* CMM_LOAD_SHARED and uatomic_read expand to this. */
#undef _CMM_LOAD_SHARED
#define _CMM_LOAD_SHARED(p)                                    \
	__extension__({                                        \
		__typeof__(p) rto_hg_lv_ = CMM_ACCESS_ONCE(p); \
		RTO_HG_ACQUIRE(&(p));                          \
		rto_hg_lv_;                                    \
	})

/* CMM_STORE_SHARED and uatomic_set expand to this. */
#undef _CMM_STORE_SHARED
#define _CMM_STORE_SHARED(x, v)                                                \
	__extension__({                                                        \
		__typeof__(x) rto_hg_sv_ = (v);                                \
		RTO_HG_RELEASE(&(x));                                          \
		(void)__atomic_exchange_n(&(x), rto_hg_sv_, __ATOMIC_SEQ_CST); \
		rto_hg_sv_;                                                    \
	})

#undef uatomic_xchg
#define uatomic_xchg(addr, v)                                                   \
	__extension__({                                                         \
		__typeof__(addr) rto_hg_xa_ = (addr);                           \
		RTO_HG_RELEASE(rto_hg_xa_);                                     \
		__typeof__(*rto_hg_xa_) rto_hg_xr_ =                            \
			__atomic_exchange_n(rto_hg_xa_, (v), __ATOMIC_SEQ_CST); \
		RTO_HG_ACQUIRE(rto_hg_xa_);                                     \
		rto_hg_xr_;                                                     \
	})

/* Returns the value found, as liburcu's does (the old one on success). */
#undef uatomic_cmpxchg
#define uatomic_cmpxchg(addr, old, _new)                                               \
	__extension__({                                                                \
		__typeof__(addr) rto_hg_ca_ = (addr);                                  \
		__typeof__(*rto_hg_ca_) rto_hg_co_ = (old);                            \
		RTO_HG_RELEASE(rto_hg_ca_);                                            \
		(void)__atomic_compare_exchange_n(rto_hg_ca_, &rto_hg_co_, (_new), 0,  \
						  __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); \
		RTO_HG_ACQUIRE(rto_hg_ca_);                                            \
		rto_hg_co_;                                                            \
	})

/* uatomic_sub_return expands to this too. */
#undef uatomic_add_return
#define uatomic_add_return(addr, v)                                            \
	__extension__({                                                        \
		__typeof__(addr) rto_hg_aa_ = (addr);                          \
		RTO_HG_RELEASE(rto_hg_aa_);                                    \
		__typeof__(*rto_hg_aa_) rto_hg_ar_ =                           \
			__atomic_add_fetch(rto_hg_aa_, (v), __ATOMIC_SEQ_CST); \
		RTO_HG_ACQUIRE(rto_hg_aa_);                                    \
		rto_hg_ar_;                                                    \
	})

#else /* !RTO_VALGRIND */

#define RTO_HG_RELEASE(a)	 ((void)0)
#define RTO_HG_ACQUIRE(a)	 ((void)0)
#define RTO_HG_BENIGN_RACE(a, n) ((void)0)
#define RTO_VG_NO_ERRORS(stmt) \
	do {                   \
		stmt;          \
	} while (0)

#endif /* RTO_VALGRIND */

#endif /* RTO_HELGRIND_ANNOT_H */
