/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench-periodic: a periodic realtime loop's offloaded calls (issue 15).
 *
 * A SCHED_FIFO 80 thread on the realtime CPU, marked, wakes on an absolute
 * clock and makes 1 or 3 offloaded 64-byte writes to /dev/null
 * (fd_local=none) per cycle: 1 kHz, 10 kHz, and 1 kHz with the period
 * drawn in +-20% each cycle; and two 1 kHz loops on that CPU, FIFO 80 and
 * 79, half a period apart, one call each.  Then 1 kHz loops that wait
 * otherwise (issue 30): a blocking read() of a periodic timerfd,
 * epoll_wait() with no timeout on that timerfd (then a read to drain it),
 * pthread_cond_timedwait() to an absolute deadline (CLOCK_MONOTONIC,
 * never signalled), sigwait() for the signal of a periodic POSIX timer
 * aimed at the loop's thread (as cyclictest -s and older realtime code
 * wait), and a 10 kHz loop that busy-waits for its next 100 us on the
 * clock (nothing announced).  Four helper configurations,
 * one after the other for each loop (the same run, the same moment's
 * machine):
 *   defaults     helper_wake=predict
 *   polling      helper_wake=idle:helper_idle_us=2000000 (never sleeps)
 *   idle         helper_wake=idle (polls helper_idle_us, then sleeps)
 *   idle_us=0    helper_wake=idle:helper_idle_us=0 (sleeps at once)
 * The timerfd loops run with fd_local=anon: the timerfd's read runs on
 * the loop's thread, the write to /dev/null is offloaded.
 * Reported per call: p50, p99, p99.9, max; and the helpers' CPU time
 * (the "rtoffload/N" threads) over the measured cycles, in % of one CPU.
 *
 * The busy-wait loop runs in stretches (busy_rest()): at SCHED_FIFO it
 * takes all of its CPU, and the kernel's realtime throttling
 * (sched_rt_runtime_us of sched_rt_period_us, 950 ms of 1 s by default)
 * would stop it for the rest of each period, 50 ms a second without a
 * call, in which the helpers rightly sleep.  Whether a run held one such
 * stop or two moved the helpers' CPU by 2.5 points in either
 * configuration (issue 30: 95.0% or 97.4%, seen with perf's sched_switch
 * as 47 ms of idle housekeeping CPU).
 *
 * With the defaults, also how many of the run's bursts (warm-up included)
 * came while the polling helper napped: the library's stats_file "predict"
 * counts.  Those calls waited for a sleeping helper; they make the p99.
 *
 * Then one long always-polling run (30 s; 8 s with --quick): its maximum
 * shows whether a polling helper was throttled by sched_rt_runtime_us
 * (a stall of up to 50 ms; the helpers' polling budget avoids it).
 */
#include "harness.h"

#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "rtoffload.h"

/* How a loop waits for its next cycle. */
enum wait { W_SLEEP, W_TIMERFD, W_EPOLL, W_COND, W_BUSY, W_TIMER };

static const struct loop {
	const char *name;
	unsigned period_us, calls, jitter_pct, threads; /* threads: loops side by side */
	enum wait wait;
} loops[] = {
	{"1kHz-1call", 1000, 1, 0, 1, W_SLEEP},
	{"1kHz-3calls", 1000, 3, 0, 1, W_SLEEP},
	{"10kHz-1call", 100, 1, 0, 1, W_SLEEP},
	{"10kHz-3calls", 100, 3, 0, 1, W_SLEEP},
	{"1kHz+-20%-1call", 1000, 1, 20, 1, W_SLEEP},
	{"1kHz+-20%-3calls", 1000, 3, 20, 1, W_SLEEP},
	{"2x1kHz-1call", 1000, 1, 0, 2, W_SLEEP},
	{"1kHz-timerfd-read", 1000, 1, 0, 1, W_TIMERFD},
	{"1kHz-epoll-timerfd", 1000, 1, 0, 1, W_EPOLL},
	{"1kHz-condwait", 1000, 1, 0, 1, W_COND},
	{"1kHz-sigwait-timer", 1000, 1, 0, 1, W_TIMER},
	{"10kHz-busywait", 100, 1, 0, 1, W_BUSY},
};

static const struct column {
	const char *name, *options;
} columns[] = {
	{"defaults", "fd_local=none"},
	{"polling", "fd_local=none:helper_wake=idle:helper_idle_us=2000000"},
	{"idle", "fd_local=none:helper_wake=idle"},
	{"idle_us=0", "fd_local=none:helper_wake=idle:helper_idle_us=0"},
};

#define NLOOPS	 (sizeof(loops) / sizeof(loops[0]))
#define NCOLUMNS (sizeof(columns) / sizeof(columns[0]))

/* xorshift64: the jitter needs no quality, only no system call. */
static __thread uint64_t rnd_state = 88172645463325252ull; /* each loop its own */
static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

/* One loop's thread: its period, its phase, its samples. */
struct loop_thread {
	unsigned period_us, calls, jitter;
	enum wait wait;
	unsigned long warm, cycles;
	struct timespec start; /* its first wake is one period after */
	int fd;
	struct h_samples s;
	uint64_t cpu0, t0;	 /* the first loop's: the current measured stretch's start */
	uint64_t cpu_ns, run_ns; /* ... and its finished stretches' sums */
	int first, failed;
};

/* The first loop's measured stretch begins, or ends (helpers' CPU, elapsed). */
static void stretch_begin(struct loop_thread *l)
{
	int nthreads;

	l->cpu0 = h_threads_cpu_ns("rtoffload", &nthreads);
	l->t0 = h_now_ns();
}

static void stretch_end(struct loop_thread *l)
{
	int nthreads;

	l->run_ns += h_now_ns() - l->t0;
	l->cpu_ns += h_threads_cpu_ns("rtoffload", &nthreads) - l->cpu0;
}

/*
 * The busy-wait loop's rest: BUSY_STRETCH cycles busy (400 ms at 10 kHz),
 * then BUSY_REST_NS asleep, under the kernel's realtime share in any
 * period; the rest is measured by neither the samples nor the CPU, and
 * the next stretch's first BUSY_REWARM cycles are not sampled (the
 * helpers slept through the rest, as they should).
 */
#define BUSY_STRETCH 4000
#define BUSY_REST_NS 100000000L
#define BUSY_REWARM  20

static int busy_rest(struct loop_thread *l, unsigned long i, struct timespec *next)
{
	if (l->wait != W_BUSY || i <= l->warm || (i - l->warm) % BUSY_STRETCH != 0)
		return 0;
	if (l->first)
		stretch_end(l);
	struct timespec rest = {0, BUSY_REST_NS};
	clock_nanosleep(CLOCK_MONOTONIC, 0, &rest, NULL);
	clock_gettime(CLOCK_MONOTONIC, next); /* the loop starts again from now */
	if (l->first)
		stretch_begin(l);
	return 1;
}

static void add_ns(struct timespec *t, long ns)
{
	t->tv_nsec += ns;
	while (t->tv_nsec >= 1000000000L)
		t->tv_nsec -= 1000000000L, t->tv_sec++;
}

/* What the loop waits on: made after it is marked, as a program's loop would. */
struct waiter {
	int tfd, epfd, timer;
	timer_t id;
	sigset_t sig;
	pthread_cond_t cond;
	pthread_mutex_t mutex;
};

/* A periodic POSIX timer whose signal, blocked, goes to this thread alone. */
static int timer_init(struct waiter *w, const struct itimerspec *its)
{
	struct sigevent ev = {.sigev_notify = SIGEV_THREAD_ID, .sigev_signo = SIGUSR2};

	ev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
	sigemptyset(&w->sig);
	sigaddset(&w->sig, SIGUSR2);
	if (pthread_sigmask(SIG_BLOCK, &w->sig, NULL) != 0 ||
	    timer_create(CLOCK_MONOTONIC, &ev, &w->id) != 0)
		return -1;
	w->timer = 1;
	return timer_settime(w->id, TIMER_ABSTIME, its, NULL);
}

static int waiter_init(struct waiter *w, const struct loop_thread *l)
{
	struct itimerspec its = {.it_value = l->start, .it_interval = {0, l->period_us * 1000L}};
	struct epoll_event ev = {.events = EPOLLIN};
	pthread_condattr_t a;

	*w = (struct waiter){.tfd = -1, .epfd = -1};
	pthread_mutex_init(&w->mutex, NULL);
	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(&w->cond, &a);
	/* The first expiry a period after start, as the sleeping loop's first wake. */
	add_ns(&its.it_value, (long)l->period_us * 1000);
	if (l->wait == W_TIMER)
		return timer_init(w, &its);
	if (l->wait != W_TIMERFD && l->wait != W_EPOLL)
		return 0;
	w->tfd = timerfd_create(CLOCK_MONOTONIC,
				TFD_CLOEXEC | (l->wait == W_EPOLL ? TFD_NONBLOCK : 0));
	if (w->tfd < 0 || timerfd_settime(w->tfd, TFD_TIMER_ABSTIME, &its, NULL) != 0)
		return -1;
	if (l->wait == W_TIMERFD)
		return 0;
	w->epfd = epoll_create1(EPOLL_CLOEXEC);
	ev.data.fd = w->tfd;
	return w->epfd >= 0 && epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->tfd, &ev) == 0 ? 0 : -1;
}

