/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench-machine: what the numbers were measured on.  Latency figures mean
 * nothing without the CPU, the kernel's preemption model, whether a
 * hypervisor sits underneath, which CPUs are isolated and which
 * speculation mitigations make every syscall dearer; this writes all of
 * that as JSON (--out) and prints a summary of three lines.  The third is
 * measured: how late the housekeeping CPU wakes from a timed sleep after
 * a millisecond's idle, and in steps of 200 us (helper_nap_us: why the
 * helpers nap in steps, docs/periodic.md rule 14).
 */
#include "harness.h"

#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

/* First line of a file, newline removed; "" if unreadable. */
static char *read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");

	buf[0] = 0;
	if (f) {
		if (!fgets(buf, (int)len, f))
			buf[0] = 0;
		fclose(f);
	}
	buf[strcspn(buf, "\n")] = 0;
	return buf;
}

/* The value of "key<sep>value" in a text file (cpuinfo, meminfo), or "". */
static char *find_field(const char *path, const char *key, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	char line[1024];

	buf[0] = 0;
	while (f && fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, strlen(key)) != 0)
			continue;
		char *v = strchr(line, ':');
		if (!v)
			continue;
		v += 1 + strspn(v + 1, " \t");
		snprintf(buf, len, "%s", v);
		buf[strcspn(buf, "\n")] = 0;
		break;
	}
	if (f)
		fclose(f);
	return buf;
}

/* First line of a command's output ("" if it fails), for tools without an API. */
static char *command_line(const char *cmd, char *buf, size_t len)
{
	FILE *p = popen(cmd, "re");

	buf[0] = 0;
	if (p) {
		if (!fgets(buf, (int)len, p))
			buf[0] = 0;
		pclose(p);
	}
	buf[strcspn(buf, "\n")] = 0;
	return buf;
}

/* The hypervisor's CPUID signature (leaf 0x40000000), by its usual name. */
static const char *hypervisor_vendor(void)
{
	static char sig[13];
	static const char *const names[][2] = {
		{"KVMKVMKVM", "KVM"},		{"Microsoft Hv", "Hyper-V"},
		{"VMwareVMware", "VMware"},	{"XenVMMXenVMM", "Xen"},
		{"TCGTCGTCGTCG", "QEMU (TCG)"}, {"bhyve bhyve ", "bhyve"},
		{"ACRNACRNACRN", "ACRN"},	{"QNXQVMBSQG", "QNX"},
	};

#if defined(__x86_64__) || defined(__i386__)
	unsigned a, b, c, d;
	__cpuid(0x40000000, a, b, c, d);
	memcpy(sig, &b, 4);
	memcpy(sig + 4, &c, 4);
	memcpy(sig + 8, &d, 4);
#endif
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(sig, names[i][0]) == 0)
			return names[i][1];
	return sig;
}

static void virtualization(struct h_json *j)
{
	char flags[4096], buf[256];

	find_field("/proc/cpuinfo", "flags", flags, sizeof(flags));
	int hv = strstr(flags, " hypervisor") != NULL;
	hj_obj(j, "virtualization");
	hj_bool(j, "vm", hv);
	hj_str(j, "hypervisor", hv ? hypervisor_vendor() : "");
	hj_str(j, "dmi_vendor", read_line("/sys/class/dmi/id/sys_vendor", buf, sizeof(buf)));
	hj_str(j, "dmi_product", read_line("/sys/class/dmi/id/product_name", buf, sizeof(buf)));
	hj_str(j, "systemd_detect_virt",
	       command_line("systemd-detect-virt 2>/dev/null", buf, sizeof(buf)));
	hj_end(j);
}

/* "CONFIG_X=value" from the running kernel's config, or "". */
static char *kconfig(const char *name, char *buf, size_t len)
{
	char cmd[512];
	struct utsname u;

	uname(&u);
	snprintf(cmd, sizeof(cmd),
		 "{ zcat /proc/config.gz || cat /boot/config-%s; } 2>/dev/null | grep '^%s='",
		 u.release, name);
	command_line(cmd, buf, len);
	char *eq = strchr(buf, '=');
	if (eq)
		memmove(buf, eq + 1, strlen(eq));
	return buf;
}

