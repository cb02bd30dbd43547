/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Stalls: a call that no helper took within stall_us, or that has run on
 * a helper longer than that, is said once per call site, counted, and
 * shown by rtoffload top while it lasts.  When every worker is stuck
 * inside a call and calls wait, another worker starts (helper.c, up to
 * workers_max).
 *
 * Who does what:
 *   - the caller (realtime) only notes its stall: its timed FUTEX_WAIT ran
 *     out at stall_us (transport.c), so it claims a note in the queue's
 *     table by compare-and-swap, fills it and wakes the watchdog: a few
 *     atomics and one FUTEX_WAKE, only on a call already late;
 *   - the watchdog, a thread of ours at SCHED_OTHER, renders the line.  It
 *     reads /proc (who runs on the helpers' CPUs, at which policy and
 *     priority: the busy loop of another program, say), which a realtime
 *     thread must not, and which may take milliseconds.  Not a helper:
 *     the helpers are what is stalled (starved on their CPU by that busy
 *     loop, or stuck in calls), so a helper could say nothing until the
 *     stall ended.  The watchdog runs off the helpers' CPUs for the same
 *     reason: there it would be starved with them.  It sleeps on
 *     a futex word until a caller notes a stall, and then looks every
 *     stall_us / 2 while a noted call waits for a worker (a worker may
 *     have to be added), not while calls only run long (the live view
 *     reads the notes itself): a call blocked for hours on a pipe costs
 *     no periodic wake-up.
 *
 * Not every late call is a stall of the library.  A worker that waits for
 * input (a pipe's read, a FIFO's open, accept: stall_probe.c) waits as
 * the caller would have, and a marked thread that is not realtime waits
 * for a helper as it would wait for its own CPU: such calls are counted
 * and shown by the live view, and said only when they turn into a stall
 * of a realtime caller (its worker, its input come, starved stall_us).
 *
 * A call site here is the function, its caller thread and what held it
 * (no helper took it; a helper runs it): the caller cannot unwind its
 * stack on its realtime path, and the watchdog cannot unwind another
 * thread's.  Later stalls of a site are counted only.
 */
#include "options.h"
#include "cpulist.h"
#include "fn.h"
#include "callsite.h"
#include "transport.h"
#include "futex.h"
#include "procfs.h"
#include "proc_stat.h"
#include "own_thread.h"
#include "lifetime.h"
#include "report.h"
#include "real.h"
#include "stall_probe.h"
#include "stall.h"
#include "fork.h"
#include "signals.h"
#include "trace.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define STALL_STACK (256 * 1024)

static struct {
	/* input: noted calls whose worker waits for input (stall_probe.c), not stalls */
	uint64_t calls, unclaimed, running, taken_back, grown, input, moved;
	/* input_late: said unclaimed first, then taken by a worker that waits for input */
	uint64_t input_late;
} counts;

/*
 * The caller's tid without a system call: glibc's thread descriptor holds
 * it at the offset libthread_db reads (lifetime.c reads the initial
 * thread's the same way).  0 where unknown: the line then says "tid ?".
 */
/* stall_us=: copied once at load (rto_stall_configure), read-only afterwards. */
static struct {
	uint64_t stall_us; /* 0: no stall detection */
} opt;

/* A fork child's statistics start from zero (fork.c): its parent's stalls are not its own. */
static void reset_after_fork(void)
{
	memset(&counts, 0, sizeof(counts)); /* the forking thread is the child's only one */
}

void rto_stall_configure(const struct rto_options *o)
{
	opt.stall_us = o->stall_us;
	rto_fork_on_child(reset_after_fork); /* fork.c is below us: it calls back */
}

static size_t tid_offset;

static pid_t caller_tid(void)
{
	return tid_offset ? *(const pid_t *)((const char *)pthread_self() + tid_offset) : 0;
}

/* ---- the caller's side ------------------------------------------------------------ */

unsigned rto_stall_note(const struct rto_req *w, struct rto_fn *fn, uint64_t t0)
{
	struct rto_queue *q = rto_q;
	unsigned handle = 0;

	uatomic_inc(&counts.calls);
	rto_trace_stall(fn); /* trace.c */
	for (unsigned i = 0; i < RTO_STALL_NOTES && !handle; i++) {
		struct rto_stall_note *n = &q->stalls[i];
		uint32_t g = CMM_LOAD_SHARED(n->gen);
		if ((g & 1) || uatomic_cmpxchg(&n->gen, g, g + 1) != g)
			continue;
		CMM_STORE_SHARED(n->tid, caller_tid());
		CMM_STORE_SHARED(n->prio, (int32_t)w->prio);
		CMM_STORE_SHARED(n->fn, fn);
		CMM_STORE_SHARED(n->req, w);
		CMM_STORE_SHARED(n->t0, t0);
		cmm_smp_wmb(); /* the fields before live: the watchdog reads live first */
		CMM_STORE_SHARED(n->live, g + 1);
		handle = i + 1;
	}
	/* Full table: counted, and the watchdog still looks whether a worker is needed. */
	uatomic_inc(&q->stall_seq);
	rto_futex_wake(&q->stall_seq, 1);
	return handle;
}

