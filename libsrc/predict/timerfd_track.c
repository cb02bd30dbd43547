/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The timerfds the program armed (timerfd_track.h): what a read of one
 * waits for, known without a system call.
 */
#include "timerfd_track.h"
#include "timer_seq.h"

#include <time.h>

struct entry {
	uint32_t seq;	   /* odd: being written */
	int32_t clk1;	   /* timerfd_create's clock + 1; 0: not a timerfd we follow */
	uint64_t first;	   /* the first expiry, ns on clk; 0: disarmed */
	uint64_t interval; /* ns; 0: a one-shot */
};

static struct entry table[RTO_TIMERFD_MAX];
static int used; /* a timerfd was ever made: closes look at the table */

static struct entry *writing(int fd)
{
	if (fd < 0 || fd >= RTO_TIMERFD_MAX || !rto_seq_write_begin(&table[fd].seq))
		return NULL;
	return &table[fd];
}

static void written(struct entry *e)
{
	rto_seq_write_end(&e->seq);
}

/*
 * Release stores of the fields, acquire loads in the reader (no fences:
 * ThreadSanitizer does not model them): a reader that sees a field this
 * writer stored then sees the odd word, or a later one, on its second look.
 */
static void store(struct entry *e, int clk, uint64_t first, uint64_t interval)
{
	__atomic_store_n(&e->clk1, clk + 1, __ATOMIC_RELEASE);
	__atomic_store_n(&e->first, first, __ATOMIC_RELEASE);
	__atomic_store_n(&e->interval, interval, __ATOMIC_RELEASE);
}

void rto_timerfd_created(int fd, int clk, int flags)
{
	(void)flags;
	if (fd < 0)
		return;
	if (!__atomic_load_n(&used, __ATOMIC_RELAXED))
		__atomic_store_n(&used, 1, __ATOMIC_RELAXED);
	struct entry *e = writing(fd);
	if (!e)
		return;
	store(e, rto_timer_clock_followed(clk) ? clk : -1, 0, 0);
	written(e);
}

void rto_timerfd_set(int ret, int fd, int flags, const struct itimerspec *nv)
{
	struct timespec now;

	if (fd < 0 || fd >= RTO_TIMERFD_MAX || !__atomic_load_n(&used, __ATOMIC_RELAXED))
		return;
	struct entry *e = writing(fd);
	if (!e)
		return;
	int clk = __atomic_load_n(&e->clk1, __ATOMIC_RELAXED) - 1;
	/*
	 * The kernel has just read nv (ret 0), so it is the program's own
	 * readable memory.  A relative first expiry counts from our look at
	 * the clock, a little after the kernel's: a later word by that much,
	 * which the helper's window covers.  A failed call changed nothing,
	 * but our entry may be stale: dropped.
	 */
	if (ret != 0 || clk < 0 ||
	    (!(flags & TFD_TIMER_ABSTIME) && clock_gettime(clk, &now) != 0)) {
		store(e, -1, 0, 0);
	} else {
		uint64_t first = rto_timespec_ns(&nv->it_value),
			 interval = rto_timespec_ns(&nv->it_interval);
		if (first && !(flags & TFD_TIMER_ABSTIME))
			first += rto_timespec_ns(&now);
		store(e, clk, first, interval);
	}
	written(e);
}

void rto_timerfd_forget(int fd)
{
	if (fd < 0 || fd >= RTO_TIMERFD_MAX ||
	    RTO_LIKELY(!__atomic_load_n(&used, __ATOMIC_RELAXED)))
		return;
	if (!__atomic_load_n(&table[fd].clk1, __ATOMIC_RELAXED) &&
	    !__atomic_load_n(&table[fd].first, __ATOMIC_RELAXED))
		return; /* nothing known: the common close */
	struct entry *e = writing(fd);
	if (!e)
		return;
	store(e, -1, 0, 0);
	written(e);
}

int rto_timerfd_next(int fd, clockid_t *clk, uint64_t *at)
{
	struct timespec now;

	if (fd < 0 || fd >= RTO_TIMERFD_MAX || !__atomic_load_n(&used, __ATOMIC_RELAXED))
		return -1;
	struct entry *e = &table[fd];
	uint32_t s = __atomic_load_n(&e->seq, __ATOMIC_ACQUIRE);
	int c = __atomic_load_n(&e->clk1, __ATOMIC_ACQUIRE) - 1;
	uint64_t first = __atomic_load_n(&e->first, __ATOMIC_ACQUIRE);
	uint64_t interval = __atomic_load_n(&e->interval, __ATOMIC_ACQUIRE);
	if ((s & 1) || __atomic_load_n(&e->seq, __ATOMIC_RELAXED) != s || c < 0 || !first ||
	    clock_gettime(c, &now) != 0)
		return -1;
	uint64_t next;
	if (rto_timer_next_expiry(first, interval, rto_timespec_ns(&now), &next) != 0)
		return -1; /* a one-shot that expired: nothing more comes */
	*clk = c;
	*at = next;
	return 0;
}