static void waiter_done(struct waiter *w)
{
	if (w->epfd >= 0)
		close(w->epfd);
	if (w->tfd >= 0)
		close(w->tfd);
	if (w->timer)
		timer_delete(w->id);
	pthread_cond_destroy(&w->cond);
}

/* Until next (CLOCK_MONOTONIC), in the loop's way. */
static int wait_next(struct waiter *w, enum wait how, const struct timespec *next)
{
	struct epoll_event ev;
	struct timespec now;
	uint64_t n;
	int sig;

	switch (how) {
	case W_TIMER:
		return sigwait(&w->sig, &sig);
	case W_TIMERFD:
		return read(w->tfd, &n, sizeof(n)) == sizeof(n) ? 0 : -1;
	case W_EPOLL:
		if (epoll_wait(w->epfd, &ev, 1, -1) != 1)
			return -1;
		return read(w->tfd, &n, sizeof(n)) == sizeof(n) ? 0 : -1;
	case W_COND:
		pthread_mutex_lock(&w->mutex);
		while (pthread_cond_timedwait(&w->cond, &w->mutex, next) == 0) /* never signalled */
			;
		pthread_mutex_unlock(&w->mutex);
		return 0;
	case W_BUSY:
		do
			clock_gettime(CLOCK_MONOTONIC, &now);
		while (now.tv_sec < next->tv_sec ||
		       (now.tv_sec == next->tv_sec && now.tv_nsec < next->tv_nsec));
		return 0;
	case W_SLEEP:
		break;
	}
	clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, next, NULL);
	return 0;
}

