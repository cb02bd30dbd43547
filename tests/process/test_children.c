/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A new program or child process starts with the per-thread state of the
 * thread that made it (issue 28, findings 2 and 7): `taskset -c 1 chrt -f
 * 80 prog` and a SCHED_FIFO thread pinned to its CPU that runs system()
 * are how realtime programs are started.  A marked thread's exec, system,
 * popen and posix_spawn must give the child the CPU affinity, scheduling
 * policy and priority and signal mask they give it without the library;
 * children=helpers places system/popen/posix_spawn on the helpers instead.
 *
 * Each case runs in a scenario (exec replaces the process): a thread pinned
 * to RT_CPU at SCHED_FIFO 80, marked or not, blocks SIGUSR1 and starts a
 * child that prints its Cpus_allowed_list, SigBlk, policy and priority.
 * The marked run must print what the unmarked one prints.
 */
#include "harness.h"

#include <criterion/criterion.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define PRIO 80
/*
 * What the child shows: its CPUs and signal mask (status), its policy and
 * kernel priority (sched).  Run directly for exec and posix_spawn; through
 * sh for system and popen, where the shell clears the signal mask itself.
 */
#define PATTERN "^(Cpus_allowed_list|SigBlk|policy|prio)\\b"
#define FILES	"/proc/self/status", "/proc/self/sched"
#define SHOW	"grep -hE '" PATTERN "' /proc/self/status /proc/self/sched"

static void start_child(void *arg)
{
	const char *how = arg;
	char *argv[] = {"grep", "-hE", PATTERN, FILES, NULL};
	sigset_t usr1;

	/* Blocked after the mark: the library's view of the mask must follow. */
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr1, NULL);
	if (!strcmp(how, "execl")) {
		execl("/bin/grep", "grep", "-hE", PATTERN, FILES, (char *)NULL);
	} else if (!strcmp(how, "execvp")) {
		execvp("grep", argv);
	} else if (!strcmp(how, "system")) {
		if (system(SHOW) != 0)
			say("system=failed");
	} else if (!strcmp(how, "popen")) {
		char buf[512];
		FILE *f = popen(SHOW, "r");
		size_t n = f ? fread(buf, 1, sizeof(buf), f) : 0;
		if (!f || pclose(f) != 0)
			say("popen=failed");
		else if (write(1, buf, n) != (ssize_t)n)
			say("write=failed");
	} else if (!strcmp(how, "posix_spawn")) {
		pid_t pid;
		int status = -1;
		if (posix_spawnp(&pid, "grep", NULL, NULL, argv, environ) != 0 ||
		    waitpid(pid, &status, 0) != pid || status != 0)
			say("posix_spawn=failed");
	}
}

SCENARIO(child_state)
{
	const char *how = getenv("SC_HOW");
	int flags = TH_PIN_RT | (getenv("TH_MARK") ? TH_MARK : 0);

	if (!how)
		return 100;
	/* An exec ends the process here with the shell's status. */
	return thread_run(start_child, (void *)how, flags, PRIO) ? 101 : 0;
}

static void run_case(const char *how, const char *options, int marked, struct proc *p)
{
	char env_how[64], env_opt[128];
	snprintf(env_how, sizeof(env_how), "SC_HOW=%s", how);
	snprintf(env_opt, sizeof(env_opt), "RTOFFLOAD_OPTIONS=%s", options);
	char *env[] = {env_how, env_opt, marked ? "TH_MARK=1" : NULL, NULL};

	cr_assert_eq(run_scenario("child_state", env, p), 0);
	cr_assert(WIFEXITED(p->status) && WEXITSTATUS(p->status) == 0, "%s%s: exit %d: %s",
		  marked ? "marked " : "", how, p->status, p->err);
}

/* A "name   :   value" line of /proc/PID/sched in out, or -1. */
static long field(const char *out, const char *name)
{
	const char *at = strstr(out, name);
	const char *colon = at ? strchr(at, ':') : NULL;
	return colon ? strtol(colon + 1, NULL, 10) : -1;
}

/* The child of a marked thread looks as the child of an unmarked one. */
static void same_child(const char *how)
{
	struct proc d, m;
	char want[64];

	run_case(how, "fd_local=none", 0, &d);
	run_case(how, "fd_local=none", 1, &m);
	snprintf(want, sizeof(want), "Cpus_allowed_list:\t%d\n", RT_CPU);
	cr_expect(strstr(d.out, want), "unmarked %s: not on CPU %d: %s", how, RT_CPU, d.out);
	cr_expect(field(d.out, "policy") == SCHED_FIFO && field(d.out, "prio") == 99 - PRIO,
		  "unmarked %s: not FIFO %d: %s", how, PRIO, d.out);
	cr_expect_str_eq(m.out, d.out, "%s from a marked thread: child\n%s\nunmarked:\n%s", how,
			 m.out, d.out);
}

Test(children, execl_keeps_the_callers_cpu_policy_and_mask, .timeout = 60)
{
	same_child("execl");
}

Test(children, execvp_keeps_the_callers_cpu_policy_and_mask, .timeout = 60)
{
	same_child("execvp");
}

Test(children, system_child_has_the_callers_cpu_policy_and_mask, .timeout = 60)
{
	same_child("system");
}

Test(children, popen_child_has_the_callers_cpu_policy_and_mask, .timeout = 60)
{
	same_child("popen");
}

Test(children, posix_spawn_child_has_the_callers_cpu_policy_and_mask, .timeout = 60)
{
	same_child("posix_spawn");
}

/* children=helpers: the user asked for the helpers' CPU, and is told so once. */
Test(children, children_helpers_starts_them_on_the_helpers_cpu, .timeout = 60)
{
	struct proc m;
	char want[64];

	run_case("system", "fd_local=none:children=helpers:verbosity=1", 1, &m);
	snprintf(want, sizeof(want), "Cpus_allowed_list:\t%d\n", HK_CPU);
	cr_expect(strstr(m.out, want), "children=helpers: the child is not on CPU %d: %s", HK_CPU,
		  m.out);
	cr_expect(strstr(m.err, "children=helpers"), "not said: %s", m.err);
}
