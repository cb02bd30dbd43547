/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rtoffload check --options "..." (or with RTOFFLOAD_OPTIONS set): what a
 * configuration does on this machine, and whether the library would
 * refuse it.  The verdict is the library's own: the options are parsed
 * and checked with its code (options.c, validate.c, compiled in), then
 * the library itself is loaded into true(1) with them, which also checks
 * what only it knows (policy= against its call table, policy_file=).
 */
#include "launcher.h"
#include "validate.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define LIST_MAX 512

static void row(const char *label, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void row(const char *label, const char *fmt, ...)
{
	va_list ap;

	printf("  %-17s", label);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static const char *list(const cpu_set_t *set, char buf[LIST_MAX])
{
	if (CPU_COUNT(set) == 0)
		return strcpy(buf, "(none)");
	rto_cpulist_format(set, buf, LIST_MAX);
	return buf;
}

static void print_each_option(const char *text)
{
	int any = 0;

	for (const char *s = text, *end; *s; s = *end ? end + 1 : end) {
		end = rto_options_segment_end(s);
		if (end == s)
			continue;
		size_t n = (size_t)(end - s), kn = strcspn(s, "=");
		const char *does = rto_options_does(s, kn < n ? kn : n);

		printf("    %.*s\n        %s\n", (int)n, s, does ? does : "unknown key");
		any = 1;
	}
	if (!any)
		printf("    (none: every option at its default)\n");
}

static void print_placement(const struct rto_options *o, const struct config_machine *m)
{
	char a[LIST_MAX], b[LIST_MAX];
	cpu_set_t helpers, both;

	if (o->helper_cpus_set) {
		helpers = o->helper_cpus;
		row("helpers run on", "CPU %s (helper_cpus=, %u worker%s)", list(&helpers, a),
		    o->workers, o->workers == 1 ? "" : "s");
	} else {
		int shared = cpus_helpers(o->rt_cpus_set ? &o->rt_cpus : NULL, &helpers);
		row("helpers run on", "CPU %s (online, minus isolated%s%s; %u worker%s)",
		    list(&helpers, a), o->rt_cpus_set ? ", minus rt_cpus" : "",
		    shared ? ": nothing left, so shared" : "", o->workers,
		    o->workers == 1 ? "" : "s");
		row("", "and minus the CPUs a marked thread is pinned to, when it is");
	}
	if (!o->rt_cpus_set) {
		row("realtime CPUs", "not reserved (rt_cpus= unset): those a marked thread is "
				     "pinned to");
		return;
	}
	row("realtime CPUs", "%s (rt_cpus=)", list(&o->rt_cpus, a));
	CPU_AND(&both, &o->rt_cpus, &m->isolated);
	if (CPU_EQUAL(&both, &o->rt_cpus))
		row("isolcpus", "every realtime CPU is isolated: good");
	else
		row("isolcpus",
		    "isolated %s; realtime CPUs not isolated: the scheduler puts other "
		    "tasks there (boot with isolcpus=%s)",
		    list(&m->isolated, b), list(&o->rt_cpus, a));
	if (!m->has_nohz) {
		row("nohz_full", "not built into this kernel: the tick interrupts realtime CPUs");
	} else {
		CPU_AND(&both, &o->rt_cpus, &m->nohz);
		row("nohz_full", "%s",
		    CPU_EQUAL(&both, &o->rt_cpus)
			    ? "every realtime CPU is tickless when one task runs"
			    : "the realtime CPUs keep the tick (boot with nohz_full=)");
	}
}

static void print_kernel_fit(const struct rto_options *o, const struct config_machine *m)
{
	if (m->rt_runtime == -1)
		row("RT throttling", "off: a realtime thread may run without a pause");
	else if (m->rt_runtime >= 0 && m->rt_period > 0)
		row("RT throttling",
		    "on (%ld of every %ld us): a realtime thread busy longer is stopped for the "
		    "rest of the period%s",
		    m->rt_runtime, m->rt_period,
		    o->helper_prio_mode != RTO_PRIO_NONE ? ", helpers at realtime priority too"
							 : "");
	else
		row("RT throttling", "unknown");
	row("preemption", "%s%s", m->preempt,
	    m->preempt_weak ? ": a woken realtime thread or helper waits until the running "
			      "task reaches a preemption point"
			    : "");
}

/* The library loaded into true(1) with the options: its exit status and first line. */
static int library_verdict(const char *lib, const char *options, char *line, size_t len)
{
	int fd[2], status = -1;
	char preload[2 * PATH_MAX + 16], opts[8192];

	line[0] = '\0';
	if (pipe2(fd, O_CLOEXEC) < 0)
		return -1;
	char *composed = preload_compose(lib, getenv("LD_PRELOAD")); /* a sanitizer's stays first */
	snprintf(preload, sizeof(preload), "LD_PRELOAD=%s", composed ? composed : lib);
	free(composed);
	snprintf(opts, sizeof(opts), "RTOFFLOAD_OPTIONS=%s", options);
	pid_t pid = fork();
	if (pid == 0) {
		char *argv[] = {"true", NULL};
		char *env[] = {preload, opts, "PATH=/usr/bin:/bin", NULL};
		int devnull = open("/dev/null", O_RDWR);
		dup2(devnull, 0);
		dup2(devnull, 1);
		dup2(fd[1], 2);
		execve("/bin/true", argv, env);
		execve("/usr/bin/true", argv, env);
		_exit(127);
	}
	close(fd[1]);
	ssize_t n = pid > 0 ? read(fd[0], line, len - 1) : -1;
	line[n > 0 ? n : 0] = '\0';
	line[strcspn(line, "\n")] = '\0';
	close(fd[0]);
	if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status))
		return WEXITSTATUS(status);
	return -1;
}