static void *run_loop(void *arg)
{
	struct loop_thread *l = arg;
	struct timespec next = l->start;
	char buf[64] = {0};
	struct waiter w;
	unsigned long rewarm = 0; /* cycles after a rest not sampled */

	if (rt_offload_mark_thread() != 0 || waiter_init(&w, l) != 0) {
		l->failed = 1;
		return NULL;
	}
	for (unsigned long i = 0; i < l->warm + l->cycles; i++) {
		if (busy_rest(l, i, &next))
			rewarm = i + BUSY_REWARM;
		long ns = (long)l->period_us * 1000;
		if (l->jitter)
			ns += (long)(rnd() % (2 * (uint64_t)ns * l->jitter / 100 + 1)) -
			      ns * (long)l->jitter / 100;
		add_ns(&next, ns);
		if (wait_next(&w, l->wait, &next) != 0)
			l->failed = 1;
		if (i == l->warm && l->first)
			stretch_begin(l);
		for (unsigned k = 0; k < l->calls; k++) {
			uint64_t a = h_ticks();
			if (write(l->fd, buf, sizeof(buf)) != sizeof(buf))
				l->failed = 1;
			if (i >= l->warm && i >= rewarm)
				h_sample(&l->s, h_ticks() - a);
		}
	}
	if (l->first)
		stretch_end(l);
	waiter_done(&w);
	rt_offload_unmark_thread();
	return NULL;
}