/* The word in (parentheses) of debugfs' "none (voluntary) full". */
static int active_word(const char *line, char *out, size_t len)
{
	const char *a = strchr(line, '('), *b = a ? strchr(a, ')') : NULL;

	if (!b)
		return -1;
	snprintf(out, len, "%.*s", (int)(b - a - 1), a + 1);
	return 0;
}

/* A kernel command-line parameter's value ("" if absent). */
static char *cmdline_param(const char *name, char *buf, size_t len)
{
	char line[4096], key[64];

	read_line("/proc/cmdline", line, sizeof(line));
	snprintf(key, sizeof(key), "%s=", name);
	buf[0] = 0;
	for (char *t = strtok(line, " "); t; t = strtok(NULL, " ")) {
		if (strncmp(t, key, strlen(key)) == 0)
			snprintf(buf, len, "%s", t + strlen(key));
	}
	return buf;
}

/*
 * The preemption model in force.  With PREEMPT_DYNAMIC only debugfs knows
 * for sure; if it is unreadable the boot parameter, then the build-time
 * default, decide (and "source" says which).
 */
static void preemption(struct h_json *j, const char *version, char *model, size_t mlen)
{
	char line[256], src[32] = "";

	model[0] = 0;

	read_line("/sys/kernel/debug/sched/preempt", line, sizeof(line));
	if (active_word(line, model, mlen) == 0) {
		snprintf(src, sizeof(src), "debugfs");
	} else if (*cmdline_param("preempt", model, mlen)) {
		snprintf(src, sizeof(src), "cmdline");
	} else {
		static const char *const models[][2] = {
			{"CONFIG_PREEMPT_RT", "full (PREEMPT_RT)"},
			{"CONFIG_PREEMPT", "full"},
			{"CONFIG_PREEMPT_LAZY", "lazy"},
			{"CONFIG_PREEMPT_VOLUNTARY", "voluntary"},
			{"CONFIG_PREEMPT_NONE", "none"},
		};
		for (size_t i = 0; i < sizeof(models) / sizeof(models[0]) && !*model; i++)
			if (strcmp(kconfig(models[i][0], line, sizeof(line)), "y") == 0)
				snprintf(model, mlen, "%s", models[i][1]);
		snprintf(src, sizeof(src), *model ? "kernel config default" : "unknown");
	}
	hj_obj(j, "preemption");
	hj_str(j, "model", model);
	hj_str(j, "source", src);
	hj_bool(j, "dynamic", strstr(version, "PREEMPT_DYNAMIC") != NULL);
	hj_bool(j, "rt", strstr(version, "PREEMPT_RT") != NULL);
	hj_str(j, "hz", kconfig("CONFIG_HZ", line, sizeof(line)));
	hj_bool(j, "nohz_full_built",
		strcmp(kconfig("CONFIG_NO_HZ_FULL", line, sizeof(line)), "y") == 0);
	hj_end(j);
	if (*model && strcmp(src, "debugfs") != 0) /* for the summary: how sure we are */
		snprintf(model + strlen(model), mlen - strlen(model), " (%s%s)", src,
			 strstr(version, "PREEMPT_DYNAMIC") ? ", PREEMPT_DYNAMIC" : "");
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every /sys/.../vulnerabilities file, and how many are still vulnerable. */
static void mitigations(struct h_json *j, size_t *n_vulnerable, size_t *n_mitigated)
{
	const char *dir = "/sys/devices/system/cpu/vulnerabilities";
	DIR *d = opendir(dir);
	struct dirent *e;
	char *names[64], path[512], buf[256];
	size_t n = 0, vulnerable = 0, mitigated = 0;

	while (d && (e = readdir(d)) && n < 64)
		if (e->d_name[0] != '.')
			names[n++] = strdup(e->d_name);
	if (d)
		closedir(d);
	qsort(names, n, sizeof(names[0]), cmp_str);
	hj_obj(j, "mitigations");
	hj_str(j, "cmdline", cmdline_param("mitigations", buf, sizeof(buf)));
	hj_obj(j, "vulnerabilities");
	for (size_t i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		read_line(path, buf, sizeof(buf));
		vulnerable += strncmp(buf, "Vulnerable", 10) == 0;
		mitigated += strncmp(buf, "Mitigation", 10) == 0;
		hj_str(j, names[i], buf);
		free(names[i]);
	}
	hj_end(j);
	hj_u64(j, "vulnerable", vulnerable);
	hj_u64(j, "mitigated", mitigated);
	hj_end(j);
	*n_vulnerable = vulnerable;
	*n_mitigated = mitigated;
}

/* Can this process use SCHED_FIFO?  Tried on a throwaway thread. */
static void *try_fifo(void *p)
{
	*(int *)p = h_fifo(1) == 0;
	return NULL;
}

static void scheduling(struct h_json *j)
{
	char buf[256];
	pthread_t t;
	int fifo = 0;

	if (pthread_create(&t, NULL, try_fifo, &fifo) == 0)
		pthread_join(t, NULL);
	hj_obj(j, "scheduling");
	hj_bool(j, "sched_fifo_allowed", fifo);
	hj_str(j, "sched_rt_runtime_us",
	       read_line("/proc/sys/kernel/sched_rt_runtime_us", buf, sizeof(buf)));
	hj_str(j, "sched_rt_period_us",
	       read_line("/proc/sys/kernel/sched_rt_period_us", buf, sizeof(buf)));
	hj_str(j, "isolated", read_line("/sys/devices/system/cpu/isolated", buf, sizeof(buf)));
	hj_str(j, "nohz_full", read_line("/sys/devices/system/cpu/nohz_full", buf, sizeof(buf)));
	hj_str(j, "isolcpus_param", cmdline_param("isolcpus", buf, sizeof(buf)));
	hj_str(j, "clocksource",
	       read_line("/sys/devices/system/clocksource/clocksource0/current_clocksource", buf,
			 sizeof(buf)));
	hj_str(j, "cpuidle_driver",
	       read_line("/sys/devices/system/cpu/cpuidle/current_driver", buf, sizeof(buf)));
	hj_str(j, "cpufreq_governor",
	       read_line("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", buf,
			 sizeof(buf)));
	hj_end(j);
}

/*
 * How late a SCHED_FIFO thread on the housekeeping CPU wakes from
 * clock_nanosleep: the last sleep of each millisecond, which ends 50 us
 * before it (a helper's window), slept in one piece or in steps of
 * step_ns, then 20 us of polling.  The lateness of that last sleep, ns.
 */
#define WAKE_CYCLES 2000

struct wake_probe {
	uint64_t step_ns;
	struct h_summary s;
};

static void sleep_until(uint64_t t)
{
	struct timespec ts = {(time_t)(t / 1000000000u), (long)(t % 1000000000u)};

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0)
		;
}

