/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The periodic loop of the examples and what surrounds it.  The loop is
 * what a realtime engineer would write first and then regret: it logs
 * every cycle with fprintf, flushes and fsyncs the log every few cycles,
 * and now and then does something heavy (a 1 MiB write + fsync, a 16 MiB
 * populated mmap + munmap).  Every one of these can take milliseconds in
 * the kernel, on the loop's own CPU, unless something moves them away.
 */
#define _GNU_SOURCE
#include "loop_common.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define NS_PER_US	 1000LL
#define NS_PER_MS	 1000000LL
#define NS_PER_SEC	 1000000000LL
#define HEAVY_WRITE_SIZE (1u << 20)  /* 1 MiB pwrite, then fsync */
#define HEAVY_WRITE_SPAN 16	     /* ... cycling over a 16 MiB file */
#define HEAVY_MAP_SIZE	 (16u << 20) /* 16 MiB MAP_POPULATE mmap, then munmap */
#define STACK_PREFAULT	 (256u << 10)

struct loop {
	const struct loop_cfg *cfg;
	FILE *log;	  /* one fprintf per cycle */
	int data_fd;	  /* the heavy writes */
	char *data;	  /* their 1 MiB buffer, touched before the loop */
	unsigned heavy_n; /* heavy writes so far: the offset in the file */
	unsigned errors;  /* failed calls; the first one is reported */
	int first_errno;
	const char *first_failed;
	uint64_t periods;    /* periods in the run */
	uint64_t missed;     /* periods skipped: a cycle's work ran past them */
	uint64_t n;	     /* cycles run: samples in wake[] and work[] */
	int64_t *wake;	     /* actual wake-up minus planned, ns */
	int64_t *work;	     /* wake-up to the end of the cycle's work, ns */
	struct rusage ru[2]; /* the loop thread's, before and after the loop */
	int64_t cpu_ns[2];   /* its CLOCK_THREAD_CPUTIME_ID, likewise */
};

/* ---- command line ---------------------------------------------------------- */

static void usage(const struct loop_cfg *cfg, int status)
{
	FILE *out = status ? stderr : stdout;

	fprintf(out,
		"usage: %s [options]\n"
		"  --duration S       run for S seconds (default %u)\n"
		"  --period US        loop period in microseconds (default %u)\n"
		"  --fsync-every N    fflush + fsync the log every N cycles (default %u)\n"
		"  --heavy-every N    a heavy call every N cycles, alternately a 1 MiB\n"
		"                     write + fsync and a 16 MiB mmap + munmap; 0: none (default "
		"%u)\n"
		"  --cpu N            run on CPU N (default: CPU 1 if there are two, else 0)\n"
		"  --prio N           SCHED_FIFO priority (default %d)\n"
		"  --dir DIR          where the log and data files go (default .)\n",
		cfg->prog, cfg->duration_s, cfg->period_us, cfg->fsync_every, cfg->heavy_every,
		cfg->prio);
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
	OPT_FSYNC,
	OPT_HEAVY,
	OPT_CPU,
	OPT_PRIO,
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
	cfg->fsync_every = 10;
	cfg->heavy_every = 100;
	cfg->cpu = -1;
	cfg->prio = 80;
	cfg->dir = ".";
}

