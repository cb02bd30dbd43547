/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Details that make an offloaded call indistinguishable from a local
 * one, each run on a marked thread and compared with an unmarked one:
 *  - errno: a successful call leaves the caller's errno as it was (the
 *    helper starts the call with the caller's errno), a failing one sets
 *    the call's errno, and marking itself does not touch errno;
 *  - file modes: open/openat/creat with O_CREAT or O_TMPFILE (the variadic
 *    mode argument) and mkdir give the requested bits minus the umask;
 *  - a child started by an offloaded posix_spawn() inherits the caller's
 *    signal mask, not the helper's.
 */
#include "harness.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* ---- errno ---------------------------------------------------------------- */

#define NSTEPS 9

struct errnos {
	const char *dir;
	int after[NSTEPS];
	int ret_ok[NSTEPS];
};

/* errno right after the call, before anything else can touch it. */
#define STEP(ok)                      \
	do {                          \
		int ok_ = (ok);       \
		e->after[i] = errno;  \
		e->ret_ok[i++] = ok_; \
	} while (0)

/* A fixed sequence; after[i] is errno right after step i. */
static void errno_sequence(void *arg)
{
	struct errnos *e = arg;
	char path[PATH_MAX + 16];
	struct stat st;
	int i = 0, fd;

	snprintf(path, sizeof(path), "%s/e%d", e->dir, rt_offload_thread_is_marked());
	errno = EINTR; /* sentinel: no successful call may change it */
	STEP((fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644)) >= 0);
	/*
	 * The closed descriptor of step 5 is a high one: a low one could be
	 * taken again meanwhile by a file the helpers open (their start reads
	 * /proc/sys), and fsync on that is another error.
	 */
	int closed = dup2(fd, 777);
	STEP(write(fd, "x", 1) == 1);
	STEP(stat(path, &st) == 0);
	STEP(close(fd) == 0 && close(closed) == 0);
	STEP(write(-1, "x", 1) == -1);		      /* EBADF */
	STEP(fsync(closed) == -1);		      /* closed: EBADF */
	STEP(open("/nonexistent/x", O_RDONLY) == -1); /* ENOENT */
	/* A success after a failure leaves the failure's errno, as in libc. */
	STEP(stat(path, &st) == 0);
	errno = EINTR;
	STEP(unlink(path) == 0);
}

Test(semantics, errno_like_a_local_call, .timeout = TEST_TIMEOUT)
{
	static const int want[NSTEPS] = {EINTR, EINTR,	EINTR,	EINTR, EBADF,
					 EBADF, ENOENT, ENOENT, EINTR};
	char dir[PATH_MAX];
	struct errnos d = {0}, m = {0};

	tmp_make(dir);
	d.dir = m.dir = dir;
	run_unmarked(errno_sequence, &d);
	run_marked(errno_sequence, &m);
	for (int i = 0; i < NSTEPS; i++) {
		cr_expect(d.ret_ok[i] && m.ret_ok[i], "step %d: unexpected result", i);
		cr_expect_eq(d.after[i], want[i], "step %d direct: errno %d, expected %d", i,
			     d.after[i], want[i]);
		cr_expect_eq(m.after[i], d.after[i], "step %d: errno %d (%s) offloaded, %d direct",
			     i, m.after[i], strerror(m.after[i]), d.after[i]);
	}
	tmp_remove(dir);
}

struct mark_errno {
	int after_mark, after_unmark;
};

static void *mark_errno_thread(void *arg)
{
	struct mark_errno *m = arg;

	errno = ENOTTY;
	rt_offload_mark_thread();
	m->after_mark = errno;
	errno = EXDEV;
	rt_offload_unmark_thread();
	m->after_unmark = errno;
	return NULL;
}

Test(semantics, marking_keeps_errno, .timeout = TEST_TIMEOUT)
{
	struct mark_errno m;
	pthread_t t;

	/* The first mark of the process: it starts the helpers. */
	cr_assert_eq(pthread_create(&t, NULL, mark_errno_thread, &m), 0);
	pthread_join(t, NULL);
	cr_expect_eq(m.after_mark, ENOTTY, "first mark changed errno to %d", m.after_mark);
	cr_expect_eq(m.after_unmark, EXDEV);
	/* A later one. */
	cr_assert_eq(pthread_create(&t, NULL, mark_errno_thread, &m), 0);
	pthread_join(t, NULL);
	cr_expect_eq(m.after_mark, ENOTTY, "mark changed errno to %d", m.after_mark);
}

/* ---- modes ----------------------------------------------------------------- */

enum {
	M_OPEN,
	M_OPEN_UMASK,
	M_OPENAT,
	M_OPEN64,
	M_CREAT,
	M_TMPFILE,
	M_MKDIR,
	M_DIRECTORY,
	M_ENOTDIR,
	NMODES
};
static const char *const m_names[NMODES] = {"open 0640",   "open 0666",	  "openat 0600",
					    "open64 0604", "creat 0751",  "O_TMPFILE 0640",
					    "mkdir 0777",  "O_DIRECTORY", "O_DIRECTORY on a file"};

struct modes {
	char dir[PATH_MAX]; /* a directory per run: same names, same umask */
	unsigned mode[NMODES];
	int err[NMODES];
};

