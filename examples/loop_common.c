/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The periodic loop of the examples and what surrounds it.  The loop is
 * what a realtime engineer would write first and then regret: it logs
 * every cycle with fprintf and, every few cycles, does one of the things
 * real control loops do (loop_work.c: save a state snapshot, map and
 * unmap a buffer, read its config, scan a directory, resolve a name).
 * Each can hold the loop's own CPU in the kernel for a long time, unless
 * something moves it away.
 *
 * Beside it, on the same CPU and at a higher SCHED_FIFO priority, runs a
 * probe that only sleeps and measures (cyclictest's method): it stands for
 * the CPU's other realtime work, which the loop's kernel paths delay.
 */
#define _GNU_SOURCE
#include "loop_common.h"
#include "loop_work.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define NS_PER_US      1000LL
#define NS_PER_MS      1000000LL
#define NS_PER_SEC     1000000000LL
#define HIST_MAX_US    10000 /* the histogram's last bin: this many us or more */
#define STACK_PREFAULT (256u << 10)
#define PROBE_STACK    (256u << 10)

/* The probe thread; it writes lat[] and n, read after it is joined. */
struct probe {
	pthread_t thread;
	int started; /* the thread runs, or ran */
	int joined;
	int fifo;		/* its SCHED_FIFO priority, 0: normal priority */
	int cpu;		/* the CPU it is pinned to */
	int64_t period;		/* ns */
	clockid_t clock;	/* its CPU-time clock, read by the loop's thread */
	int64_t cpu_ns[2];	/* that clock before and after the loop */
	uint64_t cap, n;	/* room in lat[], samples in it */
	uint64_t late_in_calls; /* > 100 us late while the loop was in its calls */
	int64_t *lat;		/* actual wake-up minus planned, ns */
};

struct loop {
	const struct loop_cfg *cfg;
	struct loop_work work_;
	uint64_t periods;    /* periods in the run */
	uint64_t missed;     /* periods skipped: a cycle's work ran past them */
	uint64_t n;	     /* cycles run: samples in wake[] and work[] */
	int64_t *wake;	     /* actual wake-up minus planned, ns */
	int64_t *work;	     /* wake-up to the end of the cycle's work, ns */
	struct rusage ru[2]; /* the loop thread's, before and after the loop */
	int64_t cpu_ns[2];   /* its CLOCK_THREAD_CPUTIME_ID, likewise */
	int64_t proc_ns[2];  /* CLOCK_PROCESS_CPUTIME_ID, likewise: all threads */
	struct probe probe;
	int recording; /* loop_run() is running: the probe takes samples */
	int in_calls;  /* the loop is in its cycle's calls (or waits for them) */
	int done;      /* loop_run() is over: the probe ends */
};

/* ---- command line ---------------------------------------------------------- */

static void usage(const struct loop_cfg *cfg, int status)
{
	FILE *out = status ? stderr : stdout;

	fprintf(out,
		"usage: %s [options]\n"
		"  --duration S       run for S seconds (default %u)\n"
		"  --period US        loop period in microseconds (default %u)\n"
		"  --flush-every N    fflush the log every N cycles (default %u)\n"
		"  --task-every N     a periodic task every N cycles, in turn: snapshot,\n"
		"                     buffers, config, directory, name; 0: none (default %u)\n"
		"  --snapshot-kib N   size of the state snapshot (default %u)\n"
		"  --sync-every N     fdatasync every N snapshots (default %u)\n"
		"  --cpu N            run on CPU N (default: CPU 1 if there are two, else 0)\n"
		"  --prio N           SCHED_FIFO priority (default %d)\n"
		"  --probe-period US  period of the probe, a thread on the loop's CPU that\n"
		"                     only sleeps and measures its wake-ups; 0: no probe\n"
		"                     (default %u)\n"
		"  --probe-prio N     the probe's SCHED_FIFO priority (default: --prio + 10,\n"
		"                     at most 99)\n"
		"  --probe-cpu N      the probe's CPU (default: the loop's)\n"
		"  --histogram FILE   write the probe's latency histogram (1 us bins) to FILE\n"
		"  --dir DIR          where the loop's files go (default .)\n",
		cfg->prog, cfg->duration_s, cfg->period_us, cfg->flush_every, cfg->task_every,
		cfg->snapshot_kib, cfg->sync_every, cfg->prio, cfg->probe_period_us);
	for (const struct loop_flag *f = cfg->flags; f && f->name; f++)
		fprintf(out, "  --%-17s%s\n", f->name, f->help);
	exit(status);
}

static unsigned number(const struct loop_cfg *cfg, const char *opt, const char *s, unsigned lo,
		       unsigned hi)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v < lo || v > hi) {
		fprintf(stderr, "%s: --%s %s: expected a number from %u to %u\n", cfg->prog, opt, s,
			lo, hi);
		exit(2);
	}
	return (unsigned)v;
}