void rto_stall_clear(unsigned handle)
{
	struct rto_stall_note *n = &rto_q->stalls[handle - 1];

	CMM_STORE_SHARED(n->live, 0);
	uatomic_inc(&n->gen); /* even: free; a watchdog reading it sees the change */
}

void rto_stall_taken_back(void)
{
	uatomic_inc(&counts.calls);
	uatomic_inc(&counts.taken_back);
}

/* ---- reading the notes ------------------------------------------------------------ */

struct note {
	uint32_t gen;
	int32_t tid, prio;
	struct rto_fn *fn;
	const struct rto_req *req;
	uint64_t t0;
};

/* Note i, if a caller holds it and it is whole: 1 and *out. */
static int read_note(const struct rto_queue *q, unsigned i, struct note *out)
{
	const struct rto_stall_note *n = &q->stalls[i];
	uint32_t live = CMM_LOAD_SHARED(n->live);

	if (!(live & 1))
		return 0;
	cmm_smp_rmb();
	out->gen = live;
	out->tid = CMM_LOAD_SHARED(n->tid);
	out->prio = CMM_LOAD_SHARED(n->prio);
	out->fn = CMM_LOAD_SHARED(n->fn);
	out->req = CMM_LOAD_SHARED(n->req);
	out->t0 = CMM_LOAD_SHARED(n->t0);
	cmm_smp_rmb();
	/* Not cleared, not reused meanwhile: the fields are this call's. */
	return CMM_LOAD_SHARED(n->gen) == live && out->fn;
}

/* The row of the worker running req, or -1. */
static int runner_of(const struct rto_queue *q, const struct rto_req *req)
{
	for (int i = 0; i < RTO_WORKERS_MAX; i++)
		if (CMM_LOAD_SHARED(q->running[i].req) == req)
			return i;
	return -1;
}

/*
 * The watchdog's verdict on note i, for the readers (the live view):
 * its gen while the worker running it waits for input (stall_probe.c),
 * as its caller would have.
 */
static uint32_t quiet[RTO_STALL_NOTES];

static int waits_input(unsigned i, const struct note *n)
{
	return CMM_LOAD_SHARED(quiet[i]) == n->gen;
}

void rto_stall_counts(struct rto_stall_counts *c)
{
	const struct rto_queue *q = rto_q;
	struct note n;

	/* Noted by callers, less those the watchdog found waiting for input. */
	c->input = uatomic_read(&counts.input);
	c->calls = uatomic_read(&counts.calls) - c->input; /* input_late ones were stalls */
	c->input += uatomic_read(&counts.input_late);
	c->unclaimed = uatomic_read(&counts.unclaimed);
	c->running = uatomic_read(&counts.running);
	c->taken_back = uatomic_read(&counts.taken_back);
	c->grown = uatomic_read(&counts.grown);
	c->moved = uatomic_read(&counts.moved);
	c->now = c->input_now = 0;
	for (unsigned i = 0; q && i < RTO_STALL_NOTES; i++) {
		if (!read_note(q, i, &n))
			continue;
		if (waits_input(i, &n))
			c->input_now++;
		else
			c->now++;
	}
}

int rto_stall_next(unsigned *pos, struct rto_stall_row *row)
{
	const struct rto_queue *q = rto_q;
	struct note n;

	for (; q && *pos < RTO_STALL_NOTES; (*pos)++) {
		if (!read_note(q, *pos, &n))
			continue;
		int w = runner_of(q, n.req);
		uint64_t now = rto_now_ns();
		*row = (struct rto_stall_row){
			.fn = n.fn->name,
			.tid = n.tid,
			.helper = w < 0 ? 0 : CMM_LOAD_SHARED(q->running[w].tid),
			.ns = now > n.t0 ? now - n.t0 : 0,
			.input = waits_input(*pos, &n),
		};
		(*pos)++;
		return 1;
	}
	return 0;
}

/* ---- what runs on the helpers' CPUs (the watchdog: /proc) ------------------------- */

static struct rto_stall_remedies remedy; /* set before the watchdog starts */
static pid_t watchdog_tid;		 /* the watchdog's own, left out of what it sees */

struct task {
	pid_t pid, tid;
	int policy, prio, nice, cpu;
	char state;
	char name[17];
};

/* A /proc stat line: comm, state, nice (19), processor (39), rt_priority (40), policy (41). */
static int parse_task(const char *line, struct task *t)
{
	const char *open = strchr(line, '('), *close = strrchr(line, ')');
	long v[42] = {0};

	if (!open || !close || close < open || !close[1])
		return -1;
	size_t n = (size_t)(close - open - 1);
	if (n >= sizeof(t->name))
		n = sizeof(t->name) - 1;
	memcpy(t->name, open + 1, n);
	t->name[n] = '\0';
	const char *p = rto_procfs_stat_field(line, 3); /* the state */
	if (!p)
		return -1;
	t->state = *p;
	for (int field = 4; field < 42; field++) {
		p = strchr(p, ' ');
		if (!p)
			return -1;
		v[field] = strtol(++p, NULL, 10);
	}
	t->nice = (int)v[19];
	t->cpu = (int)v[39];
	t->prio = (int)v[40];
	t->policy = (int)v[41];
	return 0;
}

