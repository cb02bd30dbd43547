/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rtoffload check: what this machine offers a realtime thread, and what to
 * change.  First every fact is gathered, then printed, then the advice is
 * derived from the facts alone.
 *
 * It changes nothing.  SCHED_FIFO and mlockall() are tried in short-lived
 * child processes; where debugfs must be mounted to read the preemption
 * model, a child mounts it read-only in a mount namespace of its own,
 * which vanishes with it, so the machine's mounts stay as they were.
 */
#include "launcher.h"
#include "proc_stat.h"

#include <errno.h>
#include <fcntl.h>
#include <mntent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/klog.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#define SYSFS_CPU	"/sys/devices/system/cpu/"
#define DEBUGFS		"/sys/kernel/debug"
#define SECURITYFS	"/sys/kernel/security"
#define LABEL_WIDTH	17
#define TEXT_WIDTH	78
#define LIST_MAX	512
#define CAPBIT_IPC_LOCK 14 /* bit numbers in CapEff, as <linux/capability.h> */
#define CAPBIT_SYS_NICE 23

/* syslog(2) actions, which glibc's <sys/klog.h> does not name. */
#define KLOG_READ_ALL	 3
#define KLOG_SIZE_BUFFER 10

struct facts {
	cpu_set_t online, allowed, isolated, nohz, rt, helpers;
	int has_nohz;	  /* the kernel has nohz_full at all */
	int rt_given;	  /* --rt-cpus or rt_cpus= */
	int helper_given; /* --helper-cpus or helper_cpus= */
	int helpers_shared;
	long configured;
	char model[128], governor[LIST_MAX], idle[128], smt[32], boot[LIST_MAX];
	int governor_slow; /* some CPU does not run the performance governor */
	int smt_active;
	char steal[LIST_MAX]; /* the host's share of each CPU since boot, "" on bare metal */
	double steal_most;    /* the largest share, in percent */
	struct utsname uts;
	char preempt[192];
	int preempt_weak;    /* none or voluntary: a woken thread waits for the kernel */
	int preempt_dynamic; /* chosen at boot (preempt=) */
	int preempt_unknown;
	long rt_runtime, rt_period, timer_migration;
	char clock[64];
	int clock_vdso;
	struct rlimit rtprio, memlock;
	int cap_nice, cap_lock;
	int fifo_err, mlock_err; /* 0: works, else errno */
	int sud_err;		 /* Syscall User Dispatch (the backstop): 0, else errno */
	struct library lib;
	char lib_err[PATH_MAX + 256];
	int lib_ok;
};

/* ---- reading /proc and /sys ------------------------------------------- */

/* The first line of a file, without its newline.  0, or -1. */
static int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");

	if (!f)
		return -1;
	if (!fgets(buf, (int)len, f))
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static int read_long(const char *path, long *v)
{
	char buf[64], *end;

	if (read_line(path, buf, sizeof(buf)) < 0)
		return -1;
	*v = strtol(buf, &end, 10);
	return end == buf ? -1 : 0;
}

/* The value of "key: value" in a /proc file such as cpuinfo or status. */
static int proc_field(const char *path, const char *key, char *out, size_t len)
{
	char line[512];
	size_t klen = strlen(key);
	FILE *f = fopen(path, "re");
	int found = 0;

	if (!f)
		return -1;
	while (!found && fgets(line, sizeof(line), f)) {
		char *v = line + klen;

		if (strncmp(line, key, klen) != 0 || (*v != ':' && *v != ' ' && *v != '\t'))
			continue;
		v += strspn(v, " \t:");
		v[strcspn(v, "\n")] = '\0';
		snprintf(out, len, "%s", v);
		found = 1;
	}
	fclose(f);
	return found ? 0 : -1;
}

/* Whether the n bytes at w are one of the words of a space-separated list. */
static int one_of(const char *words, const char *w, size_t n)
{
	for (const char *p = words; *p; p += strspn(p, " ")) {
		size_t len = strcspn(p, " ");

		if (len == n && strncmp(p, w, n) == 0)
			return 1;
		p += len;
	}
	return 0;
}