enum {
	OPT_DURATION = 256,
	OPT_PERIOD,
	OPT_FLUSH,
	OPT_TASK,
	OPT_SNAPSHOT,
	OPT_SYNC,
	OPT_CPU,
	OPT_PRIO,
	OPT_PROBE_PERIOD,
	OPT_PROBE_PRIO,
	OPT_PROBE_CPU,
	OPT_HISTOGRAM,
	OPT_DIR,
	OPT_HELP,
	OPT_FLAG
};

static void defaults(struct loop_cfg *cfg, const char *argv0)
{
	const char *slash = strrchr(argv0, '/');

	cfg->prog = slash ? slash + 1 : argv0;
	cfg->duration_s = 20;
	cfg->period_us = 1000;
	cfg->flush_every = 10;
	cfg->task_every = 20;
	cfg->snapshot_kib = 4096;
	cfg->sync_every = 10;
	cfg->cpu = -1;
	cfg->probe_cpu = -1;
	cfg->histogram = NULL;
	cfg->prio = 80;
	cfg->probe_period_us = 500;
	cfg->probe_prio = 0; /* --prio + 10, once --prio is known */
	cfg->dir = ".";
}

/* The fixed options, then one per extra flag (index OPT_FLAG + i). */
static struct option *option_table(const struct loop_cfg *cfg)
{
	static const struct option fixed[] = {
		{"duration", required_argument, NULL, OPT_DURATION},
		{"period", required_argument, NULL, OPT_PERIOD},
		{"flush-every", required_argument, NULL, OPT_FLUSH},
		{"task-every", required_argument, NULL, OPT_TASK},
		{"snapshot-kib", required_argument, NULL, OPT_SNAPSHOT},
		{"sync-every", required_argument, NULL, OPT_SYNC},
		{"cpu", required_argument, NULL, OPT_CPU},
		{"prio", required_argument, NULL, OPT_PRIO},
		{"probe-period", required_argument, NULL, OPT_PROBE_PERIOD},
		{"probe-prio", required_argument, NULL, OPT_PROBE_PRIO},
		{"probe-cpu", required_argument, NULL, OPT_PROBE_CPU},
		{"histogram", required_argument, NULL, OPT_HISTOGRAM},
		{"dir", required_argument, NULL, OPT_DIR},
		{"help", no_argument, NULL, OPT_HELP},
	};
	size_t nfixed = sizeof(fixed) / sizeof(fixed[0]), nflags = 0;

	while (cfg->flags && cfg->flags[nflags].name)
		nflags++;
	struct option *opts = calloc(nfixed + nflags + 1, sizeof(*opts));
	if (!opts)
		abort();
	memcpy(opts, fixed, sizeof(fixed));
	for (size_t i = 0; i < nflags; i++)
		opts[nfixed + i] =
			(struct option){cfg->flags[i].name, no_argument, NULL, OPT_FLAG + (int)i};
	return opts;
}

