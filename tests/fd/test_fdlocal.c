/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The default fd_local= (this file runs with RTOFFLOAD_OPTIONS empty; the
 * rest of the suite uses fd_local=none): a marked thread's read/write on a
 * pipe, a socket, an eventfd or a character device runs on the caller (a
 * short bounded kernel path, or a wait for an outside event); on a disk
 * file it is offloaded, on a tmpfs file local.  The class is per descriptor
 * generation: a number reused for another kind of file is asked again.
 *
 * Then each fd_local= value, in the option child (child_fd.c): read, write
 * and fsync decided by descriptor.  On a pipe, an eventfd, a memfd, a
 * tmpfs file, /dev/null or a socket the kernel path is short and bounded
 * (or a wait for an outside event): the marked thread makes the call
 * itself.  On a disk file it is offloaded.  The decision is cached per
 * descriptor number and must never outlive the descriptor.
 */
#include "harness.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/statfs.h>
#include <unistd.h>

struct one_write {
	int fd;
	ssize_t n;
	uint64_t offloaded, local;
};

static void write_twice_job(void *arg)
{
	struct one_write *w = arg;
	uint64_t v = 1;

	/* The first call may ask the helper for the kind: count the second. */
	w->n = write(w->fd, &v, sizeof(v));
	struct rt_offload_stats a, b;
	rt_offload_get_stats(&a);
	w->n += write(w->fd, &v, sizeof(v));
	rt_offload_get_stats(&b);
	w->offloaded = b.offloaded - a.offloaded;
	w->local = b.local - a.local;
}

/* 1: the second write ran locally, 0: it was offloaded. */
static int second_write_local(int fd)
{
	struct one_write w = {.fd = fd};

	run_marked(write_twice_job, &w);
	cr_assert_eq(w.n, 16, "writes on fd %d failed", fd);
	cr_assert_eq(w.offloaded + w.local, 1, "the write was counted %lu+%lu times", w.offloaded,
		     w.local);
	return w.local == 1;
}

Test(fdlocal, event_descriptors_run_locally, .timeout = TEST_TIMEOUT)
{
	int p[2], s[2];

	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, s), 0);
	int efd = eventfd(0, EFD_CLOEXEC);
	int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	cr_assert(efd >= 0 && null >= 0);
	cr_expect(second_write_local(p[1]), "pipe write offloaded");
	cr_expect(second_write_local(s[0]), "socket write offloaded");
	cr_expect(second_write_local(efd), "eventfd write offloaded");
	cr_expect(second_write_local(null), "/dev/null write offloaded");
	close(p[0]);
	close(p[1]);
	close(s[0]);
	close(s[1]);
	close(efd);
	close(null);
}

static int on_tmpfs(const char *dir)
{
	struct statfs sf;

	cr_assert_eq(statfs(dir, &sf), 0);
	return sf.f_type == TMPFS_MAGIC || sf.f_type == RAMFS_MAGIC;
}

Test(fdlocal, file_follows_its_file_system_and_reused_numbers_are_asked_again,
     .timeout = TEST_TIMEOUT)
{
	char dir[PATH_MAX], path[PATH_MAX];
	int p[2];

	tmp_make(dir);
	pathf(path, "%s/f", dir);
	int tmpfs = on_tmpfs(dir);
	cr_log_info("%s is %s", dir, tmpfs ? "tmpfs: file writes are local" : "not tmpfs");

	/* A pipe's number, learnt as local, then reused for the file. */
	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	int num = p[1];
	cr_expect(second_write_local(num));
	close(p[1]);
	int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	cr_assert_eq(fd, num, "the number was not reused (%d, %d): cannot check", fd, num);
	cr_expect_eq(second_write_local(fd), tmpfs, "a reused number kept the pipe's class");
	close(fd);
	close(p[0]);
	tmp_remove(dir);
}

/* ---- each fd_local= value, in the option child ----------------------------- */

static const char *const local_kinds[] = {"pipe",  "eventfd", "memfd",
					  "tmpfs", "null",    "socketpair"};
#define NLOCAL (sizeof(local_kinds) / sizeof(local_kinds[0]))

static void need_shm_tmpfs(void)
{
	struct statfs sf;

	if (statfs("/dev/shm", &sf) != 0 || sf.f_type != TMPFS_MAGIC)
		CHILD_SKIP("/dev/shm is not a tmpfs here");
}

/*
 * One write, read and fsync on kind by a marked thread: where each ran.
 * local: 1 when they must have run on the caller, 0 when offloaded.
 */
static void kind_runs(const char *opts, const char *kind, int local)
{
	static const char *const calls[] = {"write", "read", "fsync"};
	struct run r;

	RUN_CHILD(&r, opts, "fdkind", kind, child_dir);
	assert_child_exit0(&r);
	cr_expect_eq(out_long(r.out, NULL, "write", 0), 8, "%s: %s", kind, r.out);
	cr_expect_eq(out_long(r.out, NULL, "read", 0), strcmp(kind, "null") ? 8 : 0, "%s: %s", kind,
		     r.out);
	for (int i = 0; i < 3; i++) {
		cr_expect_eq(json_count(&r, calls[i], "local"), local, "[%s] %s on %s: local %ld",
			     opts, calls[i], kind, json_count(&r, calls[i], "local"));
		cr_expect_eq(json_count(&r, calls[i], "offloaded"), !local,
			     "[%s] %s on %s: offloaded %ld", opts, calls[i], kind,
			     json_count(&r, calls[i], "offloaded"));
	}
	run_free(&r);
}