/*
 * --arg "PERIOD_US,CALLS,JITTER_PCT,CYCLES[,LOOPS[,WAIT]]": WAIT: how the
 * loop waits (enum wait: 0 sleep, 1 timerfd read, 2 epoll on the timerfd,
 * 3 condition variable, 4 busy-wait, 5 sigwait for a POSIX timer).  LOOPS 2 adds a second
 * loop of the same period at SCHED_FIFO 79 on the same CPU, half a
 * period out of phase (a control loop and a slower task beside it, both
 * marked): the helpers must follow two rhythms.  The samples are both
 * loops' calls.
 */
static int child_loop(void)
{
	unsigned period_us = 1000, calls = 1, jitter = 0, nloops = 1, wait = W_SLEEP;
	unsigned long cycles = 1000;
	struct loop_thread l[2];
	pthread_t second;

	if (sscanf(h_opt.arg, "%u,%u,%u,%lu,%u,%u", &period_us, &calls, &jitter, &cycles, &nloops,
		   &wait) < 4 ||
	    nloops < 1 || nloops > 2 || wait > W_TIMER)
		return 2;
	unsigned long warm = cycles / 10 > 200 ? cycles / 10 : 200; /* the helpers learn */
	h_lock_memory();
	h_pin(h_opt.rt_cpu);
	h_fifo(80);
	int fd = open("/dev/null", O_WRONLY);
	if (fd < 0 || !RT_OFFLOAD_AVAILABLE()) {
		fprintf(stderr, "bench-periodic: cannot mark a thread (library not loaded?)\n");
		return 1;
	}
	struct timespec start;
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (unsigned i = 0; i < nloops; i++) {
		l[i] = (struct loop_thread){.period_us = period_us,
					    .calls = calls,
					    .jitter = jitter,
					    .wait = (enum wait)wait,
					    .warm = warm,
					    .cycles = cycles,
					    .start = start,
					    .fd = fd,
					    .first = i == 0};
		add_ns(&l[i].start, (long)i * period_us * 500); /* half a period apart */
		h_samples_init(&l[i].s, cycles * calls);
	}
	if (nloops == 2 && h_thread_start(&second, run_loop, &l[1], h_opt.rt_cpu, 79) != 0)
		return 1;
	run_loop(&l[0]);
	if (nloops == 2)
		pthread_join(second, NULL);
	if (l[0].failed || (nloops == 2 && l[1].failed)) {
		fprintf(stderr, "bench-periodic: a loop could not mark itself or write\n");
		return 1;
	}
	struct h_samples all;
	h_samples_init(&all, nloops * cycles * calls);
	for (unsigned i = 0; i < nloops; i++) {
		h_samples_to_ns(&l[i].s);
		for (size_t k = 0; k < l[i].s.n; k++)
			h_sample(&all, l[i].s.v[k]);
	}
	h_send_samples("rtt", all.v, all.n);
	h_send_value("helper_cpu_pct", 100.0 * (double)l[0].cpu_ns / (double)l[0].run_ns);
	h_send_value("fifo_refused", h_fifo_refused);
	return 0;
}

struct cell {
	struct h_summary s;
	double cpu;
	long during_nap, bursts; /* helper_wake=predict only, else -1 */
	int ok;
};

/* The number after "key": in the stats JSON's "predict" object, or -1. */
static long predict_count(const char *json, const char *key)
{
	const char *obj = strstr(json, "\"predict\":{");
	char quoted[64];

	if (!obj)
		return -1;
	snprintf(quoted, sizeof(quoted), "\"%s\":", key);
	const char *at = strstr(obj, quoted);
	return at ? strtol(at + strlen(quoted), NULL, 10) : -1;
}