/* How strongly t holds its CPU: realtime above all, then by nice. */
static int rank(const struct task *t)
{
	if (t->policy == SCHED_FIFO || t->policy == SCHED_RR)
		return 1000 + t->prio;
	return 100 - t->nice;
}

/* The numeric names in directory path, one by one (raw getdents64). */
struct dir {
	long fd;
	char buf[4096];
	long len, pos;
};

static long dir_next(struct dir *d)
{
	for (;;) {
		if (d->pos >= d->len) {
			d->len = rto_syscall(SYS_getdents64, d->fd, d->buf, sizeof(d->buf));
			d->pos = 0;
			if (d->len <= 0)
				return -1;
		}
		/* struct linux_dirent64: ino 8, off 8, reclen 2, type 1, name. */
		const char *e = d->buf + d->pos;
		unsigned short reclen;
		memcpy(&reclen, e + 16, sizeof(reclen));
		d->pos += reclen;
		const char *name = e + 19;
		if (*name >= '0' && *name <= '9')
			return strtol(name, NULL, 10);
	}
}

static int dir_open(struct dir *d, const char *path)
{
	d->fd = rto_syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	d->len = d->pos = 0;
	return d->fd < 0 ? -1 : 0;
}

/*
 * For each of the helpers' CPUs, the runnable task there that holds it
 * most strongly (state R on it: running, or waiting for it), in any
 * process, but the watchdog itself.  A scan of /proc: milliseconds on a
 * busy system, on this thread only.
 */
#define CPUS_SHOWN 8

static void busiest(struct task *best, const int *cpu, int ncpu)
{
	static struct dir procs, tasks; /* 8 KiB: not on the watchdog's stack */
	char path[64], line[1024];

	for (int i = 0; i < ncpu; i++)
		best[i].tid = 0;
	if (dir_open(&procs, "/proc") != 0)
		return;
	for (long pid; (pid = dir_next(&procs)) >= 0;) {
		snprintf(path, sizeof(path), "/proc/%ld/task", pid);
		if (dir_open(&tasks, path) != 0)
			continue;
		for (long tid; (tid = dir_next(&tasks)) >= 0;) {
			struct task t;
			if (tid == watchdog_tid)
				continue;
			long n =
				rto_procfs_task((pid_t)pid, (pid_t)tid, "stat", line, sizeof(line));
			if (n <= 0 || parse_task(line, &t) != 0 || t.state != 'R')
				continue;
			t.pid = (pid_t)pid;
			t.tid = (pid_t)tid;
			for (int i = 0; i < ncpu; i++)
				if (t.cpu == cpu[i] && (!best[i].tid || rank(&t) > rank(&best[i])))
					best[i] = t;
		}
		rto_syscall(SYS_close, tasks.fd);
	}
	rto_syscall(SYS_close, procs.fd);
}

static const char *policy_name(int policy)
{
	switch (policy) {
	case SCHED_FIFO:
		return "SCHED_FIFO";
	case SCHED_RR:
		return "SCHED_RR";
	case SCHED_BATCH:
		return "SCHED_BATCH";
	case SCHED_IDLE:
		return "SCHED_IDLE";
	default:
		return "SCHED_OTHER";
	}
}

/* ---- the line ------------------------------------------------------------------------- */

struct line {
	char buf[1536];
	size_t n;
};

static void put(struct line *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct line *l, const char *fmt, ...)
{
	va_list ap;

	if (l->n >= sizeof(l->buf) - 2)
		return;
	va_start(ap, fmt);
	int w = vsnprintf(l->buf + l->n, sizeof(l->buf) - 1 - l->n, fmt, ap);
	va_end(ap);
	if (w > 0)
		l->n += (size_t)w < sizeof(l->buf) - 1 - l->n ? (size_t)w
							      : sizeof(l->buf) - 2 - l->n;
}

static void put_ms(struct line *l, uint64_t ns)
{
	if (ns >= 10000000000u)
		put(l, "%.0f s", (double)ns / 1e9);
	else if (ns >= 1000000000u)
		put(l, "%.1f s", (double)ns / 1e9);
	else
		put(l, "%.1f ms", (double)ns / 1e6);
}

/* A worker's state letter (/proc stat), as the line says it. */
static const char *state_name(char state)
{
	switch (state) {
	case 'R':
		return "runnable";
	case 'S':
		return "asleep";
	case 'D':
		return "uninterruptible";
	default:
		return "state ?";
	}
}

/* What the helpers' CPUs and the workers are busy with. */
/* The helpers' CPUs the line names (the first CPUS_SHOWN): how many. */
static int shown_cpus(int *cpu)
{
	int ncpu = 0;

	for (int c = 0; c < CPU_SETSIZE && ncpu < CPUS_SHOWN; c++)
		if (CPU_ISSET(c, &rto_q->cpus))
			cpu[ncpu++] = c;
	return ncpu;
}

