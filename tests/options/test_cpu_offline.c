/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A helper CPU goes offline while the program runs (issue 18: "what can
 * only be known later").  With helper_cpus=1 and CPU 1 taken offline the
 * kernel moves the helper to CPU 0 and widens its affinity; the library
 * says so in one line, once, and the calls keep completing on the helper.
 *
 * It writes /sys/devices/system/cpu/cpu1/online, so it needs root and a
 * CPU 1 that can go offline; otherwise it skips and says why.  CPU 1 is
 * brought back as soon as the child has made its calls, and by the test's
 * .fini whatever happened (criterion runs .fini after a failed assertion
 * too).
 */
#include "harness.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CPU1   "/sys/devices/system/cpu/cpu1/online"
#define WRITES 50

/* "0" or "1" from CPU1, or -1. */
static int cpu1_state(void)
{
	char c = 0;
	int fd = open(CPU1, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, &c, 1) : -1;

	if (fd >= 0)
		close(fd);
	return n == 1 && (c == '0' || c == '1') ? c - '0' : -1;
}

/* 0, or an errno. */
static int cpu1_set(int on)
{
	int fd = open(CPU1, O_WRONLY | O_CLOEXEC);
	int err = 0;

	if (fd < 0)
		return errno;
	if (write(fd, on ? "1" : "0", 1) != 1)
		err = errno;
	close(fd);
	return err;
}

/* Polls until CPU 1 is in state on: 1, or 0 after WAIT_S. */
static int cpu1_wait(int on)
{
	struct timespec ms = {0, 1000 * 1000};

	for (int i = 0; i < (int)(WAIT_S * 1000); i++, nanosleep(&ms, NULL))
		if (cpu1_state() == on)
			return 1;
	return 0;
}

static void cpu1_restore(void)
{
	if (cpu1_state() == 0) {
		cpu1_set(1);
		cpu1_wait(1);
	}
}

static int count(const char *s, const char *what)
{
	int n = 0;

	for (const char *p = s; (p = strstr(p, what)); p++)
		n++;
	return n;
}

/* A line from fd into buf (the newline dropped): its length, or -1 at EOF. */
static int read_line(int fd, char *buf, size_t len)
{
	size_t n = 0;

	while (n < len - 1 && read(fd, buf + n, 1) == 1) {
		if (buf[n] == '\n') {
			buf[n] = '\0';
			return (int)n;
		}
		n++;
	}
	buf[n] = '\0';
	return n ? (int)n : -1;
}

Test(cpu_offline, the_helper_says_so_once_and_calls_complete, .timeout = TEST_TIMEOUT,
     .fini = cpu1_restore)
{
	char dir[PATH_MAX], file[PATH_MAX], ready[256], done[256], err[8192];
	int in[2], out[2], errp[2];

	if (geteuid() != 0)
		cr_skip_test("taking a CPU offline needs root");
	if (cpu1_state() != 1)
		cr_skip_test("%s is missing or CPU 1 is not online: no CPU to take offline", CPU1);
	if (access(CPU1, W_OK) != 0)
		cr_skip_test("%s is not writable here (%s)", CPU1, strerror(errno));

	tmp_make(dir);
	cr_assert_eq(pipe2(in, O_CLOEXEC), 0);
	cr_assert_eq(pipe2(out, O_CLOEXEC), 0);
	cr_assert_eq(pipe2(errp, O_CLOEXEC), 0);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		dup2(errp[1], 2);
		putenv("RTOFFLOAD_OPTIONS=helper_cpus=1:workers=1:fd_local=none:helper_wake=idle");
		execl(CPU_CHILD, CPU_CHILD, dir, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	close(errp[1]);
	cr_assert_geq(read_line(out[0], ready, sizeof(ready)), 0, "the child said nothing");
	cr_assert_eq(kv(ready, "before", -1), WRITES, "%s", ready);
	cr_expect_eq(kv(ready, "helper_cpu", -1), 1, "the helper was not on CPU 1: %s", ready);

	int e = cpu1_set(0);
	if (e) { /* EBUSY, EPERM: this kernel or hypervisor keeps CPU 1 */
		close(in[1]);
		waitpid(pid, NULL, 0);
		tmp_remove(dir);
		cr_skip_test("CPU 1 cannot go offline here: %s", strerror(e));
	}
	int offline = cpu1_wait(0);
	cr_assert(write(in[1], "go\n", 3) == 3);
	int got = read_line(out[0], done, sizeof(done));
	cpu1_restore(); /* as soon as the calls are made: the machine may be shared */
	cr_assert(offline, "CPU 1 did not go offline");
	close(in[1]);
	int status = -1;
	waitpid(pid, &status, 0);
	ssize_t n = read(errp[0], err, sizeof(err) - 1);
	err[n > 0 ? n : 0] = '\0';
	close(out[0]);
	close(errp[0]);

	cr_assert_geq(got, 0, "the child said nothing after the offline (status %#x): %s", status,
		      err);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %#x: %s", status, err);
	/* The calls completed, on the helper, which now runs on CPU 0. */
	cr_expect_eq(kv(done, "after", -1), WRITES, "%s", done);
	cr_expect_eq(kv(done, "offloaded", -1), WRITES, "%s", done);
	cr_expect_eq(kv(done, "helper_cpu", -1), 0, "%s", done);
	size_t len = 0;
	pathf(file, "%s/f", dir);
	free(slurp(file, &len));
	cr_expect_eq(len, 2 * WRITES, "%zu bytes on disk", len);
	/* One line, once, naming where it runs and where it should. */
	cr_expect_eq(count(err, "rtoffload: a helper runs on CPU 0, outside its CPUs 1 "
				"(gone offline?): offloading goes on there"),
		     1, "stderr:\n%s", err);
	cr_expect_eq(count(err, "rtoffload:"), 1, "stderr:\n%s", err);
	tmp_remove(dir);
}
