/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Traces: every offload on a timeline.  trace_file=PATH ("%p": the pid)
 * writes the Chrome trace-event JSON that ui.perfetto.dev and
 * chrome://tracing open: one track per marked thread and per helper, each
 * offloaded call a slice on its caller's track and one on the helper's
 * that ran it, linked by a flow arrow, and the caller's local decisions,
 * refusals and fallbacks as instants, its trapped system calls as slices.
 * trace=lttng hands the same events to an LTTng-UST provider instead
 * (trace_lttng.c, a shared object of its own loaded only then).
 *
 * The caller's path stays realtime code: an event is four stores into the
 * thread's own ring (single producer, single consumer) and a release of
 * its head, with the vDSO clock; the ring is mapped at the thread's mark,
 * never on its path.  A full ring drops the event and counts it: a
 * marked thread never waits for the trace.  A helper drains the rings to
 * the file when it goes idle (in short batches, at most every
 * RTO_TRACE_DRAIN_NS; worker 0 wakes at least once a second), as async
 * writes are written; the end of the process and abort() (async.c) write
 * the rest and close the JSON.
 * Not saved: what is still in the rings when the process dies by a
 * signal with no handler or by _exit().  A fork()ed child writes a file
 * of its own when the path has "%p", else is not traced; a child of a raw
 * fork (no atfork handler ran in it) is not traced either: it never
 * writes into its parent's file.
 *
 * Slices are complete events ("X", with their duration), written from one
 * ring entry each: a dropped event never leaves a begin without its end.
 * The flow arrow's id is the request's own (request.h): the caller's key
 * and the low 32 bits of its clock at the call, which the helper reads in
 * the request, so nothing travels for the trace.
 */
#include "options.h"
#include "trace_opts.h"
#include "rto_fast.h"
#include "fn.h"
#include "trace.h"
#include "procfs.h"
#include "futex.h"
#include "report.h"
#include "real.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define RINGS 128
/*
 * An idle helper drains at most every millisecond, at most RTO_TRACE_BATCH
 * events of each ring: a call that comes meanwhile waits for that much
 * formatting (about 0.5 us an event here), as it would for another call.
 * That is up to 64000 events a second for each thread.
 */
#define RTO_TRACE_DRAIN_NS (1000 * 1000)
#define RTO_TRACE_BATCH	   64
/* Above the numbers a program counts on (the lowest free one): the file's descriptor. */
#define TRACE_FD_MIN 900

struct ev {
	uint64_t t0, t1;  /* ns, CLOCK_MONOTONIC; t1 0 for an instant */
	const void *what; /* the struct rto_fn, or a name (RTO_TR_TRAP) */
	uint32_t arg;	  /* EXEC: the request's t0; TRAP: the handling */
	uint16_t key;	  /* the caller's key (request.h), 0: none */
	uint16_t kind;
};
_Static_assert(sizeof(struct ev) == 32, "an event is half a cache line");

struct ring {
	struct ev *ev;
	uint64_t mask;
	uint64_t head;		  /* the producer's: published events */
	uint64_t tail;		  /* the drainer's: written events */
	uint64_t dropped;	  /* the producer's: events a full ring refused */
	const void *owner;	  /* the thread's rto_self, for a ring made by mark= */
	pid_t tid;		  /* its track */
	int helper;		  /* 1 + the helper's index, 0: a marked thread */
	const char *label;	  /* a thread of ours that is not a helper: its track's name */
	int named;		  /* its thread_name is written (the drainer's) */
	uint64_t dropped_written; /* the drainer's */
	int running;		  /* a helper's: between a call's start and its event */
};

int rto_trace_on;
__thread int rto_trace_fd RTO_TLS = -1;
static struct ring rings[RINGS];
static int nrings;
static __thread struct ring *my_ring RTO_TLS;
static pthread_mutex_t make_lock = PTHREAD_MUTEX_INITIALIZER;

/* The file's side: under drain_lock. */
static pthread_mutex_t drain_lock = PTHREAD_MUTEX_INITIALIZER;
static int trace_fd = -1;
static int closed;
static pid_t pid;
static uint64_t last_drain, written_events, dropped_total;
static char out[65536];
static size_t out_n;