/* The mode of what fd is, or -errno; closes fd. */
static void fd_mode(struct modes *m, int i, int fd)
{
	struct stat st;

	m->err[i] = fd < 0 ? errno : 0;
	if (fd >= 0 && fstat(fd, &st) == 0)
		m->mode[i] = (unsigned)st.st_mode;
	if (fd >= 0)
		close(fd);
}

static void mode_calls(void *arg)
{
	struct modes *m = arg;
	char p[PATH_MAX + 16];
	int dfd = open(m->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	snprintf(p, sizeof(p), "%s/a", m->dir);
	fd_mode(m, M_OPEN, open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0640));
	snprintf(p, sizeof(p), "%s/b", m->dir);
	fd_mode(m, M_OPEN_UMASK, open(p, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0666));
	fd_mode(m, M_OPENAT, openat(dfd, "c", O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
	snprintf(p, sizeof(p), "%s/d", m->dir);
	fd_mode(m, M_OPEN64, open64(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0604));
	snprintf(p, sizeof(p), "%s/e", m->dir);
	fd_mode(m, M_CREAT, creat(p, 0751));
	fd_mode(m, M_TMPFILE, open(m->dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0640));
	snprintf(p, sizeof(p), "%s/sub", m->dir);
	m->err[M_MKDIR] = mkdir(p, 0777) == 0 ? 0 : errno;
	fd_mode(m, M_DIRECTORY, open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
	snprintf(p, sizeof(p), "%s/a", m->dir);
	fd_mode(m, M_ENOTDIR, open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
	close(dfd);
}

static void mkdir_mode(struct modes *m)
{
	char p[PATH_MAX];
	struct stat st;

	pathf(p, "%s/sub", m->dir);
	if (stat(p, &st) == 0)
		m->mode[M_MKDIR] = (unsigned)st.st_mode;
}

static void run_modes(const char *root, const char *name, int marked, struct modes *m)
{
	memset(m, 0, sizeof(*m));
	pathf(m->dir, "%s/%s", root, name);
	cr_assert_eq(mkdir(m->dir, 0755), 0);
	if (marked)
		run_marked(mode_calls, m);
	else
		run_unmarked(mode_calls, m);
	mkdir_mode(m);
}

Test(semantics, created_modes_follow_request_and_umask, .timeout = TEST_TIMEOUT)
{
	static const unsigned want[NMODES] = {S_IFREG | 0640, S_IFREG | 0640, S_IFREG | 0600,
					      S_IFREG | 0600, S_IFREG | 0750, S_IFREG | 0640,
					      S_IFDIR | 0750, S_IFDIR | 0750, 0};
	char root[PATH_MAX];
	struct modes d, m;

	tmp_make(root);
	mode_t old = umask(027);
	run_modes(root, "direct", 0, &d);
	run_modes(root, "marked", 1, &m);
	umask(old);
	for (int i = 0; i < NMODES; i++) {
		if (i == M_TMPFILE && d.err[i] == EOPNOTSUPP) {
			cr_log_warn("O_TMPFILE is not supported in /tmp here: not checked");
			continue;
		}
		cr_expect_eq(m.mode[i], d.mode[i], "%s: %o offloaded, %o direct", m_names[i],
			     m.mode[i], d.mode[i]);
		cr_expect_eq(m.err[i], d.err[i], "%s: errno %d offloaded, %d direct", m_names[i],
			     m.err[i], d.err[i]);
		cr_expect_eq(d.mode[i], want[i], "%s: direct %o, expected %o", m_names[i],
			     d.mode[i], want[i]);
	}
	cr_expect_eq(m.err[M_ENOTDIR], ENOTDIR);
	tmp_remove(root);
}

/* ---- children inherit the caller's signal mask ----------------------------- */

struct sigblk {
	char out[PATH_MAX]; /* where the child writes its SigBlk line */
	int spawn_rc;
	pid_t pid;
};

/*
 * Block SIGUSR2 (after the mark: the library must follow the change), then
 * start grep with posix_spawnp (not through sh, which resets its mask) to
 * tell which signals it has blocked.
 */
static void sigblk_job(void *arg)
{
	struct sigblk *b = arg;
	char *argv[] = {"grep", "SigBlk", "/proc/self/status", NULL};
	posix_spawn_file_actions_t fa;
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, b->out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	b->spawn_rc = posix_spawnp(&b->pid, "grep", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
}

static char *sigblk_line(const char *root, const char *name, int marked)
{
	struct sigblk b = {.pid = -1};

	pathf(b.out, "%s/%s", root, name);
	if (marked)
		run_marked(sigblk_job, &b);
	else
		run_unmarked(sigblk_job, &b);
	cr_assert_eq(b.spawn_rc, 0, "posix_spawnp: %s", strerror(b.spawn_rc));
	cr_assert_eq(waitpid(b.pid, NULL, 0), b.pid);
	char *s = slurp(b.out, NULL);
	cr_assert_not_null(s);
	return s;
}

Test(semantics, spawned_children_inherit_the_callers_signal_mask, .timeout = TEST_TIMEOUT)
{
	char root[PATH_MAX], want[32];

	tmp_make(root);
	char *d = sigblk_line(root, "direct", 0);
	char *m = sigblk_line(root, "marked", 1);
	snprintf(want, sizeof(want), "%016llx", 1ULL << (SIGUSR2 - 1));
	cr_expect_not_null(strstr(d, want), "direct child: %s", d);
	cr_expect_str_eq(m, d, "offloaded posix_spawnp's child: %s, direct: %s", m, d);
	free(m);
	free(d);
	tmp_remove(root);
}
