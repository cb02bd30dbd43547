/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rtoffload top PID [--interval SECONDS] [--iterations N]: the live view,
 * refreshed in place like top(1).  Plain ANSI (cursor home, erase to the
 * end of each line and of the screen), so it works in any terminal and
 * over ssh, without terminfo.  Each screen shows the counts and round
 * trips of the last interval; the first, those since start.
 */
#include "live_read.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define HOME	 "\033[H"
#define CLEAR	 "\033[2J"
#define EOL	 "\033[K\n" /* erase what an earlier, longer line left */
#define CLEAR_TO "\033[J"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static double parse_interval(const char *s)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);

	if (!*s || *end || errno || !(v >= 0.1 && v <= 3600))
		fail(STATUS_USAGE, "top: --interval '%s': expected seconds from 0.1 to 3600", s);
	return v;
}

static long parse_count(const char *s)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);

	if (!*s || *end || errno || v < 1)
		fail(STATUS_USAGE, "top: --iterations '%s': expected a whole number from 1", s);
	return v;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Sleep secs, in slices, so that a signal or the process's end stop it soon. */
static void pause_for(double secs, pid_t pid)
{
	double end = now_s() + secs;

	while (!stop && now_s() < end && (kill(pid, 0) == 0 || errno != ESRCH)) {
		struct timespec slice = {0, 50 * 1000 * 1000};
		nanosleep(&slice, NULL);
	}
}

int live_top_main(int argc, char **argv)
{
	static struct rto_live a, b;
	struct rto_live *now = &a, *before = &b;
	struct live_handle h;
	char err[PATH_MAX + 128];
	const char *pid_arg = NULL;
	double interval = 1.0;
	long iterations = -1;
	int fresh;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--interval") && i + 1 < argc)
			interval = parse_interval(argv[++i]);
		else if (!strcmp(argv[i], "--iterations") && i + 1 < argc)
			iterations = parse_count(argv[++i]);
		else if (!pid_arg && argv[i][0] != '-')
			pid_arg = argv[i];
		else
			fail(STATUS_USAGE,
			     "top: unexpected argument '%s' (usage: rtoffload top PID "
			     "[--interval SECONDS] [--iterations N])",
			     argv[i]);
	}
	if (!pid_arg)
		fail(STATUS_USAGE, "top: which process? (usage: rtoffload top PID)");
	pid_t pid = live_parse_pid(pid_arg);
	if (live_open(pid, &h, err, sizeof(err)) < 0)
		fail(1, "%s", err);
	struct sigaction sa = {.sa_handler = on_signal};
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	if (live_snapshot(&h, now, &fresh) < 0)
		fail(1, "pid %d: the live view never held still", (int)pid);
	fputs(CLEAR HOME, stdout);
	live_print(stdout, now, NULL, 0, fresh, EOL);
	fputs(CLEAR_TO, stdout);
	fflush(stdout);
	double t0 = now_s();
	int gone = 0;
	for (long n = 1; !stop && (iterations < 0 || n < iterations); n++) {
		pause_for(interval, pid);
		if (stop)
			break;
		if (kill(pid, 0) < 0 && errno == ESRCH) {
			gone = 1;
			break;
		}
		struct rto_live *t = before;
		before = now;
		now = t;
		if (live_snapshot(&h, now, &fresh) < 0)
			break;
		double t1 = now_s();
		fputs(HOME, stdout);
		live_print(stdout, now, before, t1 - t0, fresh, EOL);
		fputs(CLEAR_TO, stdout);
		fflush(stdout);
		t0 = t1;
	}
	live_close(&h);
	if (gone)
		printf("\nrtoffload: process %d exited\n", (int)pid);
	return fflush(stdout) == 0 ? 0 : 1;
}