/* The fixed options, then one per extra flag (index OPT_FLAG + i). */
static struct option *option_table(const struct loop_cfg *cfg)
{
	static const struct option fixed[] = {
		{"duration", required_argument, NULL, OPT_DURATION},
		{"period", required_argument, NULL, OPT_PERIOD},
		{"fsync-every", required_argument, NULL, OPT_FSYNC},
		{"heavy-every", required_argument, NULL, OPT_HEAVY},
		{"cpu", required_argument, NULL, OPT_CPU},
		{"prio", required_argument, NULL, OPT_PRIO},
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
	case OPT_FSYNC:
		cfg->fsync_every = number(cfg, name, arg, 1, 1000000);
		break;
	case OPT_HEAVY:
		cfg->heavy_every = number(cfg, name, arg, 0, 1000000);
		break;
	case OPT_CPU:
		cfg->cpu = (int)number(cfg, name, arg, 0, CPU_SETSIZE - 1);
		break;
	case OPT_PRIO:
		cfg->prio = (int)number(cfg, name, arg, 1, 99);
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

static void open_files(struct loop *l)
{
	char path[PATH_MAX];
	const struct loop_cfg *cfg = l->cfg;

	snprintf(path, sizeof(path), "%s/%s.log", cfg->dir, cfg->prog);
	l->log = fopen(path, "w");
	if (!l->log) {
		loop_note(cfg, "%s: %s", path, strerror(errno));
		exit(1);
	}
	snprintf(path, sizeof(path), "%s/%s.data", cfg->dir, cfg->prog);
	l->data_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (l->data_fd < 0) {
		loop_note(cfg, "%s: %s", path, strerror(errno));
		exit(1);
	}
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
	l->data = alloc_touched(cfg, HEAVY_WRITE_SIZE);
	open_files(l);
	prefault_stack();
	return l;
}

void loop_close(struct loop *l)
{
	fclose(l->log);
	close(l->data_fd);
	free(l->wake);
	free(l->work);
	free(l->data);
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

/* Counted, not printed: stdio in the loop is what the loop is about. */
static void failed(struct loop *l, const char *what)
{
	if (l->errors++ == 0) {
		l->first_errno = errno;
		l->first_failed = what;
	}
}

static void heavy_write(struct loop *l)
{
	off_t off = (off_t)(l->heavy_n++ % HEAVY_WRITE_SPAN) * HEAVY_WRITE_SIZE;

	if (pwrite(l->data_fd, l->data, HEAVY_WRITE_SIZE, off) != HEAVY_WRITE_SIZE)
		failed(l, "pwrite");
	if (fsync(l->data_fd) != 0)
		failed(l, "fsync");
}

static void heavy_map(struct loop *l)
{
	void *p = mmap(NULL, HEAVY_MAP_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	if (p == MAP_FAILED) {
		failed(l, "mmap");
		return;
	}
	if (munmap(p, HEAVY_MAP_SIZE) != 0)
		failed(l, "munmap");
}

/* What one cycle does besides waking up on time. */
static void cycle_work(struct loop *l, uint64_t cycle, int64_t wake_ns)
{
	const struct loop_cfg *cfg = l->cfg;

	if (fprintf(l->log, "cycle %llu wake %lld ns\n", (unsigned long long)cycle,
		    (long long)wake_ns) < 0)
		failed(l, "fprintf");
	if (cycle % cfg->fsync_every == cfg->fsync_every - 1) {
		if (fflush(l->log) != 0 || fsync(fileno(l->log)) != 0)
			failed(l, "fflush/fsync");
	}
	if (cfg->heavy_every == 0 || cycle % cfg->heavy_every != cfg->heavy_every - 1)
		return;
	if ((cycle / cfg->heavy_every) % 2 == 0)
		heavy_write(l);
	else
		heavy_map(l);
}

static void sleep_until(int64_t t)
{
	struct timespec ts = ns_ts(t);

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
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
	int64_t next = now_ns() + period;
	uint64_t p = 0;

	getrusage(RUSAGE_THREAD, &l->ru[0]);
	l->cpu_ns[0] = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	while (p < l->periods) {
		sleep_until(next);
		int64_t woke = now_ns();
		l->wake[l->n] = woke - next;
		cycle_work(l, l->n, woke - next);
		int64_t end = now_ns();
		l->work[l->n++] = end - woke;
		next += period;
		p++;
		for (; next <= end && p < l->periods; next += period, p++)
			l->missed++;
	}
	l->cpu_ns[1] = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	getrusage(RUSAGE_THREAD, &l->ru[1]);
}

/* ---- the report --------------------------------------------------------------------- */

void loop_report_line(FILE *out, const char *label, const char *fmt, ...)
{
	va_list ap;

	fprintf(out, "%-28s ", label);
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

	loop_report_line(out, "loop CPU time:", "%.1f ms",
			 (double)(l->cpu_ns[1] - l->cpu_ns[0]) / NS_PER_MS);
	loop_report_line(out, "loop page faults:", "%ld",
			 b->ru_minflt - a->ru_minflt + b->ru_majflt - a->ru_majflt);
	loop_report_line(out, "loop blocking waits:", "%ld", b->ru_nvcsw - a->ru_nvcsw);
}

void loop_report(struct loop *l, const struct loop_rt *rt, FILE *out)
{
	int64_t *wake = l->wake, *work = l->work;

	report_setup(out, l, rt);
	report_distribution(out, "wake-up latency", wake, l->n);
	loop_report_line(out, "wake-ups > 100 us late:", "%llu",
			 (unsigned long long)count_over(wake, l->n, 100 * NS_PER_US));
	loop_report_line(out, "wake-ups > 1 ms late:", "%llu",
			 (unsigned long long)count_over(wake, l->n, 1000 * NS_PER_US));
	report_distribution(out, "cycle work", work, l->n);
	loop_report_line(out, "missed periods:", "%llu", (unsigned long long)l->missed);
	report_usage(out, l);
	if (l->errors)
		loop_report_line(out, "failed calls:", "%u (first: %s: %s)", l->errors,
				 l->first_failed, strerror(l->first_errno));
}