static void apply(struct loop_cfg *cfg, int c, const char *arg, const struct option *opts,
		  int index)
{
	const char *name = opts[index].name;

	switch (c) {
	case OPT_DURATION:
		cfg->duration_s = number(cfg, name, arg, 1, 3600);
		break;
	case OPT_PERIOD:
		cfg->period_us = number(cfg, name, arg, 50, 1000000);
		break;
	case OPT_FLUSH:
		cfg->flush_every = number(cfg, name, arg, 1, 1000000);
		break;
	case OPT_TASK:
		cfg->task_every = number(cfg, name, arg, 0, 1000000);
		break;
	case OPT_SNAPSHOT:
		cfg->snapshot_kib = number(cfg, name, arg, 4, 1u << 20);
		break;
	case OPT_SYNC:
		cfg->sync_every = number(cfg, name, arg, 1, 1000000);
		break;
	case OPT_CPU:
		cfg->cpu = (int)number(cfg, name, arg, 0, CPU_SETSIZE - 1);
		break;
	case OPT_PRIO:
		cfg->prio = (int)number(cfg, name, arg, 1, 99);
		break;
	case OPT_PROBE_PERIOD:
		cfg->probe_period_us = number(cfg, name, arg, 0, 1000000);
		if (cfg->probe_period_us != 0 && cfg->probe_period_us < 50) {
			fprintf(stderr, "%s: --%s %s: expected 0 (no probe) or 50 to 1000000\n",
				cfg->prog, name, arg);
			exit(2);
		}
		break;
	case OPT_PROBE_PRIO:
		cfg->probe_prio = (int)number(cfg, name, arg, 1, 99);
		break;
	case OPT_PROBE_CPU:
		cfg->probe_cpu = (int)number(cfg, name, arg, 0, CPU_SETSIZE - 1);
		break;
	case OPT_HISTOGRAM:
		cfg->histogram = arg;
		break;
	case OPT_DIR:
		cfg->dir = arg;
		break;
	case OPT_HELP:
		usage(cfg, 0);
		break;
	default:
		if (c >= OPT_FLAG)
			*cfg->flags[c - OPT_FLAG].value = 1;
		else
			usage(cfg, 2);
	}
}

void loop_parse_args(struct loop_cfg *cfg, int argc, char **argv)
{
	struct option *opts;
	int c, index = 0;

	defaults(cfg, argv[0]);
	opts = option_table(cfg);
	while ((c = getopt_long(argc, argv, "", opts, &index)) != -1)
		apply(cfg, c, optarg, opts, index);
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", cfg->prog, argv[optind]);
		usage(cfg, 2);
	}
	free(opts);
	if (cfg->probe_prio == 0)
		cfg->probe_prio = cfg->prio + 10 > 99 ? 99 : cfg->prio + 10;
}

/* ---- realtime set-up --------------------------------------------------------- */

void loop_note(const struct loop_cfg *cfg, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", cfg->prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void loop_lock_memory(struct loop_rt *rt)
{
	struct rlimit rl;

	/*
	 * Without root, MCL_FUTURE counts every later mapping against
	 * RLIMIT_MEMLOCK (8 MiB by default), so the loop's 16 MiB mmap would
	 * fail: better not to lock at all.
	 */
	if (geteuid() != 0 && getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
		snprintf(rt->unlocked, sizeof(rt->unlocked), "RLIMIT_MEMLOCK %llu KiB",
			 (unsigned long long)rl.rlim_cur / 1024);
		return;
	}
	if (mlockall(MCL_CURRENT | MCL_FUTURE) != 0) {
		snprintf(rt->unlocked, sizeof(rt->unlocked), "mlockall: %s", strerror(errno));
		return;
	}
	rt->locked = 1;
}

int loop_choose_cpu(const struct loop_cfg *cfg)
{
	cpu_set_t allowed;
	int seen = 0, first = -1;

	if (cfg->cpu >= 0)
		return cfg->cpu;
	/* The second CPU we may run on: CPU 1 on a plain two-CPU machine. */
	if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0)
		return 0;
	for (int c = 0; c < CPU_SETSIZE; c++) {
		if (!CPU_ISSET(c, &allowed))
			continue;
		if (++seen == 2)
			return c;
		if (first < 0)
			first = c;
	}
	return first < 0 ? 0 : first;
}