int config_report(const char *text, const char *from, const struct config_machine *m)
{
	static struct rto_options o;
	char err[1024] = "", lib_line[1024];
	int refused, lib_loaded = m->lib_ok;

	printf("\nConfiguration (%s)\n", from);
	printf("  %s\n", text[0] ? text : "(empty)");
	rto_options_defaults(&o);
	refused = rto_options_parse(text, &o, err, sizeof(err)) < 0 ||
		  ((o.mark & RTO_MARK_CPUS) && !o.rt_cpus_set &&
		   snprintf(err, sizeof(err), "RTOFFLOAD_OPTIONS: mark=cpus needs rt_cpus=LIST")) ||
		  rto_validate_cpus(&o, &m->online, err, sizeof(err)) < 0;
	if (!refused && o.mlock) {
		struct rto_memlock ml; /* this process's size: a lower bound of any program's */
		rto_memlock_self(&ml);
		refused = rto_validate_mlock(&ml, err, sizeof(err)) < 0;
		if (!refused && !ml.cap_ipc_lock && ml.limit_bytes != UINT64_MAX)
			row("mlock",
			    "the program's whole address space must stay under "
			    "RLIMIT_MEMLOCK (%llu KiB), or it is refused at start",
			    (unsigned long long)(ml.limit_bytes / 1024));
	}
	if (!refused) {
		print_placement(&o, m);
		print_kernel_fit(&o, m);
	}
	printf("  options that are not at their default:\n");
	print_each_option(text);
	/* The library's own word, when it is there: it knows the call table. */
	if (!refused && m->lib_ok) {
		int st = library_verdict(m->lib, text, lib_line, sizeof(lib_line));
		if (st == RTO_EXIT_CONFIG) {
			refused = 1;
			snprintf(err, sizeof(err), "%s", lib_line);
		} else if (st != 0) {
			row("library",
			    "could not be loaded to check (status %d: %s): the verdict "
			    "is the launcher's checks alone",
			    st, lib_line);
			lib_loaded = 0;
		}
	}
	if (refused) {
		row("verdict",
		    "REFUSED: the program would stop before main with exit %d:", RTO_EXIT_CONFIG);
		printf("    %s\n", err);
		return RTO_EXIT_CONFIG;
	}
	row("verdict", "accepted%s", lib_loaded ? " (the library loaded with it)" : "");
	return 0;
}
