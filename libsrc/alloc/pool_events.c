/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * malloc=pool, pool_full=fallback|fail: where in the program did a pool
 * run out?  The realtime side notes only the interposer's return address
 * (the program's call site) and counts it in a small table: a hash, a few
 * probes, a compare-and-swap to claim a slot and an atomic add.  No stack
 * walk, no lock, no system call.  The reporting side (helper worker 0 when
 * idle, and the library's destructor before the exit report) names each
 * site (callsite.c: libunwind's reading of the ELF symbols, else dladdr),
 * reports it once and adds its new events to callsite.c's site table,
 * which the exit report and JSON list.
 *
 * Only the immediate caller is known: a C++ new's site is operator new.
 */
#include "rto_malloc.h"
#include "callsite.h"
#include "fn.h"
#include "futex.h"
#include "report.h"

#define SLOTS  64 /* power of two */
#define PROBES 8

static struct rto_counters no_counters;
static struct rto_fn fns[RTO_POOL_FN_COUNT] = {
	{.name = "malloc", .cls = RTO_CLASS_INTERNAL, .handling = RTO_LOCAL, .ctr = &no_counters},
	{.name = "calloc", .cls = RTO_CLASS_INTERNAL, .handling = RTO_LOCAL, .ctr = &no_counters},
	{.name = "realloc", .cls = RTO_CLASS_INTERNAL, .handling = RTO_LOCAL, .ctr = &no_counters},
	{.name = "memalign", .cls = RTO_CLASS_INTERNAL, .handling = RTO_LOCAL, .ctr = &no_counters},
};

struct slot {
	uintptr_t key;	  /* return address << 2 | function; 0: free */
	uint64_t count;	  /* events, the realtime side's */
	uint64_t flushed; /* of them, handed to callsite.c: the flusher's */
};

static struct slot slots[SLOTS] __attribute__((aligned(RTO_CACHELINE)));
static uint64_t unplaced; /* events of sites past a full table */
static int32_t dirty __attribute__((aligned(RTO_CACHELINE))); /* counts to flush */
static int32_t flushing;

const char *rto_pool_fn_name(int fn)
{
	return fns[fn].name;
}

void rto_pool_event(int fn, const void *ip)
{
	uintptr_t key = (uintptr_t)ip << 2 | (uintptr_t)fn;
	unsigned h = (unsigned)((key * 0x9e3779b97f4a7c15u) >> 58);

	for (unsigned i = 0; i < PROBES; i++) {
		struct slot *s = &slots[(h + i) & (SLOTS - 1)];
		uintptr_t seen = CMM_LOAD_SHARED(s->key);
		if (seen == 0)
			seen = uatomic_cmpxchg(&s->key, 0, key);
		if (seen == 0 || seen == key) {
			uatomic_inc(&s->count); /* full barrier: the key before the count */
			if (!CMM_LOAD_SHARED(dirty))
				CMM_STORE_SHARED(dirty, 1);
			return;
		}
	}
	uatomic_inc(&unplaced);
}

/*
 * Not on a realtime thread.  One flusher at a time (a flag, waited for
 * only at exit).  dirty is cleared, then a full barrier, then the scan;
 * the realtime side adds (a full barrier), then looks at dirty: one of
 * the two sees the other, so an event is flushed now or next time.
 */
void rto_pool_events_flush(int wait)
{
	/* At exit: the report must see what worker 0 may be flushing now (a bounded wait). */
	uint64_t until = wait ? rto_now_ns() + 1000000000u : 0;
	while (wait && CMM_LOAD_SHARED(flushing) && rto_now_ns() < until)
		caa_cpu_relax();
	if (!CMM_LOAD_SHARED(dirty) || uatomic_cmpxchg(&flushing, 0, 1) != 0)
		return;
	uatomic_set(&dirty, 0);
	cmm_smp_mb();
	for (unsigned i = 0; i < SLOTS; i++) {
		struct slot *s = &slots[i];
		uintptr_t key = CMM_LOAD_SHARED(s->key);
		uint64_t count = uatomic_read(&s->count);
		if (!key || count == s->flushed)
			continue;
		rto_callsite_at_ip(RTO_EVENT_POOL_FULL, &fns[key & 3], key >> 2,
				   count - s->flushed);
		s->flushed = count;
	}
	uint64_t lost = uatomic_read(&unplaced);
	static uint64_t said;
	if (lost != said) {
		said = lost;
		rto_say(1, "malloc=pool: %lu pool_full events from sites past the table's %d",
			(unsigned long)lost, SLOTS);
	}
	cmm_smp_mb();
	uatomic_set(&flushing, 0);
}

/* fork()ed child: worker 0 is gone, maybe in the middle of a flush. */
void rto_pool_events_after_fork(void)
{
	flushing = 0;
}