/* The CPU thread tid of ours last ran on (proc(5) stat field 39), or -1. */
static int task_cpu(pid_t tid)
{
	char line[1024];
	const char *f = tid > 0 && rto_procfs_task(0, tid, "stat", line, sizeof(line)) > 0
				? rto_procfs_stat_field(line, 39)
				: NULL;

	return f ? atoi(f) : -1;
}

static void put_helpers(struct line *l, const struct rto_queue *q, uint64_t now)
{
	struct task best[CPUS_SHOWN];
	int cpu[CPUS_SHOWN], ncpu = shown_cpus(cpu);

	busiest(best, cpu, ncpu);
	for (int i = 0; i < ncpu; i++) {
		put(l, "; CPU %d ", cpu[i]);
		if (!best[i].tid) {
			put(l, "runs nothing else");
			continue;
		}
		char proc[17] = "?";
		rto_procfs_comm(best[i].pid, best[i].pid, proc, sizeof(proc));
		put(l, "busy with '%s' (tid %d of process %d '%s') %s %d", best[i].name,
		    (int)best[i].tid, (int)best[i].pid, proc, policy_name(best[i].policy),
		    best[i].policy == SCHED_FIFO || best[i].policy == SCHED_RR ? best[i].prio
									       : best[i].nice);
		if (best[i].policy != SCHED_FIFO && best[i].policy != SCHED_RR)
			put(l, " (nice)");
	}
	put(l, "; helpers:");
	for (int i = 0; i < RTO_WORKERS_MAX; i++) {
		const struct rto_running *w = &q->running[i];
		if (!CMM_LOAD_SHARED(w->alive))
			continue;
		int tid = CMM_LOAD_SHARED(w->tid);
		if (!tid) { /* remedy.grow() just started it */
			put(l, " rtoffload/%d starting,", i);
			continue;
		}
		put(l, " rtoffload/%d (tid %d) ", i, tid);
		struct rto_fn *fn = CMM_LOAD_SHARED(w->fn);
		uint64_t since = CMM_LOAD_SHARED(w->since);
		if (CMM_LOAD_SHARED(w->in_call) && fn) {
			put(l, "in '%s' for ", fn->name);
			put_ms(l, now > since ? now - since : 0);
			put(l, " (%s)", state_name(rto_stall_task_state(tid)));
		} else {
			put(l, "idle");
		}
		put(l, ",");
	}
	if (l->buf[l->n - 1] == ',')
		l->n--;
}

/*
 * The hypervisor's share.  Inside a virtual machine the host may not run
 * a virtual CPU for milliseconds (here, a 2-vCPU KVM guest: cyclictest at
 * SCHED_FIFO 99 on an idle guest woke 10 ms late twice in two minutes).
 * A helper then takes a call late although nothing held its CPU, and
 * the line above would read "idle ... runs nothing else".  So it says
 * how much the host took of the helpers' CPUs and the caller's (steal,
 * /proc/stat) since the line before (the first: since the helpers
 * started), and since boot; nothing when the host never took these CPUs
 * (always so on bare metal).  Ticks of USER_HZ:
 * a share under 10 ms may not show.  The watchdog's, one scan at a time.
 */
static uint64_t steal_ns[CPU_SETSIZE];	 /* each CPU's steal at the last look */
static uint64_t steal_took[CPU_SETSIZE]; /* how much of it came since the look before */
static uint64_t steal_at;		 /* CLOCK_BOOTTIME of the last look; 0: none */

/*
 * Each CPU's steal now, and since the last look (steal_took): the time
 * since that look, or 0 when /proc/stat cannot be read.  The first look
 * is at the helpers' start (rto_stall_start), as pollcap.c's reads of
 * /proc are; the others on the scan's own descriptor table.
 */
static uint64_t steal_look(void)
{
	static char text[16384]; /* the cpu lines of 128 CPUs or so: they come first */
	const char *p = text;
	struct timespec ts;
	long len = rto_procfs_read("/proc/stat", text, sizeof(text));
	long hz = rto_real_sysconf(_SC_CLK_TCK);
	uint64_t ticks;
	int c;

	if (len <= 0 || hz <= 0 || clock_gettime(CLOCK_BOOTTIME, &ts) != 0)
		return 0;
	uint64_t now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	while (rto_proc_stat_next(&p, text + len, &c, &ticks)) {
		if (c >= CPU_SETSIZE)
			break;
		uint64_t ns = ticks * (1000000000u / (uint64_t)hz);
		steal_took[c] = ns > steal_ns[c] ? ns - steal_ns[c] : 0;
		steal_ns[c] = ns;
	}
	uint64_t since = now - steal_at;
	steal_at = now;
	return since;
}

