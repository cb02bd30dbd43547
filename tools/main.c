/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rtoffload: run a program with librtoffload preloaded, in the manner of
 * chrt(1) and taskset(1): flags, then the program and its arguments.
 *
 * Every flag is checked here, before the exec, by the library's own rules:
 * a bad value must be a usage error naming the flag (exit 2), not an exit
 * 78 from inside the program that names a key the user never typed.
 */
#include "launcher.h"
#include "live_read.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define USAGE_SHORT                                                                            \
	"Usage: rtoffload [OPTIONS] [--] PROGRAM [ARGS...] | rtoffload check; see 'rtoffload " \
	"--help'."

#define POLICIES "none, main, all, rt, cpus or name:GLOB"

/* A user's value as an error quotes it: cut, and kept on one line. */
#define SHOWN_MAX 64

enum {
	OPT_MARK = 256, /* above every short option, so optopt tells them apart */
	OPT_RT_CPUS,
	OPT_HELPER_CPUS,
	OPT_MODE,
	OPT_STATS,
	OPT_STATS_FILE,
	OPT_WORKERS,
	OPT_OPTIONS,
};

static const struct option longopts[] = {
	{"mark", required_argument, NULL, OPT_MARK},
	{"rt-cpus", required_argument, NULL, OPT_RT_CPUS},
	{"helper-cpus", required_argument, NULL, OPT_HELPER_CPUS},
	{"mode", required_argument, NULL, OPT_MODE},
	{"stats", no_argument, NULL, OPT_STATS},
	{"stats-file", required_argument, NULL, OPT_STATS_FILE},
	{"workers", required_argument, NULL, OPT_WORKERS},
	{"options", required_argument, NULL, OPT_OPTIONS},
	{"verbose", no_argument, NULL, 'v'},
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, 'V'},
	{NULL, 0, NULL, 0},
};

static const char help_text[] =
	"Usage: rtoffload [OPTIONS] [--] PROGRAM [ARGS...]\n"
	"       rtoffload [--rt-cpus LIST] [--helper-cpus LIST] check [--options OPTS]\n"
	"       rtoffload stat PID [--json]\n"
	"       rtoffload top PID [--interval SECONDS] [--iterations N]\n"
	"\n"
	"Run PROGRAM with librtoffload preloaded: the non-deterministic libc calls\n"
	"(write, fsync, fprintf, getaddrinfo, mmap...) of its realtime threads run on\n"
	"helper threads pinned to housekeeping CPUs.  The program is neither changed\n"
	"nor rebuilt: its threads are marked realtime by a policy.\n"
	"\n"
	"Options:\n"
	"  --mark POLICY       which threads are marked, one or several of, by commas:\n"
	"                        rt         threads running SCHED_FIFO or SCHED_RR\n"
	"                        cpus       threads whose affinity lies inside --rt-cpus\n"
	"                        name:GLOB  threads whose name matches GLOB\n"
	"                        main       the initial thread\n"
	"                        all        every thread\n"
	"                        none       none: the program calls the API itself\n"
	"                      default: mark= from RTOFFLOAD_OPTIONS, else --mark rt\n"
	"  --rt-cpus LIST      the CPUs reserved for realtime threads, like 2-3\n"
	"  --helper-cpus LIST  the CPUs of the helpers (default: the online CPUs,\n"
	"                      minus the isolated ones, minus --rt-cpus)\n"
	"  --mode MODE         offload (default), or strict: a marked thread's\n"
	"                      non-deterministic calls fail with EPERM, unexecuted\n"
	"  --workers N         helper threads, 1 to 64 (default 2)\n"
	"  --stats             print a table of the offloaded calls at exit\n"
	"  --stats-file PATH   write that table as JSON; %p in PATH becomes the pid\n"
	"  -v, --verbose       show what is set; the library then reports too\n"
	"                      (give it twice for more)\n"
	"  -h, --help          show this help\n"
	"  -V, --version       show the version\n"
	"\n"
	"  check               report this machine's fitness for realtime use and\n"
	"                      what to change (takes --rt-cpus and --helper-cpus);\n"
	"                      with --options OPTS (or RTOFFLOAD_OPTIONS set), also\n"
	"                      what that configuration does here, and exit 78 when\n"
	"                      the library would refuse it\n"
	"  stat PID            one copy of a running process's live view: per\n"
	"                      function and per marked thread, offloaded, local,\n"
	"                      denied, async, fallback, round trips, faults\n"
	"                      (--json: as JSON)\n"
	"  top PID             the same, refreshed in place every --interval seconds\n"
	"                      (default 1), counts and round trips of the interval\n"
	"\n"
	"The library goes first in LD_PRELOAD (a preload already there is kept,\n"
	"after it; a sanitizer's runtime stays ahead) and\n"
	"the flags are appended to RTOFFLOAD_OPTIONS, where they override the same\n"
	"keys.  RTOFFLOAD_LIBRARY names the library to use.  Programs started by\n"
	"PROGRAM inherit both variables and so the policy; set-user-ID and static\n"
	"programs are not affected.\n"
	"\n"
	"Exit status: PROGRAM's; 2 for a bad flag, 125 if the library is missing,\n"
	"126 if PROGRAM cannot be run, 127 if it is not found.\n"
	"\n"
	"Examples:\n"
	"  chrt -f 80 rtoffload -- ./control-loop\n"
	"  taskset -c 3 rtoffload --rt-cpus 3 --mark cpus --stats -- ./app\n"
	"  rtoffload --mark 'name:ctrl*,rt' --stats-file /tmp/rto.%p.json -- ./app\n"
	"  rtoffload check\n";

