/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Asynchronous writes, for logging: policy=stdio:async or write:async, or
 * async_path=PREFIX,...: the descriptors and streams whose file lies under
 * one of the prefixes (fdclass.c learns that where they are born), whatever
 * policy= says of the call.
 *
 * A marked thread's write/fwrite/fputs/puts/fputc/fprintf... copies its
 * bytes into its own preallocated ring (async_ring_kb) and returns at once
 * with the count; a helper writes them later.  Each entry takes a number
 * from one global sequence when it is accepted, and the helper writes the
 * entries of all rings in that order, so per descriptor or stream the
 * bytes land in the order the calls were made, across threads too.
 *
 * Nothing accepted is lost: fsync, fdatasync, fclose, close and pclose
 * first wait until everything accepted before them is written (in any
 * thread, marked or not: "flush" in calls.tbl), and so does exit (the
 * library's destructor).  fflush of a stream whose writes are queued
 * (async:flush) does not wait on a marked thread: it queues a mark (fd
 * RTO_ASYNC_FLUSH, no bytes), and the drain flushes the stream when it
 * gets there, after the bytes before it (docs/async.md); an unmarked
 * thread's fflush waits as before.  A write that fails later is reported and its
 * errno returned by the next async call on that descriptor.  A full ring
 * waits for the helper (async_full=wait) or turns the call into a
 * synchronous offload (async_full=sync); both are counted.  abort()
 * called by the program writes what is queued first (and flushes the
 * streams it wrote to) before it raises SIGABRT.  Not saved: what is still
 * queued when the process dies by a signal with no handler, by an abort()
 * inside libc (a failed assert(), heap corruption, a stack overflow
 * detected), or by _exit() inside a signal handler (_exit() elsewhere
 * writes the queue, and leaves the streams' buffers as they are).
 *
 * Ring, producer side (the caller's realtime path): single producer, no
 * lock, no system call; the sequence number is one uatomic_add_return.
 * Nobody is asked to drain while a worker is awake: the polling worker
 * writes what the rings hold once per polling round, a worker about to
 * sleep first writes what waits (helper.c, rto_helpers_on_queued), and
 * worker 0 sleeps at most RTO_ASYNC_LOOK_NS while lines come (look()).
 * Only when every worker sleeps untimed, or the ring is a quarter full
 * with every worker asleep, does a put queue a drain notice and wake one
 * (FUTEX_WAKE).  So a line moves to the helpers' CPU with the lines
 * queued after it, not one request and a few shared lines per line
 * (issue 30: an async fprintf within ~150 ns of a buffered one).
 *
 * A helper never waits for a lock that a marked thread may hold while it
 * waits for a helper (a stream's, taken by stdio_lock.c for its call, or
 * the drain lock of a flushing thread): a drain that finds one taken
 * returns and leaves a note (stalled); the marked thread that releases a
 * stream lock (stdio_lock.c) queues the drain again, and so do flush
 * points, exit, an async write that finds every worker asleep, and an
 * idle helper every RTO_ASYNC_RETRY_NS (an unmarked thread's release
 * passes through none of these).  A marked thread whose flush makes no
 * progress that way (it holds the lock itself) writes the queue itself.
 *
 * A drain notice (every worker asleep) is queued again only once the
 * helper that ran it last has finished with it (its state DONE, after
 * which a helper never touches a request).  Each ring has two, so that a
 * producer that arms its ring while a helper still finishes the last
 * drain (writing the lines, or a queued fflush's write) queues the other
 * one instead of waiting; only when both are still running (two helpers
 * at once) does it wait for one, as a caller waits for its own request.
 */
#include "async_opts.h"
#include "rto_fast.h"
#include "self.h"
#include "fn.h"
#include "async.h"
#include "async_path.h"
#include "policy.h"
#include "callsite.h"
#include "resolve.h"
#include "route.h"
#include "fdclass.h"
#include "transport.h"
#include "helper.h"
#include "signals.h"
#include "stdio_lock.h"
#include "futex.h"
#include "backstop.h"
#include "stats.h"
#include "report.h"
#include "real.h"
#include "route_state.h"
#include "trace.h"
#include "vformat.h"
#include "stream_put.h"

#include "rtoffload.h"

#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define MAX_RINGS 64
#define SKIP	  UINT32_MAX /* entry that sends the reader back to the ring's start */

struct entry {
	uint64_t seq; /* global order; written before the entry is published */
	uint32_t len; /* bytes of data, or SKIP */
	int32_t fd;   /* write(fd), or -1 */
	FILE *f;      /* fwrite(f), or NULL */
};

/*
 * The producer's fields, the drainer's tail and the arming flag each on a
 * line of their own: a put moves no line the drainer writes unless the
 * ring looks full (then it reads the tail again) or it arms the ring.
 */
#define RING_TARGETS 4 /* streams, and descriptors, a ring's pending entries are known to write */

/*
 * What a ring's entries since it was last empty write to (the producer's
 * own, for order_before_call): n past RING_TARGETS, more than that, and
 * any may have one.
 */
struct targets {
	uintptr_t v[RING_TARGETS];
	unsigned n;
};

struct ring {
	char *buf;
	uint64_t cap;		/* power of two */
	uint64_t head;		/* written by the producer: published bytes */
	uint64_t tail_seen;	/* the producer's last look at tail */
	struct targets streams; /* the FILE *s */
	struct targets fds;	/* the descriptors: write()'s, and a stream's fileno */
	uint64_t tail __attribute__((aligned(64))); /* written by the drainer: consumed bytes */
	int32_t armed __attribute__((aligned(64))); /* a drain notice for this ring is queued */
	struct rto_req notice[2];
};

static struct ring rings[MAX_RINGS];
static int nrings;
/* Apart: producers take numbers, the drain writes written_seq at every entry. */
static uint64_t next_seq __attribute__((aligned(64))); /* last number taken */
static uint64_t written_seq
	__attribute__((aligned(64))); /* every entry up to this one is written; under drain_lock */
static pthread_mutex_t drain_lock = PTHREAD_MUTEX_INITIALIZER;
struct rto_async_flag rto_async_on;
static __thread struct ring *my_ring RTO_TLS;

#define FD_ERRS 65536
static int deferred_err[FD_ERRS]; /* errno of a failed write, for the next call */
/*
 * Entries a helper writes into a stream (fwrite, a queued fflush) that
 * are not written yet, in every ring: while there is one, a write to a
 * stream is queued the same way, behind it, not buffered on the caller
 * (stream_put.c), whose bytes would go ahead of it.  Such entries are the
 * rare ones (a stream whose lock another thread held, a memory or cookie
 * stream): most puts find 0 on a line nobody writes.
 */
static uint64_t stream_entries __attribute__((aligned(64)));

/*
 * Set (for good) by the first failed write: until then a put does not
 * look up its stream's descriptor, whose FILE the drain writes (a line
 * the producer would otherwise fetch from the helper's CPU at each put).
 */
static int deferred_any __attribute__((aligned(64)));

/* ---- the drainer (a helper, or whoever must flush) ---------------------------- */

/* 1: written (or failed, and reported); 0: its stream's lock is taken, later. */
static int write_entry(const struct entry *e, const char *data)
{
	int fd = e->f ? rto_fd_of_file(e->f) : e->fd;
	size_t done = 0;
	int ok;

	if (e->f) {
		if (ftrylockfile(e->f) != 0)
			return 0;
		if (e->fd ==
		    RTO_ASYNC_FLUSH) /* a queued fflush: what came before is in f's buffer */
			ok = rto_real_fflush_unlocked(e->f) == 0;
		else
			ok = (done = rto_real_fwrite(data, 1, e->len, e->f)) == e->len;
		funlockfile(e->f);
	} else {
		while (done < e->len) {
			ssize_t n = rto_real_write(e->fd, data + done, e->len - done);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			done += (size_t)n;
		}
		ok = done == e->len;
	}
	if (ok)
		return 1;
	int err = errno ? errno : EIO;
	if (fd >= 0 && fd < FD_ERRS)
		uatomic_set(&deferred_err[fd], err);
	if (!CMM_LOAD_SHARED(deferred_any))
		uatomic_set(&deferred_any, 1);
	rto_say(0, "async %s of %u bytes to fd %d failed: %s (returned by its next call)",
		e->fd == RTO_ASYNC_FLUSH ? "fflush" : "write", e->len, fd, strerror(err));
	return 1;
}

/* The published entry at r's tail, past any SKIP; NULL if none. */
static struct entry *peek(struct ring *r)
{
	for (;;) {
		uint64_t head = CMM_LOAD_SHARED(r->head);
		if (r->tail == head)
			return NULL;
		cmm_smp_rmb(); /* the entry is complete once head covers it */
		struct entry *e = (struct entry *)(r->buf + (r->tail & (r->cap - 1)));
		if (e->len != SKIP)
			return e;
		/* Read by the producer (reserve) and the live view: as write_next stores it. */
		cmm_smp_mb();
		CMM_STORE_SHARED(r->tail, r->tail + r->cap - (r->tail & (r->cap - 1)));
	}
}

/*
 * Entries are multiples of 32 bytes, the header's size rounded up, so the
 * space left before the ring's end always holds at least a SKIP header.
 */
#define GRAIN 32u
_Static_assert(sizeof(struct entry) <= GRAIN, "an entry header fits in a grain");

static uint64_t entry_size(uint32_t len)
{
	return ((uint64_t)sizeof(struct entry) + len + GRAIN - 1) & ~(uint64_t)(GRAIN - 1);
}

/*
 * Write the entry numbered seq if it is published: 1 written, 0 not
 * published yet, -1 its stream's lock is taken.  Under drain_lock.  Its
 * stream, if it has one, goes to *f.
 */
static int write_next(uint64_t seq, FILE **f)
{
	int n = CMM_LOAD_SHARED(nrings);

	for (int i = 0; i < n; i++) {
		struct ring *r = &rings[i];
		if (!CMM_LOAD_SHARED(r->buf))
			continue; /* its slot is taken, the ring not yet made (published last) */
		struct entry *e = peek(r);
		if (!e || e->seq != seq)
			continue;
		*f = e->f;
		if (!write_entry(e, (const char *)(e + 1)))
			return -1;
		if (e->f)
			uatomic_dec(&stream_entries); /* after its bytes reached the stream */
		cmm_smp_mb(); /* done with the bytes before the producer may reuse them */
		CMM_STORE_SHARED(r->tail, r->tail + entry_size(e->len));
		return 1;
	}
	return 0;
}

enum { DRAINED, DRAIN_BUSY, DRAIN_LOCKED };

/*
 * The streams drains wrote to, flushed by abort(): what a drain wrote is
 * the program's as far as it knows, even when a flush point (a sanitizer's
 * own abort() flushes stdout first) moved it into the stream's buffer
 * before abort() ran.  Added under drain_lock; fclose() and pclose() take
 * their stream out before it is freed (rto_async_forget_stream).  Past
 * MAX_RINGS streams, the others are not flushed at abort().
 */
static FILE *written_streams[MAX_RINGS];

static void note_stream(FILE *f)
{
	int free_slot = -1;

	for (int k = 0; k < MAX_RINGS; k++) {
		FILE *s = CMM_LOAD_SHARED(written_streams[k]);
		if (s == f)
			return;
		if (!s && free_slot < 0)
			free_slot = k;
	}
	if (free_slot >= 0)
		uatomic_cmpxchg(&written_streams[free_slot], NULL, f);
}

void rto_async_forget_stream(FILE *f)
{
	if (RTO_LIKELY(!CMM_LOAD_SHARED(rto_async_on.used)) || !f)
		return;
	for (int k = 0; k < MAX_RINGS; k++)
		if (CMM_LOAD_SHARED(written_streams[k]) == f)
			uatomic_cmpxchg(&written_streams[k], f, NULL);
}

/*
 * Set while this thread drains (drain_lock held): a flush point reached
 * from inside the drain (a sanitizer's report closing its files, a
 * fopencookie stream's write function calling close) must not drain again.
 */
static __thread int draining RTO_TLS;

/*
 * Write in sequence until `upto` (or until nothing more is published).  A
 * number taken but not yet published (its producer is between the two
 * stores) is waited for briefly; a producer preempted there re-arms its
 * ring when it publishes, so nothing waits for ever.  must: wait for
 * everything (a flushing thread, exit); otherwise (a helper) give up with
 * DRAIN_BUSY on a stream lock that is taken.
 */
static int drain_locked(uint64_t upto, int must)
{
	FILE *f = NULL, *noted = NULL;
	int ret = DRAINED;

	draining = 1;
	while (written_seq < upto) {
		int spins = 0, w;
		while ((w = write_next(written_seq + 1, &f)) <= 0 &&
		       (must || (w == 0 && ++spins < 1000)))
			caa_cpu_relax();
		if (w < 0)
			ret = DRAIN_BUSY;
		if (w <= 0)
			break;
		uatomic_set(&written_seq, written_seq + 1); /* barriers read it unlocked */
		if (f && f != noted) /* one scan per run of lines to the same stream */
			note_stream(noted = f);
	}
	draining = 0;
	return ret;
}

static int drain_until(uint64_t upto, int must)
{
	if (must)
		rto_mutex_lock(&drain_lock);
	else if (rto_mutex_trylock(&drain_lock) != 0)
		return DRAIN_LOCKED; /* another drains meanwhile */
	int ret = drain_locked(upto, must);
	rto_mutex_unlock(&drain_lock);
	return ret;
}

static int32_t stalled;	       /* a helper's drain gave up on a taken lock */
static uint64_t stalled_since; /* its rto_now_ns(), for queued() */

static void stall(void)
{
	CMM_STORE_SHARED(stalled_since, rto_now_ns());
	uatomic_set(&stalled, 1);
}

static void run_drain(void *arg);
RTO_FN_FULL(async_drain, RTO_CLASS_INTERNAL, RTO_OFFLOAD, run_drain, RTO_F_INTERNAL);

/* Queued by whoever releases what a drain waited for (rto_async_kick). */
static struct rto_req kick_notice = {
	.fn = &rto_fn_async_drain, .args = &kick_notice, .state = RTO_REQ_DONE};
static int32_t kick_armed;

static void run_drain(void *arg)
{
	struct ring *r = arg;
	int saved = errno;

	if (arg == &kick_notice)
		uatomic_set(&kick_armed, 0);
	else if (r)
		uatomic_set(&r->armed, 0); /* before draining: later entries re-arm */
	if (drain_until(CMM_LOAD_SHARED(next_seq), 0) != DRAINED)
		stall();
	errno = saved;
}

/*
 * helper.c's hooks for an awake worker (rto_helpers_on_queued): lines
 * wait, and no drain gave up on them lately (those wait for a kick, for
 * rto_async_retry, or for RTO_ASYNC_RETRY_NS to pass).  A worker asks
 * after its awake-- when it means to sleep, which pairs with arm()'s look
 * at awake after the number taken.
 */
static int queued(void)
{
	if (!CMM_LOAD_SHARED(rto_async_on.used))
		return 0;
	/* Stalled: again after RTO_ASYNC_RETRY_NS, for a worker that polls and never sleeps. */
	if (RTO_UNLIKELY(CMM_LOAD_SHARED(stalled)) &&
	    rto_now_ns() - CMM_LOAD_SHARED(stalled_since) < RTO_ASYNC_RETRY_NS)
		return 0;
	return uatomic_read(&written_seq) < uatomic_read(&next_seq);
}

/*
 * Worker 0, about to sleep (helper.c's idle_look): while lines come, it
 * sleeps at most RTO_ASYNC_LOOK_NS and writes them when it wakes, and
 * `ticking` tells the threads that queue them that it will: they need no
 * FUTEX_WAKE (arm()).  After RTO_ASYNC_QUIET_LOOKS looks with no new line
 * it stops: ticking cleared (a full barrier), then a last look at the
 * numbers taken, which pairs with arm()'s load of ticking after its own.
 */
#define RTO_ASYNC_LOOK_NS     (1000L * 1000)
#define RTO_ASYNC_QUIET_LOOKS 100
static int32_t ticking __attribute__((aligned(64))); /* read by every put with no worker awake */
static uint64_t look_seen;			     /* worker 0's only */
static int quiet_looks;

static long look(void)
{
	uint64_t taken = uatomic_read(&next_seq);

	if (!CMM_LOAD_SHARED(rto_async_on.used))
		return 0;
	if (taken != look_seen) {
		look_seen = taken;
		quiet_looks = 0;
	}
	if (quiet_looks < RTO_ASYNC_QUIET_LOOKS) {
		quiet_looks++;
		if (!CMM_LOAD_SHARED(ticking))
			uatomic_xchg(&ticking, 1);
		return RTO_ASYNC_LOOK_NS;
	}
	if (CMM_LOAD_SHARED(ticking))
		uatomic_xchg(&ticking, 0); /* once: the line every put with no worker awake reads */
	return queued() ? 1 : 0;	   /* a line came meanwhile: wake at once and write it */
}

/*
 * At most RTO_ASYNC_BATCH lines a call, so that a caller's request waits
 * for no more than that (helper.c drains again until none waits).  A
 * drain that writes nothing (a stream's lock taken, the drain lock held
 * by a flushing thread, a number taken by a thread preempted before it
 * published its line) is stalled: queued() then says no, so that no
 * worker spins on it, and idle workers retry every RTO_ASYNC_RETRY_NS
 * (rto_async_retry), as a put that finds every worker asleep does.
 */
#define RTO_ASYNC_BATCH 64

static void idle_drain(void)
{
	int saved = errno;
	uint64_t from = uatomic_read(&written_seq), taken = uatomic_read(&next_seq);
	uint64_t upto = taken - from > RTO_ASYNC_BATCH ? from + RTO_ASYNC_BATCH : taken;

	int ret = drain_until(upto, 0);

	if (ret == DRAIN_BUSY || (from < taken && uatomic_read(&written_seq) == from))
		stall();
	else if (RTO_UNLIKELY(CMM_LOAD_SHARED(stalled)))
		uatomic_set(&stalled, 0); /* it moves again */
	errno = saved;
}

/*
 * An idle helper's retry (helper.c): a lock a drain found taken may be
 * released by a thread that never passes through rto_async_kick() (an
 * unmarked thread's funlockfile), and the program may then queue nothing
 * more.  So a helper that goes to sleep while a drain is stalled sleeps
 * at most RTO_ASYNC_RETRY_NS and drains again when it wakes.
 */
int rto_async_stalled(void)
{
	return CMM_LOAD_SHARED(stalled);
}

void rto_async_retry(void)
{
	if (uatomic_xchg(&stalled, 0))
		run_drain(NULL);
}

/* Until the helper that last ran notice n is done with it (it may then be reused). */
static void wait_done(struct rto_req *n)
{
	for (int i = 0; i < 1000; i++) {
		if (CMM_LOAD_SHARED(n->state) == RTO_REQ_DONE)
			return;
		caa_cpu_relax();
	}
	/* Its helper's DONE exchange wakes us (helper.c): the caller's protocol. */
	while (uatomic_cmpxchg(&n->state, RTO_REQ_PENDING, RTO_REQ_WAITING) != RTO_REQ_DONE)
		rto_futex_wait(&n->state, RTO_REQ_WAITING);
}

/* Queue notice n (its *armed flag just taken) once its last run is over. */
static void queue_notice(struct rto_req *n, int prio)
{
	/* The library's own work: its FUTEX_WAKE of a sleeping helper is not the program's call. */
	unsigned char sel = rto_backstop_enter();

	wait_done(n);
	uatomic_set(&n->state, RTO_REQ_PENDING); /* its helper's exchange wrote it atomically */
	n->prio = prio;
	rto_offload_async(n);
	rto_backstop_leave(sel);
}

void rto_async_kick(void)
{
	if (RTO_LIKELY(!CMM_LOAD_SHARED(stalled)) || uatomic_xchg(&kick_armed, 1))
		return;
	uatomic_set(&stalled, 0);
	queue_notice(&kick_notice, rto_self.prio);
}

/* ---- barriers ------------------------------------------------------------------- */

/*
 * An unmarked thread's write: what is queued before it is written first,
 * here, as a helper writes it: never blocking on a stream lock another
 * thread holds (that thread may wait for a lock this one holds, which it
 * would not do without the library), nor for a drain of another's for
 * long.  When one stands in the way, the write goes ahead unordered.
 */
#define ORDER_TRIES 1000

void rto_async_order_slow(void)
{
	if (rto_signal_handler_depth || rto_helper_is_self() || draining || rto_foreign_task())
		return;
	uint64_t upto = uatomic_read(&next_seq);
	for (int i = 0; i < ORDER_TRIES && uatomic_read(&written_seq) < upto; i++) {
		int ret = drain_until(upto, 0);
		if (ret == DRAIN_BUSY)
			return; /* a stream lock is taken */
		if (ret == DRAIN_LOCKED)
			rto_real_sched_yield(); /* another drains: look again */
	}
}

/*
 * Everything accepted so far is written before this returns.  Not on a
 * helper: one reaches a flush wrapper only from code outside the program's
 * own flow (a sanitizer's symbolizer, which closes its files inside a
 * report, where a drain would be reported again and hang; a constructor
 * run by an offloaded dlopen), and the program's writes are not its own.
 */
void rto_async_barrier(void)
{
	if (RTO_LIKELY(!CMM_LOAD_SHARED(rto_async_on.used)) || rto_helper_is_self() || draining ||
	    rto_foreign_task()) /* a clone(CLONE_VM) child: not its descriptors */
		return;
	uint64_t upto = uatomic_read(&next_seq);
	if (uatomic_read(&written_seq) >= upto)
		return;
	/* Unmarked, a handler inside an offload, or under its own filter: write them here. */
	struct rto_decide_in in = {.flags = RTO_F_INTERNAL, .helpers = RTO_HELPERS_READY};
	rto_decide_self(&in);
	int v = rto_decide(&in);
	if (rto_direct() || v == RTO_RUN_LOCAL) {
		drain_until(upto, 1);
		return;
	}
	/*
	 * A strict thread makes no request, and queues nothing itself: what is
	 * queued is other threads', whose rings are armed (a drain is queued
	 * for each), so it waits for the helpers to get there.
	 */
	if (v == RTO_RUN_REFUSE) {
		while (uatomic_read(&written_seq) < upto)
			caa_cpu_relax();
		return;
	}
	for (int stuck = 0; uatomic_read(&written_seq) < upto;) {
		uint64_t before = uatomic_read(&written_seq);
		rto_call(&rto_fn_async_drain, NULL, -1, NULL, 0);
		if (uatomic_read(&written_seq) != before)
			stuck = 0;
		else if (++stuck == 3) {
			/*
			 * The helpers find a stream lock taken, by this thread
			 * (flockfile, then fflush) or by another: write here,
			 * where a lock of our own is no obstacle.
			 */
			drain_until(upto, 1);
			return;
		}
	}
}

/* ---- producer side ------------------------------------------------------------------ */

static void order_before_call(int fd, FILE *f, unsigned how);

void rto_async_thread_marked(void)
{
	if (my_ring || !rto_policy_has_async())
		return;
	int i = uatomic_add_return(&nrings, 1) - 1;
	if (i >= MAX_RINGS) {
		uatomic_add(&nrings, -1);
		rto_say(1, "more than %d threads with async writes: the rest write synchronously",
			MAX_RINGS);
		return;
	}
	uint64_t cap = 4096;
	while (cap < (uint64_t)rto_async_ring_kb() * 1024)
		cap <<= 1;
	void *buf = rto_real_mmap(NULL, cap, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (buf == MAP_FAILED)
		return;
	rings[i].cap = cap;
	for (int k = 0; k < 2; k++) {
		rings[i].notice[k].fn = &rto_fn_async_drain;
		rings[i].notice[k].args = &rings[i];
		rings[i].notice[k].state = RTO_REQ_DONE; /* free */
	}
	CMM_STORE_SHARED(rings[i].buf, (char *)buf);
	uatomic_set(&rto_async_on.used, 1);
	/*
	 * Whether a descriptor is a kernel interface's file (never queued) is
	 * known before its first write: those open now are classified here,
	 * new ones where they are born, so that no queued write asks a helper.
	 */
	rto_fd_eager();
	rto_fd_classify_open();
	rto_route_before_call(order_before_call);
	my_ring = &rings[i];
}

/* More than a quarter of r in use?  The tail is read again only when it looks so. */
static int crowded(struct ring *r)
{
	if (r->head - r->tail_seen <= r->cap / 4)
		return 0;
	r->tail_seen = CMM_LOAD_SHARED(r->tail);
	return r->head - r->tail_seen > r->cap / 4;
}

/*
 * Queue a drain of this ring unless a worker is awake or a drain is
 * queued already; do not wait for it.  An awake worker looks at the
 * rings once per polling round and before it sleeps (helper.c), so a
 * line costs no request and no line of the queue's: only the NEED_WAKEUP
 * test of a caller (transport.c), a load of a line that changes when a
 * worker falls asleep or wakes.  The entry's number was taken with a full
 * barrier, and a worker about to sleep does awake-- (a full barrier) then
 * compares the numbers taken with those written: either it sees this
 * line or we see it asleep.
 */
static void arm(struct ring *r)
{
	if (RTO_LIKELY(CMM_LOAD_SHARED(rto_q->awake) > 0))
		return;
	/* Worker 0 wakes within RTO_ASYNC_LOOK_NS (look()): unless the ring fills up. */
	if (CMM_LOAD_SHARED(ticking) && !crowded(r))
		return;
	/* Armed already (a drain is queued, not started): a load, no exclusive line. */
	if (CMM_LOAD_SHARED(r->armed) || uatomic_xchg(&r->armed, 1))
		return;
	uatomic_set(&stalled, 0); /* this drain retries what a stalled one left */
	/* The one no helper runs now, if there is one: never wait for a drain to end. */
	struct rto_req *n = &r->notice[0];
	if (CMM_LOAD_SHARED(n->state) != RTO_REQ_DONE)
		n = &r->notice[1];
	queue_notice(n, rto_self.prio);
}

/* Room for need bytes at the head (plus a SKIP to the start): 1, or 0 if full. */
static int reserve(struct ring *r, uint64_t need, uint64_t *skip)
{
	uint64_t pos = r->head & (r->cap - 1);
	*skip = pos + need > r->cap ? r->cap - pos : 0;
	uint64_t end = r->head + *skip + need;
	if (end - r->tail_seen <= r->cap) /* the tail only grows: room then is room now */
		return 1;
	r->tail_seen = CMM_LOAD_SHARED(r->tail);
	return end - r->tail_seen <= r->cap;
}

/*
 * May this thread queue a write for fd or f now?  0: yes; 1: no, make the
 * call synchronously; -1: a deferred error, errno set.
 */
static int admit(int fd, FILE *f)
{
	/* Strict, or a context of its own: rto_async_wanted() said no.  A clone's child: */
	if (rto_foreign_task())
		return 1;
	if (RTO_UNLIKELY(CMM_LOAD_SHARED(deferred_any))) {
		int efd = f ? rto_fd_of_file(f) : fd;
		if (efd >= 0 && efd < FD_ERRS && CMM_LOAD_SHARED(deferred_err[efd])) {
			errno = uatomic_xchg(&deferred_err[efd], 0);
			return -1;
		}
	}
	return my_ring ? 0 : 1; /* made at mark time; none: synchronous */
}

/* The SKIP (if any) and the place of the next entry, with room reserved. */
static struct entry *entry_at(struct ring *r, uint64_t skip)
{
	if (skip)
		((struct entry *)(r->buf + (r->head & (r->cap - 1))))->len = SKIP;
	return (struct entry *)(r->buf + ((r->head + skip) & (r->cap - 1)));
}

/*
 * Ask for the lines the next entry will take, for writing: the drain read
 * them a lap ago, and a store to a line another CPU holds waits for it to
 * let go, which the next entry's number (a locked instruction) would wait
 * for in turn.  Asked now, the transfer happens while the program runs.
 */
static inline void prefetch_next(const struct ring *r)
{
	const char *next = r->buf + (r->head & (r->cap - 1));

	for (int k = 0; k < 2; k++) {
#if defined(__x86_64__) || defined(__i386__)
		/* prefetchw: a no-op on the few x86 CPUs that lack it (0f 0d decodes as a NOP). */
		__asm__ volatile("prefetchw %0" : : "m"(next[k * RTO_CACHELINE]));
#else
		__builtin_prefetch(next + k * RTO_CACHELINE, 1, 3);
#endif
	}
}

/* t holds v, or may (more than RING_TARGETS were noted). */
static int targets_may_hold(const struct targets *t, uintptr_t v)
{
	if (t->n > RING_TARGETS)
		return 1;
	for (unsigned i = 0; i < t->n; i++)
		if (t->v[i] == v)
			return 1;
	return 0;
}

static void targets_add(struct targets *t, uintptr_t v)
{
	if (targets_may_hold(t, v))
		return;
	if (t->n < RING_TARGETS)
		t->v[t->n] = v;
	t->n++;
}

/*
 * The producer notes what its entry writes: the stream, and the
 * descriptor (a stream's own, read from its FILE as the entry is queued;
 * a queued fflush's too).  Nothing pending before it: new lists.
 */
static void note_pending(struct ring *r, int fd, FILE *f)
{
	if (CMM_LOAD_SHARED(r->tail) == r->head)
		r->streams.n = r->fds.n = 0;
	if (f) {
		if (targets_may_hold(&r->streams, (uintptr_t)f))
			return; /* noted, with its descriptor: most queued lines */
		targets_add(&r->streams, (uintptr_t)f);
		if (r->streams.n > RING_TARGETS) /* any stream now, so any stream's descriptor */
			r->fds.n = RING_TARGETS + 1;
		fd = rto_fd_of_file(f);
	}
	if (fd >= 0)
		targets_add(&r->fds, (uintptr_t)fd);
}

/* The calling thread's ring while it holds entries not written yet, else NULL. */
static struct ring *own_pending_ring(void)
{
	struct ring *r = my_ring;

	return r && CMM_LOAD_SHARED(r->tail) != r->head ? r : NULL;
}

/*
 * rto_call()'s first step for a marked thread's call (route.c), once a
 * ring exists: a call on a stream, a descriptor or a file by its path
 * that is not queued (a read, a seek, ftell, fstat, mmap, open, stat, a
 * write the policy does not queue) comes after the thread's own queued
 * writes to it, so that the thread sees its files as without the library:
 * rewind then fgets reads back what it wrote, a file written with fwrite
 * and fflush then mapped has its bytes (systemd's journal_file_verify),
 * one written then opened again by its path has them too (systemd's
 * test-clock).  A stream's descriptor counts as the stream, and a path
 * may name any file: all of the thread's queued writes go first.  The
 * thread's own entries only: another's are ordered by the threads'
 * synchronisation, and by its flushes.
 */
static void order_before_call(int fd, FILE *f, unsigned how)
{
	struct ring *r = own_pending_ring();

	if (!r)
		return;
	if ((how & RTO_CALL_PATH) || (f && targets_may_hold(&r->streams, (uintptr_t)f)) ||
	    (fd >= 0 && targets_may_hold(&r->fds, (uintptr_t)fd))) {
		rto_async_barrier();
		return;
	}
	int ffd = f ? rto_fd_of_file(f) : -1; /* the stream's descriptor, asked last */
	if (ffd >= 0 && targets_may_hold(&r->fds, (uintptr_t)ffd))
		rto_async_barrier();
}

/* The entry's bytes are in place: number it, publish it, have it drained. */
static void publish(struct rto_fn *fn, struct ring *r, struct entry *e, uint64_t skip, uint32_t len,
		    int fd, FILE *f)
{
	note_pending(r, fd, f);
	if (f)
		uatomic_inc(&stream_entries); /* before the entry is published: puts see it first */
	*e = (struct entry){.len = len, .fd = fd, .f = f};
	e->seq = uatomic_add_return(&next_seq, 1);
	cmm_smp_wmb(); /* the entry, then the head that publishes it */
	CMM_STORE_SHARED(r->head, r->head + skip + entry_size(len));
	prefetch_next(r);
	rto_stats_async(fn);	  /* and one more queued */
	rto_trace_async(fn, len); /* trace.c */
	arm(r);
}

#define LINE_MAX_ASYNC 1024 /* a printf longer than this is no log line: synchronous */

/* Not queued: what is queued goes first, then the call is made synchronously. */
static int in_order_sync(void)
{
	rto_async_barrier();
	return 1;
}

/*
 * The ring has no room for need bytes: async_full=sync, 0 (make the call);
 * wait, 1 once there is room.
 */
static int room_after_full(struct ring *r, uint64_t need)
{
	uint64_t skip;

	rto_stats_async_full();
	rto_trace_async_full(); /* trace.c */
	if (rto_async_full_sync())
		return 0;
	arm(r);
	while (!reserve(r, need, &skip)) /* ends: the helper frees the ring */
		rto_call(&rto_fn_async_drain, NULL, -1, NULL, 0);
	return 1;
}

enum { PUT_DONE, PUT_SYNC, PUT_FULL };

/*
 * Queue len bytes (and a newline if nl) for fd or f: PUT_DONE; PUT_SYNC
 * when they are too big for the ring; PUT_FULL when it has no room now.
 */
static int queue_entry(struct rto_fn *fn, struct ring *r, int fd, FILE *f, const void *data,
		       size_t len, int nl)
{
	uint64_t skip, need = entry_size((uint32_t)(len + (nl != 0)));

	if (len + 1 > UINT32_MAX / 2 || need > r->cap / 2)
		return PUT_SYNC;
	if (!reserve(r, need, &skip))
		return PUT_FULL;
	struct entry *e = entry_at(r, skip);
	memcpy(e + 1, data, len);
	if (nl)
		((char *)(e + 1))[len] = '\n';
	publish(fn, r, e, skip, (uint32_t)(len + (nl != 0)), fd, f);
	return PUT_DONE;
}

/*
 * A write to stream f (fd RTO_ASYNC_FLUSH: an fflush): into f's buffer on
 * the caller when glibc would only copy it there (stream_put.c), else
 * queued for a helper to make on f, behind the buffer, which is closed to
 * the inline macros meanwhile.  Queued as before, without looking at f,
 * while an entry for a stream waits anywhere (its bytes reach their buffer
 * only then), or when f's lock is another thread's, or f is not a plain
 * file stream in writing mode yet (its buffer is allocated by its first
 * write: a helper's).  Under f's lock the ring's room is asked without
 * waiting: a helper may need that lock for an entry ahead.
 */
static int stream_put(struct rto_fn *fn, struct ring *r, FILE *f, const void *data, size_t len,
		      int nl, int fd)
{
	if (CMM_LOAD_SHARED(stream_entries))
		return queue_entry(fn, r, fd, f, data, len, nl);
	/* The library's own work: funlockfile's FUTEX_WAKE is not trapped as the program's. */
	unsigned char sel = rto_backstop_enter();
	if (rto_stream_put_begin(f) != RTO_STREAM_OURS) {
		rto_backstop_leave(sel);
		return queue_entry(fn, r, fd, f, data, len, nl);
	}
	int ret = PUT_DONE;
	/*
	 * stream_entries asked again under f's lock, under which another
	 * thread may have queued for f meanwhile: a line-buffered stream's
	 * buffer is never closed, and our copy would go ahead of that line.
	 */
	if (!CMM_LOAD_SHARED(stream_entries) &&
	    (fd == RTO_ASYNC_FLUSH ? f->_IO_write_ptr == f->_IO_write_base
				   : rto_stream_put_fits(f, data, len, nl))) {
		if (fd != RTO_ASYNC_FLUSH) /* an fflush with nothing to write does nothing */
			rto_stream_put_append(f, data, len, nl);
		rto_stats_async(fn); /* answered at once, as a queued one */
		rto_trace_async(fn, (uint32_t)(len + (nl != 0))); /* trace.c */
	} else if ((ret = queue_entry(fn, r, fd, f, data, len, nl)) == PUT_DONE) {
		rto_stream_put_close(f);
	}
	rto_stream_put_end(f);
	rto_backstop_leave(sel);
	return ret;
}

/*
 * Accept len bytes (and a newline if nl) for fd or f.  0: queued; 1: not
 * queued, make the call synchronously; -1: a deferred error, errno set.
 */
int rto_async_put(struct rto_fn *fn, int fd, FILE *f, const void *data, size_t len, int nl)
{
	struct ring *r = my_ring;
	int a = admit(fd, f);

	if (a)
		return a;
	for (;;) {
		int w = f ? stream_put(fn, r, f, data, len, nl, fd)
			  : queue_entry(fn, r, fd, NULL, data, len, nl);
		if (w == PUT_DONE)
			return 0;
		if (w == PUT_SYNC || !room_after_full(r, entry_size((uint32_t)(len + (nl != 0)))))
			return in_order_sync(); /* too big for the ring, or async_full=sync */
	}
}

static int format(char *out, int flag, const char *fmt, va_list ap)
{
	return rto_vformat(out, LINE_MAX_ASYNC, flag, fmt, ap);
}

/*
 * The printf family: formatted on the stack, then written as any write to
 * the stream (into its buffer on the caller, or queued).  Not a format
 * whose conversions may leave memory (%m, %ls: vformat.h), nor a line
 * longer than a log line: the call is made synchronously, and a helper
 * formats it.
 */
int rto_async_vprintf(struct rto_fn *fn, FILE *f, int flag, const char *fmt, va_list ap, int *ret)
{
	int a = admit(-1, f);

	if (a)
		return a;
	if (!rto_vformat_in_memory(fmt)) /* %m, %ls: formatted by a helper, synchronously */
		return in_order_sync();
	char line[LINE_MAX_ASYNC];
	int n = format(line, flag, fmt, ap);
	if (n < 0 || n >= LINE_MAX_ASYNC) /* longer than a log line: synchronously */
		return in_order_sync();
	*ret = n;
	return rto_async_put(fn, -1, f, line, (size_t)n, 0);
}

void rto_async_at_exit(void)
{
	if (CMM_LOAD_SHARED(rto_async_on.used))
		drain_until(uatomic_read(&next_seq), 1);
}

/* ---- abort() ------------------------------------------------------------------------ */

/*
 * The program calls abort(): write what is queued, then flush the streams
 * written to (a log should show what came before the crash), then the real
 * abort().  abort() may come from anywhere, a signal handler included, so
 * nothing here waits for ever: the drain lock for at most two seconds (a
 * helper holds it while it writes), an entry whose producer was
 * interrupted between its two stores is not waited for.
 */

static void drain_at_end(int flush_streams)
{
	struct timespec until;

	if (!CMM_LOAD_SHARED(rto_async_on.used))
		return;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 2;
	if (rto_mutex_timedlock(&drain_lock, &until) != 0)
		return;
	drain_locked(uatomic_read(&next_seq), 0);
	rto_mutex_unlock(&drain_lock);
	for (int k = 0; k < MAX_RINGS && flush_streams; k++) {
		FILE *f = CMM_LOAD_SHARED(written_streams[k]);
		if (f)
			rto_real_fflush(f);
	}
}

void rto_async_abort(void)
{
	int saved = errno;

	rto_route_go_direct(); /* and never resumed: abort() does not return */
	drain_at_end(1);
	rto_trace_at_abort(); /* trace_file=: complete at abort() too */
	errno = saved;
	RTO_HAND_REAL(abort)();
	__builtin_unreachable();
}

RTO_EXPORT void abort(void)
{
	rto_async_abort();
}

/*
 * _exit() and _Exit(): what is queued is written as the calls would have
 * written it, into the streams and the descriptors, and the streams are
 * left as they are (a line still in a buffered stream's buffer is lost, as
 * without the library; one to stderr, unbuffered, reaches the descriptor).
 * A test's child process reports its failure on stderr and leaves with
 * _exit(1) (GLib's g_test_trap_subprocess).  Not in a vfork() child (the
 * queue is its parent's, which goes on), a clone(CLONE_VM) child, or a
 * signal handler of the program's (writing into streams there is not
 * async-signal-safe).
 */
static void drain_at_exit_now(void)
{
	if (!CMM_LOAD_SHARED(rto_async_on.used) || rto_self.vforking || rto_foreign_task() ||
	    rto_signal_handler_depth || rto_helper_is_self() || draining)
		return;
	int saved = errno;
	rto_route_go_direct(); /* and never resumed: the process ends */
	drain_at_end(0);
	errno = saved;
}

RTO_EXPORT void _exit(int status)
{
	drain_at_exit_now();
	RTO_HAND_REAL(_exit)(status);
	__builtin_unreachable();
}

RTO_EXPORT void _Exit(int status)
{
	drain_at_exit_now();
	RTO_HAND_REAL(_Exit)(status);
	__builtin_unreachable();
}

/* Read from another thread: each ring's head and tail are single words. */
void rto_async_ring_use(uint64_t *used, uint64_t *cap, uint32_t *nr)
{
	int n = CMM_LOAD_SHARED(nrings);

	*used = *cap = 0;
	for (int i = 0; i < n && i < MAX_RINGS; i++) {
		/* A claimed ring is set up before its buf is stored: only those with one. */
		if (!CMM_LOAD_SHARED(rings[i].buf))
			continue;
		cmm_smp_rmb();
		uint64_t head = CMM_LOAD_SHARED(rings[i].head),
			 tail = CMM_LOAD_SHARED(rings[i].tail);
		*used += head > tail ? head - tail : 0;
		*cap += rings[i].cap;
	}
	*nr = (uint32_t)(n < MAX_RINGS ? n : MAX_RINGS);
}

/* fd was closed, replaced or reborn: an error of its old file is not its own. */
void rto_async_forget(int fd)
{
	if (fd >= 0 && fd < FD_ERRS && RTO_UNLIKELY(CMM_LOAD_SHARED(deferred_err[fd])))
		uatomic_set(&deferred_err[fd], 0);
}

/*
 * fork(): what is queued is written first, as exec's and posix_spawn's
 * (calls.tbl "flush"), so that the child, and whatever it runs, reads the
 * files as the parent wrote them, and the child's copy of a stream's
 * buffer holds what the parent's does, as without the library.  Not inside
 * a program's signal handler (fork is async-signal-safe; writing into
 * streams there is not).
 */
static void before_fork(void)
{
	if (!rto_signal_handler_depth)
		rto_async_flush_point();
}

/*
 * A forked child has copies of the rings, but what they hold belongs to the
 * parent, which writes it: the child starts with every ring empty, and with
 * a fresh drain lock (a helper may have held it at the fork).
 */
static void child_after_fork(void)
{
	pthread_mutex_init(&drain_lock, NULL);
	for (int i = 0; i < nrings && i < MAX_RINGS; i++) {
		rings[i].tail = rings[i].tail_seen = rings[i].head;
		rings[i].armed = 0;
		rings[i].notice[0].state = rings[i].notice[1].state =
			RTO_REQ_DONE; /* no helper runs them here */
	}
	written_seq = next_seq;
	stream_entries = 0; /* the parent's, which it writes */
	stalled = 0;
	ticking = 0; /* no helper here looks */
	look_seen = next_seq;
	quiet_looks = 0;
	kick_armed = 0;
	kick_notice.state = RTO_REQ_DONE;
}

void rto_async_init(void)
{
	rto_async_path_init();
	/* The modules below us that act for the rings (their comments say the ordering). */
	rto_fd_on_forget(rto_async_forget);
	rto_stream_on_unlock(rto_async_kick);
	rto_callsite_on_abort(rto_async_abort);
	rto_helpers_on_idle(rto_async_stalled, rto_async_retry);
	rto_helpers_on_queued(queued, idle_drain, look);
	pthread_atfork(before_fork, NULL, child_after_fork);
}