static void put_steal(struct line *l, int caller_cpu)
{
	int cpu[CPUS_SHOWN + 1], ncpu = shown_cpus(cpu), any = 0;
	uint64_t since = steal_look(), now = steal_at;

	if (caller_cpu >= 0 && caller_cpu < CPU_SETSIZE && !CPU_ISSET(caller_cpu, &rto_q->cpus))
		cpu[ncpu++] = caller_cpu;
	for (int i = 0; i < ncpu; i++)
		any |= steal_ns[cpu[i]] != 0;
	if (!since || !any) /* bare metal, or a host that never took these CPUs */
		return;
	for (int i = 0; i < ncpu; i++) {
		put(l, i ? ", CPU %d%s for " : "; the hypervisor took CPU %d%s for ", cpu[i],
		    cpu[i] == caller_cpu ? " (the caller's)" : "");
		put_ms(l, steal_took[cpu[i]]);
	}
	put(l, " in the last ");
	put_ms(l, since);
	put(l, " (steal; since boot:");
	for (int i = 0; i < ncpu; i++) {
		put(l, i ? ", " : " ");
		put_ms(l, steal_ns[cpu[i]]);
	}
	put(l, " of ");
	put_ms(l, now);
	put(l, ")");
}

/* ---- the watchdog ------------------------------------------------------------------- */

#define SITES 256

static uint64_t sites[SITES]; /* the watchdog's: the sites said already */

/* 1 the first time this site stalls. */
static int first_at_site(const struct note *n, int kind)
{
	uint64_t h = ((uintptr_t)n->fn * 0x9e3779b97f4a7c15u) ^ ((uint64_t)(uint32_t)n->tid << 1) ^
		     (uint64_t)kind;

	h = h ? h : 1;
	for (unsigned i = 0; i < SITES; i++) {
		uint64_t *s = &sites[(h + i) % SITES];
		if (*s == h)
			return 0;
		if (!*s) {
			*s = h;
			return 1;
		}
	}
	return 0; /* full: 256 sites said already */
}

static void say_stall(const struct rto_queue *q, const struct note *n, int runner, uint64_t now,
		      int scan)
{
	struct line l = {.n = 0};
	char name[17] = "?";

	if (n->tid && scan)
		rto_procfs_comm(getpid(), n->tid, name, sizeof(name));
	put(&l, "==%d==rtoffload: stall: '%s' of realtime thread '%s' (tid ", (int)getpid(),
	    n->fn->name, name);
	put(&l, n->tid ? "%d" : "?", (int)n->tid);
	if (runner < 0) {
		put(&l, ") not taken by any helper for ");
		put_ms(&l, now - n->t0);
	} else {
		put(&l, ") running on helper rtoffload/%d (tid %d), waited ", runner,
		    (int)CMM_LOAD_SHARED(q->running[runner].tid));
		put_ms(&l, now - n->t0);
	}
	put(&l, " (stall_us=%lu)", (unsigned long)opt.stall_us);
	if (scan) {
		put_helpers(&l, q, now);
		put_steal(&l, task_cpu(n->tid));
	} else {
		put(&l, "; the helpers' CPUs could not be looked at");
	}
	put(&l, "\n");
	rto_callsite_report(l.buf, l.n);
}

/*
 * The scan runs on a thread of its own, made for it, with a descriptor
 * table of its own.  A program may rely on open() and dup() giving the
 * lowest free number (tar: close(n); dup(x), abort() when dup gives
 * another; live.c tells the story), and a stall comes at any time: the
 * scan's /proc descriptors must not take a number in the program's
 * table even for a moment.  So the scanner unshares the table
 * (CLONE_FILES) and closes its copies of the program's descriptors but
 * the one reports go to; the watchdog keeps the shared table, for the
 * workers it starts.  The copies hold the program's files open for the
 * microseconds between the two calls (a pipe's end of file comes that
 * much later).
 */
struct scan {
	const struct rto_queue *q;
	const struct note *n;
	int runner;
	uint64_t now;
	uint32_t done; /* futex: the scanner is done with this (on the watchdog's stack) */
};

static void *scanner(void *arg)
{
	struct scan *s = arg;
	int fd = rto_callsite_report_fd();

	rto_signal_own_thread_init(); /* cred_mirror.c's signal */

	int own = rto_syscall(SYS_unshare, CLONE_FILES) == 0;
	if (own && fd > 0)
		own = rto_syscall(SYS_close_range, 0U, (unsigned)fd - 1, 0U) == 0;
	if (own)
		own = rto_syscall(SYS_close_range, (unsigned)fd + 1, ~0U, 0U) == 0;
	/* Not unshared or not closed (an old kernel): say what needs no /proc. */
	say_stall(s->q, s->n, s->runner, s->now, own);
	/* The last touch of *s (an atomic: ThreadSanitizer sees the hand-back). */
	uatomic_set(&s->done, 1);
	rto_futex_wake(&s->done, 1); /* reads nothing at the address (futex.c) */
	return NULL;
}

static void say_scanned(const struct rto_queue *q, const struct note *n, int runner, uint64_t now)
{
	struct scan s = {q, n, runner, now, 0};
	pthread_attr_t attr;
	pthread_t tid;

	/* Detached, and waited for by its word: the scan's end, not the thread's. */
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, STALL_STACK);
	if (rto_create_own_thread(&tid, &attr, scanner, &s) == 0) {
		rto_real_pthread_setname_np(tid, "rtoffload-scan");
		while (!uatomic_read(&s.done))
			rto_futex_wait(&s.done, 0);
	} else
		say_stall(q, n, runner, now, 0);
	pthread_attr_destroy(&attr);
}

