/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench-roundtrip: the cost of one call, offloaded or not, next to the
 * alternatives a realtime programmer would otherwise reach for.
 *
 * Every configuration times the same two calls, one at a time, on the
 * realtime CPU, with the serving thread (helper, server, SQPOLL kernel
 * thread) on the housekeeping CPU:
 *   write  a 64-byte write() to /dev/null (a cheap but real syscall);
 *   empty  a call with next to no kernel work.  The issue names
 *          syscall(SYS_getppid), but syscall() is not wrapped, so it cannot
 *          be offloaded; the library configurations use lseek(fd, 0,
 *          SEEK_CUR) on /dev/null instead (wrapped, offloaded, and the
 *          kernel only returns 0), and the direct ones time both so the
 *          two can be compared.
 * The cache-line ping-pong between the two CPUs is the physical floor of
 * any hand-off, and the one-line mailbox the floor of a hand-off that
 * carries a call; the offload overhead is printed as a multiple of the
 * first and next to the second.
 */
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#ifdef HAVE_LIBURING
#include <dirent.h>
#include <liburing.h>
#endif

#include "rtoffload.h"

#define CALLER_PRIO 80 /* the realtime thread being measured */
#define SERVER_PRIO 70 /* helper and servers: below the caller, above all else */

static int devnull = -1;
static char buf64[64];

/* ---- the measuring loop, shared by every configuration -------------------------- */

typedef long (*call_fn)(void);

/*
 * Time n calls of fn (after a warm-up of n/10 calls or 1 s), spaced by
 * spacing_ns when not 0, stopping early if budget_ns runs out, and send
 * them to the parent.
 */
static void measure(const char *name, call_fn fn, size_t n, uint64_t spacing_ns, uint64_t budget_ns)
{
	struct h_samples s;
	uint64_t spacing = h_ticks_for_ns(spacing_ns);
	uint64_t end = h_ticks() + h_ticks_for_ns(1000000000u);
	size_t warm = n / 10 < 1000 ? 1000 : n / 10;

	h_samples_init(&s, n);
	for (size_t i = 0; i < warm && h_ticks() < end; i++)
		fn();
	end = h_ticks() + h_ticks_for_ns(budget_ns);
	uint64_t next = h_ticks() + spacing;
	while (s.n < n && h_ticks() < end) {
		if (spacing) {
			h_spin_until(next);
			next += spacing;
		}
		uint64_t t0 = h_ticks();
		fn();
		h_sample(&s, h_ticks() - t0);
	}
	h_samples_to_ns(&s);
	h_send_samples(name, s.v, s.n);
	h_samples_free(&s);
}

/*
 * Every configuration runs once per round, so that a drift of the machine
 * hits all of them alike (in a VM the cache-line round trip itself can
 * change threefold when the host moves a vCPU).
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

/* The caller: on the realtime CPU, SCHED_FIFO, memory locked. */
static void become_caller(void)
{
	h_lock_memory();
	h_pin(h_opt.rt_cpu);
	h_fifo(CALLER_PRIO);
	h_send_value("caller_fifo", !h_fifo_refused);
}

/* ---- cache-line ping-pong: the floor ------------------------------------------------------- */

static struct {
	_Alignas(64) uint64_t seq; /* odd: the ball is on the server's side */
	_Alignas(64) int stop;	   /* read-only while running: stays shared, costs nothing */
} pp;

static void *pong(void *unused)
{
	(void)unused;
	while (!__atomic_load_n(&pp.stop, __ATOMIC_RELAXED)) {
		uint64_t s = __atomic_load_n(&pp.seq, __ATOMIC_ACQUIRE);
		if (s & 1)
			__atomic_store_n(&pp.seq, s + 1, __ATOMIC_RELEASE);
		else
			h_cpu_relax();
	}
	return NULL;
}

static long ping(void)
{
	uint64_t s = __atomic_load_n(&pp.seq, __ATOMIC_RELAXED) + 1;

	__atomic_store_n(&pp.seq, s, __ATOMIC_RELEASE);
	while (__atomic_load_n(&pp.seq, __ATOMIC_ACQUIRE) == s)
		h_cpu_relax();
	return 0;
}

