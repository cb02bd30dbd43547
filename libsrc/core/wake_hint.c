/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A marked thread announces the end of its timed sleep, or of its timed
 * wait at the latest (wake_hint.h).  The caller's path, just before it
 * sleeps: no lock, no system call.
 */
#include "wake_hint.h"
#include "options.h"
#include "rto_fast.h"
#include "transport.h"
#include "signals.h"
#include "futex.h"
#include "timerfd_track.h"
#include "timer_track.h"

#include <time.h>

#define NS_PER_S 1000000000ull

/*
 * The sleep ends at `at` (now: rto_now_ns()).  A deadline already past
 * (the loop overran its period) ends it at once: now.  One too far for
 * the word says nothing.
 */
/* helper_wake=: copied once at load (rto_wake_hint_configure), read-only afterwards. */
static struct {
	int predict; /* helper_wake=predict */
} opt;

void rto_wake_hint_configure(const struct rto_options *o)
{
	opt.predict = o->helper_wake == RTO_WAKE_PREDICT;
}

static void announce(uint64_t at, uint64_t now, uint64_t bound)
{
	uint16_t key = rto_req_key(&rto_self); /* as transport.c keys its requests */

	if (at < now)
		at = now;
	if (!rto_wake_fits(at, now))
		return;
	__atomic_store_n(&rto_q->predict.hint[key % RTO_PRED_HINTS], rto_wake_word(key, at, bound),
			 __ATOMIC_RELAXED);
}

/* Only while helpers run: they plan from it, and they installed the fault guard. */
static int wanted(void)
{
	return opt.predict && CMM_LOAD_SHARED(rto_q->ready);
}

/* The clocks a sleep may name that the vDSO reads without a system call. */
static int readable(clockid_t clk)
{
	return clk == CLOCK_MONOTONIC || clk == CLOCK_REALTIME || clk == CLOCK_BOOTTIME ||
	       clk == CLOCK_TAI;
}