/* Why SCHED_FIFO was refused (err: its errno), into buf. */
static void why_no_fifo(int err, char *buf, size_t len)
{
	struct rlimit rl;
	unsigned long long rtprio = 0;

	if (getrlimit(RLIMIT_RTPRIO, &rl) == 0)
		rtprio = rl.rlim_cur == RLIM_INFINITY ? 99 : (unsigned long long)rl.rlim_cur;
	if (err == EPERM)
		snprintf(buf, len, "RLIMIT_RTPRIO %llu", rtprio);
	else
		snprintf(buf, len, "%s", strerror(err));
}

void loop_rt_notes(const struct loop_cfg *cfg, const struct loop_rt *rt, int fifo_err)
{
	const char *who = geteuid() == 0 ? "" : "not root: ";
	char why[96];

	if (fifo_err)
		why_no_fifo(fifo_err, why, sizeof(why));
	if (fifo_err && !rt->locked)
		loop_note(cfg,
			  "%sno SCHED_FIFO %d (%s), no mlockall (%s): "
			  "running at normal priority, memory not locked",
			  who, cfg->prio, why, rt->unlocked);
	else if (fifo_err)
		loop_note(cfg, "%sno SCHED_FIFO %d (%s): running at normal priority", who,
			  cfg->prio, why);
	else if (!rt->locked)
		loop_note(cfg, "%sno mlockall (%s): memory not locked", who, rt->unlocked);
}

void loop_rt_self(const struct loop_cfg *cfg, struct loop_rt *rt)
{
	struct sched_param sp = {.sched_priority = cfg->prio};
	cpu_set_t set;
	int cpu = loop_choose_cpu(cfg);

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	rt->cpu = -1;
	if (sched_setaffinity(0, sizeof(set), &set) == 0)
		rt->cpu = cpu;
	else
		loop_note(cfg, "cannot pin to CPU %d: %s: running unpinned", cpu, strerror(errno));
	rt->fifo = 0;
	if (sched_setscheduler(0, SCHED_FIFO, &sp) == 0)
		rt->fifo = cfg->prio;
	loop_rt_notes(cfg, rt, rt->fifo ? 0 : errno);
}

/* ---- set-up of the loop's resources -------------------------------------------- */

static void *alloc_touched(const struct loop_cfg *cfg, size_t size)
{
	char *p = malloc(size);

	if (!p) {
		loop_note(cfg, "out of memory");
		exit(1);
	}
	memset(p, 0xa5, size); /* fault every page in now, not in the loop */
	return p;
}

/* Touches a few hundred KiB of stack so the loop never faults on it. */
static void __attribute__((noinline)) prefault_stack(void)
{
	volatile char buf[STACK_PREFAULT];

	for (size_t i = 0; i < sizeof(buf); i += 4096)
		buf[i] = 0;
}

struct loop *loop_open(const struct loop_cfg *cfg)
{
	struct loop *l = calloc(1, sizeof(*l));

	if (!l)
		abort();
	l->cfg = cfg;
	l->periods = (uint64_t)cfg->duration_s * 1000000 / cfg->period_us;
	l->wake = alloc_touched(cfg, l->periods * sizeof(*l->wake));
	l->work = alloc_touched(cfg, l->periods * sizeof(*l->work));
	if (cfg->probe_period_us) {
		/* The loop's periods, plus a second for its last cycle's work. */
		l->probe.period = (int64_t)cfg->probe_period_us * NS_PER_US;
		l->probe.cap = ((uint64_t)cfg->duration_s + 1) * 1000000 / cfg->probe_period_us;
		l->probe.lat = alloc_touched(cfg, l->probe.cap * sizeof(*l->probe.lat));
	}
	loop_work_open(&l->work_, cfg);
	prefault_stack();
	return l;
}

void loop_close(struct loop *l)
{
	loop_work_close(&l->work_);
	free(l->wake);
	free(l->work);
	free(l->probe.lat);
	free(l);
}

/* ---- the loop --------------------------------------------------------------------- */

static int64_t ts_ns(const struct timespec *t)
{
	return t->tv_sec * NS_PER_SEC + t->tv_nsec;
}

static struct timespec ns_ts(int64_t ns)
{
	return (struct timespec){.tv_sec = ns / NS_PER_SEC, .tv_nsec = ns % NS_PER_SEC};
}