static void *wake_probe_run(void *arg)
{
	struct wake_probe *w = arg;
	struct h_samples late;
	uint64_t t = h_now_ns() + 1000000;

	h_samples_init(&late, WAKE_CYCLES);
	for (int i = 0; i < WAKE_CYCLES; i++, t += 1000000) {
		uint64_t due = t - 50000;
		for (uint64_t s = h_now_ns() + w->step_ns; w->step_ns && s < due; s += w->step_ns)
			sleep_until(s);
		sleep_until(due);
		h_sample(&late, h_now_ns() - due);
		h_spin_until(h_ticks() + h_ticks_for_ns(20000));
	}
	h_summarize(late.v, late.n, &w->s);
	h_samples_free(&late);
	return NULL;
}

static void wake_lateness(struct h_json *j, struct wake_probe w[2])
{
	w[0].step_ns = 0;
	w[1].step_ns = 200000;
	hj_obj(j, "wake_late_ns");
	for (int i = 0; i < 2; i++) {
		pthread_t t;
		if (h_thread_start(&t, wake_probe_run, &w[i], h_opt.hk_cpu, 1) == 0)
			pthread_join(t, NULL);
		hj_summary(j, i ? "steps_200us" : "one_sleep", &w[i].s);
	}
	hj_end(j);
}

