/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench-roundtrip: the cost of one call, offloaded or not, next to the
 * alternatives a realtime programmer would otherwise reach for.
 *
 * Every configuration times the same two calls, one at a time, from a
 * SCHED_FIFO 80 thread on the realtime CPU (memory locked), with the
 * serving thread (helper, server, SQPOLL kernel thread) on the
 * housekeeping CPU:
 *   write  a 64-byte write() to /dev/null (a cheap but real syscall);
 *   empty  a call with next to no kernel work.  The issue names
 *          syscall(SYS_getppid), but syscall() is not wrapped, so it cannot
 *          be offloaded; the library configurations use lseek(fd, 0,
 *          SEEK_CUR) on /dev/null instead (wrapped, offloaded, and the
 *          kernel only returns 0), and the direct ones time both so the
 *          two can be compared.
 *
 * The cache-line ping-pong between the two CPUs is the physical floor of
 * any hand-off.  In a VM it moves: the host places the two vCPUs on other
 * cores from one second to the next (90 to 340 ns on the reference VM),
 * and every hand-off moves with it.  So each hand-off configuration is
 * measured in blocks of BLOCK calls, each block right after a block of
 * ping-pongs, and its overhead is taken block by block in the round trips
 * of that moment (interleaved(), report_handoffs()).
 */
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#ifdef HAVE_LIBURING
#include <dirent.h>
#include <liburing.h>
#endif

#include "rtoffload.h"

#define CALLER_PRIO 80 /* the realtime thread being measured */
#define SERVER_PRIO 70 /* servers of the alternatives: below the caller, above all else */
/*
 * The ping-pong thread between blocks: above every other thread on the
 * housekeeping CPU, a polling helper included (with the default
 * helper_priority=inherit it polls at the caller's priority), so that it
 * runs at once; it sleeps while the calls are timed.
 */
#define PONG_PRIO  85
#define BLOCK	   2000 /* calls per block of an interleaved measurement */
#define BLOCK_WARM 200	/* untimed calls before each block */

static int devnull = -1;
static char buf64[64];

typedef long (*call_fn)(void);

/* ---- rounds, counts, budgets ------------------------------------------------------ */

/*
 * Every configuration runs once per round, so that a drift of the machine
 * hits all of them alike; the samples of the rounds are pooled.
 */
static unsigned rounds(void)
{
	return strcmp(h_opt.mode, "quick") == 0 ? 2 : strcmp(h_opt.mode, "long") == 0 ? 5 : 3;
}

/* Calls per series and round: at least 100000 per series in all. */
static size_t calls(void)
{
	return (h_scaled(200000, 100000) + rounds() - 1) / rounds();
}

static uint64_t budget(void)
{
	/* Per series: enough for 100000 calls of a 60 us hand-off (pipe, condvar). */
	return h_scaled(6000000000u, 1000000000u) / rounds();
}

/*
 * Spaced calls (helper asleep) take spacing x n: calls() of them, but at
 * most this long per series and round.  The 10 us and 100 us series reach
 * 100000 calls in every mode, the 1 ms series only with --long.
 */
static uint64_t spaced_ns(void)
{
	return strcmp(h_opt.mode, "quick") == 0	 ? 1000000000u
	       : strcmp(h_opt.mode, "long") == 0 ? 20000000000u
						 : 4000000000u;
}

static size_t spaced_calls(uint64_t spacing_ns)
{
	uint64_t fit = spaced_ns() / spacing_ns;

	return fit < calls() ? (size_t)fit : calls();
}

/* ---- the caller ---------------------------------------------------------------------- */

/* On the realtime CPU, SCHED_FIFO, memory locked. */
static void become_caller(void)
{
	h_lock_memory();
	h_pin(h_opt.rt_cpu);
	h_fifo(CALLER_PRIO);
	h_send_value("caller_fifo", !h_fifo_refused);
}

/*
 * The calling thread's context switches: voluntary ones are sleeps (an
 * offloaded call whose caller gave up spinning sleeps in FUTEX_WAIT),
 * involuntary ones preemptions (RT throttling, a higher priority).
 */
static void switches(long *slept, long *preempted)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	*slept = ru.ru_nvcsw;
	*preempted = ru.ru_nivcsw;
}

/* ---- the timing loop, shared by every configuration ---------------------------------- */

/* Time up to n calls of fn into s (ticks), spaced by `spacing` ticks, until `end`. */
static void time_calls(call_fn fn, size_t n, uint64_t spacing, uint64_t end, struct h_samples *s)
{
	uint64_t next = h_ticks() + spacing;

	for (size_t i = 0; i < n && h_ticks() < end; i++) {
		if (spacing) {
			h_spin_until(next);
			next += spacing;
		}
		uint64_t t0 = h_ticks();
		fn();
		h_sample(s, h_ticks() - t0);
	}
}

static void warm_up(call_fn fn, size_t n)
{
	uint64_t end = h_ticks() + h_ticks_for_ns(1000000000u);

	for (size_t i = 0; i < n && h_ticks() < end; i++)
		fn();
}

/* "block:<series>:<what>": per-block data, not a series of calls. */
static void send_block_data(const char *series, const char *what, const uint64_t *v, size_t n)
{
	char name[128];

	snprintf(name, sizeof(name), "block:%s:%s", series, what);
	h_send_samples(name, v, n);
}

/*
 * One series on its own: n calls of fn (after a warm-up of n/10 calls or
 * 1 s), spaced by spacing_ns when not 0, stopping early if budget_ns runs
 * out.  Sent as `name`, with the caller's sleeps and preemptions.
 */
static void measure(const char *name, call_fn fn, size_t n, uint64_t spacing_ns, uint64_t budget_ns)
{
	struct h_samples s;
	long v0, i0, v1, i1;

	h_samples_init(&s, n);
	warm_up(fn, n / 10 < 1000 ? 1000 : n / 10);
	switches(&v0, &i0);
	time_calls(fn, n, h_ticks_for_ns(spacing_ns), h_ticks() + h_ticks_for_ns(budget_ns), &s);
	switches(&v1, &i1);
	h_samples_to_ns(&s);
	h_send_samples(name, s.v, s.n);
	uint64_t slept = (uint64_t)(v1 - v0), preempted = (uint64_t)(i1 - i0);
	send_block_data(name, "slept", &slept, 1);
	send_block_data(name, "preempted", &preempted, 1);
	h_samples_free(&s);
}

/* ---- cache-line ping-pong: the floor --------------------------------------------------- */