static int64_t clock_ns(clockid_t id)
{
	struct timespec t;

	clock_gettime(id, &t);
	return ts_ns(&t);
}

static int64_t now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

static void sleep_until(int64_t t)
{
	struct timespec ts = ns_ts(t);

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* ---- the probe ---------------------------------------------------------------------- */

/*
 * cyclictest's loop: sleep to an absolute deadline, note how late the
 * wake-up was, skip the deadlines already past.  Its only system call is
 * clock_nanosleep (clock_gettime is the vDSO's); the flags are plain
 * memory.  Its deadlines lie half a period off the loop's (both are on
 * the clock's grid), so with the default periods the two never ask for
 * the CPU at the same instant: the probe wakes up between the loop's
 * cycles, and is late only when something else holds the CPU.
 */
static void *probe_main(void *arg)
{
	struct loop *l = arg;
	struct probe *pr = &l->probe;
	int64_t next = (now_ns() / pr->period + 1) * pr->period + pr->period / 2;

	while (!__atomic_load_n(&l->done, __ATOMIC_ACQUIRE)) {
		sleep_until(next);
		int64_t woke = now_ns();
		if (__atomic_load_n(&l->recording, __ATOMIC_ACQUIRE) && pr->n < pr->cap) {
			pr->lat[pr->n++] = woke - next;
			if (woke - next > 100 * NS_PER_US &&
			    __atomic_load_n(&l->in_calls, __ATOMIC_RELAXED))
				pr->late_in_calls++;
		}
		do
			next += pr->period;
		while (next <= woke);
	}
	return NULL;
}

static int probe_create(struct loop *l, int fifo)
{
	struct probe *pr = &l->probe;
	struct sched_param sp = {.sched_priority = fifo};
	pthread_attr_t attr;
	cpu_set_t set;
	int err;

	CPU_ZERO(&set);
	CPU_SET(pr->cpu, &set);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, PROBE_STACK);
	pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(&attr, fifo ? SCHED_FIFO : SCHED_OTHER);
	pthread_attr_setschedparam(&attr, &sp);
	err = pthread_create(&pr->thread, &attr, probe_main, l);
	pthread_attr_destroy(&attr);
	return err;
}

void loop_probe_start(struct loop *l, int cpu)
{
	const struct loop_cfg *cfg = l->cfg;
	struct probe *pr = &l->probe;
	int err;

	if (!cfg->probe_period_us)
		return;
	pr->cpu = cpu;
	pr->fifo = cfg->probe_prio;
	err = probe_create(l, pr->fifo);
	if (err == EPERM) {
		pr->fifo = 0;
		err = probe_create(l, 0);
		if (!err)
			loop_note(cfg, "probe: no SCHED_FIFO %d: it runs at normal priority",
				  cfg->probe_prio);
	}
	if (err) {
		loop_note(cfg, "probe: pthread_create: %s: no probe", strerror(err));
		return;
	}
	pr->started = 1;
	pthread_setname_np(pr->thread, "probe");
	if (pthread_getcpuclockid(pr->thread, &pr->clock) != 0)
		pr->clock = (clockid_t)-1;
}

void loop_probe_join(struct loop *l)
{
	if (!l->probe.started || l->probe.joined)
		return;
	__atomic_store_n(&l->done, 1, __ATOMIC_RELEASE);
	pthread_join(l->probe.thread, NULL);
	l->probe.joined = 1;
}

static int64_t probe_cpu_ns(const struct loop *l)
{
	return l->probe.started && l->probe.clock != (clockid_t)-1 ? clock_ns(l->probe.clock) : 0;
}

/*
 * Absolute wake-ups, so a late cycle does not shift the schedule.  A
 * cycle whose work runs past the start of the next period has missed it:
 * the loop skips to the next period still ahead (as a control loop must,
 * rather than running a burst of stale cycles) and counts the skipped
 * ones.  So wake[] is the pure wake-up latency, and the time the calls
 * themselves took shows in work[] and in the missed periods.
 */