static void vsay(const char *fmt, va_list ap)
{
	fflush(stdout);
	fputs("rtoffload: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void warn_line(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(fmt, ap);
	va_end(ap);
}

_Noreturn void fail(int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(fmt, ap);
	va_end(ap);
	exit(status);
}

/* The one-line error, then the short usage; the program does not run. */
static _Noreturn __attribute__((format(printf, 1, 2))) void usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(fmt, ap);
	va_end(ap);
	fputs(USAGE_SHORT "\n", stderr);
	exit(STATUS_USAGE);
}

static const char *shown(const char *s, char buf[SHOWN_MAX])
{
	size_t i;

	for (i = 0; s[i] && i < SHOWN_MAX - 4; i++)
		buf[i] = isprint((unsigned char)s[i]) ? s[i] : '?';
	strcpy(buf + i, s[i] ? "..." : "");
	return buf;
}

static void check_cpus(const char *flag, const char *list)
{
	char b[SHOWN_MAX], text[256];
	cpu_set_t set, online, offline;

	if (rto_cpulist_parse(list, &set) < 0)
		usage_error("%s '%s': not a CPU list (expected one like 1,4-7, CPUs below %d)",
			    flag, shown(list, b), CPU_SETSIZE);
	/*
	 * A warning, not an error: the library takes such a list too, and a
	 * CPU may come online later; until then a helper cannot be pinned there.
	 */
	rto_cpus_online(&online);
	CPU_XOR(&offline, &set, &online);
	CPU_AND(&offline, &offline, &set);
	if (CPU_COUNT(&offline) > 0) {
		rto_cpulist_format(&offline, text, sizeof(text));
		warn_line("warning: %s %s: CPU %s not online", flag, shown(list, b), text);
	}
}

static void check_mode(const char *mode)
{
	char b[SHOWN_MAX];

	if (strcmp(mode, "offload") != 0 && strcmp(mode, "strict") != 0)
		usage_error("--mode '%s': expected offload or strict", shown(mode, b));
}

static unsigned check_workers(const char *s)
{
	char b[SHOWN_MAX], *end;
	unsigned long n;

	errno = 0;
	n = strtoul(s, &end, 10);
	if (!isdigit((unsigned char)*s) || *end || errno || n < 1 || n > WORKERS_MAX)
		usage_error("--workers '%s': expected a whole number from 1 to %d", shown(s, b),
			    WORKERS_MAX);
	return (unsigned)n;
}

/* The library's options quote a value with '"': one inside cannot pass. */
static void check_quotable(const char *flag, const char *value, const char *what)
{
	char b[SHOWN_MAX];

	if (strchr(value, '"'))
		usage_error("%s '%s': %s cannot contain '\"'", flag, shown(value, b), what);
}