/* Every worker inside a call for longer than stall_us (and at least one). */
static int all_stuck(const struct rto_queue *q, uint64_t now)
{
	uint64_t stall_ns = opt.stall_us * 1000;
	int alive = 0;

	for (int i = 0; i < RTO_WORKERS_MAX; i++) {
		const struct rto_running *w = &q->running[i];
		if (!CMM_LOAD_SHARED(w->alive))
			continue;
		alive++;
		uint64_t since = CMM_LOAD_SHARED(w->since);
		if (!CMM_LOAD_SHARED(w->in_call) || since > now || now - since < stall_ns)
			return 0;
	}
	return alive > 0;
}

static uint32_t said[RTO_STALL_NOTES]; /* the watchdog's: each note's gen it handled */

/*
 * A look at the workers' state takes a few /proc reads on the probe's
 * thread; longer than this, and the call is taken for held up.
 */
#define PROBE_NS (5L * 1000 * 1000)
/*
 * While a call waits for input on a worker and nothing else is late,
 * the watchdog looks this often whether its worker still waits: once
 * the input came, a worker starved on its CPU is a stall again.  Ten
 * light looks a second for a program that waits on its terminal for
 * hours, off the helpers' CPUs.
 */
#define QUIET_LOOK_NS (100L * 1000 * 1000)

/*
 * The line, once per site, for a realtime caller's call.  A marked thread
 * that is not realtime (mark=all marks them all) competes for its CPU
 * like any other: on a loaded machine its calls wait 10 ms for a helper
 * at its own SCHED_OTHER as often as it would wait for its own CPU.
 * Said, such lines came by the dozen on the stderr of ordinary programs
 * (head, under mark=all beside four busy loops); counted and shown only.
 */
static void say_once(const struct rto_queue *q, const struct note *n, int runner, uint64_t now)
{
	if (n->prio > 0 && first_at_site(n, runner < 0))
		say_scanned(q, n, runner, now);
}

/* 1 the worker waits for input, 0 not, -1 no answer yet. */
static int probe(const struct rto_queue *q, int runner)
{
	pid_t tid = CMM_LOAD_SHARED(q->running[runner].tid);

	return tid > 0 ? rto_stall_probe_waits(tid, PROBE_NS) : 0;
}

/*
 * A new note whose worker the probe could not look at yet (its thread
 * not run for PROBE_NS on a loaded machine: a pipe's read under mark=all
 * was said so) is looked at again; after this long without an answer it
 * is taken for held up, as before the probe.
 */
#define UNSURE_NS (1000L * 1000 * 1000)
static uint32_t unsure[RTO_STALL_NOTES]; /* the watchdog's: the gen of a note not judged yet */
static uint64_t unsure_at[RTO_STALL_NOTES];

/*
 * A slot's post that a worker claimed (slot_seen moved to it) but no
 * worker row names: taken and not started yet, or done and not yet
 * collected by its caller (whose clear may come after a loaded
 * machine's watchdog looks).  Neither is "no helper took it".  A queued
 * request cannot be told so: its node is the caller's.
 */
static int slot_claimed(const struct rto_queue *q, const struct rto_req *req)
{
	for (unsigned i = 0; i < RTO_SLOTS; i++)
		if (req == &q->slots[i].req)
			return CMM_LOAD_SHARED(q->slot_seen[i]) ==
			       CMM_LOAD_SHARED(q->slots[i].req.post);
	return 0;
}

/* Note i is held up: said once it has been for stall_us (1: look again soon, 0: said). */
static uint32_t held[RTO_STALL_NOTES]; /* the watchdog's: the gen of a note seen held up */
static uint64_t held_at[RTO_STALL_NOTES];

static int held_long(unsigned i, const struct note *n, uint64_t now)
{
	if (held[i] != n->gen) {
		held[i] = n->gen;
		held_at[i] = now;
	}
	return now - held_at[i] >= opt.stall_us * 1000;
}

/*
 * One note's turn.  Its verdict, once made, is final but for one case.
 *  - no worker took it: said at once (the hog on the helpers' CPU);
 *  - its worker waits for input as its caller would have (stall_probe.c):
 *    quiet, counted, shown by the live view, not said;
 *  - its worker is held up (runnable but not running, uninterruptible,
 *    asleep on anything else): said once it is still so stall_us after
 *    the watchdog first saw it.  The watchdog's first look may come late
 *    on a loaded machine, when the call that waited for input is just
 *    returning: a worker seen runnable once is not yet a stall;
 *  - a quiet note is looked at again each turn: a worker that stopped
 *    waiting for input but still has not published stall_us later is
 *    held up (starved once its input came), and said then.
 * Returns how soon to look again: 0 never for this note, 1 stall_us / 2,
 * 2 QUIET_LOOK_NS.
 */
/*
 * A call said "not taken by any helper" (its helpers' CPU was busy past
 * stall_us) that a worker then took, and that now waits for input there
 * (a FIFO's open, a pipe's read): from then on it waits as its caller
 * would have.  The live view shows it waiting, input_waits counts it (it
 * stays a stall in the counts: it was one), and the watchdog looks at it
 * as at any other wait for input, so that a worker starved once its
 * input came is said again.  Once per note: late_input.
 */