/* Two lines for the table: the hardware, then what the kernel does with it. */
static void summary(const char *model, long cpus, const struct utsname *u, const char *preempt,
		    size_t vulnerable, size_t mitigated)
{
	char flags[4096], isolated[256], nohz[256], mit[256], idle[64];

	find_field("/proc/cpuinfo", "flags", flags, sizeof(flags));
	int hv = strstr(flags, " hypervisor") != NULL;
	printf("machine: %s, %ld CPUs, Linux %s %s%s%s\n", model, cpus, u->release, u->machine,
	       hv ? ", VM on " : ", not a VM", hv ? hypervisor_vendor() : "");
	read_line("/sys/devices/system/cpu/isolated", isolated, sizeof(isolated));
	read_line("/sys/devices/system/cpu/nohz_full", nohz, sizeof(nohz));
	read_line("/sys/devices/system/cpu/cpuidle/current_driver", idle, sizeof(idle));
	cmdline_param("mitigations", mit, sizeof(mit));
	printf("kernel: preemption %s, isolated CPUs: %s, nohz_full: %s, cpuidle: %s, "
	       "mitigations: %s (%zu vulnerable, %zu mitigated)\n",
	       *preempt ? preempt : "unknown", *isolated ? isolated : "none",
	       *nohz && strcmp(nohz, "(null)") != 0 ? nohz : "none", *idle ? idle : "none",
	       *mit ? mit : "default", vulnerable, mitigated);
}

int main(int argc, char **argv)
{
	struct h_json j;
	struct utsname u;
	char model[256], mem[64], host[256], date[32], preempt[64];
	size_t vulnerable, mitigated;
	time_t now = time(NULL);

	h_init(argc, argv);
	if (!h_opt.out) {
		fprintf(stderr, "bench-machine: --out FILE is required\n");
		return 2;
	}
	uname(&u);
	gethostname(host, sizeof(host));
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	find_field("/proc/cpuinfo", "model name", model, sizeof(model));
	if (hj_open(&j, h_opt.out) != 0)
		return 1;
	hj_str(&j, "host", host);
	hj_str(&j, "date", date);
	hj_str(&j, "cpu_model", model);
	hj_u64(&j, "cpus_online", (uint64_t)sysconf(_SC_NPROCESSORS_ONLN));
	hj_str(&j, "memory", find_field("/proc/meminfo", "MemTotal", mem, sizeof(mem)));
	hj_str(&j, "kernel", u.release);
	hj_str(&j, "kernel_version", u.version);
	hj_str(&j, "arch", u.machine);
	hj_num(&j, "tsc_ghz", h_opt.tsc_ghz);
	hj_u64(&j, "timer_overhead_ns", h_timer_overhead_ns());
	hj_u64(&j, "timer_resolution_ns", h_timer_resolution_ns());
	preemption(&j, u.version, preempt, sizeof(preempt));
	virtualization(&j);
	scheduling(&j);
	mitigations(&j, &vulnerable, &mitigated);
	struct wake_probe wake[2];
	wake_lateness(&j, wake);
	hj_close(&j);
	summary(model, sysconf(_SC_NPROCESSORS_ONLN), &u, preempt, vulnerable, mitigated);
	char a[16], b[16], c[16], d[16];
	printf("wake-ups on CPU %d after 930 us idle: %s late at p99, %s at p99.9; "
	       "in 200 us steps: %s, %s\n",
	       h_opt.hk_cpu, h_fmt_pretty(a, wake[0].s.p99), h_fmt_pretty(b, wake[0].s.p999),
	       h_fmt_pretty(c, wake[1].s.p99), h_fmt_pretty(d, wake[1].s.p999));
	return 0;
}
