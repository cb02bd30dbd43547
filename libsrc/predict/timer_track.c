/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The POSIX timers the program armed to signal it (timer_track.h): when
 * a wait for their signal ends, known without a system call.
 */
#include "timer_track.h"
#include "timer_seq.h"

#include <stddef.h>
#include <string.h>
#include <time.h>

struct entry {
	uint32_t seq;	   /* odd: being written */
	int32_t signo;	   /* the signal it sends; 0: a free entry */
	uintptr_t id;	   /* glibc's timer_t */
	int32_t clk;	   /* its clock */
	uint64_t first;	   /* the first expiry, ns on clk; 0: disarmed */
	uint64_t interval; /* ns; 0: a one-shot */
};

static struct entry table[RTO_TIMER_MAX];
static uint32_t high; /* entries ever used: the reader looks at no more */

static struct entry *writing(struct entry *e)
{
	return rto_seq_write_begin(&e->seq) ? e : NULL;
}

static void written(struct entry *e)
{
	rto_seq_write_end(&e->seq);
}

/* Release stores, acquire loads in the reader (no fences: ThreadSanitizer does not model them). */
static void store(struct entry *e, int signo, int clk, uint64_t first, uint64_t interval)
{
	__atomic_store_n(&e->signo, signo, __ATOMIC_RELEASE);
	__atomic_store_n(&e->clk, clk, __ATOMIC_RELEASE);
	__atomic_store_n(&e->first, first, __ATOMIC_RELEASE);
	__atomic_store_n(&e->interval, interval, __ATOMIC_RELEASE);
}

/* The entry of timer id, taken for writing; NULL: none, or it is being written. */
static struct entry *entry_of(uintptr_t id)
{
	uint32_t n = __atomic_load_n(&high, __ATOMIC_ACQUIRE);

	for (uint32_t i = 0; i < n; i++) {
		struct entry *e = &table[i];
		if (__atomic_load_n(&e->signo, __ATOMIC_RELAXED) &&
		    __atomic_load_n(&e->id, __ATOMIC_RELAXED) == id)
			return writing(e);
	}
	return NULL;
}

/* A free entry, taken for writing; NULL: the table is full. */
static struct entry *free_entry(void)
{
	for (uint32_t i = 0; i < RTO_TIMER_MAX; i++) {
		struct entry *e = &table[i];
		if (__atomic_load_n(&e->signo, __ATOMIC_RELAXED) || !writing(e))
			continue;
		if (!__atomic_load_n(&e->signo, __ATOMIC_RELAXED)) {
			uint32_t n = __atomic_load_n(&high, __ATOMIC_RELAXED);
			while (n <= i &&
			       !__atomic_compare_exchange_n(&high, &n, i + 1, 0, __ATOMIC_RELEASE,
							    __ATOMIC_RELAXED))
				;
			return e;
		}
		written(e); /* another writer's meanwhile */
	}
	return NULL;
}

/* What the signal a timer sends is: 0, none we follow (SIGEV_NONE, SIGEV_THREAD). */
static int signal_of(const struct sigevent *sevp)
{
	if (!sevp) /* POSIX: as SIGEV_SIGNAL with SIGALRM */
		return SIGALRM;
	if (sevp->sigev_notify != SIGEV_SIGNAL && sevp->sigev_notify != SIGEV_THREAD_ID)
		return 0;
	return sevp->sigev_signo > 0 && sevp->sigev_signo <= 64 ? sevp->sigev_signo : 0;
}

void rto_timer_created(int ret, clockid_t clk, const struct sigevent *sevp, const timer_t *id)
{
	if (ret != 0)
		return;
	/* The kernel gave this id out anew: whatever we knew under it is gone. */
	uintptr_t t = (uintptr_t)*id;
	struct entry *e = entry_of(t);
	if (e) {
		store(e, 0, 0, 0, 0);
		written(e);
	}
	int signo = signal_of(sevp);
	if (!signo || !rto_timer_clock_followed(clk) || !(e = free_entry()))
		return;
	__atomic_store_n(&e->id, t, __ATOMIC_RELEASE);
	store(e, signo, clk, 0, 0);
	written(e);
}

void rto_timer_set(int ret, timer_t id, int flags, const struct itimerspec *nv)
{
	struct timespec now;
	struct entry *e = entry_of((uintptr_t)id);

	if (!e)
		return;
	int signo = __atomic_load_n(&e->signo, __ATOMIC_RELAXED);
	int clk = __atomic_load_n(&e->clk, __ATOMIC_RELAXED);
	/*
	 * The kernel has just read nv (ret 0): the program's own readable
	 * memory.  A relative first expiry counts from our look at the clock,
	 * a little after the kernel's.  A failed call changed nothing, but
	 * what we knew may be stale: disarmed, as far as we know.
	 */
	if (ret != 0 || (!(flags & TIMER_ABSTIME) && clock_gettime(clk, &now) != 0)) {
		store(e, signo, clk, 0, 0);
	} else {
		uint64_t first = rto_timespec_ns(&nv->it_value),
			 interval = rto_timespec_ns(&nv->it_interval);
		if (first && !(flags & TIMER_ABSTIME))
			first += rto_timespec_ns(&now);
		store(e, signo, clk, first, interval);
	}
	written(e);
}

void rto_timer_deleted(int ret, timer_t id)
{
	if (ret != 0)
		return;
	struct entry *e = entry_of((uintptr_t)id);
	if (!e)
		return;
	store(e, 0, 0, 0, 0);
	written(e);
}

/* The child's only thread, before it runs anything else (fork.c). */
void rto_timer_after_fork(void)
{
	memset(table, 0, sizeof(table));
	__atomic_store_n(&high, 0, __ATOMIC_RELEASE);
}

/* Entry e's next expiry from now, in ns; -1: none to come, or being written. */
static int64_t next_of(const struct entry *e, uint64_t signals)
{
	struct timespec now;
	uint32_t s = __atomic_load_n(&e->seq, __ATOMIC_ACQUIRE);
	int signo = __atomic_load_n(&e->signo, __ATOMIC_ACQUIRE);
	int clk = __atomic_load_n(&e->clk, __ATOMIC_ACQUIRE);
	uint64_t first = __atomic_load_n(&e->first, __ATOMIC_ACQUIRE);
	uint64_t interval = __atomic_load_n(&e->interval, __ATOMIC_ACQUIRE);

	if ((s & 1) || __atomic_load_n(&e->seq, __ATOMIC_RELAXED) != s || !signo || !first ||
	    !((signals >> (signo - 1)) & 1) || clock_gettime(clk, &now) != 0)
		return -1;
	uint64_t n = rto_timespec_ns(&now), next;
	if (rto_timer_next_expiry(first, interval, n, &next) != 0)
		return -1; /* a one-shot that fired: nothing more comes */
	return (int64_t)(next - n);
}

int rto_timer_next(uint64_t signals, uint64_t *in_ns)
{
	uint32_t n = __atomic_load_n(&high, __ATOMIC_ACQUIRE);
	int64_t best = -1;

	for (uint32_t i = 0; i < n && signals; i++) {
		int64_t d = next_of(&table[i], signals);
		if (d >= 0 && (best < 0 || d < best))
			best = d;
	}
	if (best < 0)
		return -1;
	*in_ns = (uint64_t)best;
	return 0;
}