/* The child's stats_file (written at its exit), read and removed. */
static void read_predict(const char *path, struct cell *out)
{
	static char json[1 << 16];
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(json, 1, sizeof(json) - 1, f) : 0;

	if (f)
		fclose(f);
	unlink(path);
	json[n] = '\0';
	out->during_nap = predict_count(json, "during_nap");
	out->bursts = 0;
	static const char *const where[] = {"in_window", "before_window", "nap_late",
					    "after_window"};
	for (size_t i = 0; i < sizeof(where) / sizeof(where[0]); i++)
		out->bursts += predict_count(json, where[i]);
	if (out->during_nap < 0)
		out->bursts = -1;
}

static struct cell run_cell(const struct loop *l, const struct column *c, unsigned long cycles,
			    int timeout_s)
{
	struct cell out = {.ok = 0, .during_nap = -1, .bursts = -1};
	char arg[64], stats[PATH_MAX], options[PATH_MAX + 128];

	snprintf(arg, sizeof(arg), "%u,%u,%u,%lu,%u,%u", l->period_us, l->calls, l->jitter_pct,
		 cycles, l->threads ? l->threads : 1, (unsigned)l->wait);
	snprintf(stats, sizeof(stats), "%s/periodic-stats.json", h_opt.tmp);
	snprintf(options, sizeof(options), "%s%s:stats_file=%s", c->options,
		 l->wait == W_TIMERFD || l->wait == W_EPOLL ? ":fd_local=anon" : "", stats);
	struct h_reply r = h_child_run("loop", arg, 1, options, timeout_s);
	read_predict(stats, &out);
	const struct h_item *it = h_reply_get(&r, "rtt");
	if (r.status == 0 && it && it->n) {
		h_summarize(it->v, it->n, &out.s);
		out.cpu = h_reply_value(&r, "helper_cpu_pct", -1);
		out.ok = 1;
	}
	h_reply_free(&r);
	return out;
}

static void print_cell(const char *loop, const char *col, const struct cell *c)
{
	char a[16], b[16], d[16], e[16];

	if (!c->ok) {
		printf("%-18s %-10s (failed)\n", loop, col);
		return;
	}
	printf("%-18s %-10s %9s %9s %9s %9s %7.1f%%", loop, col, h_fmt_ns(a, c->s.p50),
	       h_fmt_ns(b, c->s.p99), h_fmt_ns(d, c->s.p999), h_fmt_ns(e, c->s.max), c->cpu);
	if (c->bursts > 0)
		printf("  %ld of %ld", c->during_nap, c->bursts);
	printf("\n");
}

static void json_cell(struct h_json *j, const char *key, const struct cell *c, const char *options)
{
	hj_obj(j, key);
	hj_str(j, "options", options);
	if (c->ok) {
		hj_summary(j, "rtt_ns", &c->s);
		hj_num(j, "helper_cpu_pct", c->cpu);
		if (c->bursts >= 0) {
			hj_u64(j, "bursts_during_nap", (uint64_t)c->during_nap);
			hj_u64(j, "bursts", (uint64_t)c->bursts);
		}
	} else {
		hj_null(j, "rtt_ns");
	}
	hj_end(j);
}