/* Send the ping-pong's round trips as `name`, the pong thread on the housekeeping CPU. */
static void pingpong_series(const char *name)
{
	pthread_t t;

	__atomic_store_n(&pp.stop, 0, __ATOMIC_RELAXED);
	h_thread_start(&t, pong, NULL, h_opt.hk_cpu, SERVER_PRIO);
	measure(name, ping, calls(), 0, budget());
	__atomic_store_n(&pp.stop, 1, __ATOMIC_RELAXED);
	pthread_join(t, NULL);
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

/* arg: the spacing between calls in ns, 0 for back to back. */
static void child_offload(void)
{
	uint64_t spacing = strtoull(h_opt.arg, NULL, 10);
	size_t n = calls();

	if (!RT_OFFLOAD_AVAILABLE()) {
		fprintf(stderr, "bench-roundtrip: the library is not loaded\n");
		exit(1);
	}
	become_caller();
	/*
	 * The floor, measured in this process just before: in a VM the
	 * cache-line round trip changes when the host moves a vCPU, so the
	 * overhead is divided by the round trip of the same moment.
	 */
	if (!spacing)
		pingpong_series("cacheline:rtt");
	if (rt_offload_mark_thread() != 0) {
		perror("rt_offload_mark_thread");
		exit(1);
	}
	/* The first call meets helpers that have just been started: worth a number of its own. */
	uint64_t t0 = h_ticks();
	do_write();
	h_send_value("first_call_ns", (double)h_ns(h_ticks() - t0));
	if (spacing) { /* keep it bounded: at most half the budget's worth of spaced calls */
		uint64_t fit = budget() / 2 / spacing;
		n = fit < n ? (fit < 200 ? 200 : fit) : n;
	}
	measure("write", do_write, n, spacing, budget() + n * spacing);
	measure("empty:lseek", do_lseek, n, spacing, budget() + n * spacing);
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
	h_thread_start(&t, pipe_server, NULL, h_opt.hk_cpu, SERVER_PRIO);
	become_caller();
	measure("write", pipe_write, calls(), 0, budget());
	measure("empty:none", pipe_empty, calls(), 0, budget());
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

	h_thread_start(&t, condvar_server, NULL, h_opt.hk_cpu, SERVER_PRIO);
	become_caller();
	measure("write", condvar_write, calls(), 0, budget());
	measure("empty:none", condvar_empty, calls(), 0, budget());
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
	h_send_value("sqpoll_fifo", prioritise_sqpoll());
	become_caller();
	measure("write", uring_write, calls(), 0, budget());
	measure("empty:nop", uring_nop, calls(), 0, budget());
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

	h_thread_start(&t, mailbox_server, NULL, h_opt.hk_cpu, SERVER_PRIO);
	become_caller();
	measure("write", mailbox_write, calls(), 0, budget());
	measure("empty:none", mailbox_empty, calls(), 0, budget());
	__atomic_store_n(&box.stop, 1, __ATOMIC_RELAXED);
	pthread_join(t, NULL);
}

static void child_pingpong(void)
{
	become_caller();
	pingpong_series("rtt");
	h_send_value("timer_overhead_ns", (double)h_timer_overhead_ns());
}

/* ---- the parent: configurations, table, JSON, plot data ------------------------------------- */

struct config {
	const char *name;    /* table label and JSON name */
	const char *child;   /* child_* to run */
	const char *arg;     /* its parameter */
	int with_lib;	     /* LD_PRELOAD the library */
	const char *options; /* RTOFFLOAD_OPTIONS (the cpus are prepended) */
	const char *about;
};

/*
 * fd_local=none: by default the library runs calls on character devices
 * such as /dev/null locally (their kernel path is short); here the write
 * must travel, as a write to a disk file would.
 * Helper hot: it polls for 10 s after each call and the caller spins (1 s)
 * rather than sleeping.  Helper asleep: it stops polling at once.
 */
#define HOT  "fd_local=none:workers=1:helper_priority=70:helper_idle_us=10000000:spin_ns=1000000000"
#define COLD "fd_local=none:workers=1:helper_priority=70:helper_idle_us=0:spin_ns=1000000000"

static const struct config configs[] = {
	{"direct", "direct", "", 0, NULL, "direct calls, library not loaded"},
	{"direct+lib", "direct", "", 1, "", "direct calls, library preloaded, thread unmarked"},
	{"offload-hot", "offload", "0", 1, HOT, "marked thread, helper polling, back to back"},
	{"offload-defaults", "offload", "0", 1, "",
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
	snprintf(buf, len, "rt_cpus=%d:helper_cpus=%d%s%s", h_opt.rt_cpu, h_opt.hk_cpu,
		 *c->options ? ":" : "", c->options);
}

#define MAX_ROUNDS 8
#define MAX_SERIES 4

/* Each series' p50, round by round: the overhead ratios are taken within a round. */
static struct {
	char name[56];
	uint64_t p50[MAX_ROUNDS];
} round_p50[NCONFIGS][MAX_SERIES];

static void note_round(size_t i, unsigned round, struct h_reply *r)
{
	size_t k = 0;

	for (size_t n = 0; n < r->count && k < MAX_SERIES; n++) {
		struct h_item *it = &r->items[n];
		struct h_summary s;
		if (it->is_value)
			continue;
		h_summarize(it->v, it->n, &s);
		snprintf(round_p50[i][k].name, sizeof(round_p50[i][k].name), "%s", it->name);
		round_p50[i][k++].p50[round] = s.p50;
	}
}

static uint64_t p50_in_round(const char *config, const char *series, unsigned round)
{
	int i = find_config(config);

	for (size_t k = 0; i >= 0 && k < MAX_SERIES; k++)
		if (strcmp(round_p50[i][k].name, series) == 0)
			return round_p50[i][k].p50[round];
	return 0;
}

static void run_config(size_t i, unsigned round)
{
	const struct config *c = &configs[i];
	char opts[512];

	if (c->options)
		options_for(c, opts, sizeof(opts));
	struct h_reply r = h_child_run(c->child, c->arg, c->with_lib, c->options ? opts : NULL,
				       (int)h_scaled(90, 60));
	if (r.status != 0)
		fprintf(stderr, "bench-roundtrip: %s, round %u failed (status %d)\n", c->name,
			round + 1, r.status);
	note_round(i, round, &r);
	if (round == 0)
		replies[i] = r;
	else
		h_reply_merge(&replies[i], &r);
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

static void print_table(void)
{
	char label[64], title[128];

	snprintf(title, sizeof(title),
		 "round trip of one call from the realtime CPU (%u rounds of every configuration)",
		 rounds());
	h_print_header(title, NULL);
	for (size_t i = 0; i < NCONFIGS; i++) {
		for (size_t k = 0; k < replies[i].count; k++) {
			struct h_item *it = &replies[i].items[k];
			struct h_summary s;
			if (it->is_value)
				continue;
			h_summarize(it->v, it->n, &s);
			snprintf(label, sizeof(label), "%s %s", configs[i].name, it->name);
			h_print_row(label, &s);
		}
		if (configs[i].with_lib && !h_opt.lib)
			printf("%-32s (skipped: no library)\n", configs[i].name);
	}
}

/* Differences of p50s within one round; in ns, and in that round's cache-line round trips. */
struct overhead {
	double floor_ns[MAX_ROUNDS];	    /* cache-line RTT in the offload-hot process, net */
	double write_ns[MAX_ROUNDS];	    /* offload-hot minus direct, write */
	double empty_ns[MAX_ROUNDS];	    /* the same, lseek */
	double mailbox_ns[MAX_ROUNDS];	    /* mailbox minus direct, write: a minimal hand-off */
	double unmarked_ns[MAX_ROUNDS];	    /* direct+lib minus direct, write */
	double write_x, empty_x, mailbox_x; /* medians of the per-round ratios */
	double floor_med, write_med, empty_med, mailbox_med, unmarked_med; /* medians, ns */
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(const double *v, unsigned n)
{
	double s[MAX_ROUNDS];

	memcpy(s, v, n * sizeof(*v));
	qsort(s, n, sizeof(*s), cmp_double);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

static double diff(const char *a, const char *b, const char *series, unsigned r)
{
	return (double)p50_in_round(a, series, r) - (double)p50_in_round(b, series, r);
}

static struct overhead overhead(void)
{
	struct overhead o;
	double timer = h_reply_value(&replies[find_config("cacheline")], "timer_overhead_ns", 0);
	double wx[MAX_ROUNDS], ex[MAX_ROUNDS], mx[MAX_ROUNDS];
	unsigned n = rounds() < MAX_ROUNDS ? rounds() : MAX_ROUNDS;

	memset(&o, 0, sizeof(o));
	for (unsigned r = 0; r < n; r++) {
		/* The round trip measured in the offload-hot process itself, else the row's. */
		double rtt = (double)p50_in_round("offload-hot", "cacheline:rtt", r);
		if (rtt == 0)
			rtt = (double)p50_in_round("cacheline", "rtt", r);
		o.floor_ns[r] = rtt > timer ? rtt - timer : rtt;
		o.write_ns[r] = diff("offload-hot", "direct", "write", r);
		o.empty_ns[r] = diff("offload-hot", "direct", "empty:lseek", r);
		o.mailbox_ns[r] = diff("mailbox", "direct", "write", r);
		o.unmarked_ns[r] = diff("direct+lib", "direct", "write", r);
		wx[r] = o.floor_ns[r] > 0 ? o.write_ns[r] / o.floor_ns[r] : 0;
		ex[r] = o.floor_ns[r] > 0 ? o.empty_ns[r] / o.floor_ns[r] : 0;
		mx[r] = o.floor_ns[r] > 0 ? o.mailbox_ns[r] / o.floor_ns[r] : 0;
	}
	o.write_x = median(wx, n);
	o.empty_x = median(ex, n);
	o.mailbox_x = median(mx, n);
	o.floor_med = median(o.floor_ns, n);
	o.write_med = median(o.write_ns, n);
	o.empty_med = median(o.empty_ns, n);
	o.mailbox_med = median(o.mailbox_ns, n);
	o.unmarked_med = median(o.unmarked_ns, n);
	return o;
}

static void print_by_round(const char *what, const double *v)
{
	printf("  %-44s", what);
	for (unsigned r = 0; r < rounds() && r < MAX_ROUNDS; r++)
		printf(" %7.0f", v[r]);
	printf("\n");
}

static void print_overhead(const struct overhead *o)
{
	printf("p50 differences by round, ns (the ratios below are medians of per-round "
	       "ratios):\n");
	print_by_round("cache-line round trip (net of the timer)", o->floor_ns);
	print_by_round("mailbox - direct (write)", o->mailbox_ns);
	if (h_opt.lib) {
		print_by_round("offload-hot - direct (write)", o->write_ns);
		print_by_round("offload-hot - direct (empty: lseek)", o->empty_ns);
		print_by_round("direct+lib - direct (write, unmarked)", o->unmarked_ns);
	}
	printf("cache-line round trip CPU%d<->CPU%d: %.0f ns; one-line mailbox hand-off: %+.0f ns "
	       "= %.2fx\n",
	       h_opt.rt_cpu, h_opt.hk_cpu, o->floor_med, o->mailbox_med, o->mailbox_x);
	if (h_opt.lib)
		printf("offload overhead: write %+.0f ns = %.2fx cache-line RTT; empty (lseek) "
		       "%+.0f "
		       "ns = %.2fx; unmarked thread with the library: %+.0f ns\n",
		       o->write_med, o->write_x, o->empty_med, o->empty_x, o->unmarked_med);
}

static void json_rounds(struct h_json *j, const char *key, const double *v)
{
	hj_arr(j, key, 1);
	for (unsigned r = 0; r < rounds() && r < MAX_ROUNDS; r++)
		hj_num(j, NULL, v[r]);
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
		if (it->is_value)
			continue;
		h_summarize(it->v, it->n, &s);
		hj_summary(j, it->name, &s);
	}
	hj_end(j);
	hj_obj(j, "values");
	for (size_t k = 0; k < replies[i].count; k++)
		if (replies[i].items[k].is_value)
			hj_num(j, replies[i].items[k].name, replies[i].items[k].value);
	hj_end(j);
	hj_end(j);
}

static void write_json(const struct overhead *o)
{
	struct h_json j;

	if (!h_opt.out || hj_open(&j, h_opt.out) != 0)
		return;
	hj_str(&j, "about",
	       "one call at a time from the realtime CPU; ns per call, timer included");
	hj_num(&j, "timer_overhead_ns",
	       h_reply_value(&replies[find_config("cacheline")], "timer_overhead_ns", 0));
	hj_u64(&j, "rounds", rounds());
	hj_num(&j, "cacheline_rtt_ns", o->floor_med);
	hj_obj(&j, "offload_overhead");
	hj_str(&j, "about",
	       "p50 differences, per round and their median; ratios in that round's "
	       "cache-line round trips (median of the per-round ratios)");
	hj_num(&j, "write_ns", o->write_med);
	hj_num(&j, "write_in_cacheline_rtts", o->write_x);
	hj_num(&j, "empty_ns", o->empty_med);
	hj_num(&j, "empty_in_cacheline_rtts", o->empty_x);
	hj_num(&j, "mailbox_write_ns", o->mailbox_med);
	hj_num(&j, "mailbox_write_in_cacheline_rtts", o->mailbox_x);
	hj_num(&j, "unmarked_write_ns", o->unmarked_med);
	json_rounds(&j, "cacheline_rtt_ns_by_round", o->floor_ns);
	json_rounds(&j, "write_ns_by_round", o->write_ns);
	json_rounds(&j, "empty_ns_by_round", o->empty_ns);
	json_rounds(&j, "mailbox_write_ns_by_round", o->mailbox_ns);
	json_rounds(&j, "unmarked_write_ns_by_round", o->unmarked_ns);
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
			if (it->is_value || strcmp(it->name, "empty:getppid") == 0 ||
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
	print_table();
	struct overhead o = overhead();
	print_overhead(&o);
	write_json(&o);
	write_plot_data();
	return 0;
}