static uint32_t late_input[RTO_STALL_NOTES]; /* the watchdog's: gens judged so */

static int taken_late(struct rto_queue *q, unsigned i, const struct note *n, int runner)
{
	int waits = probe(q, runner);

	if (waits <= 0) {
		/* Not (yet) in a wait for input: look again for a second, then let it be. */
		if (rto_now_ns() - n->t0 < UNSURE_NS)
			return 1;
		late_input[i] = n->gen;
		return 0;
	}
	late_input[i] = n->gen;
	uatomic_inc(&counts.input_late);
	rto_trace_verdict(n->fn, n->tid, RTO_TR_INPUT); /* trace.c */
	CMM_STORE_SHARED(quiet[i], n->gen);
	held[i] = 0;
	return 2;
}

static int judge(struct rto_queue *q, unsigned i, const struct note *n, int runner, int *say)
{
	int fresh = said[i] != n->gen;
	uint64_t now = rto_now_ns();
	/* A look long after the note (a loaded machine's watchdog): what it sees is not yet a
	 * verdict. */
	int late = now - n->t0 > 2 * opt.stall_us * 1000;

	if (!fresh && CMM_LOAD_SHARED(quiet[i]) != n->gen)
		return runner >= 0 && late_input[i] != n->gen ? taken_late(q, i, n, runner) : 0;
	if (runner < 0 && !fresh)
		return 0; /* quiet, and its worker is done: its caller clears it */
	if (runner < 0 && (late || slot_claimed(q, n->req)) && !held_long(i, n, now))
		return 1; /* taken, not in a worker's row (yet, or any more); or a late look */
	if (runner < 0) {
		said[i] = n->gen;
		uatomic_inc(&counts.unclaimed);
		rto_trace_verdict(n->fn, n->tid, RTO_TR_UNCLAIMED); /* trace.c */
		*say = 1;
		return 0;
	}
	int waits = probe(q, runner);
	if (waits < 0 && !fresh)
		return 2; /* quiet as it was: look again later */
	if (waits < 0) {
		if (unsure[i] != n->gen) {
			unsure[i] = n->gen;
			unsure_at[i] = now;
		}
		if (now - unsure_at[i] < UNSURE_NS)
			return 1;
		waits = 0; /* no answer for a second: held up, as far as anyone can tell */
	}
	if (waits) {
		said[i] = n->gen;
		if (fresh) {
			uatomic_inc(&counts.input);
			rto_trace_verdict(n->fn, n->tid, RTO_TR_INPUT); /* trace.c */
			CMM_STORE_SHARED(quiet[i], n->gen);
		}
		held[i] = 0;
		return 2;
	}
	if (!held_long(i, n, now))
		return 1;
	said[i] = n->gen;
	if (!fresh) {
		CMM_STORE_SHARED(quiet[i], 0);
		/* A stall after all. */
		uatomic_dec(late_input[i] == n->gen ? &counts.input_late : &counts.input);
	}
	uatomic_inc(&counts.running);
	rto_trace_verdict(n->fn, n->tid, RTO_TR_RUNNING); /* trace.c */
	*say = 1;
	return 0;
}

/*
 * Several helpers' CPUs, and calls late: a worker that is runnable but
 * not running waits for a CPU another task holds (a realtime busy loop),
 * while another of the helpers' CPUs may be free.  The kernel moves a
 * realtime worker itself; a SCHED_OTHER one waits for the fair class's
 * balancing (helper.c's rto_helpers_move_off): move it.
 */
static void move_starved(const struct rto_queue *q)
{
	int cpu;

	if (CPU_COUNT(&q->cpus) < 2)
		return;
	for (int i = 0; i < RTO_WORKERS_MAX; i++) {
		const struct rto_running *w = &q->running[i];
		pid_t tid = CMM_LOAD_SHARED(w->tid);
		if (CMM_LOAD_SHARED(w->alive) && tid > 0 &&
		    rto_stall_probe_starved(tid, &cpu, PROBE_NS) && remedy.move_off(tid, cpu) == 0)
			uatomic_inc(&counts.moved);
	}
}