void loop_run(struct loop *l)
{
	const int64_t period = (int64_t)l->cfg->period_us * NS_PER_US;
	int64_t next = (now_ns() / period + 2) * period; /* on the clock's grid: see probe_main */
	uint64_t p = 0;

	l->proc_ns[0] = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	l->probe.cpu_ns[0] = probe_cpu_ns(l);
	getrusage(RUSAGE_THREAD, &l->ru[0]);
	l->cpu_ns[0] = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	__atomic_store_n(&l->recording, 1, __ATOMIC_RELEASE);
	while (p < l->periods) {
		sleep_until(next);
		int64_t woke = now_ns();
		l->wake[l->n] = woke - next;
		__atomic_store_n(&l->in_calls, 1, __ATOMIC_RELAXED);
		loop_work_cycle(&l->work_, l->n, woke - next);
		__atomic_store_n(&l->in_calls, 0, __ATOMIC_RELAXED);
		int64_t end = now_ns();
		l->work[l->n++] = end - woke;
		next += period;
		p++;
		for (; next <= end && p < l->periods; next += period, p++)
			l->missed++;
	}
	__atomic_store_n(&l->recording, 0, __ATOMIC_RELEASE);
	l->cpu_ns[1] = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	getrusage(RUSAGE_THREAD, &l->ru[1]);
	l->probe.cpu_ns[1] = probe_cpu_ns(l);
	l->proc_ns[1] = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	__atomic_store_n(&l->done, 1, __ATOMIC_RELEASE);
}

/* ---- the report --------------------------------------------------------------------- */

void loop_report_line(FILE *out, const char *label, const char *fmt, ...)
{
	va_list ap;

	fprintf(out, "%-30s ", label);
	va_start(ap, fmt);
	vfprintf(out, fmt, ap);
	va_end(ap);
	fputc('\n', out);
}

const char *loop_us(char *buf, size_t len, int64_t ns)
{
	snprintf(buf, len, "%.1f us", (double)ns / NS_PER_US);
	return buf;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* The q-quantile (0..1) of sorted v[n]: the smallest value >= q of them. */
static int64_t quantile(const int64_t *v, uint64_t n, double q)
{
	uint64_t i = (uint64_t)(q * (double)n + 0.999999);

	return n == 0 ? 0 : v[i == 0 ? 0 : (i > n ? n : i) - 1];
}

static uint64_t count_over(const int64_t *v, uint64_t n, int64_t limit)
{
	uint64_t c = 0;

	for (uint64_t i = 0; i < n; i++)
		c += v[i] > limit;
	return c;
}

static void report_distribution(FILE *out, const char *what, int64_t *v, uint64_t n)
{
	static const struct {
		const char *name;
		double q;
	} qs[] = {{"min", 0}, {"p50", 0.5}, {"p99", 0.99}, {"p99.9", 0.999}, {"max", 1}};
	char label[64], us[32];

	qsort(v, n, sizeof(*v), cmp_i64);
	for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
		snprintf(label, sizeof(label), "%s %s:", what, qs[i].name);
		loop_report_line(out, label, "%s",
				 loop_us(us, sizeof(us), quantile(v, n, qs[i].q)));
	}
}

static void report_setup(FILE *out, const struct loop *l, const struct loop_rt *rt)
{
	loop_report_line(out, "cpu:", "%s%d", rt->cpu < 0 ? "unpinned " : "", rt->cpu);
	if (rt->fifo)
		loop_report_line(out, "scheduling:", "SCHED_FIFO/%d", rt->fifo);
	else
		loop_report_line(out, "scheduling:", "normal");
	loop_report_line(out, "memory locked:", "%s", rt->locked ? "yes" : "no");
	loop_report_line(out, "cycles run:", "%llu of %llu", (unsigned long long)l->n,
			 (unsigned long long)l->periods);
	if (!l->probe.started)
		loop_report_line(out, "probe:", "none");
	else if (l->probe.fifo)
		loop_report_line(out, "probe:", "SCHED_FIFO/%d on CPU %d, every %u us",
				 l->probe.fifo, l->probe.cpu, l->cfg->probe_period_us);
	else
		loop_report_line(out, "probe:", "normal priority on CPU %d, every %u us",
				 l->probe.cpu, l->cfg->probe_period_us);
}