static void check_stats_file(const char *path)
{
	if (*path == '\0')
		usage_error("--stats-file: the path is empty");
	if (strlen(path) >= PATH_MAX)
		usage_error("--stats-file: the path is longer than %d bytes", PATH_MAX - 1);
	check_quotable("--stats-file", path, "the path");
}

/* One policy of --mark: returns 1 for name:GLOB, 0 otherwise. */
static int check_policy(const char *all, const char *p, size_t n)
{
	static const char *const words[] = {"none", "main", "all", "rt", "cpus", NULL};
	char b[SHOWN_MAX];

	if (n >= 5 && strncmp(p, "name:", 5) == 0) {
		if (n == 5)
			usage_error("--mark '%s': name: needs a GLOB, like name:ctrl*",
				    shown(all, b));
		if (n - 5 > MARK_GLOB_MAX)
			usage_error("--mark '%s': the GLOB is longer than %d bytes", shown(all, b),
				    MARK_GLOB_MAX);
		return 1;
	}
	for (const char *const *w = words; *w; w++) {
		if (strlen(*w) == n && strncmp(p, *w, n) == 0)
			return 0;
	}
	usage_error("--mark '%s': unknown policy '%.*s' (expected " POLICIES ")", shown(all, b),
		    (int)(n < SHOWN_MAX ? n : SHOWN_MAX), p);
}

static void check_mark(const char *mark)
{
	char b[SHOWN_MAX];
	int names = 0, count = 0, none = 0;

	check_quotable("--mark", mark, "a policy");
	for (const char *p = mark;; p++) {
		size_t n = strcspn(p, ",");

		if (n == 0)
			usage_error("--mark '%s': empty policy (expected " POLICIES ")",
				    shown(mark, b));
		names += check_policy(mark, p, n);
		none |= n == 4 && strncmp(p, "none", 4) == 0;
		count++;
		p += n;
		if (*p == '\0')
			break;
	}
	if (names > 1)
		usage_error("--mark '%s': only one name:GLOB is possible", shown(mark, b));
	if (none && count > 1)
		usage_error("--mark '%s': none cannot be combined with other policies",
			    shown(mark, b));
}

/* mark=cpus without rt_cpus= would mark no thread at all, silently. */
static void check_mark_cpus(const struct launch *l)
{
	const char *m = l->mark;
	size_t n;

	for (; m && *m; m += n + (m[n] == ',')) {
		n = strcspn(m, ",");
		if (n == 4 && strncmp(m, "cpus", 4) == 0 && !l->rt_cpus &&
		    !options_get(getenv("RTOFFLOAD_OPTIONS"), "rt_cpus", NULL, 0))
			usage_error("--mark cpus needs --rt-cpus LIST (or rt_cpus= in "
				    "RTOFFLOAD_OPTIONS)");
	}
}

/* getopt_long takes a prefix: "--st" may be --stats or --stats-file. */
static int ambiguous(const char *arg)
{
	size_t n = strcspn(arg, "="), hits = 0;

	if (strncmp(arg, "--", 2) != 0 || n <= 2)
		return 0;
	for (const struct option *o = longopts; o->name; o++)
		hits += strncmp(o->name, arg + 2, n - 2) == 0;
	return hits > 1;
}

/* The option as the user typed it, for "unknown" and "needs a value". */
static const char *flag_name(char **argv, char buf[SHOWN_MAX])
{
	if (optopt > 0 && optopt < 256) {
		snprintf(buf, SHOWN_MAX, "-%c", optopt);
		return buf;
	}
	shown(argv[optind - 1], buf);
	buf[strcspn(buf, "=")] = '\0';
	return buf;
}