/* Say the new stalls, grow if every worker is stuck; how soon to look again (0: not). */
static long look(struct rto_queue *q)
{
	struct note n[RTO_STALL_NOTES];
	int runner[RTO_STALL_NOTES], live[RTO_STALL_NOTES];
	unsigned waiting = 0, late = 0;
	int again = 0, say[RTO_STALL_NOTES] = {0};

	for (unsigned i = 0; i < RTO_STALL_NOTES; i++) {
		live[i] = read_note(q, i, &n[i]);
		runner[i] = live[i] ? runner_of(q, n[i].req) : -1;
		/* A quiet note's call without a worker is done, not waiting for one. */
		waiting += live[i] && runner[i] < 0 && !waits_input(i, &n[i]);
		late += live[i] && !waits_input(i, &n[i]);
	}
	/* The verdicts first: a worker started for a call takes it at once, and it was stalled. */
	for (unsigned i = 0; i < RTO_STALL_NOTES; i++) {
		if (!live[i])
			continue;
		int soon = judge(q, i, &n[i], runner[i], &say[i]);
		if (soon && (!again || soon < again))
			again = soon;
	}
	/*
	 * Calls wait, and no worker will take them: one more (at most one a
	 * look), before the lines: a scan of /proc may take long on a loaded
	 * machine, and the waiting call must not wait for it.  Workers that
	 * wait for input are stuck too: a reader of a pipe must not hold up
	 * another thread's write.
	 */
	if (waiting && all_stuck(q, rto_now_ns()) && remedy.grow() == 0)
		uatomic_inc(&counts.grown);
	if (late)
		move_starved(q);
	for (unsigned i = 0; i < RTO_STALL_NOTES; i++)
		if (say[i])
			say_once(q, &n[i], runner[i], rto_now_ns());
	if (waiting || again == 1) {
		long ns = (long)(opt.stall_us * 500); /* stall_us / 2 */
		return ns < 1000000 ? 1000000 : ns;
	}
	return again ? QUIET_LOOK_NS : 0;
}

static void *watchdog(void *arg)
{
	struct rto_queue *q = rto_q;

	(void)arg;
	rto_signal_own_thread_init(); /* cred_mirror.c's signal: its futex waits only wake */
	watchdog_tid = (pid_t)rto_syscall(SYS_gettid);
	rto_trace_own_thread("rtoffload-stall"); /* trace.c: its verdicts' track */
	for (;;) {
		uint32_t seq = CMM_LOAD_SHARED(q->stall_seq);
		cmm_smp_rmb(); /* alone.c stores leave, then moves stall_seq */
		if (CMM_LOAD_SHARED(q->leave))
			break;
		long ns = look(q);
		if (ns)
			rto_futex_wait_ns(&q->stall_seq, seq, ns);
		else
			rto_futex_wait(&q->stall_seq, seq);
	}
	rto_lifetime_helper_exiting(); /* as a helper's end: glibc counts it again */
	return NULL;
}

void rto_stall_leave(void)
{
	struct rto_queue *q = rto_q;

	cmm_smp_mb(); /* leave (alone.c) before the word moves */
	uatomic_inc(&q->stall_seq);
	rto_futex_wake(&q->stall_seq, INT32_MAX);
	rto_stall_probe_leave();
}

void rto_stall_start(const struct rto_stall_remedies *r)
{
	sigset_t all, old;
	pthread_attr_t attr;
	pthread_t tid;

	if (!opt.stall_us)
		return;
	const uint32_t *d = dlvsym(RTLD_DEFAULT, "_thread_db_pthread_tid", "GLIBC_PRIVATE");
	if (d && d[0] == 8 * sizeof(pid_t) && d[1] == 1 &&
	    *(const pid_t *)((const char *)pthread_self() + d[2]) == rto_syscall(SYS_gettid))
		tid_offset = d[2];
	remedy = *r;
	memset(said, 0, sizeof(said));
	memset(quiet, 0, sizeof(quiet));
	memset(late_input, 0, sizeof(late_input));
	memset(held, 0, sizeof(held));
	memset(unsure, 0, sizeof(unsure));
	memset(sites, 0, sizeof(sites));
	memset(steal_ns, 0, sizeof(steal_ns));
	steal_at = 0;
	(void)steal_look(); /* the baseline of the host's share a line says */
	rto_stall_probe_reset();
	/*
	 * SCHED_OTHER, not the starting thread's realtime policy, and off
	 * the helpers' CPUs when there are others (usually the realtime
	 * ones): what starves the helpers would starve it there.  It runs
	 * only while a call is stalled, and every realtime thread preempts
	 * it.  With no other CPU, any.
	 */
	cpu_set_t any;
	CPU_ZERO(&any);
	for (int c = 0; c < CPU_SETSIZE && c < rto_real_sysconf(_SC_NPROCESSORS_ONLN); c++)
		if (!CPU_ISSET(c, &rto_q->cpus))
			CPU_SET(c, &any);
	if (CPU_COUNT(&any) == 0)
		for (int c = 0; c < CPU_SETSIZE && c < rto_real_sysconf(_SC_NPROCESSORS_ONLN); c++)
			CPU_SET(c, &any);
	struct sched_param other = {0};
	sigfillset(&all);
	rto_real_pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setaffinity_np(&attr, sizeof(any), &any);
	pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(&attr, SCHED_OTHER);
	pthread_attr_setschedparam(&attr, &other);
	pthread_attr_setstacksize(&attr, STALL_STACK);
	int err = rto_create_own_thread(&tid, &attr, watchdog, NULL);
	if (!err) {
		rto_lifetime_helper_started(); /* like a helper: it keeps no process alive */
		rto_real_pthread_setname_np(tid, "rtoffload-stall");
	} else {
		rto_say(1, "stall: cannot start the watchdog: %s; stalls are counted only",
			strerror(err));
	}
	pthread_attr_destroy(&attr);
	rto_real_pthread_sigmask(SIG_SETMASK, &old, NULL);
}