int main(int argc, char **argv)
{
	static struct cell cells[NLOOPS][NCOLUMNS];
	struct h_json j;
	char a[16], b[16], c16[16], d[16];

	h_init(argc, argv);
	if (h_opt.child)
		return child_loop();
	if (!h_opt.lib) {
		printf("bench-periodic: needs the library (--lib)\n");
		return 0;
	}
	int json = h_opt.out && hj_open(&j, h_opt.out) == 0;
	printf("\n== periodic loops: one offloaded 64-byte write per call (fd_local=none), "
	       "SCHED_FIFO 80 on CPU %d\n",
	       h_opt.rt_cpu);
	printf("%-18s %-10s %9s %9s %9s %9s %8s  %s\n", "loop", "helpers", "p50", "p99", "p99.9",
	       "max", "hk CPU", "bursts during a nap");
	for (size_t i = 0; i < NLOOPS; i++) {
		/* About 3 s per cell at 1 kHz, 2 s at 10 kHz, by default. */
		unsigned long cycles = h_scaled(loops[i].period_us >= 1000 ? 3000 : 20000, 500);
		for (size_t k = 0; k < NCOLUMNS; k++) {
			cells[i][k] = run_cell(&loops[i], &columns[k], cycles, 120);
			print_cell(loops[i].name, columns[k].name, &cells[i][k]);
		}
	}

	/* The long always-polling run: does a throttling stall show in its maximum? */
	static const struct loop one_khz = {"1kHz-1call", 1000, 1, 0, 1, W_SLEEP};
	unsigned long long_cycles = strcmp(h_opt.mode, "quick") == 0 ? 8000 : 30000;
	struct cell poll_long = run_cell(&one_khz, &columns[1], long_cycles, 120);
	printf("\n== %lu s always polling (helper_wake=idle:helper_idle_us=2000000), 1 kHz: a "
	       "throttled helper would show a ~50 ms max\n",
	       long_cycles / 1000);
	print_cell("1kHz-1call", "polling", &poll_long);

	FILE *dat = h_data_file("periodic.dat");
	if (dat) {
		fprintf(dat,
			"# loop; per column (defaults, polling, idle, idle_us=0): p50 us, p99 us, "
			"helpers' CPU %%\n");
		for (size_t i = 0; i < NLOOPS; i++) {
			fprintf(dat, "%s", loops[i].name);
			for (size_t k = 0; k < NCOLUMNS; k++)
				fprintf(dat, " %.3f %.3f %.2f", cells[i][k].s.p50 / 1e3,
					cells[i][k].s.p99 / 1e3, cells[i][k].cpu);
			fprintf(dat, "\n");
		}
		fclose(dat);
	}
	FILE *md = h_data_file("periodic.md");
	if (md) {
		fprintf(md, "| periodic loop (one 64-byte write per call) | helpers | p50 | p99 | "
			    "p99.9 | max | helpers' CPU | bursts during a nap |\n"
			    "|---|---|---|---|---|---|---|---|\n");
		for (size_t i = 0; i < NLOOPS; i++)
			for (size_t k = 0; k < NCOLUMNS; k++) {
				struct cell *x = &cells[i][k];
				if (!x->ok)
					continue;
				char nap[48] = "-";
				if (x->bursts > 0)
					snprintf(nap, sizeof(nap), "%ld of %ld", x->during_nap,
						 x->bursts);
				fprintf(md, "| %s | %s | %s | %s | %s | %s | %.1f%% | %s |\n",
					loops[i].name, columns[k].name, h_fmt_pretty(a, x->s.p50),
					h_fmt_pretty(b, x->s.p99), h_fmt_pretty(c16, x->s.p999),
					h_fmt_pretty(d, x->s.max), x->cpu, nap);
			}
		if (poll_long.ok)
			fprintf(md,
				"\n%lu s always polling at 1 kHz: max %s (a throttled helper "
				"stalls "
				"its callers for up to 50 ms).\n",
				long_cycles / 1000, h_fmt_pretty(a, poll_long.s.max));
		fclose(md);
	}
	if (json) {
		hj_arr(&j, "loops", 0);
		for (size_t i = 0; i < NLOOPS; i++) {
			hj_obj(&j, NULL);
			hj_str(&j, "name", loops[i].name);
			hj_u64(&j, "period_us", loops[i].period_us);
			hj_u64(&j, "calls_per_cycle", loops[i].calls);
			hj_u64(&j, "jitter_pct", loops[i].jitter_pct);
			hj_u64(&j, "loops_side_by_side", loops[i].threads);
			for (size_t k = 0; k < NCOLUMNS; k++)
				json_cell(&j, columns[k].name, &cells[i][k], columns[k].options);
			hj_end(&j);
		}
		hj_end(&j);
		hj_u64(&j, "long_polling_s", long_cycles / 1000);
		json_cell(&j, "long_polling", &poll_long, columns[1].options);
		hj_close(&j);
	}
	return 0;
}
