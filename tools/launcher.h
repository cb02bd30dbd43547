/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The rtoffload launcher: sets LD_PRELOAD and RTOFFLOAD_OPTIONS and execs a
 * program (main.c, preload.c), or reports how fit this machine is for
 * realtime use (check.c).  It never links librtoffload: it only names it.
 */
#ifndef RTO_LAUNCHER_H
#define RTO_LAUNCHER_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <limits.h>
#include <sched.h>
#include <stddef.h>

/* Exit statuses, as env(1), nice(1) and timeout(1) use them. */
#define STATUS_USAGE	2   /* a bad flag: the program does not run */
#define STATUS_LAUNCHER 125 /* rtoffload itself failed (no library) */
#define STATUS_NOEXEC	126 /* the program exists but cannot be run */
#define STATUS_NOTFOUND 127 /* no such program */

/* The library's bounds for the values the launcher checks (options.c). */
#define WORKERS_MAX   64
#define MARK_GLOB_MAX 63 /* mark=name:GLOB, rto_options.mark_name[64] */

/* What the flags asked for; NULL or 0 when a flag was not given. */
struct launch {
	const char *mark;	 /* --mark, validated */
	const char *rt_cpus;	 /* --rt-cpus, validated */
	const char *helper_cpus; /* --helper-cpus, validated */
	const char *mode;	 /* --mode offload|strict */
	const char *stats_file;	 /* --stats-file */
	const char *options;	 /* check --options: the configuration to explain */
	unsigned workers;	 /* --workers */
	int stats;		 /* --stats */
	int verbose;		 /* how many --verbose; verbosity= caps at 2 */
};

/* main.c: "rtoffload: <message>" on stderr. */
void warn_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
_Noreturn void fail(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- cpus.c: the helpers' CPUs ---- */

/*
 * CPU lists, the online CPUs and the option parser are the library's own
 * (rto_common: cpulist.h, options.h, validate.h), so a list the launcher
 * accepts is never refused later with exit 78 inside the program.
 */
#include "cpulist.h"
#include "options.h"
#include "validate.h"
/*
 * The helpers' CPUs as the library picks them when helper_cpus= is not
 * given: online, minus rt (may be NULL), minus isolated, each subtraction
 * skipped when it would leave nothing.  Returns how many were skipped.
 */
int cpus_helpers(const cpu_set_t *rt, cpu_set_t *out);

/* ---- preload.c: the library and the two variables ---- */

struct library {
	char path[PATH_MAX]; /* absolute */
	const char *how;     /* where it was found, for messages */
};

/* 0, or -1 with a one-line reason in err. */
int library_find(struct library *lib, char *err, size_t len);
/* LD_PRELOAD with lib first and once; malloc'd, NULL without memory. */
char *preload_compose(const char *lib, const char *old);
/* RTOFFLOAD_OPTIONS: old, then the keys of *l (mark=rt if no mark= at all); malloc'd. */
char *options_compose(const char *old, const struct launch *l);
/* The last value of key in an options string, unquoted: 1, or 0 if absent. */
int options_get(const char *opts, const char *key, char *val, size_t len);

/* ---- check.c ---- */

/* The `rtoffload check` report on stdout.  Returns the exit status. */
int check_run(const struct launch *l);

/* ---- check_config.c: `rtoffload check --options` ---- */

/* What check.c found out about this machine, for the configuration section. */
struct config_machine {
	cpu_set_t online, isolated, nohz;
	int has_nohz;
	long rt_runtime, rt_period; /* sched_rt_*_us; -2: unknown */
	const char *preempt;	    /* the model, as check prints it */
	int preempt_weak;	    /* none or voluntary */
	const char *lib;	    /* the library's path, if lib_ok */
	int lib_ok;
};

/*
 * The "Configuration" section for options text (from: where it came
 * from).  Returns 0, or 78 (EX_CONFIG) when the library would refuse it.
 */
int config_report(const char *text, const char *from, const struct config_machine *m);

#endif /* RTO_LAUNCHER_H */