/* A latency distribution and how many samples were over 100 us and 1 ms. */
static void report_latency(FILE *out, const char *what, int64_t *v, uint64_t n)
{
	char label[64];

	snprintf(label, sizeof(label), "%s wake-up latency", what);
	report_distribution(out, label, v, n);
	snprintf(label, sizeof(label), "%s wake-ups > 100 us late:", what);
	loop_report_line(out, label, "%llu", (unsigned long long)count_over(v, n, 100 * NS_PER_US));
	snprintf(label, sizeof(label), "%s wake-ups > 1 ms late:", what);
	loop_report_line(out, label, "%llu",
			 (unsigned long long)count_over(v, n, 1000 * NS_PER_US));
}

/*
 * What the loop's thread cost its own CPU.  The total is exact; the
 * kernel's user/system split is not shown, since with tick-based
 * accounting it is a sample at the tick rate.  Offloading moves the calls
 * away, but waiting for them (a spin, then a futex) still costs the CPU.
 */
static void report_usage(FILE *out, const struct loop *l)
{
	const struct rusage *a = &l->ru[0], *b = &l->ru[1];
	int64_t loop = l->cpu_ns[1] - l->cpu_ns[0];
	int64_t probe = l->probe.cpu_ns[1] - l->probe.cpu_ns[0];
	int64_t others = l->proc_ns[1] - l->proc_ns[0] - loop - probe;

	loop_report_line(out, "loop CPU time:", "%.1f ms", (double)loop / NS_PER_MS);
	loop_report_line(out, "loop page faults:", "%ld",
			 b->ru_minflt - a->ru_minflt + b->ru_majflt - a->ru_majflt);
	loop_report_line(out, "loop blocking waits:", "%ld", b->ru_nvcsw - a->ru_nvcsw);
	if (l->probe.started)
		loop_report_line(out, "probe CPU time:", "%.1f ms", (double)probe / NS_PER_MS);
	/* Whoever else worked meanwhile: the library's helpers, if it is loaded. */
	loop_report_line(out, "other threads' CPU time:", "%.1f ms",
			 (double)(others > 0 ? others : 0) / NS_PER_MS);
}

void loop_report(struct loop *l, const struct loop_rt *rt, FILE *out)
{
	report_setup(out, l, rt);
	if (l->probe.started) {
		loop_report_line(out, "probe wake-ups:", "%llu", (unsigned long long)l->probe.n);
		report_latency(out, "probe", l->probe.lat, l->probe.n);
		loop_report_line(out, "probe late, loop in its calls:", "%llu",
				 (unsigned long long)l->probe.late_in_calls);
	}
	report_latency(out, "loop", l->wake, l->n);
	report_distribution(out, "cycle work", l->work, l->n);
	loop_report_line(out, "missed periods:", "%llu", (unsigned long long)l->missed);
	report_usage(out, l);
	loop_work_report(&l->work_, out);
}

/*
 * OSADL's latency plot: how many wake-ups were late by each whole
 * microsecond, the last bin holding all of HIST_MAX_US and over.  Empty
 * bins are left out; examples/demo.sh fills them in for the plot.
 */
void loop_write_histogram(const struct loop *l)
{
	const char *path = l->cfg->histogram;
	uint64_t *bins;
	FILE *f;

	if (!path)
		return;
	bins = calloc(HIST_MAX_US + 1, sizeof(*bins));
	if (!bins)
		abort();
	for (uint64_t i = 0; i < l->probe.n; i++) {
		int64_t us = l->probe.lat[i] / NS_PER_US;
		bins[us < 0 ? 0 : us > HIST_MAX_US ? HIST_MAX_US : us]++;
	}
	f = fopen(path, "we");
	if (!f) {
		loop_note(l->cfg, "%s: %s", path, strerror(errno));
		free(bins);
		exit(1);
	}
	for (int us = 0; us <= HIST_MAX_US; us++)
		if (bins[us])
			fprintf(f, "%d %llu\n", us, (unsigned long long)bins[us]);
	if (fclose(f) != 0) {
		loop_note(l->cfg, "%s: %s", path, strerror(errno));
		exit(1);
	}
	free(bins);
}