static struct {
	_Alignas(64) uint64_t seq;  /* odd: the ball is on the pong's side */
	_Alignas(64) uint32_t gate; /* 1: the pong plays; 0: it sleeps on the futex */
	int stop;		    /* gate and stop: read-only while playing, cost nothing */
} pp;

static void *pong(void *unused)
{
	(void)unused;
	while (!__atomic_load_n(&pp.stop, __ATOMIC_RELAXED)) {
		if (!__atomic_load_n(&pp.gate, __ATOMIC_ACQUIRE)) {
			syscall(SYS_futex, &pp.gate, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
			continue;
		}
		uint64_t s = __atomic_load_n(&pp.seq, __ATOMIC_ACQUIRE);
		if (s & 1)
			__atomic_store_n(&pp.seq, s + 1, __ATOMIC_RELEASE);
		else
			h_cpu_relax();
	}
	return NULL;
}

/* Open (the pong wakes and plays) or close (it goes to sleep) the gate. */
static void pong_gate(uint32_t open)
{
	__atomic_store_n(&pp.gate, open, __ATOMIC_RELEASE);
	if (open)
		syscall(SYS_futex, &pp.gate, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void pong_start(pthread_t *t, uint32_t open)
{
	__atomic_store_n(&pp.stop, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&pp.gate, open, __ATOMIC_RELAXED);
	h_thread_start(t, pong, NULL, h_opt.hk_cpu, PONG_PRIO);
}

static void pong_stop(pthread_t t)
{
	__atomic_store_n(&pp.stop, 1, __ATOMIC_RELAXED);
	pong_gate(1);
	pthread_join(t, NULL);
}

static long ping(void)
{
	uint64_t s = __atomic_load_n(&pp.seq, __ATOMIC_RELAXED) + 1;

	__atomic_store_n(&pp.seq, s, __ATOMIC_RELEASE);
	while (__atomic_load_n(&pp.seq, __ATOMIC_ACQUIRE) == s)
		h_cpu_relax();
	return 0;
}

/* ---- interleaved: hand-off series, each block of calls next to a block of pings ------------ */

struct series {
	const char *name;
	call_fn fn;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The p50 of v[0..n) in ns (v is left alone). */
static uint64_t p50_ns(const uint64_t *v, size_t n, uint64_t *scratch)
{
	if (n == 0)
		return 0;
	memcpy(scratch, v, n * sizeof(*v));
	qsort(scratch, n, sizeof(*v), cmp_u64);
	return h_ns(scratch[(n - 1) / 2]);
}

struct track {
	struct h_samples s;		   /* every timed call, ticks */
	size_t *from;			   /* per block: its first sample in s */
	uint64_t *p50, *slept, *preempted; /* per block */
};

static void track_init(struct track *t, size_t nblocks)
{
	h_samples_init(&t->s, nblocks * BLOCK);
	t->from = calloc(nblocks, sizeof(size_t));
	t->p50 = calloc(nblocks, sizeof(uint64_t));
	t->slept = calloc(nblocks, sizeof(uint64_t));
	t->preempted = calloc(nblocks, sizeof(uint64_t));
	if (!t->from || !t->p50 || !t->slept || !t->preempted)
		exit(1);
}

/*
 * One timed block of fn, recorded as block b of t.  Its p50 comes later
 * (track_send): qsort's first large sort calls sysinfo, which a marked
 * thread offloads, and while the pong plays it spins at a realtime
 * priority above the helpers' on their CPU: they would never run.
 */
static void time_block(struct track *t, size_t b, call_fn fn)
{
	long v0, i0, v1, i1;

	t->from[b] = t->s.n;
	warm_up(fn, BLOCK_WARM);
	switches(&v0, &i0);
	time_calls(fn, BLOCK, 0, UINT64_MAX, &t->s);
	switches(&v1, &i1);
	t->slept[b] = (uint64_t)(v1 - v0);
	t->preempted[b] = (uint64_t)(i1 - i0);
}

static void track_send(struct track *t, const char *name, size_t nblocks, uint64_t *scratch)
{
	for (size_t b = 0; b < nblocks; b++) {
		size_t end = b + 1 < nblocks ? t->from[b + 1] : t->s.n;
		t->p50[b] = p50_ns(t->s.v + t->from[b], end - t->from[b], scratch);
	}
	h_samples_to_ns(&t->s);
	h_send_samples(name, t->s.v, t->s.n);
	send_block_data(name, "p50", t->p50, nblocks);
	send_block_data(name, "slept", t->slept, nblocks);
	send_block_data(name, "preempted", t->preempted, nblocks);
	h_samples_free(&t->s);
	free(t->from);
	free(t->p50);
	free(t->slept);
	free(t->preempted);
}

/*
 * Time n calls of each series in blocks of BLOCK: a block of cache-line
 * ping-pongs (the pong thread woken for it), then a block of each series.
 * Sends every series whole, and per block its p50, the caller's sleeps and
 * preemptions, next to the ping-pong's p50 ("cacheline:rtt").
 */
static void interleaved(const struct series *ser, size_t nser, size_t n)
{
	size_t nblocks = (n + BLOCK - 1) / BLOCK, done = 0;
	struct track rtt, *t = calloc(nser, sizeof(*t));
	uint64_t *scratch = calloc(BLOCK, sizeof(uint64_t));
	pthread_t pt;

	if (!t || !scratch)
		exit(1);
	track_init(&rtt, nblocks);
	for (size_t k = 0; k < nser; k++) {
		track_init(&t[k], nblocks);
		warm_up(ser[k].fn, n / 10 < 1000 ? 1000 : n / 10);
	}
	pong_start(&pt, 0);
	uint64_t end = h_ticks() + h_ticks_for_ns(budget() * nser);
	while (done < nblocks && h_ticks() < end) {
		pong_gate(1);
		time_block(&rtt, done, ping);
		pong_gate(0);
		for (size_t k = 0; k < nser; k++)
			time_block(&t[k], done, ser[k].fn);
		done++;
	}
	pong_stop(pt);
	track_send(&rtt, "cacheline:rtt", done, scratch);
	for (size_t k = 0; k < nser; k++)
		track_send(&t[k], ser[k].name, done, scratch);
	free(t);
	free(scratch);
}

/* ---- direct calls, with or without the library preloaded -------------------------- */

static long do_write(void)
{
	return write(devnull, buf64, sizeof(buf64));
}

static long do_lseek(void)
{
	return lseek(devnull, 0, SEEK_CUR);
}

static long do_getppid(void)
{
	return syscall(SYS_getppid);
}

static void child_direct(void)
{
	become_caller();
	measure("write", do_write, calls(), 0, budget());
	measure("empty:lseek", do_lseek, calls(), 0, budget());
	measure("empty:getppid", do_getppid, calls(), 0, budget());
}

/* ---- offloaded by the library ------------------------------------------------------------ */

static void send_library_stats(void)
{
	struct rt_offload_stats st;

	if (rt_offload_get_stats == NULL || rt_offload_get_stats(&st) != 0)
		return;
	h_send_value("lib_offloaded", (double)st.offloaded);
	h_send_value("lib_local", (double)st.local);
	h_send_value("lib_rtt_p50_ns", (double)st.rtt_p50_ns);
	h_send_value("lib_rtt_p99_ns", (double)st.rtt_p99_ns);
	h_send_value("lib_rtt_max_ns", (double)st.rtt_max_ns);
}

/*
 * arg: the spacing between calls in ns, 0 for back to back, or "plain".
 * Back to back, the calls are interleaved with the cache-line floor; spaced
 * (the helper falls asleep between calls) or plain (back to back, with
 * options under which a call may not be offloaded at all), each series runs
 * on its own.
 */
static void child_offload(void)
{
	int plain = strcmp(h_opt.arg, "plain") == 0;
	uint64_t spacing = plain ? 0 : strtoull(h_opt.arg, NULL, 10);

	if (!RT_OFFLOAD_AVAILABLE()) {
		fprintf(stderr, "bench-roundtrip: the library is not loaded\n");
		exit(1);
	}
	become_caller();
	if (rt_offload_mark_thread() != 0) {
		perror("rt_offload_mark_thread");
		exit(1);
	}
	/* The first call meets helpers that have just been started: worth a number of its own. */
	uint64_t t0 = h_ticks();
	do_write();
	h_send_value("first_call_ns", (double)h_ns(h_ticks() - t0));
	if (spacing || plain) {
		size_t n = spacing ? spaced_calls(spacing) : calls();
		uint64_t limit = budget() + n * spacing;
		measure("write", do_write, n, spacing, limit);
		measure("empty:lseek", do_lseek, n, spacing, limit);
	} else {
		static const struct series ser[] = {{"write", do_write}, {"empty:lseek", do_lseek}};
		interleaved(ser, 2, calls());
	}
	rt_offload_unmark_thread();
	send_library_stats();
}

/* ---- a server thread on the housekeeping CPU: what both hand-offs serve --------------- */

enum { CMD_NONE, CMD_WRITE, CMD_EMPTY, CMD_QUIT };

static long serve(int cmd)
{
	return cmd == CMD_WRITE ? write(devnull, buf64, sizeof(buf64)) : 0;
}

/* ---- pipe hand-off ---------------------------------------------------------------------- */

static int to_server[2], to_client[2];

static void *pipe_server(void *unused)
{
	char cmd;

	(void)unused;
	while (read(to_server[0], &cmd, 1) == 1 && cmd != CMD_QUIT) {
		long ret = serve(cmd);
		if (write(to_client[1], &ret, sizeof(ret)) != sizeof(ret))
			break;
	}
	return NULL;
}

static long pipe_call(char cmd)
{
	long ret = -1;

	if (write(to_server[1], &cmd, 1) != 1)
		return -1;
	if (cmd != CMD_QUIT && read(to_client[0], &ret, sizeof(ret)) != sizeof(ret))
		return -1;
	return ret;
}

static long pipe_write(void)
{
	return pipe_call(CMD_WRITE);
}

static long pipe_empty(void)
{
	return pipe_call(CMD_EMPTY);
}

static void child_pipe(void)
{
	pthread_t t;

	if (pipe(to_server) != 0 || pipe(to_client) != 0) {
		perror("pipe");
		exit(1);
	}
	static const struct series ser[] = {{"write", pipe_write}, {"empty:none", pipe_empty}};

	h_thread_start(&t, pipe_server, NULL, h_opt.hk_cpu, SERVER_PRIO);
	become_caller();
	interleaved(ser, 2, calls());
	pipe_call(CMD_QUIT);
	pthread_join(t, NULL);
}

/* ---- mutex + condition variable hand-off --------------------------------------------------- */

static struct {
	pthread_mutex_t lock;
	pthread_cond_t req, resp;
	int cmd;
	int done;
	long ret;
} cv = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0};

static void *condvar_server(void *unused)
{
	(void)unused;
	pthread_mutex_lock(&cv.lock);
	for (;;) {
		while (cv.cmd == CMD_NONE)
			pthread_cond_wait(&cv.req, &cv.lock);
		if (cv.cmd == CMD_QUIT)
			break;
		cv.ret = serve(cv.cmd);
		cv.cmd = CMD_NONE;
		cv.done = 1;
		pthread_cond_signal(&cv.resp);
	}
	pthread_mutex_unlock(&cv.lock);
	return NULL;
}

static long condvar_call(int cmd)
{
	long ret;

	pthread_mutex_lock(&cv.lock);
	cv.cmd = cmd;
	cv.done = 0;
	pthread_cond_signal(&cv.req);
	while (cmd != CMD_QUIT && !cv.done)
		pthread_cond_wait(&cv.resp, &cv.lock);
	ret = cv.ret;
	pthread_mutex_unlock(&cv.lock);
	return ret;
}

static long condvar_write(void)
{
	return condvar_call(CMD_WRITE);
}

static long condvar_empty(void)
{
	return condvar_call(CMD_EMPTY);
}

static void child_condvar(void)
{
	pthread_t t;

	static const struct series ser[] = {{"write", condvar_write},
					    {"empty:none", condvar_empty}};

	h_thread_start(&t, condvar_server, NULL, h_opt.hk_cpu, SERVER_PRIO);
	become_caller();
	interleaved(ser, 2, calls());
	condvar_call(CMD_QUIT);
	pthread_join(t, NULL);
}

/* ---- io_uring with a submission-polling kernel thread ------------------------------------- */

#ifdef HAVE_LIBURING
static struct io_uring ring;

/* Submit one SQE and spin on the completion queue: no syscall while SQPOLL is awake. */
static long uring_call(int write_it)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
	struct io_uring_cqe *cqe;
	long ret;

	if (write_it)
		io_uring_prep_write(sqe, devnull, buf64, sizeof(buf64), 0);
	else
		io_uring_prep_nop(sqe);
	io_uring_submit(&ring);
	while (io_uring_peek_cqe(&ring, &cqe) != 0)
		h_cpu_relax();
	ret = cqe->res;
	io_uring_cqe_seen(&ring, cqe);
	return ret;
}

static long uring_write(void)
{
	return uring_call(1);
}

static long uring_nop(void)
{
	return uring_call(0);
}

/* Give the SQPOLL thread ("iou-sqp-PID", a thread of ours) the helper's priority. */
static int prioritise_sqpoll(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	struct sched_param sp = {.sched_priority = SERVER_PRIO};
	char path[64], name[32];
	int done = 0;

	while (d && (e = readdir(d))) {
		int tid = atoi(e->d_name);
		snprintf(path, sizeof(path), "/proc/self/task/%d/comm", tid);
		FILE *f = tid > 0 ? fopen(path, "re") : NULL;
		if (!f)
			continue;
		if (fgets(name, sizeof(name), f) && strncmp(name, "iou-sqp", 7) == 0)
			done = sched_setscheduler(tid, SCHED_FIFO, &sp) == 0;
		fclose(f);
	}
	if (d)
		closedir(d);
	return done;
}

static void child_uring(void)
{
	struct io_uring_params p = {
		.flags = IORING_SETUP_SQPOLL | IORING_SETUP_SQ_AFF,
		.sq_thread_cpu = (unsigned)h_opt.hk_cpu,
		.sq_thread_idle = 1000, /* ms: stays awake through the whole run */
	};
	int err = io_uring_queue_init_params(64, &ring, &p);

	if (err) {
		fprintf(stderr, "bench-roundtrip: io_uring SQPOLL: %s\n", strerror(-err));
		exit(1);
	}
	static const struct series ser[] = {{"write", uring_write}, {"empty:nop", uring_nop}};

	h_send_value("sqpoll_fifo", prioritise_sqpoll());
	become_caller();
	interleaved(ser, 2, calls());
	io_uring_queue_exit(&ring);
}
#else
static void child_uring(void)
{
	fprintf(stderr, "bench-roundtrip: built without liburing\n");
	exit(1);
}
#endif

/* ---- one-line mailbox: the least any offload design can do --------------------------------- */

/*
 * The request, the result and the flag share one cache line that a server
 * thread polls: the line crosses to the server and back, nothing else.
 * Not a usable design (one caller, a burned CPU), but the floor a real one
 * can be compared with: this minus direct is the hand-off itself.
 */
static struct {
	_Alignas(64) uint32_t seq; /* odd: a request waits; even: served */
	int cmd;
	long ret;
	_Alignas(64) int stop;
} box;

static void *mailbox_server(void *unused)
{
	(void)unused;
	while (!__atomic_load_n(&box.stop, __ATOMIC_RELAXED)) {
		uint32_t s = __atomic_load_n(&box.seq, __ATOMIC_ACQUIRE);
		if (!(s & 1)) {
			h_cpu_relax();
			continue;
		}
		box.ret = serve(box.cmd);
		__atomic_store_n(&box.seq, s + 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

static long mailbox_call(int cmd)
{
	uint32_t s = box.seq + 1;

	box.cmd = cmd;
	__atomic_store_n(&box.seq, s, __ATOMIC_RELEASE);
	while (__atomic_load_n(&box.seq, __ATOMIC_ACQUIRE) == s)
		h_cpu_relax();
	return box.ret;
}

static long mailbox_write(void)
{
	return mailbox_call(CMD_WRITE);
}

static long mailbox_empty(void)
{
	return mailbox_call(CMD_EMPTY);
}

static void child_mailbox(void)
{
	pthread_t t;

	static const struct series ser[] = {{"write", mailbox_write},
					    {"empty:none", mailbox_empty}};

	h_thread_start(&t, mailbox_server, NULL, h_opt.hk_cpu, SERVER_PRIO);
	become_caller();
	interleaved(ser, 2, calls());
	__atomic_store_n(&box.stop, 1, __ATOMIC_RELAXED);
	pthread_join(t, NULL);
}

static void child_pingpong(void)
{
	pthread_t t;

	become_caller();
	pong_start(&t, 1);
	measure("rtt", ping, calls(), 0, budget());
	pong_stop(t);
	h_send_value("timer_overhead_ns", (double)h_timer_overhead_ns());
}

/* ---- the parent: configurations ------------------------------------------------------------ */

struct config {
	const char *name;    /* table label and JSON name */
	const char *child;   /* child_* to run */
	const char *arg;     /* its parameter */
	int with_lib;	     /* LD_PRELOAD the library */
	const char *options; /* RTOFFLOAD_OPTIONS (the cpus are prepended) */
	const char *about;
};

/*
 * The library's defaults, but for what each configuration is about:
 * fd_local=none, because by default the library runs calls on character
 * devices such as /dev/null locally (their kernel path is short), and here
 * the write must travel, as a write to a disk file would; and how long the
 * helper polls before it sleeps.  Hot: 10 s, longer than any series, so
 * it never sleeps; the caller spins (spin_ns, 20 us by default) and the
 * table says how often it slept all the same.  Asleep: not at all.
 */
/* helper_wake=idle: a predicting helper would poll for spaced calls too (issue 15). */
#define HOT  "fd_local=none:helper_wake=idle:helper_idle_us=10000000"
#define COLD "fd_local=none:helper_wake=idle:helper_idle_us=0"

static const struct config configs[] = {
	{"direct", "direct", "", 0, NULL, "direct calls, library not loaded"},
	{"direct+lib", "direct", "", 1, "", "direct calls, library preloaded, thread unmarked"},
	{"offload-hot", "offload", "0", 1, HOT, "marked thread, helper polling, back to back"},
	/* Traces (docs/TRACING.md): what trace_file= and trace=lttng add to a call. */
	{"offload-hot+trace_file", "offload", "0", 1,
	 HOT ":trace_file=", "offload-hot with trace_file= (into --tmp): two ring events a call"},
	{"offload-hot+lttng", "offload", "0", 1, HOT ":trace=lttng",
	 "offload-hot with trace=lttng: four tracepoints a call, recorded while an LTTng "
	 "session enables rtoffload:*"},
	{"offload-defaults", "offload", "plain", 1, "",
	 "marked thread, default options: the write to /dev/null runs locally (fd_local), "
	 "lseek is offloaded"},
	{"offload-asleep-10us", "offload", "10000", 1, COLD, "helper asleep, calls 10 us apart"},
	{"offload-asleep-100us", "offload", "100000", 1, COLD, "helper asleep, calls 100 us apart"},
	{"offload-asleep-1ms", "offload", "1000000", 1, COLD, "helper asleep, calls 1 ms apart"},
	{"pipe", "pipe", "", 0, NULL, "request and reply over two pipes to a server thread"},
	{"mutex+condvar", "condvar", "", 0, NULL, "request and reply under a mutex, two condvars"},
	{"io_uring-sqpoll", "uring", "", 0, NULL,
	 "io_uring, SQPOLL thread on the housekeeping CPU"},
	{"mailbox", "mailbox", "", 0, NULL, "one cache line polled by a server thread: a floor"},
	{"cacheline", "pingpong", "", 0, NULL, "one cache line bounced between the two CPUs"},
};

#define NCONFIGS (sizeof(configs) / sizeof(configs[0]))

static struct h_reply replies[NCONFIGS];

static int find_config(const char *name)
{
	for (size_t i = 0; i < NCONFIGS; i++)
		if (strcmp(configs[i].name, name) == 0)
			return (int)i;
	return -1;
}

static void options_for(const struct config *c, char *buf, size_t len)
{
	size_t n = strlen(c->options);
	/* "trace_file=" last: the file goes into the scratch directory. */
	int traced = n >= 11 && strcmp(c->options + n - 11, "trace_file=") == 0;

	snprintf(buf, len, "rt_cpus=%d:helper_cpus=%d%s%s%s%s", h_opt.rt_cpu, h_opt.hk_cpu,
		 *c->options ? ":" : "", c->options, traced ? h_opt.tmp : "",
		 traced ? "/trace.%p.json" : "");
}

static void run_config(size_t i, unsigned round)
{
	const struct config *c = &configs[i];
	char opts[512];

	if (c->options)
		options_for(c, opts, sizeof(opts));
	struct h_reply r = h_child_run(c->child, c->arg, c->with_lib, c->options ? opts : NULL,
				       (int)h_scaled(120, 60));
	if (r.status != 0)
		fprintf(stderr, "bench-roundtrip: %s, round %u failed (status %d)\n", c->name,
			round + 1, r.status);
	if (round == 0)
		replies[i] = r;
	else
		h_reply_merge(&replies[i], &r); /* samples and block data of the rounds, pooled */
}

static void run_all(void)
{
	for (size_t i = 0; i < NCONFIGS; i++)
		replies[i] = (struct h_reply){.status = -1};
	for (unsigned round = 0; round < rounds(); round++)
		for (size_t i = 0; i < NCONFIGS; i++)
			if (!configs[i].with_lib || h_opt.lib)
				run_config(i, round);
}

/* ---- the parent: what the children sent ------------------------------------------------------ */

/* A series of calls (not a value, not per-block data). */
static int is_series(const struct h_item *it)
{
	return !it->is_value && strncmp(it->name, "block:", 6) != 0;
}

static const struct h_item *block_data(size_t i, const char *series, const char *what)
{
	char name[128];

	snprintf(name, sizeof(name), "block:%s:%s", series, what);
	return h_reply_get(&replies[i], name);
}

static uint64_t block_sum(size_t i, const char *series, const char *what)
{
	const struct h_item *it = block_data(i, series, what);
	uint64_t sum = 0;

	for (size_t k = 0; it && k < it->n; k++)
		sum += it->v[k];
	return sum;
}

static double timer_ns(void)
{
	return h_reply_value(&replies[find_config("cacheline")], "timer_overhead_ns", 0);
}

/* The pooled p50 of a configuration's series, 0 if it has none. */
static uint64_t pooled_p50(const char *config, const char *series)
{
	int i = find_config(config);
	const struct h_item *it = i < 0 ? NULL : h_reply_get(&replies[i], series);
	struct h_summary s;

	if (!it || it->is_value || it->n == 0)
		return 0;
	uint64_t *copy = malloc(it->n * sizeof(uint64_t));
	memcpy(copy, it->v, it->n * sizeof(uint64_t));
	h_summarize(copy, it->n, &s);
	free(copy);
	return s.p50;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
	if (n == 0)
		return 0;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ---- hand-offs, block by block, in cache-line round trips ---------------------------------- */

/*
 * One series of a hand-off measured in blocks: its overhead is its p50
 * minus the same call made directly (for the empty hand-offs, which make
 * no call, minus the timer), block by block, and in cache-line round
 * trips of the ping-pong block just before (net of the timer).
 */
struct handoff {
	size_t config;
	const char *series;
	size_t blocks;
	double rtt_ns;	    /* median over blocks of the ping-pong's p50, net of the timer */
	double p50_ns;	    /* median over blocks of the series' p50 */
	double overhead_ns; /* median over blocks of p50 - base */
	double in_rtts;	    /* median over blocks of (p50 - base) / rtt */
	double base_ns;
	uint64_t slept, preempted; /* the caller's context switches in the timed calls */
};

#define MAX_HANDOFFS 32
static struct handoff handoffs[MAX_HANDOFFS];
static size_t nhandoffs;

/* The direct call a series stands for: the same call, or no call at all. */
static double base_for(const char *series)
{
	uint64_t direct = pooled_p50("direct", series);

	return direct ? (double)direct : timer_ns();
}

static void add_handoff(size_t i, const struct h_item *it)
{
	const struct h_item *p50 = block_data(i, it->name, "p50");
	const struct h_item *rtt = block_data(i, "cacheline:rtt", "p50");

	if (!p50 || !rtt || p50->n != rtt->n || p50->n == 0 || nhandoffs == MAX_HANDOFFS)
		return;
	struct handoff *h = &handoffs[nhandoffs++];
	size_t n = p50->n;
	double *r = calloc(n, sizeof(double)), *p = calloc(n, sizeof(double));
	double *o = calloc(n, sizeof(double)), *x = calloc(n, sizeof(double));
	double timer = timer_ns();

	h->config = i;
	h->series = it->name;
	h->blocks = n;
	h->base_ns = base_for(it->name);
	for (size_t b = 0; b < n; b++) {
		r[b] = (double)rtt->v[b] > timer ? (double)rtt->v[b] - timer : (double)rtt->v[b];
		p[b] = (double)p50->v[b];
		o[b] = p[b] - h->base_ns;
		x[b] = r[b] > 0 ? o[b] / r[b] : 0;
	}
	h->rtt_ns = median(r, n);
	h->p50_ns = median(p, n);
	h->overhead_ns = median(o, n);
	h->in_rtts = median(x, n);
	h->slept = block_sum(i, it->name, "slept");
	h->preempted = block_sum(i, it->name, "preempted");
	free(r), free(p), free(o), free(x);
}

static void collect_handoffs(void)
{
	for (size_t i = 0; i < NCONFIGS; i++)
		for (size_t k = 0; k < replies[i].count; k++)
			if (is_series(&replies[i].items[k]) &&
			    strcmp(replies[i].items[k].name, "cacheline:rtt") != 0)
				add_handoff(i, &replies[i].items[k]);
}

static const struct handoff *find_handoff(const char *config, const char *series)
{
	for (size_t k = 0; k < nhandoffs; k++)
		if (strcmp(configs[handoffs[k].config].name, config) == 0 &&
		    strcmp(handoffs[k].series, series) == 0)
			return &handoffs[k];
	return NULL;
}

/*
 * offload-hot's blocks grouped by the cache-line round trip of their
 * moment: in a VM, where the host puts the two vCPUs decides the round
 * trip (same core, same L3, across), and the offload follows it.  A group
 * is a run of sorted round trips each within 30% (+20 ns) of the group's
 * smallest; groups with >= 5% of the blocks are kept.
 */
struct rtt_group {
	uint64_t rtt_ns; /* the group's median round trip, raw (timer included) */
	size_t blocks;
	double write_ns, empty_ns; /* medians of the blocks' p50 */
	double write_x;		   /* median of (write - direct) / (rtt - timer) */
};

#define MAX_GROUPS 8
static struct rtt_group groups[MAX_GROUPS];
static size_t ngroups;

struct block_row {
	uint64_t rtt, write, empty;
};

static int cmp_row(const void *a, const void *b)
{
	const struct block_row *x = a, *y = b;

	return x->rtt < y->rtt ? -1 : x->rtt > y->rtt;
}

static void add_group(const struct block_row *row, size_t m, double base, double timer)
{
	double *r = calloc(m, sizeof(double)), *w = calloc(m, sizeof(double));
	double *e = calloc(m, sizeof(double)), *x = calloc(m, sizeof(double));

	for (size_t k = 0; k < m; k++) {
		double net = (double)row[k].rtt - timer;
		r[k] = (double)row[k].rtt;
		w[k] = (double)row[k].write;
		e[k] = (double)row[k].empty;
		x[k] = net > 0 ? ((double)row[k].write - base) / net : 0;
	}
	groups[ngroups++] = (struct rtt_group){(uint64_t)median(r, m), m, median(w, m),
					       median(e, m), median(x, m)};
	free(r), free(w), free(e), free(x);
}

static void collect_groups(void)
{
	int i = find_config("offload-hot");
	const struct h_item *rtt = i < 0 ? NULL : block_data((size_t)i, "cacheline:rtt", "p50");
	const struct h_item *w = i < 0 ? NULL : block_data((size_t)i, "write", "p50");
	const struct h_item *e = i < 0 ? NULL : block_data((size_t)i, "empty:lseek", "p50");

	if (!rtt || !w || !e || w->n != rtt->n || e->n != rtt->n || rtt->n == 0)
		return;
	size_t n = rtt->n, first = 0;
	struct block_row *row = calloc(n, sizeof(*row));
	for (size_t b = 0; b < n; b++)
		row[b] = (struct block_row){rtt->v[b], w->v[b], e->v[b]};
	qsort(row, n, sizeof(*row), cmp_row);
	for (size_t b = 1; b <= n && ngroups < MAX_GROUPS; b++) {
		if (b < n && (double)row[b].rtt <= (double)row[first].rtt * 1.3 + 20)
			continue;
		if ((b - first) * 20 >= n)
			add_group(row + first, b - first, base_for("write"), timer_ns());
		first = b;
	}
	free(row);
}

/* ---- the parent: the report ------------------------------------------------------------------ */

static void print_table(void)
{
	char label[64], title[160];

	snprintf(title, sizeof(title),
		 "round trip of one call from the realtime CPU (%u rounds of every configuration, "
		 "pooled)",
		 rounds());
	h_print_header(title, NULL);
	for (size_t i = 0; i < NCONFIGS; i++) {
		for (size_t k = 0; k < replies[i].count; k++) {
			struct h_item *it = &replies[i].items[k];
			struct h_summary s;
			if (!is_series(it))
				continue;
			uint64_t *copy = malloc((it->n ? it->n : 1) * sizeof(uint64_t));
			memcpy(copy, it->v, it->n * sizeof(uint64_t));
			h_summarize(copy, it->n, &s);
			free(copy);
			snprintf(label, sizeof(label), "%s %s", configs[i].name, it->name);
			h_print_row(label, &s);
		}
		if (configs[i].with_lib && !h_opt.lib)
			printf("%-32s (skipped: no library)\n", configs[i].name);
	}
	printf("caller: SCHED_FIFO %d on CPU%d, mlockall; servers on CPU%d at SCHED_FIFO %d; "
	       "timer ~%.0f ns in every figure\n",
	       CALLER_PRIO, h_opt.rt_cpu, h_opt.hk_cpu, SERVER_PRIO, timer_ns());
	for (size_t i = 0; i < NCONFIGS && h_opt.lib; i++) {
		char opts[512];
		if (!configs[i].with_lib)
			continue;
		options_for(&configs[i], opts, sizeof(opts));
		printf("  %-22s RTOFFLOAD_OPTIONS=%s\n", configs[i].name, opts);
	}
}

static const char *label_of(size_t i, const char *series)
{
	static char label[128];

	snprintf(label, sizeof(label), "%s %s", configs[i].name, series);
	return label;
}

/* How often the caller of the other library series slept (gave up spinning after spin_ns). */
static void print_sleeps(void)
{
	int first = 1;

	for (size_t i = 0; i < NCONFIGS; i++) {
		if (!configs[i].with_lib)
			continue;
		for (size_t k = 0; k < replies[i].count; k++) {
			const struct h_item *it = &replies[i].items[k];
			if (!is_series(it) || find_handoff(configs[i].name, it->name) ||
			    strcmp(it->name, "cacheline:rtt") == 0)
				continue;
			uint64_t slept = block_sum(i, it->name, "slept");
			if (!slept)
				continue;
			if (first)
				printf("the caller slept (FUTEX_WAIT, after spin_ns) in:\n");
			printf("  %-32s %llu of %llu calls\n", label_of(i, it->name),
			       (unsigned long long)slept, (unsigned long long)it->n);
			first = 0;
		}
	}
}

static void print_handoffs(void)
{
	char b[3][16];

	printf("\nhand-off cost, block by block: each block of %d calls right after %d cache-line "
	       "ping-pongs;\nmedians over blocks; overhead = p50 - the direct call's p50 (empty: "
	       "- the timer)\n",
	       BLOCK, BLOCK);
	printf("%-32s %6s %8s %9s %9s %7s %7s %9s\n", "configuration", "blocks", "RTT", "p50",
	       "overhead", "xRTT", "slept", "preempted");
	for (size_t k = 0; k < nhandoffs; k++) {
		const struct handoff *h = &handoffs[k];
		char label[64];
		snprintf(label, sizeof(label), "%s %s", configs[h->config].name, h->series);
		printf("%-32s %6zu %8s %9s %+8.0fns %7.2f %7llu %9llu\n", label, h->blocks,
		       h_fmt_ns(b[0], (uint64_t)h->rtt_ns), h_fmt_ns(b[1], (uint64_t)h->p50_ns),
		       h->overhead_ns, h->in_rtts, (unsigned long long)h->slept,
		       (unsigned long long)h->preempted);
	}
	if (ngroups) {
		printf("offload-hot by the cache-line round trip of the moment (in a VM: where the "
		       "host runs the two vCPUs):\n");
		for (size_t k = 0; k < ngroups; k++)
			printf("  RTT %4llu ns: %4zu blocks, write p50 %s (%.2fx RTT over direct), "
			       "lseek p50 %s\n",
			       (unsigned long long)groups[k].rtt_ns, groups[k].blocks,
			       h_fmt_ns(b[0], (uint64_t)groups[k].write_ns), groups[k].write_x,
			       h_fmt_ns(b[1], (uint64_t)groups[k].empty_ns));
	}
	print_sleeps();
	const struct handoff *w = find_handoff("offload-hot", "write");
	const struct handoff *e = find_handoff("offload-hot", "empty:lseek");
	const struct handoff *m = find_handoff("mailbox", "write");
	double unmarked =
		(double)pooled_p50("direct+lib", "write") - (double)pooled_p50("direct", "write");
	if (w && e)
		printf("offload overhead: write %+.0f ns = %.2fx the cache-line round trip "
		       "(%.0f ns) of the same moment; empty (lseek) %+.0f ns = %.2fx\n",
		       w->overhead_ns, w->in_rtts, w->rtt_ns, e->overhead_ns, e->in_rtts);
	if (m)
		printf("one-line mailbox (the least a hand-off that carries a call can do): write "
		       "%+.0f ns = %.2fx\n",
		       m->overhead_ns, m->in_rtts);
	/*
	 * What the library adds to the least hand-off: its own work on both
	 * sides (the request, the bookkeeping, the claim and the publish).
	 * In ns, it does not move with the placement; compare it only when
	 * both were measured at about the same round trip.
	 */
	if (w && m)
		printf("offload over the mailbox: write %+.0f ns = %+.2f round trips (RTT %.0f ns "
		       "offload, %.0f ns mailbox)\n",
		       w->overhead_ns - m->overhead_ns, w->in_rtts - m->in_rtts, w->rtt_ns,
		       m->rtt_ns);
	if (h_opt.lib)
		printf("unmarked thread with the library: write %+.0f ns (pooled p50s)\n",
		       unmarked);
}

static void json_handoff(struct h_json *j, const struct handoff *h)
{
	hj_obj(j, NULL);
	hj_str(j, "config", configs[h->config].name);
	hj_str(j, "series", h->series);
	hj_u64(j, "blocks", h->blocks);
	hj_num(j, "cacheline_rtt_ns", h->rtt_ns);
	hj_num(j, "p50_ns", h->p50_ns);
	hj_num(j, "base_ns", h->base_ns);
	hj_num(j, "overhead_ns", h->overhead_ns);
	hj_num(j, "overhead_in_cacheline_rtts", h->in_rtts);
	hj_u64(j, "caller_slept", h->slept);
	hj_u64(j, "caller_preempted", h->preempted);
	hj_end(j);
}

static void json_config(struct h_json *j, size_t i)
{
	const struct config *c = &configs[i];
	char opts[512];

	hj_obj(j, NULL);
	hj_str(j, "name", c->name);
	hj_str(j, "about", c->about);
	hj_bool(j, "library", c->with_lib);
	if (c->options) {
		options_for(c, opts, sizeof(opts));
		hj_str(j, "options", opts);
	} else {
		hj_null(j, "options");
	}
	hj_bool(j, "ran", replies[i].status == 0);
	hj_obj(j, "series");
	for (size_t k = 0; k < replies[i].count; k++) {
		struct h_item *it = &replies[i].items[k];
		struct h_summary s;
		if (!is_series(it))
			continue;
		h_summarize(it->v, it->n, &s);
		hj_summary(j, it->name, &s);
	}
	hj_end(j);
	hj_obj(j, "caller_slept"); /* voluntary context switches in the timed calls */
	for (size_t k = 0; k < replies[i].count; k++)
		if (is_series(&replies[i].items[k]))
			hj_u64(j, replies[i].items[k].name,
			       block_sum(i, replies[i].items[k].name, "slept"));
	hj_end(j);
	hj_obj(j, "values");
	for (size_t k = 0; k < replies[i].count; k++)
		if (replies[i].items[k].is_value)
			hj_num(j, replies[i].items[k].name, replies[i].items[k].value);
	hj_end(j);
	hj_end(j);
}

static void write_json(void)
{
	struct h_json j;
	const struct handoff *w = find_handoff("offload-hot", "write");
	const struct handoff *e = find_handoff("offload-hot", "empty:lseek");
	const struct handoff *m = find_handoff("mailbox", "write");

	if (!h_opt.out || hj_open(&j, h_opt.out) != 0)
		return;
	hj_str(&j, "about",
	       "one call at a time from the realtime CPU; ns per call, timer included");
	hj_obj(&j, "caller");
	hj_u64(&j, "cpu", (uint64_t)h_opt.rt_cpu);
	hj_str(&j, "policy", "SCHED_FIFO");
	hj_u64(&j, "priority", CALLER_PRIO);
	hj_bool(&j, "mlockall", 1);
	hj_u64(&j, "server_cpu", (uint64_t)h_opt.hk_cpu);
	hj_u64(&j, "server_priority", SERVER_PRIO);
	hj_u64(&j, "pingpong_priority", PONG_PRIO);
	hj_end(&j);
	hj_num(&j, "timer_overhead_ns", timer_ns());
	hj_u64(&j, "rounds", rounds());
	hj_u64(&j, "block_calls", BLOCK);
	hj_obj(&j, "offload_overhead");
	hj_str(&j, "about",
	       "offload-hot p50 minus direct p50, block by block, and in cache-line round "
	       "trips measured just before each block (net of the timer); medians over blocks");
	hj_num(&j, "cacheline_rtt_ns", w ? w->rtt_ns : NAN);
	hj_num(&j, "write_ns", w ? w->overhead_ns : NAN);
	hj_num(&j, "write_in_cacheline_rtts", w ? w->in_rtts : NAN);
	hj_num(&j, "empty_ns", e ? e->overhead_ns : NAN);
	hj_num(&j, "empty_in_cacheline_rtts", e ? e->in_rtts : NAN);
	hj_num(&j, "mailbox_write_ns", m ? m->overhead_ns : NAN);
	hj_num(&j, "mailbox_write_in_cacheline_rtts", m ? m->in_rtts : NAN);
	hj_num(&j, "over_mailbox_write_ns", w && m ? w->overhead_ns - m->overhead_ns : NAN);
	hj_num(&j, "mailbox_cacheline_rtt_ns", m ? m->rtt_ns : NAN);
	hj_num(&j, "unmarked_write_ns",
	       (double)pooled_p50("direct+lib", "write") - (double)pooled_p50("direct", "write"));
	hj_arr(&j, "by_cacheline_rtt", 0);
	for (size_t k = 0; k < ngroups; k++) {
		hj_obj(&j, NULL);
		hj_u64(&j, "rtt_ns", groups[k].rtt_ns);
		hj_u64(&j, "blocks", groups[k].blocks);
		hj_num(&j, "write_p50_ns", groups[k].write_ns);
		hj_num(&j, "empty_p50_ns", groups[k].empty_ns);
		hj_num(&j, "write_in_cacheline_rtts", groups[k].write_x);
		hj_end(&j);
	}
	hj_end(&j);
	hj_end(&j);
	hj_arr(&j, "handoffs", 0);
	for (size_t k = 0; k < nhandoffs; k++)
		json_handoff(&j, &handoffs[k]);
	hj_end(&j);
	hj_arr(&j, "configs", 0);
	for (size_t i = 0; i < NCONFIGS; i++)
		json_config(&j, i);
	hj_end(&j);
	hj_close(&j);
}

/* roundtrip.dat: one line per configuration and series, for the bar chart. */
static void write_plot_data(void)
{
	FILE *f = h_data_file("roundtrip.dat");

	if (!f)
		return;
	fprintf(f, "# label p50_ns p99_ns p99.9_ns max_ns\n");
	for (size_t i = 0; i < NCONFIGS; i++) {
		for (size_t k = 0; k < replies[i].count; k++) {
			struct h_item *it = &replies[i].items[k];
			struct h_summary s;
			/* The plot shows the calls; the floors measured on the side stay in the
			 * table. */
			if (!is_series(it) || strcmp(it->name, "empty:getppid") == 0 ||
			    strcmp(it->name, "cacheline:rtt") == 0)
				continue;
			h_summarize(it->v, it->n, &s);
			fprintf(f, "\"%s %s\" %llu %llu %llu %llu\n", configs[i].name, it->name,
				(unsigned long long)s.p50, (unsigned long long)s.p99,
				(unsigned long long)s.p999, (unsigned long long)s.max);
		}
	}
	fclose(f);
}

/* A configuration's series, summarised; 0 if it has none. */
static int series_summary(const char *config, const char *series, struct h_summary *s)
{
	int i = find_config(config);
	const struct h_item *it = i < 0 ? NULL : h_reply_get(&replies[i], series);

	memset(s, 0, sizeof(*s));
	if (!it || it->is_value || it->n == 0)
		return 0;
	h_summarize(it->v, it->n, s);
	return 1;
}

static void md_row(FILE *f, const char *label, const char *config, const char *series)
{
	struct h_summary s;
	char b[3][16];

	if (series_summary(config, series, &s))
		fprintf(f, "| %s | %s | %s | %s |\n", label, h_fmt_pretty(b[0], s.p50),
			h_fmt_pretty(b[1], s.p99), h_fmt_pretty(b[2], s.p999));
}

/* roundtrip.md: the table and sentence of docs/PERFORMANCE.md, from this run. */
static void write_markdown(void)
{
	FILE *f = h_data_file("roundtrip.md");
	const struct handoff *w = find_handoff("offload-hot", "write");
	struct h_summary p, c;
	char b[6][16];

	if (!f)
		return;
	fprintf(f, "| one call from the realtime CPU | p50 | p99 | p99.9 |\n|---|---|---|---|\n");
	md_row(f, "`write(64 B, /dev/null)`, no library", "direct", "write");
	md_row(f, "same, library loaded, thread not marked", "direct+lib", "write");
	md_row(f, "offloaded, helper polling", "offload-hot", "write");
	md_row(f, "offloaded, helper asleep, 1 call per 100 us", "offload-asleep-100us", "write");
	md_row(f, "offloaded, helper asleep, 1 call per ms", "offload-asleep-1ms", "write");
	md_row(f, "io_uring SQPOLL, same write", "io_uring-sqpoll", "write");
	if (series_summary("pipe", "write", &p) && series_summary("mutex+condvar", "write", &c))
		fprintf(f, "| pipe hand-off / mutex+condvar | %s / %s | %s / %s | %s / %s |\n",
			h_fmt_pretty(b[0], p.p50), h_fmt_pretty(b[1], c.p50),
			h_fmt_pretty(b[2], p.p99), h_fmt_pretty(b[3], c.p99),
			h_fmt_pretty(b[4], p.p999), h_fmt_pretty(b[5], c.p999));
	md_row(f, "cache-line round trip (floor)", "cacheline", "rtt");
	if (w) {
		fprintf(f,
			"\nOffloading a call costs %.0f ns here: %.2f cache-line round trips of "
			"the same moment (median over %zu blocks of %d calls, round trip %.0f ns)",
			w->overhead_ns, w->in_rtts, w->blocks, BLOCK, w->rtt_ns);
		for (size_t k = 0; k < ngroups && ngroups > 1; k++)
			fprintf(f, "%s %s with a %llu ns round trip", k ? "," : "; p50",
				h_fmt_pretty(b[0], (uint64_t)groups[k].write_ns),
				(unsigned long long)groups[k].rtt_ns);
		fprintf(f, ".\n");
	}
	fclose(f);
}

static int child_main(void)
{
	static const struct {
		const char *name;
		void (*fn)(void);
	} children[] = {
		{"direct", child_direct},     {"offload", child_offload},
		{"pipe", child_pipe},	      {"condvar", child_condvar},
		{"uring", child_uring},	      {"mailbox", child_mailbox},
		{"pingpong", child_pingpong},
	};

	devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	for (size_t i = 0; i < sizeof(children) / sizeof(children[0]); i++) {
		if (strcmp(children[i].name, h_opt.child) == 0) {
			children[i].fn();
			return 0;
		}
	}
	fprintf(stderr, "bench-roundtrip: unknown child %s\n", h_opt.child);
	return 2;
}

int main(int argc, char **argv)
{
	h_init(argc, argv);
	if (h_opt.child)
		return child_main();
	run_all();
	collect_handoffs();
	collect_groups();
	print_table();
	print_handoffs();
	write_json();
	write_plot_data();
	write_markdown();
	return 0;
}