/* A timespec the program handed us, in ns; -1: unreadable, or one the call itself refuses. */
static int64_t ts_ns(const struct timespec *p)
{
	struct timespec ts;

	/* A bad pointer: the call itself fails with EFAULT, as it would without us. */
	if (rto_signal_copy_guarded(&ts, p, sizeof(ts)) != 0)
		return -1;
	/* EINVAL, or past what 64 bits of nanoseconds hold: the call says, not us. */
	if (ts.tv_sec < 0 || (uint64_t)ts.tv_sec >= UINT64_MAX / NS_PER_S / 2 || ts.tv_nsec < 0 ||
	    ts.tv_nsec >= (long)NS_PER_S)
		return -1;
	return (int64_t)((uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec);
}

/* An absolute time t on clk, announced on our clock. */
static void announce_abs(clockid_t clk, uint64_t t, uint64_t bound)
{
	struct timespec c;
	uint64_t now = rto_now_ns();

	if (clk == CLOCK_MONOTONIC) {
		announce(t, now, bound);
		return;
	}
	if (clock_gettime(clk, &c) != 0)
		return;
	/* Another clock's deadline, as a distance from its now onto ours. */
	uint64_t cn = (uint64_t)c.tv_sec * NS_PER_S + (uint64_t)c.tv_nsec;
	announce(now + (t > cn ? t - cn : 0), now, bound);
}

void rto_wake_at_clock(clockid_t clk, int flags, const struct timespec *req)
{
	if (!wanted() || !req || !readable(clk))
		return;
	int64_t t = ts_ns(req);
	if (t < 0)
		return;
	if (!(flags & TIMER_ABSTIME)) {
		uint64_t now = rto_now_ns();
		announce(now + (uint64_t)t, now, 0);
		return;
	}
	announce_abs(clk, (uint64_t)t, 0);
}

void rto_wake_after_ns(uint64_t ns)
{
	if (!wanted())
		return;
	uint64_t now = rto_now_ns();
	announce(now + ns, now, 0);
}

/*
 * A blocking read of a timerfd ends at its next expiry (one already due
 * and not read: at once, and the word says a period late, the cost of one
 * badly placed window).  A read that drains a timerfd epoll said had
 * fired does not wait, but the loop's next calls come after the next
 * expiry all the same: the same word (predict.c learns how late they
 * come from the word its last burst saw).
 */
void rto_wake_on_read(int fd)
{
	clockid_t clk;
	uint64_t at;

	if (!wanted() || rto_timerfd_next(fd, &clk, &at) != 0)
		return;
	announce_abs(clk, at, 0);
}

/*
 * A wait for signals: those in *set (members: sigwait, sigwaitinfo,
 * sigtimedwait), or those not in it (sigsuspend's mask).  A POSIX timer
 * the program armed to send one of them ends it at its next expiry, as a
 * timerfd ends a read; a timeout ts (NULL: none) ends it at the latest.
 * Whichever comes first is the word.  Only the first 64 signals: the
 * kernel reads no more of a sigset_t.
 */
void rto_wake_on_signals(const sigset_t *set, int members, const struct timespec *ts)
{
	uint64_t mask, in;

	if (!wanted())
		return;
	if (!set || rto_signal_copy_guarded(&mask, set, sizeof(mask)) != 0)
		return; /* the call fails with EFAULT, as it would without us */
	int timer = rto_timer_next(members ? mask : ~mask, &in) == 0;
	int64_t limit = ts ? ts_ns(ts) : -1;
	uint64_t now = rto_now_ns();
	if (timer && (limit < 0 || in <= (uint64_t)limit))
		announce(now + in, now, 0);
	else if (limit > 0)
		announce(now + (uint64_t)limit, now, RTO_WAKE_BOUND);
}

/* A relative timeout of ns (0: the call does not wait). */
static void by_ns(uint64_t ns)
{
	if (!ns)
		return;
	uint64_t now = rto_now_ns();
	announce(now + ns, now, RTO_WAKE_BOUND);
}

void rto_wake_by_ms(int ms)
{
	if (ms > 0 && wanted())
		by_ns((uint64_t)ms * 1000000);
}

void rto_wake_by_tv(const struct timeval *tv)
{
	struct timeval v;

	if (!tv || !wanted() || rto_signal_copy_guarded(&v, tv, sizeof(v)) != 0)
		return;
	if (v.tv_sec < 0 || v.tv_sec > INT32_MAX || v.tv_usec < 0 || v.tv_usec >= 1000000)
		return; /* EINVAL: the call says */
	by_ns((uint64_t)v.tv_sec * NS_PER_S + (uint64_t)v.tv_usec * 1000);
}

void rto_wake_by_ts(const struct timespec *ts)
{
	if (!ts || !wanted())
		return;
	int64_t t = ts_ns(ts);
	if (t > 0)
		by_ns((uint64_t)t);
}

void rto_wake_by_clock(clockid_t clk, const struct timespec *abs)
{
	if (!abs || !wanted() || !readable(clk))
		return;
	int64_t t = ts_ns(abs);
	if (t >= 0)
		announce_abs(clk, (uint64_t)t, RTO_WAKE_BOUND);
}

/*
 * pthread_cond_timedwait's deadline is on the clock the condition
 * variable was made with (pthread_condattr_setclock).  glibc (2.25 and
 * later) keeps it in __wrefs, set only by pthread_cond_init: bit 1 is
 * CLOCK_MONOTONIC, otherwise CLOCK_REALTIME, and reads it with a relaxed
 * load as we do (nptl/pthread_cond_wait.c).  Another C library: no word.
 */
void rto_wake_by_cond(const pthread_cond_t *c, const struct timespec *abs)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 25))
	unsigned wrefs;

	if (!c || !abs || !wanted() ||
	    rto_signal_copy_guarded(&wrefs, &c->__data.__wrefs, sizeof(wrefs)) != 0)
		return;
	rto_wake_by_clock(wrefs & 2 ? CLOCK_MONOTONIC : CLOCK_REALTIME, abs);
#else
	(void)c;
	(void)abs;
#endif
}