/* trace=lttng: the provider's one entry (trace_lttng.c). */
static void (*lttng_event)(int kind, const char *name, uint64_t t0, uint64_t t1, uint32_t arg,
			   uint16_t key);
static void (*lttng_thread)(void);
/* ... and its gated one, for our threads that are not helpers (rto_trace_own_thread). */
static void (*lttng_gated)(int kind, const char *name, uint64_t t0, uint64_t t1, uint32_t arg,
			   uint16_t key);
static __thread int gated RTO_TLS;

uint64_t rto_trace_clock(void)
{
	return rto_now_ns();
}

/*
 * A child whose fork ran no atfork handler (a raw fork system call, a
 * clone() without CLONE_VM): the file and the rings are its parent's, and
 * a lock may be held by a parent's thread that is not in it.  It is not
 * traced: it never writes into its parent's file.  Asked before the
 * locks, off the caller's path (a drain, a mark, a helper's start, the end).
 */
static int raw_child(void)
{
	return (pid_t)rto_syscall(SYS_getpid) != pid;
}

/* ---- the rings ---------------------------------------------------------------------- */

/* A ring for the thread whose state is owner (tid its id); under make_lock. */
static struct ring *make_ring(const void *owner, pid_t tid, int helper)
{
	for (int i = CMM_LOAD_SHARED(nrings) - 1; i >= 0; i--)
		if (rings[i].owner == owner && rings[i].tid == tid && !helper)
			return &rings[i]; /* marked again, by mark= */
	if (nrings >= RINGS) {
		rto_say(1, "trace: more than %d threads: the rest are not traced", RINGS);
		return NULL;
	}
	uint64_t cap = 4096 / sizeof(struct ev);
	while (cap * sizeof(struct ev) < (uint64_t)rto_trace_ring_kb() * 1024)
		cap <<= 1;
	void *buf = rto_real_mmap(NULL, cap * sizeof(struct ev), PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (buf == MAP_FAILED)
		return NULL;
	struct ring *r = &rings[nrings];
	/* A forked child's slot may hold its parent's ring (child_after_fork): all anew. */
	*r = (struct ring){0};
	r->mask = cap - 1;
	r->owner = owner;
	r->tid = tid;
	r->helper = helper;
	CMM_STORE_SHARED(r->ev, (struct ev *)buf); /* the ring, then its place in the count */
	cmm_smp_wmb();
	CMM_STORE_SHARED(nrings, nrings + 1);
	return r;
}

void rto_trace_thread_marked(struct rto_thread *t, pid_t tid)
{
	/*
	 * LTTng-UST registers a thread with its RCU at its first event, under
	 * a mutex: here, not on the caller's path.  A thread marked by mark=
	 * from another one registers at its first event after all.
	 */
	if ((rto_trace_on & RTO_TRACE_LTTNG) && t == &rto_self)
		lttng_thread();
	if (!(rto_trace_on & RTO_TRACE_FILE) || (t == &rto_self && my_ring) || raw_child())
		return;
	if (!tid)
		tid = (pid_t)rto_syscall(SYS_gettid);
	rto_mutex_lock(&make_lock);
	struct ring *r = make_ring(t, tid, 0);
	rto_mutex_unlock(&make_lock);
	if (t == &rto_self)
		my_ring = r;
}

void rto_trace_helper_started(unsigned index, pid_t tid)
{
	if (rto_trace_on & RTO_TRACE_LTTNG)
		lttng_thread();
	if (!(rto_trace_on & RTO_TRACE_FILE) || raw_child())
		return;
	rto_mutex_lock(&make_lock);
	my_ring = make_ring(&rto_self, tid, (int)index + 1);
	rto_mutex_unlock(&make_lock);
}

/* A thread of ours that traces events and is not a helper (the stall watchdog): its ring. */
void rto_trace_own_thread(const char *label)
{
	gated = 1;
	if (rto_trace_on & RTO_TRACE_LTTNG)
		lttng_thread();
	if (!(rto_trace_on & RTO_TRACE_FILE) || raw_child())
		return;
	pid_t tid = (pid_t)rto_syscall(SYS_gettid);
	rto_mutex_lock(&make_lock);
	my_ring = make_ring(&rto_self, tid, 0);
	if (my_ring)
		my_ring->label = label;
	rto_mutex_unlock(&make_lock);
}

/*
 * The polling helper's predicted window (helper.c): opened before its
 * poll, closed when work came or the poll ended.  A poll that follows a
 * burst (linger) is not a window: nothing is traced for it.
 */
static __thread uint64_t window_t0 RTO_TLS;

void rto_trace_window_open(int linger, uint64_t until)
{
	window_t0 = 0;
	if (linger || !CMM_LOAD_SHARED(rto_trace_on))
		return;
	window_t0 = rto_now_ns();
	if (rto_trace_on & RTO_TRACE_LTTNG)
		rto_trace_put(RTO_TR_WINDOW_OPEN, NULL, "window", window_t0, until, 0, 0);
}

void rto_trace_window_close(int caught)
{
	if (window_t0)
		rto_trace_put(RTO_TR_WINDOW, NULL, "window", window_t0, 0, (uint32_t) !!caught, 0);
	window_t0 = 0;
}

/* Marked by mark= from another thread: the ring made for it there, found by its state. */
static struct ring *find_ring(void)
{
	for (int i = CMM_LOAD_SHARED(nrings) - 1; i >= 0; i--)
		if (CMM_LOAD_SHARED(rings[i].owner) == &rto_self && !rings[i].helper) {
			cmm_smp_rmb();
			return my_ring = &rings[i];
		}
	return NULL;
}

/*
 * A slot's words one by one, relaxed: plain moves on x86, and what
 * ThreadSanitizer needs to see them as the head and tail order them.
 */
static void ev_store(struct ev *slot, const struct ev *e)
{
	__atomic_store_n(&slot->t0, e->t0, __ATOMIC_RELAXED);
	__atomic_store_n(&slot->t1, e->t1, __ATOMIC_RELAXED);
	__atomic_store_n(&slot->what, e->what, __ATOMIC_RELAXED);
	__atomic_store_n(&slot->arg, e->arg, __ATOMIC_RELAXED);
	__atomic_store_n(&slot->key, e->key, __ATOMIC_RELAXED);
	__atomic_store_n(&slot->kind, e->kind, __ATOMIC_RELAXED);
}

static void ev_load(struct ev *e, const struct ev *slot)
{
	e->t0 = __atomic_load_n(&slot->t0, __ATOMIC_RELAXED);
	e->t1 = __atomic_load_n(&slot->t1, __ATOMIC_RELAXED);
	e->what = __atomic_load_n(&slot->what, __ATOMIC_RELAXED);
	e->arg = __atomic_load_n(&slot->arg, __ATOMIC_RELAXED);
	e->key = __atomic_load_n(&slot->key, __ATOMIC_RELAXED);
	e->kind = __atomic_load_n(&slot->kind, __ATOMIC_RELAXED);
}

/*
 * Set while this thread puts an event: a signal handler that interrupts
 * the put (a trapped system call, the program's handler making a wrapped
 * call) and traces an event of its own would write the slot the
 * interrupted put is filling, and publish it half written.  Its event is
 * dropped and counted instead.
 */
static __thread int putting RTO_TLS;

static void dropped_one(struct ring *r)
{
	__atomic_fetch_add(&r->dropped, 1, __ATOMIC_RELAXED); /* a handler's drop may nest */
}

/* The caller's path: no lock, no system call, no allocation. */
static void ring_put(const struct ev *e)
{
	struct ring *r = my_ring ? my_ring : find_ring();

	if (!r)
		return;
	if (putting) {
		dropped_one(r);
		return;
	}
	putting = 1;
	cmm_barrier(); /* a handler sees the flag before we touch the ring */
	uint64_t h = r->head;
	if (h - CMM_LOAD_SHARED(r->tail) > r->mask) {
		dropped_one(r);
	} else {
		ev_store(&r->ev[h & r->mask], e);
		cmm_smp_wmb(); /* the event, then the head that publishes it */
		CMM_STORE_SHARED(r->head, h + 1);
	}
	cmm_barrier();
	putting = 0;
}

void rto_trace_put(int kind, const struct rto_fn *fn, const char *name, uint64_t t0, uint64_t t1,
		   uint32_t arg, uint16_t key)
{
	int on = CMM_LOAD_SHARED(rto_trace_on);

	if (!t0)
		t0 = rto_now_ns();
	else if (!t1 && (kind == RTO_TR_EXEC || kind == RTO_TR_TRAP || kind == RTO_TR_NAP ||
			 kind == RTO_TR_WINDOW))
		t1 = rto_now_ns();
	if (on & RTO_TRACE_LTTNG) {
		/* What LTTng-UST calls (a mutex at a thread's first event) runs directly. */
		unsigned char was = rto_route_go_direct();
		(gated ? lttng_gated : lttng_event)(kind, fn ? fn->name : name, t0, t1, arg, key);
		rto_route_resume(was);
	}
	/* A helper's call: its caller may exit() before the event is put (finish_locked). */
	if ((on & RTO_TRACE_FILE) && kind == RTO_TR_EXEC_BEGIN && my_ring)
		uatomic_set(&my_ring->running, 1);
	if ((on & RTO_TRACE_FILE) && kind != RTO_TR_REQUEST && kind != RTO_TR_EXEC_BEGIN &&
	    kind != RTO_TR_WINDOW_OPEN && kind != RTO_TR_NAP_BEGIN) {
		struct ev e = {.t0 = t0,
			       .t1 = t1,
			       .what = fn ? (const void *)fn : name,
			       .arg = arg,
			       .key = key,
			       .kind = (uint16_t)kind};
		ring_put(&e);
		if (kind == RTO_TR_EXEC && my_ring)
			uatomic_set(&my_ring->running, 0);
	}
}

/* ---- the file ----------------------------------------------------------------------- */

static void out_flush(void)
{
	size_t done = 0;

	while (done < out_n && trace_fd >= 0) {
		long n = rto_syscall(SYS_write, trace_fd, out + done, out_n - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rto_say(0, "trace_file: write failed: %s (the trace stops here)",
				strerror(errno));
			rto_syscall(SYS_close, trace_fd);
			trace_fd = -1;
			break;
		}
		done += (size_t)n;
	}
	out_n = 0;
}

static void out_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void out_printf(const char *fmt, ...)
{
	va_list ap;

	if (out_n > sizeof(out) - 1024)
		out_flush();
	va_start(ap, fmt);
	int n = vsnprintf(out + out_n, sizeof(out) - out_n, fmt, ap);
	va_end(ap);
	if (n > 0)
		out_n += (size_t)n < sizeof(out) - out_n ? (size_t)n : sizeof(out) - out_n - 1;
}

/* A name in JSON: only the characters a thread name may hold that JSON does not. */
static void out_name(const char *s)
{
	char buf[64];
	size_t n = 0;

	for (; *s && n < sizeof(buf) - 7; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			n += (size_t)snprintf(buf + n, sizeof(buf) - n, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			n += (size_t)snprintf(buf + n, sizeof(buf) - n, "\\u%04x", c);
		else
			buf[n++] = (char)c;
	}
	buf[n] = '\0';
	out_printf("%s", buf);
}

/* Microseconds with three decimals: the format's unit, to the nanosecond. */
#define US(ns) (unsigned long long)((ns) / 1000), (unsigned)((ns) % 1000)

static const char *const handlings[] = {"offload", "local", "strict", "warn", "async"};
static const char *const pool_then[] = RTO_TR_POOL_NAMES;
static const char *const verdicts[] = RTO_TR_VERDICT_NAMES;

static void write_thread_name(struct ring *r)
{
	char path[64], comm[32];

	if (r->helper) {
		snprintf(comm, sizeof(comm), "rtoffload/%d", r->helper - 1);
	} else if (r->label) {
		snprintf(comm, sizeof(comm), "%s", r->label);
	} else {
		snprintf(path, sizeof(path), "/proc/self/task/%d/comm", (int)r->tid);
		long n = rto_procfs_read(path, comm, sizeof(comm));
		if (n <= 0)
			snprintf(comm, sizeof(comm), "thread %d", (int)r->tid);
		else if (comm[n - 1] == '\n')
			comm[n - 1] = '\0';
	}
	out_printf(",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,\"tid\":%d,\"args\":{"
		   "\"name\":\"",
		   (int)pid, (int)r->tid);
	out_name(comm);
	/* Helpers below the marked threads. */
	out_printf("\"}},\n{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":%d,\"tid\":%d,"
		   "\"args\":{\"sort_index\":%d}}",
		   (int)pid, (int)r->tid,
		   r->helper  ? 1000 + r->helper
		   : r->label ? 2000
			      : 0);
	r->named = 1;
}

/*
 * A flow's end binds to the slice around its time on its track: a
 * nanosecond past the slice's start, inside it whatever order a viewer
 * sorts equal times in.
 */
static uint64_t inside(const struct ev *e)
{
	return e->t1 > e->t0 + 1 ? e->t0 + 1 : e->t0;
}

static void write_event(const struct ring *r, const struct ev *e)
{
	const struct rto_fn *fn = e->what;
	int tid = (int)r->tid;

	switch (e->kind) {
	case RTO_TR_OFFLOAD:
	case RTO_TR_TAKEN:
		out_printf(",\n{\"ph\":\"X\",\"cat\":\"%s\",\"name\":\"%s\",\"pid\":%d,\"tid\":%d,"
			   "\"ts\":%llu.%03u,\"dur\":%llu.%03u",
			   e->kind == RTO_TR_TAKEN ? "taken_back" : "offload", fn->name, (int)pid,
			   tid, US(e->t0), US(e->t1 - e->t0));
		/* arg: the call's descriptor + 1 (0: none) */
		if (e->arg)
			out_printf(",\"args\":{\"fd\":%d}}", (int)(e->arg - 1));
		else
			out_printf("}");
		/* A call taken back never ran on a helper: no arrow to one. */
		if (e->key && e->kind == RTO_TR_OFFLOAD)
			out_printf(",\n{\"ph\":\"s\",\"cat\":\"flow\",\"name\":\"offload\",\"id\":"
				   "\"0x%x%08x\",\"pid\":%d,\"tid\":%d,\"ts\":%llu.%03u}",
				   e->key, (uint32_t)e->t0, (int)pid, tid, US(inside(e)));
		break;
	case RTO_TR_EXEC:
		out_printf(
			",\n{\"ph\":\"X\",\"cat\":\"helper\",\"name\":\"%s\",\"pid\":%d,\"tid\":%"
			"d,\"ts\":%llu.%03u,\"dur\":%llu.%03u}",
			fn->name, (int)pid, tid, US(e->t0), US(e->t1 - e->t0));
		if (e->key)
			out_printf(",\n{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"flow\",\"name\":"
				   "\"offload\",\"id\":\"0x%x%08x\",\"pid\":%d,\"tid\":%d,\"ts\":%"
				   "llu.%03u}",
				   e->key, e->arg, (int)pid, tid, US(inside(e)));
		break;
	case RTO_TR_LOCAL:
	case RTO_TR_DENIED:
	case RTO_TR_FALLBACK:
		out_printf(",\n{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"%s\",\"name\":\"%s\",\"pid\":%d,"
			   "\"tid\":%d,\"ts\":%llu.%03u}",
			   e->kind == RTO_TR_LOCAL    ? "local"
			   : e->kind == RTO_TR_DENIED ? "denied"
						      : "fallback",
			   fn->name, (int)pid, tid, US(e->t0));
		break;
	case RTO_TR_TRAP:
		out_printf(
			",\n{\"ph\":\"X\",\"cat\":\"trap\",\"name\":\"%s\",\"pid\":%d,\"tid\":%d,"
			"\"ts\":%llu.%03u,\"dur\":%llu.%03u,\"args\":{\"handling\":\"%s\"}}",
			(const char *)e->what, (int)pid, tid, US(e->t0), US(e->t1 - e->t0),
			e->arg < 5 ? handlings[e->arg] : "?");
		break;
	case RTO_TR_ASYNC:
		out_printf(
			",\n{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"async\",\"name\":\"%s\",\"pid\":%d,"
			"\"tid\":%d,\"ts\":%llu.%03u,\"args\":{\"bytes\":%u}}",
			fn->name, (int)pid, tid, US(e->t0), e->arg);
		break;
	case RTO_TR_ASYNC_FULL:
		out_printf(",\n{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"async\",\"name\":\"async_full\","
			   "\"pid\":%d,\"tid\":%d,\"ts\":%llu.%03u}",
			   (int)pid, tid, US(e->t0));
		break;
	case RTO_TR_NAP:
		out_printf(
			",\n{\"ph\":\"X\",\"cat\":\"predict\",\"name\":\"nap\",\"pid\":%d,\"tid\":%"
			"d,\"ts\":%llu.%03u,\"dur\":%llu.%03u,\"args\":{\"slept_out\":%u}}",
			(int)pid, tid, US(e->t0), US(e->t1 - e->t0), e->arg);
		break;
	case RTO_TR_WINDOW:
		out_printf(
			",\n{\"ph\":\"X\",\"cat\":\"predict\",\"name\":\"window\",\"pid\":%d,"
			"\"tid\":%d,\"ts\":%llu.%03u,\"dur\":%llu.%03u,\"args\":{\"caught\":%u}}",
			(int)pid, tid, US(e->t0), US(e->t1 - e->t0), e->arg);
		break;
	case RTO_TR_POOL_FULL:
		out_printf(",\n{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"pool_full\",\"name\":\"%s\","
			   "\"pid\":%d,\"tid\":%d,\"ts\":%llu.%03u,\"args\":{\"bytes\":%u,\"then\":"
			   "\"%s\"}}",
			   (const char *)e->what, (int)pid, tid, US(e->t0), e->arg,
			   e->key < 3 ? pool_then[e->key] : "?");
		break;
	case RTO_TR_STALL:
		out_printf(",\n{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"stall\",\"name\":\"%s\","
			   "\"pid\":%d,\"tid\":%d,\"ts\":%llu.%03u}",
			   fn->name, (int)pid, tid, US(e->t0));
		break;
	case RTO_TR_VERDICT:
		out_printf(",\n{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"stall_verdict\",\"name\":"
			   "\"%s\",\"pid\":%d,\"tid\":%d,\"ts\":%llu.%03u,\"args\":{\"verdict\":"
			   "\"%s\",\"caller\":%d}}",
			   fn->name, (int)pid, tid, US(e->t0), e->key < 3 ? verdicts[e->key] : "?",
			   (int)e->arg);
		break;
	default:
		break;
	}
}

/* Drops since the last drain: an instant on the thread's track says how many. */
static void write_drops(struct ring *r, uint64_t now)
{
	uint64_t d = __atomic_load_n(&r->dropped, __ATOMIC_RELAXED);

	if (d == r->dropped_written)
		return;
	out_printf(",\n{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"trace\",\"name\":\"dropped\",\"pid\":"
		   "%d,\"tid\":%d,\"ts\":%llu.%03u,\"args\":{\"events\":%llu}}",
		   (int)pid, (int)r->tid, US(now), (unsigned long long)(d - r->dropped_written));
	dropped_total += d - r->dropped_written;
	r->dropped_written = d;
}

/*
 * The published events to the file, at most `most` of each ring (0: all):
 * a helper's drain is a short stretch between two requests.  Under
 * drain_lock.
 */
static void drain_locked(uint64_t most)
{
	int n = CMM_LOAD_SHARED(nrings);
	uint64_t now = rto_now_ns();

	if (closed || trace_fd < 0)
		return;
	cmm_smp_rmb(); /* the rings counted are made */
	for (int i = 0; i < n; i++) {
		struct ring *r = &rings[i];
		uint64_t head = CMM_LOAD_SHARED(r->head);
		if (!r->named && (head != r->tail || r->helper))
			write_thread_name(r);
		if (most && head - r->tail > most)
			head = r->tail + most;
		cmm_smp_rmb(); /* the events are complete once head covers them */
		for (uint64_t t = r->tail; t != head; t++) {
			struct ev e;
			ev_load(&e, &r->ev[t & r->mask]);
			write_event(r, &e);
		}
		written_events += head - r->tail;
		cmm_smp_mb(); /* done with the events before the producer may reuse them */
		CMM_STORE_SHARED(r->tail, head);
		write_drops(r, now);
	}
	out_flush();
	CMM_STORE_SHARED(last_drain, now);
}

/*
 * Only an idle helper drains: one that is never idle (its callers keep it
 * busy, or it polls for ever) lets the rings fill and drop, and never
 * makes a call wait for the trace.
 */
void rto_trace_helper_idle(void)
{
	if (!(CMM_LOAD_SHARED(rto_trace_on) & RTO_TRACE_FILE) ||
	    rto_now_ns() - CMM_LOAD_SHARED(last_drain) < RTO_TRACE_DRAIN_NS || raw_child() ||
	    rto_mutex_trylock(&drain_lock) != 0)
		return;
	drain_locked(RTO_TRACE_BATCH);
	rto_mutex_unlock(&drain_lock);
}

/*
 * A helper publishes a call's result before it puts the call's event: a
 * caller whose last call that was may be exiting already.  Its event is
 * waited for, 20 ms at most (a helper that ran the exit's own call, or one
 * stuck in a call, is not: the exit waits no longer).
 */
static void wait_helpers_events(void)
{
	struct timespec tick = {0, 100 * 1000};
	int n = CMM_LOAD_SHARED(nrings);

	cmm_smp_rmb();
	for (int i = 0, turns = 0; i < n && turns < 200; i++)
		while (&rings[i] != my_ring && rings[i].helper && uatomic_read(&rings[i].running) &&
		       turns++ < 200)
			rto_syscall(SYS_nanosleep, &tick, NULL);
}

/* The rest, and the end of the JSON: the file opens without a repair. */
static void finish_locked(void)
{
	wait_helpers_events();
	drain_locked(0);
	if (closed || trace_fd < 0)
		return;
	out_printf("\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"written\":\"%llu\","
		   "\"dropped\":\"%llu\"}}\n",
		   (unsigned long long)written_events, (unsigned long long)dropped_total);
	out_flush();
	rto_syscall(SYS_close, trace_fd);
	trace_fd = -1;
	closed = 1;
}

void rto_trace_at_exit(void)
{
	if (!(CMM_LOAD_SHARED(rto_trace_on) & RTO_TRACE_FILE) || raw_child())
		return;
	rto_mutex_lock(&drain_lock);
	finish_locked();
	rto_mutex_unlock(&drain_lock);
}

/* abort() may come from anywhere: a drain in progress is waited for two seconds at most. */
void rto_trace_at_abort(void)
{
	struct timespec until;

	if (!(CMM_LOAD_SHARED(rto_trace_on) & RTO_TRACE_FILE) || raw_child())
		return;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 2;
	if (rto_mutex_timedlock(&drain_lock, &until) != 0)
		return;
	finish_locked();
	rto_mutex_unlock(&drain_lock);
}

/*
 * Opened in the constructor, before the program opens anything, and moved
 * above TRACE_FD_MIN: the program's own descriptors keep their numbers.
 */
static void open_file(void)
{
	char path[PATH_MAX], comm[32];

	if (rto_options_path(rto_trace_file(), (int)pid, path, sizeof(path)) != 0) {
		rto_say(0, "trace_file: path too long: no trace");
		return;
	}
	int fd = (int)rto_syscall(SYS_openat, AT_FDCWD, path,
				  O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		rto_say(0, "trace_file: cannot write '%s': %s: no trace", path, strerror(errno));
		return;
	}
	int high = (int)rto_syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, TRACE_FD_MIN);
	if (high >= 0) {
		rto_syscall(SYS_close, fd);
		fd = high;
	}
	trace_fd = fd;
	long n = rto_procfs_read("/proc/self/comm", comm, sizeof(comm));
	if (n <= 0)
		snprintf(comm, sizeof(comm), "pid %d", (int)pid);
	else if (comm[n - 1] == '\n')
		comm[n - 1] = '\0';
	out_printf("{\"traceEvents\":[\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,"
		   "\"tid\":%d,\"args\":{\"name\":\"",
		   (int)pid, (int)pid);
	out_name(comm);
	out_printf("\"}}");
	out_flush();
	last_drain = rto_now_ns();
	rto_trace_on |= RTO_TRACE_FILE;
}

/*
 * A fork()ed child (atfork): what the rings hold is the parent's, and so
 * is the file.  With "%p" in the path the child writes a file of its own,
 * from the forking thread's ring (its only thread); without, it is not
 * traced.  trace=lttng stops in the child either way (LTTng-UST follows a
 * fork only with its own liblttng-ust-fork preloaded).
 */
static void child_after_fork(void)
{
	struct ring *mine = my_ring && !my_ring->helper ? my_ring : NULL;
	int own = (rto_trace_on & RTO_TRACE_FILE) && strstr(rto_trace_file(), "%p");

	rto_trace_on = 0;
	if (trace_fd >= 0)
		rto_syscall(SYS_close, trace_fd);
	trace_fd = -1;
	closed = 1;
	pthread_mutex_init(&drain_lock, NULL);
	pthread_mutex_init(&make_lock, NULL);
	/* The parent's other threads' rings: copies nobody will put into or drain. */
	for (int i = 0; i < nrings; i++)
		if (&rings[i] != mine)
			rto_syscall(SYS_munmap, rings[i].ev,
				    (rings[i].mask + 1) * sizeof(struct ev));
	my_ring = NULL;
	nrings = 0;
	if (!own) {
		if (mine)
			rto_syscall(SYS_munmap, mine->ev, (mine->mask + 1) * sizeof(struct ev));
		return;
	}
	if (mine) {
		struct ring r = *mine;
		rings[0] = (struct ring){.ev = r.ev,
					 .mask = r.mask,
					 .owner = r.owner,
					 .tid = (pid_t)rto_syscall(SYS_gettid)};
		my_ring = &rings[0];
		nrings = 1;
	}
	pid = (pid_t)rto_syscall(SYS_getpid);
	closed = 0;
	written_events = dropped_total = 0;
	out_n = 0;
	open_file();
}

/*
 * trace=lttng: the provider (trace_lttng.c) is a shared object of its own,
 * next to the library or in its rtoffload/ (or RTOFFLOAD_LTTNG_PROVIDER), that links
 * liblttng-ust; the library never does.  Missing: one line, and the
 * program runs on untraced.
 */
static void load_lttng(void)
{
	const char *path = secure_getenv("RTOFFLOAD_LTTNG_PROVIDER");
	char own[PATH_MAX];
	Dl_info info;

	if (!path || !*path) {
		path = "librtoffload-lttng.so";
		const char *slash = NULL;
		if (dladdr((void *)load_lttng, &info) && info.dli_fname)
			slash = strrchr(info.dli_fname, '/');
		/*
		 * Beside the library (a build tree, a plain install), or in
		 * its directory's rtoffload/ (the Debian package: a private
		 * directory of plugins, for an object without a soname).
		 */
		static const char *const where[] = {"/", "/rtoffload/"};
		for (unsigned i = 0; slash && i < 2 && path[0] != '/'; i++) {
			int n = snprintf(own, sizeof(own), "%.*s%slibrtoffload-lttng.so",
					 (int)(slash - info.dli_fname), info.dli_fname, where[i]);
			if (n > 0 && (size_t)n < sizeof(own) && rto_real_access(own, R_OK) == 0)
				path = own;
		}
	}
	/*
	 * LTTng-UST's start probes NUMA with set_mempolicy(MPOL_PREFERRED_MANY)
	 * and sets MPOL_DEFAULT back (strace): context.c would take the first
	 * for a memory policy of this thread's own, and run all its calls here
	 * from then on.  The policy the kernel reports after the load decides.
	 */
	unsigned short ctx = rto_self.own_ctx;
	void *h = rto_real_dlopen(path, RTLD_NOW | RTLD_LOCAL);
	int mode = -1;
	if (rto_syscall(SYS_get_mempolicy, &mode, NULL, 0UL, NULL, 0UL) == 0 && mode == 0)
		rto_self.own_ctx = ctx; /* MPOL_DEFAULT: as before the load */
	void *sym = h ? dlsym(h, "rto_lttng_event") : NULL;
	void *thread = h ? dlsym(h, "rto_lttng_thread") : NULL;
	void *gate = h ? dlsym(h, "rto_lttng_event_gated") : NULL;
	if (!sym || !thread || !gate) {
		rto_say(0, "trace=lttng is unavailable (%s): running untraced",
			h ? "not an rtoffload provider"
			  : "librtoffload-lttng.so or liblttng-ust not found");
		return;
	}
	lttng_event = (void (*)(int, const char *, uint64_t, uint64_t, uint32_t, uint16_t))sym;
	lttng_thread = (void (*)(void))thread;
	lttng_gated = (void (*)(int, const char *, uint64_t, uint64_t, uint32_t, uint16_t))gate;
	rto_trace_on |= RTO_TRACE_LTTNG;
}

void rto_trace_init(void)
{
	pid = (pid_t)rto_syscall(SYS_getpid);
	if (rto_trace_file()[0])
		open_file();
	if (rto_trace_lttng())
		load_lttng();
	if (rto_trace_on)
		pthread_atfork(NULL, NULL, child_after_fork);
}