static void apply_flag(int c, char **argv, struct launch *l)
{
	char b[SHOWN_MAX];

	switch (c) {
	case OPT_MARK:
		check_mark(optarg);
		l->mark = optarg;
		break;
	case OPT_RT_CPUS:
		check_cpus("--rt-cpus", optarg);
		l->rt_cpus = optarg;
		break;
	case OPT_HELPER_CPUS:
		check_cpus("--helper-cpus", optarg);
		l->helper_cpus = optarg;
		break;
	case OPT_MODE:
		check_mode(optarg);
		l->mode = optarg;
		break;
	case OPT_STATS:
		l->stats = 1;
		break;
	case OPT_STATS_FILE:
		check_stats_file(optarg);
		l->stats_file = optarg;
		break;
	case OPT_WORKERS:
		l->workers = check_workers(optarg);
		break;
	case OPT_OPTIONS:
		l->options = optarg;
		break;
	case 'v':
		l->verbose++;
		break;
	case 'h':
		fputs(help_text, stdout);
		exit(fflush(stdout) == 0 ? 0 : 1);
	case 'V':
		printf("rtoffload %s\n", RTO_VERSION);
		exit(fflush(stdout) == 0 ? 0 : 1);
	case ':':
		usage_error("option '%s' needs a value", flag_name(argv, b));
	default:
		usage_error("%s option '%s'", ambiguous(argv[optind - 1]) ? "ambiguous" : "unknown",
			    flag_name(argv, b));
	}
}

/* Flags up to the first operand ('+': a program's own flags are its own). */
static int parse_flags(int argc, char **argv, struct launch *l)
{
	int c;

	opterr = 0;
	optind = 0; /* glibc: start afresh, check parses a second argv */
	while ((c = getopt_long(argc, argv, "+:hvV", longopts, NULL)) != -1)
		apply_flag(c, argv, l);
	return optind;
}

/* `rtoffload [FLAGS] check [FLAGS]`: argv[0] is "check". */
static int run_check(int argc, char **argv, struct launch *l)
{
	char b[SHOWN_MAX];
	int i = parse_flags(argc, argv, l);

	if (i < argc)
		usage_error("check: unexpected argument '%s'", shown(argv[i], b));
	return check_run(l);
}

static _Noreturn void run(const struct launch *l, char **argv)
{
	const char *old = getenv("RTOFFLOAD_OPTIONS");
	char err[PATH_MAX + 256], *preload, *opts;
	struct library lib;
	int e;

	if (library_find(&lib, err, sizeof(err)) < 0)
		fail(STATUS_LAUNCHER, "%s", err);
	if (strpbrk(lib.path, " :"))
		fail(STATUS_LAUNCHER, "%s: LD_PRELOAD cannot hold a path with a space or ':'",
		     lib.path);
	preload = preload_compose(lib.path, getenv("LD_PRELOAD"));
	opts = options_compose(old, l);
	if (!preload || !opts || setenv("LD_PRELOAD", preload, 1) < 0 ||
	    setenv("RTOFFLOAD_OPTIONS", opts, 1) < 0)
		fail(STATUS_LAUNCHER, "cannot set the environment: %s", strerror(errno));
	if (l->verbose) {
		warn_line("library %s (%s)", lib.path, lib.how);
		warn_line("LD_PRELOAD=%s RTOFFLOAD_OPTIONS=%s", preload, opts);
	}
	free(preload); /* setenv() copied them; nothing is left behind if exec fails */
	free(opts);
	execvp(argv[0], argv);
	e = errno;
	fail(e == ENOENT ? STATUS_NOTFOUND : STATUS_NOEXEC, "cannot run '%s': %s", argv[0],
	     strerror(e));
}

int main(int argc, char **argv)
{
	struct launch l = {0};
	int i;

	rto_common_syscall = syscall; /* nothing interposes here (rto_common.h) */
	i = parse_flags(argc, argv, &l);

	/* After "--", "check", "stat" and "top" are programs like any other. */
	int word = i < argc && (i == 0 || strcmp(argv[i - 1], "--") != 0);
	if (word && strcmp(argv[i], "check") == 0)
		return run_check(argc - i, argv + i, &l);
	if (word && strcmp(argv[i], "stat") == 0)
		return live_stat_main(argc - i, argv + i);
	if (word && strcmp(argv[i], "top") == 0)
		return live_top_main(argc - i, argv + i);
	if (i >= argc)
		usage_error("no program to run");
	if (l.options)
		usage_error("--options is for check: RTOFFLOAD_OPTIONS is what a program gets");
	check_mark_cpus(&l);
	run(&l, argv + i);
}