/* "key=value" from the kernel command line: 1 and the value, or 0. */
static int boot_param(const char *key, char *out, size_t len)
{
	char cmdline[4096];
	size_t klen = strlen(key);

	if (read_line("/proc/cmdline", cmdline, sizeof(cmdline)) < 0)
		return 0;
	for (char *save, *w = strtok_r(cmdline, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		if (strncmp(w, key, klen) == 0 && w[klen] == '=') {
			snprintf(out, len, "%s", w + klen + 1);
			return 1;
		}
	}
	return 0;
}

/* ---- gathering ---------------------------------------------------------- */

/* check --options, else RTOFFLOAD_OPTIONS (NULL: neither). */
static const char *opts_text;

/* rt_cpus and helper_cpus: the flag, else what the options say. */
static int given_cpus(const char *flag, const char *key, cpu_set_t *set)
{
	char val[LIST_MAX];

	if (flag)
		return rto_cpulist_parse(flag, set) == 0;
	return options_get(opts_text, key, val, sizeof(val)) && rto_cpulist_parse(val, set) == 0;
}

static void gather_model(struct facts *f)
{
	static const char *const keys[] = {"model name", "Model", "cpu model", "uarch", NULL};

	for (const char *const *k = keys; *k; k++) {
		if (proc_field("/proc/cpuinfo", *k, f->model, sizeof(f->model)) == 0)
			return;
	}
	snprintf(f->model, sizeof(f->model), "unknown");
}

static void append(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void append(char *buf, size_t len, const char *fmt, ...)
{
	size_t pos = strlen(buf);
	va_list ap;

	va_start(ap, fmt);
	if (pos < len)
		vsnprintf(buf + pos, len - pos, fmt, ap);
	va_end(ap);
}

/* One governor for all CPUs, or each CPU's. */
static void gather_governor(struct facts *f)
{
	char path[96], gov[32], first[32] = "", each[LIST_MAX] = "";
	int seen = 0, mixed = 0;

	for (int c = 0; c < CPU_SETSIZE; c++) {
		if (!CPU_ISSET(c, &f->online))
			continue;
		snprintf(path, sizeof(path), SYSFS_CPU "cpu%d/cpufreq/scaling_governor", c);
		if (read_line(path, gov, sizeof(gov)) < 0)
			continue;
		if (!seen++)
			snprintf(first, sizeof(first), "%s", gov);
		mixed |= strcmp(gov, first) != 0;
		f->governor_slow |= strcmp(gov, "performance") != 0;
		append(each, sizeof(each), "%s%d: %s", seen > 1 ? ", " : "", c, gov);
	}
	if (!seen)
		snprintf(f->governor, sizeof(f->governor), "not available (no cpufreq driver)");
	else if (!mixed)
		snprintf(f->governor, sizeof(f->governor), "%s on every CPU", first);
	else
		snprintf(f->governor, sizeof(f->governor), "%s", each);
}

static void gather_idle_smt(struct facts *f)
{
	char driver[48], gov[40];
	long active = 0;

	if (read_line(SYSFS_CPU "cpuidle/current_driver", driver, sizeof(driver)) < 0 ||
	    strcmp(driver, "none") == 0)
		snprintf(f->idle, sizeof(f->idle), "none");
	else if (read_line(SYSFS_CPU "cpuidle/current_governor_ro", gov, sizeof(gov)) == 0 ||
		 read_line(SYSFS_CPU "cpuidle/current_governor", gov, sizeof(gov)) == 0)
		snprintf(f->idle, sizeof(f->idle), "%s (governor %s)", driver, gov);
	else
		snprintf(f->idle, sizeof(f->idle), "%s", driver);
	if (read_line(SYSFS_CPU "smt/control", f->smt, sizeof(f->smt)) < 0)
		snprintf(f->smt, sizeof(f->smt), "unknown");
	f->smt_active = read_long(SYSFS_CPU "smt/active", &active) == 0 && active == 1;
}

/*
 * The hypervisor's share of each online CPU since boot (steal, /proc/stat):
 * a virtual CPU the host does not run stops every thread on it, the
 * library's helpers and the realtime threads alike.
 */
static void gather_steal(struct facts *f)
{
	static char text[65536];
	double up = 0;
	long hz = sysconf(_SC_CLK_TCK);
	FILE *u = fopen("/proc/uptime", "re");
	int fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);
	ssize_t len = fd >= 0 ? read(fd, text, sizeof(text) - 1) : -1;

	if (fd >= 0)
		close(fd);
	if (u && fscanf(u, "%lf", &up) != 1)
		up = 0;
	if (u)
		fclose(u);
	f->steal[0] = '\0';
	if (len <= 0 || up <= 0 || hz <= 0)
		return;
	for (int c = 0; c < CPU_SETSIZE; c++) {
		uint64_t ticks;
		if (!CPU_ISSET(c, &f->online) ||
		    rto_proc_stat_steal(text, (long)len, c, &ticks) != 0)
			continue;
		double pct = 100.0 * ((double)ticks / (double)hz) / up;
		if (pct > f->steal_most)
			f->steal_most = pct;
		append(f->steal, sizeof(f->steal), "%sCPU %d %.2f%%", f->steal[0] ? ", " : "", c,
		       pct);
	}
	if (f->steal_most == 0)
		f->steal[0] = '\0';
}

/* The kernel parameters that shape realtime behaviour, as booted. */
static void gather_boot(struct facts *f)
{
	static const char keys[] = "isolcpus nohz_full rcu_nocbs rcu_nocb_poll irqaffinity "
				   "kthread_cpus preempt threadirqs nosmt idle nohz skew_tick "
				   "clocksource tsc processor.max_cstate intel_idle.max_cstate";
	char cmdline[4096];

	f->boot[0] = '\0';
	if (read_line("/proc/cmdline", cmdline, sizeof(cmdline)) < 0)
		return;
	for (char *save, *w = strtok_r(cmdline, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		size_t klen = strcspn(w, "=");

		if (one_of(keys, w, klen))
			append(f->boot, sizeof(f->boot), "%s%s", f->boot[0] ? " " : "", w);
	}
}

static void gather_cpus(struct facts *f, const struct launch *l)
{
	rto_cpus_online(&f->online);
	if (sched_getaffinity(0, sizeof(f->allowed), &f->allowed) < 0)
		f->allowed = f->online;
	f->configured = sysconf(_SC_NPROCESSORS_CONF);
	if (rto_cpulist_read(SYSFS_CPU "isolated", &f->isolated) < 0)
		CPU_ZERO(&f->isolated);
	f->has_nohz = rto_cpulist_read(SYSFS_CPU "nohz_full", &f->nohz) == 0;
	if (!f->has_nohz)
		CPU_ZERO(&f->nohz);
	f->rt_given = given_cpus(l->rt_cpus, "rt_cpus", &f->rt);
	f->helper_given = given_cpus(l->helper_cpus, "helper_cpus", &f->helpers);
	if (!f->helper_given)
		f->helpers_shared = cpus_helpers(f->rt_given ? &f->rt : NULL, &f->helpers) > 0;
	gather_model(f);
	gather_governor(f);
	gather_idle_smt(f);
	gather_boot(f);
	gather_steal(f);
}

/* "none voluntary (full) lazy": the current model is in parentheses. */
static int preempt_current(const char *line, char *out, size_t len)
{
	const char *open = strchr(line, '('), *close = open ? strchr(open, ')') : NULL;

	if (!close)
		return -1;
	snprintf(out, len, "%.*s", (int)(close - open - 1), open + 1);
	return 0;
}

static int debugfs_mountpoint(char *out, size_t len)
{
	FILE *m = setmntent("/proc/self/mounts", "re");
	struct mntent *e;
	int found = 0;

	while (m && !found && (e = getmntent(m))) {
		if (strcmp(e->mnt_type, "debugfs") == 0) {
			snprintf(out, len, "%s", e->mnt_dir);
			found = 1;
		}
	}
	if (m)
		endmntent(m);
	return found ? 0 : -1;
}

#define MOUNT_FLAGS (MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC)

/*
 * Under kernel lockdown, debugfs refuses the read and the kernel logs the
 * attempt: better not to try.  Unknown (no securityfs) counts as no.
 */
static int locked_down(void)
{
	char line[96];

	return read_line(SECURITYFS "/lockdown", line, sizeof(line)) == 0 &&
	       !strstr(line, "[none]");
}

/* In a child: a private mount namespace, debugfs read-only, one line. */
static _Noreturn void preempt_child(int fd)
{
	char line[160];

	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		_exit(1);
	mount("securityfs", SECURITYFS, "securityfs", MOUNT_FLAGS, NULL); /* for locked_down() */
	if (!locked_down() && mount("debugfs", DEBUGFS, "debugfs", MOUNT_FLAGS, NULL) == 0 &&
	    read_line(DEBUGFS "/sched/preempt", line, sizeof(line)) == 0 &&
	    write(fd, line, strlen(line)) < 0)
		_exit(1);
	_exit(0);
}

static int preempt_private_mount(char *buf, size_t len)
{
	int fd[2];
	ssize_t n = -1;
	pid_t pid;

	if (pipe2(fd, O_CLOEXEC) < 0)
		return -1;
	fflush(NULL);
	pid = fork();
	if (pid == 0)
		preempt_child(fd[1]);
	close(fd[1]);
	if (pid > 0) {
		n = read(fd[0], buf, len - 1);
		waitpid(pid, NULL, 0);
	}
	close(fd[0]);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

/* The current model from debugfs: mounted already, or mounted privately. */
static int preempt_from_debugfs(char *mode, size_t len)
{
	char dir[PATH_MAX], path[PATH_MAX + 16], line[160];

	if (debugfs_mountpoint(dir, sizeof(dir)) == 0) {
		snprintf(path, sizeof(path), "%s/sched/preempt", dir);
		if (locked_down())
			return -1;
		if (read_line(path, line, sizeof(line)) < 0)
			return -1;
	} else if (geteuid() != 0 || preempt_private_mount(line, sizeof(line)) < 0) {
		return -1;
	}
	return preempt_current(line, mode, len);
}

/* The kernel logs "Dynamic Preempt: MODE" at boot and at every change. */
static int preempt_from_klog(char *mode, size_t len)
{
	static const char tag[] = "Dynamic Preempt: ";
	int size = klogctl(KLOG_SIZE_BUFFER, NULL, 0), n;
	char *buf, *hit = NULL;

	if (size <= 0 || !(buf = malloc((size_t)size + 1)))
		return -1;
	n = klogctl(KLOG_READ_ALL, buf, size);
	buf[n > 0 ? n : 0] = '\0';
	for (char *p = buf; (p = strstr(p, tag)); p++)
		hit = p + sizeof(tag) - 1;
	if (hit)
		snprintf(mode, len, "%.*s", (int)strcspn(hit, "\n"), hit);
	free(buf);
	return hit ? 0 : -1;
}

static void set_preempt(struct facts *f, const char *mode, const char *source)
{
	f->preempt_weak = strcmp(mode, "none") == 0 || strcmp(mode, "voluntary") == 0;
	snprintf(f->preempt, sizeof(f->preempt), "%s (%s%s)", mode,
		 f->preempt_dynamic ? "PREEMPT_DYNAMIC, " : "", source);
}

/* Most exact source first; uname -v says only what the kernel was built as. */
static void gather_preempt(struct facts *f)
{
	const char *v = f->uts.version;
	char mode[64], rt[8];

	f->preempt_dynamic = strstr(v, "PREEMPT_DYNAMIC") != NULL;
	if (read_line("/sys/kernel/realtime", rt, sizeof(rt)) == 0 && strcmp(rt, "1") == 0)
		set_preempt(f, "realtime", "PREEMPT_RT");
	else if (preempt_from_debugfs(mode, sizeof(mode)) == 0)
		set_preempt(f, mode, "read from debugfs");
	else if (f->preempt_dynamic && boot_param("preempt", mode, sizeof(mode)))
		set_preempt(f, mode, "set at boot with preempt=");
	else if (f->preempt_dynamic && preempt_from_klog(mode, sizeof(mode)) == 0)
		set_preempt(f, mode, "from the kernel log");
	else if (strstr(v, "PREEMPT_RT") || strstr(v, "PREEMPT RT"))
		set_preempt(f, "realtime", "PREEMPT_RT, uname -v");
	else if ((f->preempt_unknown = f->preempt_dynamic))
		snprintf(f->preempt, sizeof(f->preempt),
			 "unknown (PREEMPT_DYNAMIC; root can read it)");
	else if (strstr(v, "PREEMPT "))
		set_preempt(f, "full", "PREEMPT, uname -v");
	else
		set_preempt(f, "none", "or voluntary: uname -v names no PREEMPT");
}

/* Clocksources that clock_gettime() reads in user space, through the vDSO. */
static int vdso_clock(const char *name)
{
	return one_of("tsc kvm-clock hyperv_clocksource_tsc_page arch_sys_counter timebase "
		      "riscv_clocksource",
		      name, strlen(name));
}

static void gather_kernel(struct facts *f)
{
	uname(&f->uts);
	gather_preempt(f);
	if (read_long("/proc/sys/kernel/sched_rt_runtime_us", &f->rt_runtime) < 0)
		f->rt_runtime = -2; /* unknown */
	if (read_long("/proc/sys/kernel/sched_rt_period_us", &f->rt_period) < 0)
		f->rt_period = 0;
	if (read_line("/sys/devices/system/clocksource/clocksource0/current_clocksource", f->clock,
		      sizeof(f->clock)) < 0)
		snprintf(f->clock, sizeof(f->clock), "unknown");
	f->clock_vdso = vdso_clock(f->clock);
	if (read_long("/proc/sys/kernel/timer_migration", &f->timer_migration) < 0)
		f->timer_migration = -1;
}

static int try_fifo(void)
{
	struct sched_param sp = {.sched_priority = sched_get_priority_min(SCHED_FIFO)};

	return sched_setscheduler(0, SCHED_FIFO, &sp) == 0 ? 0 : errno;
}

static int try_mlockall(void)
{
	return mlockall(MCL_CURRENT | MCL_FUTURE) == 0 ? 0 : errno;
}

/* fn() in a child that exits at once: this process keeps its own state. */
static int try_in_child(int (*fn)(void))
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return errno;
	if (pid == 0)
		_exit(fn() & 0xff);
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR)
			return ECHILD;
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : ECHILD;
}

/* The backstop's kernel feature: Syscall User Dispatch on, then off (prctl 59). */
static int try_sud(void)
{
	static char selector; /* ALLOW: nothing traps while it is on */
	if (prctl(59 /* PR_SET_SYSCALL_USER_DISPATCH */, 1, 0UL, 0UL, &selector) != 0)
		return errno;
	prctl(59, 0, 0UL, 0UL, 0UL);
	return 0;
}

static int has_cap(unsigned long long eff, int bit)
{
	return (int)((eff >> bit) & 1);
}

static void gather_limits(struct facts *f)
{
	char capeff[32];
	unsigned long long eff = 0;

	getrlimit(RLIMIT_RTPRIO, &f->rtprio);
	getrlimit(RLIMIT_MEMLOCK, &f->memlock);
	if (proc_field("/proc/self/status", "CapEff", capeff, sizeof(capeff)) == 0)
		eff = strtoull(capeff, NULL, 16);
	f->cap_nice = has_cap(eff, CAPBIT_SYS_NICE);
	f->cap_lock = has_cap(eff, CAPBIT_IPC_LOCK);
	f->fifo_err = try_in_child(try_fifo);
	f->sud_err = try_in_child(try_sud);
	f->mlock_err = try_in_child(try_mlockall);
	f->lib_ok = library_find(&f->lib, f->lib_err, sizeof(f->lib_err)) == 0;
}

/* ---- printing ----------------------------------------------------------- */

static void section(const char *title)
{
	printf("\n%s\n", title);
}

static void row(const char *label, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void row(const char *label, const char *fmt, ...)
{
	va_list ap;

	printf("  %-*s", LABEL_WIDTH - 1, label);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static const char *list(const cpu_set_t *set, char buf[LIST_MAX])
{
	rto_cpulist_format(set, buf, LIST_MAX);
	return buf;
}

/* smt/control's words, for people. */
static const char *smt_text(const char *control)
{
	static const char *const words[][2] = {
		{"notsupported", "not supported"},
		{"notimplemented", "not implemented"},
		{"forceoff", "forced off"},
	};

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		if (strcmp(control, words[i][0]) == 0)
			return words[i][1];
	}
	return control;
}

static void print_cpus(const struct facts *f)
{
	char a[LIST_MAX], b[LIST_MAX];

	section("CPUs");
	row("model", "%s", f->model);
	row("count", "%ld configured, online %s", f->configured, list(&f->online, a));
	if (!CPU_EQUAL(&f->allowed, &f->online))
		row("usable here", "%s (this process's affinity)", list(&f->allowed, a));
	row("isolated", "%s", list(&f->isolated, a));
	row("nohz_full", "%s", f->has_nohz ? list(&f->nohz, a) : "(not built into this kernel)");
	row("boot parameters", "%s", f->boot[0] ? f->boot : "(none that matter for realtime)");
	row("SMT", "%s%s", smt_text(f->smt), f->smt_active ? ", active" : "");
	row("governor", "%s", f->governor);
	row("idle driver", "%s", f->idle);
	if (f->steal[0])
		row("host's share", "%s since boot (steal: a virtual machine)", f->steal);
	if (f->helper_given)
		row("helper CPUs", "%s (as given)", list(&f->helpers, a));
	else if (f->rt_given)
		row("helper CPUs", "%s (online, minus isolated, minus rt_cpus %s%s)",
		    list(&f->helpers, a), list(&f->rt, b),
		    f->helpers_shared ? "; none left, so shared" : "");
	else
		row("helper CPUs", "%s (online, minus isolated%s)", list(&f->helpers, a),
		    f->helpers_shared ? "; none left, so shared" : "");
}

static void print_kernel(const struct facts *f)
{
	section("Kernel");
	row("release", "%s %s", f->uts.release, f->uts.machine);
	row("build", "%s", f->uts.version);
	row("preemption", "%s", f->preempt);
	if (f->rt_runtime == -1)
		row("RT throttling", "off (sched_rt_runtime_us = -1)");
	else if (f->rt_runtime >= 0 && f->rt_period > 0)
		row("RT throttling", "on: realtime threads may use %ld of every %ld us",
		    f->rt_runtime, f->rt_period);
	else
		row("RT throttling", "unknown");
	/* The library's answer to it (libsrc/core/pollcap.c), whatever helper_wake= says. */
	if (f->rt_runtime >= 0 && f->rt_period > 0)
		row("helper polling",
		    "at SCHED_FIFO for at most %ld us of every %ld us, then at SCHED_OTHER: "
		    "never throttled",
		    f->rt_runtime / 20, f->rt_period / 10);
	else if (f->rt_runtime == -1)
		row("helper polling", "at SCHED_FIFO without a cap (no throttling to avoid)");
	row("clocksource", "%s (%s)", f->clock,
	    f->clock_vdso ? "clock_gettime() stays in user space, vDSO"
			  : "clock_gettime() is a system call");
	if (f->timer_migration >= 0)
		row("timer_migration", "%ld (%s)", f->timer_migration,
		    f->timer_migration ? "timers may move off the CPU that armed them"
				       : "timers stay where they were armed");
	else
		row("timer_migration", "not available");
}

static void limit_text(rlim_t v, int bytes, char *buf, size_t len)
{
	if (v == RLIM_INFINITY)
		snprintf(buf, len, "unlimited");
	else if (bytes && v >= 1 << 20 && v % (1 << 20) == 0)
		snprintf(buf, len, "%llu MiB", (unsigned long long)v >> 20);
	else if (bytes)
		snprintf(buf, len, "%llu KiB", (unsigned long long)v >> 10);
	else
		snprintf(buf, len, "%llu", (unsigned long long)v);
}

static const char *works(int err, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s", err ? "fails: " : "works", err ? strerror(err) : "");
	return buf;
}

static void print_limits(const struct facts *f)
{
	char v[32], w[96];

	section("Limits");
	limit_text(f->rtprio.rlim_cur, 0, v, sizeof(v));
	row("RLIMIT_RTPRIO", "%s%s", v,
	    f->cap_nice ? " (CAP_SYS_NICE held: priorities are not limited)" : "");
	limit_text(f->memlock.rlim_cur, 1, v, sizeof(v));
	row("RLIMIT_MEMLOCK", "%s%s", v,
	    f->cap_lock ? " (CAP_IPC_LOCK held: locking is not limited)" : "");
	row("SCHED_FIFO", "%s%s", works(f->fifo_err, w, sizeof(w)),
	    f->fifo_err ? "" : " (a child process switched to it)");
	row("backstop", "%s",
	    f->sud_err == 0 ? "available: Syscall User Dispatch (backstop=on, the default)"
	    : f->sud_err == EINVAL
		    ? "not available: this kernel has no Syscall User Dispatch (5.11+); "
		      "only wrapped calls are decided"
		    : "not available: the kernel refused Syscall User Dispatch; only wrapped "
		      "calls are decided");
	row("mlockall", "%s", works(f->mlock_err, w, sizeof(w)));
	section("Library");
	if (f->lib_ok)
		row("librtoffload", "%s (%s)", f->lib.path, f->lib.how);
	else
		row("librtoffload", "not found: %s", f->lib_err);
}

/* ---- advice ------------------------------------------------------------- */

/* One piece of advice, words wrapped under a "  - " bullet. */
static void advise(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void advise(const char *fmt, ...)
{
	char text[1024];
	size_t col = 4;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	fputs("  -", stdout);
	for (const char *w = text + strspn(text, " "); *w; w += strspn(w, " ")) {
		size_t n = strcspn(w, " ");

		if (col > 4 && col + 1 + n > TEXT_WIDTH) {
			fputs("\n   ", stdout);
			col = 4;
		} else {
			col++;
		}
		printf(" %.*s", (int)n, w);
		col += n;
		w += n;
	}
	putchar('\n');
}

/* A command to type: never wrapped. */
static void command(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void command(const char *fmt, ...)
{
	va_list ap;

	fputs("        ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static int subset(const cpu_set_t *a, const cpu_set_t *b)
{
	cpu_set_t both;

	CPU_AND(&both, a, b);
	return CPU_EQUAL(&both, a);
}

/*
 * The CPUs to advise for realtime threads: the ones given, else the
 * isolated ones, else the last CPU (CPU 0 takes most housekeeping work).
 */
static void propose(const struct facts *f, cpu_set_t *rt, cpu_set_t *helpers)
{
	int last = -1;

	for (int c = 0; c < CPU_SETSIZE; c++)
		last = CPU_ISSET(c, &f->online) ? c : last;
	if (f->rt_given) {
		*rt = f->rt;
	} else if (CPU_COUNT(&f->isolated) > 0) {
		*rt = f->isolated;
	} else {
		CPU_ZERO(rt);
		if (CPU_COUNT(&f->online) > 1)
			CPU_SET(last, rt);
	}
	if (f->helper_given)
		*helpers = f->helpers;
	else
		cpus_helpers(CPU_COUNT(rt) ? rt : NULL, helpers);
}

static void advise_isolation(const struct facts *f, const cpu_set_t *rt)
{
	char r[LIST_MAX], h[LIST_MAX];
	cpu_set_t house;

	CPU_XOR(&house, &f->online, rt);
	CPU_AND(&house, &house, &f->online);
	list(rt, r);
	list(&house, h);
	if (!subset(rt, &f->isolated)) {
		advise("Keep the scheduler's other tasks%s, RCU callbacks and device "
		       "interrupts off the realtime CPU%s %s: add to the kernel command line",
		       f->has_nohz ? ", the timer tick" : "", CPU_COUNT(rt) > 1 ? "s" : "", r);
		if (f->has_nohz)
			command("isolcpus=%s nohz_full=%s rcu_nocbs=%s irqaffinity=%s", r, r, r, h);
		else
			command("isolcpus=%s rcu_nocbs=%s irqaffinity=%s", r, r, h);
	} else if (f->has_nohz && !subset(rt, &f->nohz)) {
		advise("CPU %s is isolated but still takes the timer tick: add nohz_full=%s "
		       "rcu_nocbs=%s to the kernel command line.",
		       r, r, r);
	}
	if (!f->has_nohz)
		advise("This kernel has no nohz_full (CONFIG_NO_HZ_FULL): a realtime CPU takes the "
		       "timer tick even when one thread runs there.");
}

static const char *rt_package(const struct facts *f)
{
	if (strcmp(f->uts.machine, "x86_64") == 0)
		return "linux-image-rt-amd64";
	if (strcmp(f->uts.machine, "aarch64") == 0)
		return "linux-image-rt-arm64";
	return "linux-image-rt-*";
}

static void advise_kernel(const struct facts *f)
{
	if (f->preempt_weak && f->preempt_dynamic)
		advise("The kernel is not preemptible (model none or voluntary): a woken realtime "
		       "thread waits until the running kernel code reaches a preemption point, "
		       "which can take milliseconds. Boot with preempt=full, or run a PREEMPT_RT "
		       "kernel (Debian: %s).",
		       rt_package(f));
	else if (f->preempt_weak)
		advise("The kernel is not preemptible: a woken realtime thread waits until the "
		       "running kernel code reaches a preemption point, which can take "
		       "milliseconds. Run a PREEMPT_RT kernel (Debian: %s).",
		       rt_package(f));
	if (f->preempt_unknown)
		advise("The preemption model is not readable without root: run rtoffload check as "
		       "root, which reads it from debugfs or the kernel log.");
	if (f->rt_runtime >= 0)
		advise("RT throttling is on: a SCHED_FIFO thread that never sleeps is stopped for "
		       "%ld ms of every %ld ms; a loop that sleeps each period never meets it. "
		       "sysctl kernel.sched_rt_runtime_us=-1 turns it off, but then a runaway "
		       "realtime thread hangs its CPU: do that only with the realtime CPUs "
		       "isolated and a watchdog on the others.",
		       (f->rt_period - f->rt_runtime) / 1000, f->rt_period / 1000);
	else if (f->rt_runtime == -1)
		advise("RT throttling is off: a runaway SCHED_FIFO thread will hang its CPU. Keep "
		       "realtime threads off the housekeeping CPUs and run a watchdog.");
	if (!f->clock_vdso)
		advise("The clocksource %s is not read through the vDSO: every clock_gettime() is "
		       "a system call, also the library's while a realtime thread waits for its "
		       "offloaded call. Prefer tsc where the hardware has a stable one (see "
		       "available_clocksource).",
		       f->clock);
}

static void advise_host(const struct facts *f)
{
	if (f->steal[0])
		advise("This is a virtual machine whose host has taken up to %.2f%% of a CPU since "
		       "boot. While the host does not run a virtual CPU, nothing on it runs: a "
		       "realtime thread wakes late and an offloaded call waits for its helper "
		       "(a stall line then says what the host took). Pin the virtual CPUs to "
		       "dedicated host CPUs, or measure on bare metal.",
		       f->steal_most);
}

static void advise_limits(const struct facts *f)
{
	char v[32];

	if (f->fifo_err == EPERM)
		advise("SCHED_FIFO is refused here: run as root, grant CAP_SYS_NICE, or raise "
		       "RLIMIT_RTPRIO (in /etc/security/limits.conf: @realtime - rtprio 98). In a "
		       "container, the runtime must allow it; with RT group scheduling, the "
		       "cgroup needs cpu.rt_runtime_us.");
	else if (f->fifo_err)
		advise("SCHED_FIFO fails here: %s.", strerror(f->fifo_err));
	limit_text(f->memlock.rlim_cur, 1, v, sizeof(v));
	if (!f->cap_lock && f->memlock.rlim_cur != RLIM_INFINITY)
		advise("RLIMIT_MEMLOCK is %s without CAP_IPC_LOCK: mlockall() fails once the "
		       "program is larger (in /etc/security/limits.conf: @realtime - memlock "
		       "unlimited).",
		       v);
	else if (f->mlock_err)
		advise("mlockall() fails here: %s.", strerror(f->mlock_err));
	if (!f->lib_ok)
		advise("librtoffload is missing: %s.", f->lib_err);
}

static void advise_cpus(const struct facts *f, const cpu_set_t *rt)
{
	if (f->governor_slow)
		advise("A CPU runs a governor other than performance: it clocks down when idle and "
		       "a realtime thread pays for the ramp-up at each wake-up. Use performance "
		       "on the realtime CPUs (cpupower -c LIST frequency-set -g performance).");
	if (f->smt_active)
		advise("SMT is active: a realtime CPU shares its core with a sibling. Isolate both "
		       "siblings (cpuN/topology/thread_siblings_list) or boot with nosmt.");
	if (CPU_COUNT(&f->online) < 2)
		advise("Only one CPU is online: the helpers share it with the realtime threads, so "
		       "offloading moves a blocking call to another thread but not off the CPU.");
	else
		advise_isolation(f, rt);
}

static void advise_run(const struct facts *f, const cpu_set_t *rt, const cpu_set_t *helpers)
{
	char r[LIST_MAX], h[LIST_MAX];

	if (CPU_COUNT(&f->online) < 2 || CPU_COUNT(rt) == 0) {
		advise("Run the program under the library:");
		command("rtoffload -- PROGRAM [ARGS...]");
		return;
	}
	list(rt, r);
	list(helpers, h);
	advise("Run the program with its realtime threads on CPU %s and the helpers on %s; with "
	       "the default --mark rt, the threads it switches to SCHED_FIFO or SCHED_RR are "
	       "marked:",
	       r, h);
	command("rtoffload --rt-cpus %s --helper-cpus %s -- PROGRAM [ARGS...]", r, h);
	advise("A program that sets neither its affinity nor its priority can be started "
	       "pinned and SCHED_FIFO:");
	command("taskset -c %s chrt -f 80 rtoffload --rt-cpus %s --helper-cpus %s -- PROGRAM", r, r,
		h);
}

static void print_advice(const struct facts *f)
{
	cpu_set_t rt, helpers;

	propose(f, &rt, &helpers);
	section("Recommendations");
	advise_cpus(f, &rt);
	advise_kernel(f);
	advise_host(f);
	advise_limits(f);
	advise_run(f, &rt, &helpers);
}

int check_run(const struct launch *l)
{
	static struct facts f; /* large; and zeroed */

	opts_text = l->options ? l->options : getenv("RTOFFLOAD_OPTIONS");
	gather_cpus(&f, l);
	gather_kernel(&f);
	gather_limits(&f);
	printf("rtoffload check: this machine for realtime use\n");
	print_cpus(&f);
	print_kernel(&f);
	print_limits(&f);
	print_advice(&f);
	int status = 0;
	if (opts_text) {
		struct config_machine m = {
			.online = f.online,
			.isolated = f.isolated,
			.nohz = f.nohz,
			.has_nohz = f.has_nohz,
			.rt_runtime = f.rt_runtime,
			.rt_period = f.rt_period,
			.preempt = f.preempt,
			.preempt_weak = f.preempt_weak,
			.lib = f.lib.path,
			.lib_ok = f.lib_ok,
		};
		status = config_report(opts_text, l->options ? "--options" : "RTOFFLOAD_OPTIONS",
				       &m);
	}
	return fflush(stdout) == 0 ? status : 1;
}