Test(fdlocal, short_kernel_paths_run_locally, .init = child_setup, .fini = child_teardown,
     .timeout = 60)
{
	need_shm_tmpfs();
	for (size_t i = 0; i < NLOCAL; i++)
		kind_runs("", local_kinds[i], 1);
}

Test(fdlocal, disk_file_is_offloaded, .init = child_setup, .fini = child_teardown, .timeout = 60)
{
	NEED_DISK();
	kind_runs("", "disk", 0);
	struct run r;
	RUN_CHILD(&r, "", "fdkind", "disk", child_dir);
	cr_expect_eq(out_long(r.out, NULL, "fsync", -1), 0, "fsync of a disk file: %s", r.out);
	run_free(&r);
}

Test(fdlocal, none_offloads_every_kind, .init = child_setup, .fini = child_teardown, .timeout = 60)
{
	need_shm_tmpfs();
	for (size_t i = 0; i < NLOCAL; i++)
		kind_runs("fd_local=none", local_kinds[i], 0);
}

Test(fdlocal, only_the_kinds_listed, .init = child_setup, .fini = child_teardown, .timeout = 60)
{
	need_shm_tmpfs();
	kind_runs("fd_local=pipe,chr", "pipe", 1);
	kind_runs("fd_local=pipe,chr", "null", 1);
	kind_runs("fd_local=pipe,chr", "socketpair", 0);
	kind_runs("fd_local=pipe,chr", "eventfd", 0);
	kind_runs("fd_local=pipe,chr", "tmpfs", 0);
	kind_runs("fd_local=tmpfs", "memfd", 1);
}

/* ---- a descriptor number reborn as another kind -------------------------------------- */

/* The write to the reborn number ran where its new kind says, and its bytes landed. */
static void reborn(const char *how, int local)
{
	char content[64];
	struct run r;

	RUN_CHILD(&r, "", "fdreuse", how, child_dir);
	assert_child_exit0(&r);
	cr_assert_eq(out_long(r.out, NULL, "same", 0), 1, "%s: the number was not reused: %s", how,
		     r.out);
	cr_expect_eq(out_long(r.out, NULL, "ret", 0), 8, "%s: %s", how, r.out);
	cr_expect_eq(out_long(r.out, NULL, "local", -1), local,
		     "%s: the old descriptor's answer was used: %s", how, r.out);
	cr_expect_geq(out_long(r.out, NULL, "offloaded", -1), !local, "%s: %s", how, r.out);
	if (!local)
		cr_expect_str_eq(out_word(r.out, NULL, "content", content, sizeof(content)),
				 "payload!", "%s: %s", how, r.out);
	run_free(&r);
}

Test(fdlocal, close_then_open_gets_the_new_answer, .init = child_setup, .fini = child_teardown,
     .timeout = 60)
{
	NEED_DISK();
	reborn("close", 0);
}

Test(fdlocal, closed_and_reopened_by_an_unmarked_thread, .init = child_setup,
     .fini = child_teardown, .timeout = 60)
{
	NEED_DISK();
	reborn("cross", 0);
}

Test(fdlocal, dup2_of_a_disk_file_over_a_pipe, .init = child_setup, .fini = child_teardown,
     .timeout = 60)
{
	NEED_DISK();
	reborn("dup2", 0);
}

Test(fdlocal, fclose_of_tmpfs_stream_then_fopen_of_disk_file, .init = child_setup,
     .fini = child_teardown, .timeout = 60)
{
	NEED_DISK();
	need_shm_tmpfs();
	reborn("fclose", 0);
}

Test(fdlocal, disk_number_reborn_as_eventfd_runs_locally, .init = child_setup,
     .fini = child_teardown, .timeout = 60)
{
	NEED_DISK();
	reborn("reverse", 1);
}

/*
 * A signalfd's read takes the signals pending for the thread that reads:
 * a signal raised on the marked thread is read by it, whatever fd_local=
 * says (here none: every other kind is offloaded).  Before, the read ran
 * on a helper and found nothing (EAGAIN) while the caller's epoll said the
 * descriptor was ready: sd-event spun for ever (systemd's test-event).
 */
SCENARIO(signalfd_reads_the_callers_signal)
{
	sigset_t m;
	struct signalfd_siginfo si;

	sigemptyset(&m);
	sigaddset(&m, SIGUSR1);
	if (sigprocmask(SIG_BLOCK, &m, NULL) != 0 || rt_offload_mark_thread() != 0)
		return 100;
	int fd = signalfd(-1, &m, SFD_NONBLOCK | SFD_CLOEXEC);
	if (fd < 0 || raise(SIGUSR1) != 0)
		return 101;
	ssize_t n = read(fd, &si, sizeof(si));
	say("n=%zd errno=%d signo=%d", n, n < 0 ? errno : 0, n > 0 ? (int)si.ssi_signo : 0);
	return n == (ssize_t)sizeof(si) && si.ssi_signo == SIGUSR1 ? 0 : 102;
}

Test(fdlocal, a_signalfd_is_read_on_its_caller_whatever_fd_local_says, .timeout = 60)
{
	struct proc p;
	char st[64];
	char *env[] = {"RTOFFLOAD_OPTIONS=fd_local=none", NULL};

	cr_assert_eq(run_scenario("signalfd_reads_the_callers_signal", env, &p), 0);
	cr_expect(WIFEXITED(p.status) && WEXITSTATUS(p.status) == 0,
		  "%s: the signal raised on the caller was not read; %s %s",
		  status_str(p.status, st, sizeof(st)), p.out, p.err);
}
