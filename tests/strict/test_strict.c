/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Strict mode (the seed's "per-task flag that prohibited offloading"): a
 * marked strict thread's non-deterministic call is not executed at all, it
 * fails with RT_OFFLOAD_STRICT_ERRNO and its usual failure value, and it
 * is counted as denied.  Also: the mode API, mode= in RTOFFLOAD_OPTIONS,
 * and that the statistics count exactly the calls made.
 *
 * A strict thread makes no request at all, not even to learn what a
 * descriptor is.  Its descriptors are classified when it becomes strict
 * and marked (off its call path), those born later by unmarked threads
 * where they are born; one it still does not know (opened behind the
 * library's back) is not local: the call is refused and reported.
 *
 * The witness of that (the option child's child_strict.c): the only
 * helper is held, spin_ns=0, and the strict thread's own seccomp filter
 * kills the process on FUTEX_WAIT: a request enqueued by the strict thread
 * would never be served and its wait would kill the process.  The same
 * scenario fails with a library that classifies an unknown descriptor with
 * a helper's fstat.
 */
#include "harness.h"

#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <dirent.h>
#include <signal.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

struct fixture {
	char dir[PATH_MAX];
	char file[PATH_MAX]; /* exists, 5 bytes */
	char path[PATH_MAX]; /* does not exist */
	int wfd;	     /* on file */
	FILE *stream;	     /* a fresh empty file, buffered */
	int lsn;	     /* a non-blocking listener, for accept (allow-listed) */
};

static void fixture_setup(struct fixture *f)
{
	char path[PATH_MAX];
	struct sockaddr_in sin = {.sin_family = AF_INET};

	tmp_make(f->dir);
	pathf(f->file, "%s/file", f->dir);
	pathf(f->path, "%s/new", f->dir);
	cr_assert_eq(spit(f->file, "12345", 5), 0);
	f->wfd = open(f->file, O_WRONLY | O_APPEND | O_CLOEXEC);
	pathf(path, "%s/stream", f->dir);
	f->stream = fopen(path, "w");
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	f->lsn = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	cr_assert(f->wfd >= 0 && f->stream && f->lsn >= 0);
	/* Line-buffered: each fprintf line needs the kernel (one its buffer took would run here).
	 */
	cr_assert_eq(setvbuf(f->stream, NULL, _IOLBF, BUFSIZ), 0);
	cr_assert_eq(bind(f->lsn, (struct sockaddr *)&sin, sizeof(sin)), 0);
	cr_assert_eq(listen(f->lsn, 1), 0);
}

static void fixture_teardown(struct fixture *f)
{
	close(f->wfd);
	close(f->lsn);
	if (f->stream)
		fclose(f->stream);
	tmp_remove(f->dir);
}

static int exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

static long long size_of(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

/* ---- refused calls: failure value, errno, no effect ---------------------- */

enum {
	S_OPEN,
	S_UNLINK,
	S_WRITE,
	S_MKDIR,
	S_FOPEN,
	S_FPRINTF,
	S_FCLOSE,
	S_OPENDIR,
	S_GAI,
	S_MMAP,
	S_SYSTEM,
	S_SPAWN,
	S_COUNT
};
static const char *const s_names[S_COUNT] = {"open",	    "unlink",  "write",	 "mkdir",
					     "fopen",	    "fprintf", "fclose", "opendir",
					     "getaddrinfo", "mmap",    "system", "posix_spawn"};

struct strict_run {
	struct fixture *f;
	int set_rc;
	int refused[S_COUNT]; /* the failure value came back */
	int err[S_COUNT];
	int accept_ret, accept_err;
};

#define REFUSED(s, i, cond)               \
	do {                              \
		(s)->refused[i] = (cond); \
		(s)->err[i] = errno;      \
	} while (0)

static void strict_calls(void *arg)
{
	struct strict_run *s = arg;
	struct fixture *f = s->f;
	struct addrinfo *ai = NULL;
	char cmd[PATH_MAX + 16];
	pid_t pid;
	char *const argv[] = {"true", NULL};

	s->set_rc = rt_offload_set_thread_mode(RT_OFFLOAD_MODE_STRICT);
	errno = 0;
	REFUSED(s, S_OPEN, open(f->path, O_CREAT | O_WRONLY, 0644) == -1);
	REFUSED(s, S_UNLINK, unlink(f->file) == -1);
	REFUSED(s, S_WRITE, write(f->wfd, "more", 4) == -1);
	REFUSED(s, S_MKDIR, mkdir(f->path, 0755) == -1);
	REFUSED(s, S_FOPEN, fopen(f->path, "w") == NULL);
	REFUSED(s, S_FPRINTF, fprintf(f->stream, "refused %d\n", 1) == -1);
	REFUSED(s, S_FCLOSE, fclose(f->stream) == EOF);
	REFUSED(s, S_OPENDIR, opendir(f->dir) == NULL);
	REFUSED(s, S_GAI, getaddrinfo("localhost", NULL, NULL, &ai) == EAI_SYSTEM && !ai);
	REFUSED(s, S_MMAP,
		mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) == MAP_FAILED);
	snprintf(cmd, sizeof(cmd), "touch '%s'", f->path);
	REFUSED(s, S_SYSTEM, system(cmd) == -1);
	/* posix_spawn returns its error instead of setting errno. */
	int rc = posix_spawnp(&pid, "true", NULL, NULL, argv, environ);
	s->refused[S_SPAWN] = rc == RT_OFFLOAD_STRICT_ERRNO;
	s->err[S_SPAWN] = rc;
	/* Allow-listed calls run on the caller whatever the mode. */
	s->accept_ret = accept(f->lsn, NULL, NULL);
	s->accept_err = errno;
}

Test(strict, refuses_with_no_effect, .timeout = TEST_TIMEOUT)
{
	struct fixture f;
	struct strict_run s = {.f = &f};

	fixture_setup(&f);
	start_helpers();
	struct rt_offload_stats a = stats_now();
	run_marked(strict_calls, &s);
	struct rt_offload_stats b = stats_now();

	cr_assert_eq(s.set_rc, 0);
	for (int i = 0; i < S_COUNT; i++) {
		cr_expect(s.refused[i], "%s was not refused with its failure value", s_names[i]);
		cr_expect_eq(s.err[i], RT_OFFLOAD_STRICT_ERRNO, "%s: errno %d, expected %d",
			     s_names[i], s.err[i], RT_OFFLOAD_STRICT_ERRNO);
	}
	cr_expect_eq(b.denied - a.denied, S_COUNT, "denied %lu", b.denied - a.denied);
	cr_expect_eq(b.offloaded - a.offloaded, 0, "a strict thread offloaded %lu requests",
		     b.offloaded - a.offloaded);
	cr_expect(s.accept_ret == -1 && s.accept_err == EAGAIN, "accept: %d errno %d", s.accept_ret,
		  s.accept_err);
	cr_expect_eq(b.local - a.local, 1, "accept ran on the caller, counted local");

	/* Nothing happened: no file, no directory, same bytes, stream intact. */
	cr_expect(!exists(f.path), "a refused call created %s", f.path);
	cr_expect(exists(f.file), "a refused unlink removed the file");
	cr_expect_eq(size_of(f.file), 5, "a refused write wrote");
	cr_assert_eq(fflush(f.stream), 0, "the refused fclose closed the stream");
	cr_expect_eq(ftell(f.stream), 0, "a refused fprintf buffered output");
	fixture_teardown(&f);
}

/* ---- the mode API ------------------------------------------------------- */

struct modes {
	struct fixture *f;
	int bad_rc, bad_err, neg_rc, neg_err;
	int after_bad_ok; /* an invalid mode left offloading on */
	int strict_ok, strict_err;
	int back_ok;	 /* offload mode again: the call runs */
	int unmarked_ok; /* strict but unmarked: direct */
	int marked_before, marked_after;
};

static void mode_calls(void *arg)
{
	struct modes *m = arg;
	char path[PATH_MAX + 8];

	m->marked_before = rt_offload_thread_is_marked();
	m->bad_rc = rt_offload_set_thread_mode(42);
	m->bad_err = errno;
	m->neg_rc = rt_offload_set_thread_mode(-1);
	m->neg_err = errno;
	m->after_bad_ok = write(m->f->wfd, "a", 1) == 1;
	rt_offload_set_thread_mode(RT_OFFLOAD_MODE_STRICT);
	m->strict_ok = write(m->f->wfd, "b", 1) == 1;
	m->strict_err = errno;
	rt_offload_set_thread_mode(RT_OFFLOAD_MODE_OFFLOAD);
	m->back_ok = write(m->f->wfd, "c", 1) == 1;
	rt_offload_set_thread_mode(RT_OFFLOAD_MODE_STRICT);
	rt_offload_unmark_thread();
	m->marked_after = rt_offload_thread_is_marked();
	snprintf(path, sizeof(path), "%s", m->f->path);
	int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	m->unmarked_ok = fd >= 0 && write(fd, "d", 1) == 1;
	close(fd);
	rt_offload_mark_thread(); /* run_marked unmarks at the end */
}

Test(strict, mode_api, .timeout = TEST_TIMEOUT)
{
	struct fixture f;
	struct modes m = {.f = &f};

	fixture_setup(&f);
	start_helpers();
	struct rt_offload_stats a = stats_now();
	run_marked(mode_calls, &m);
	struct rt_offload_stats b = stats_now();

	cr_expect(m.bad_rc == -1 && m.bad_err == EINVAL, "set_thread_mode(42): %d errno %d",
		  m.bad_rc, m.bad_err);
	cr_expect(m.neg_rc == -1 && m.neg_err == EINVAL);
	cr_expect(m.after_bad_ok, "a rejected mode changed the thread's mode");
	cr_expect(!m.strict_ok && m.strict_err == RT_OFFLOAD_STRICT_ERRNO);
	cr_expect(m.back_ok, "RT_OFFLOAD_MODE_OFFLOAD did not restore offloading");
	cr_expect(m.marked_before == 1 && m.marked_after == 0);
	cr_expect(m.unmarked_ok, "an unmarked strict thread must call directly");
	cr_expect_eq(size_of(f.file), 5 + 2, "only the two allowed writes landed");
	cr_expect_eq(size_of(f.path), 1);
	/* Offloaded: the two writes; denied: one; the unmarked calls: nothing. */
	cr_expect_eq(b.offloaded - a.offloaded, 2, "offloaded %lu", b.offloaded - a.offloaded);
	cr_expect_eq(b.denied - a.denied, 1, "denied %lu", b.denied - a.denied);
	cr_expect_eq(b.local - a.local, 0);
	cr_expect_eq(rt_offload_thread_is_marked(), 0, "marks are per thread");
	fixture_teardown(&f);
}

/* ---- mode= from RTOFFLOAD_OPTIONS (probe, preloaded) ----------------------- */

Test(strict, mode_option_applies_to_marked_threads, .timeout = TEST_TIMEOUT)
{
	char dir[PATH_MAX], preload[2 * PATH_MAX];
	struct proc p;

	tmp_make(dir);
	pathf(preload, "LD_PRELOAD=%s", rto_preload());
	char *argv[] = {(char *)rto_probe_path(), "strict", dir, NULL};
	char *env[] = {preload, "RTOFFLOAD_OPTIONS=mode=strict", NULL};
	cr_assert_eq(run_proc(argv, env, &p), 0);
	cr_assert(WIFEXITED(p.status) && WEXITSTATUS(p.status) == 0, "probe: status %#x: %s",
		  p.status, p.err);
	cr_expect_eq(kv(p.out, "strict_open", 0), -1, "%s", p.out);
	cr_expect_eq(kv(p.out, "strict_errno", 0), RT_OFFLOAD_STRICT_ERRNO, "%s", p.out);
	cr_expect_eq(kv(p.out, "strict_created", 1), 0, "%s", p.out);
	cr_expect_geq(kv(p.out, "denied", 0), 1, "%s", p.out);
	/* A thread's own mode overrides the option. */
	cr_expect_eq(kv(p.out, "offload_open", 0), 1, "%s", p.out);
	cr_expect_eq(kv(p.out, "offload_count", 0), 1, "%s", p.out);
	cr_expect_eq(kv(p.out, "created", 0), 1, "%s", p.out);
	tmp_remove(dir);
}

/* ---- the statistics count exactly the calls made --------------------------- */

struct sequence {
	struct fixture *f;
};

/* 3 write, 1 fsync, 2 fprintf, 1 fflush, open, close, stat: 10 offloaded; */
/* then strict: 2 denied; accept: 1 local. */
static void sequence_calls(void *arg)
{
	struct fixture *f = ((struct sequence *)arg)->f;
	struct stat st;

	for (int i = 0; i < 3; i++)
		write(f->wfd, "x", 1);
	fsync(f->wfd);
	fprintf(f->stream, "%d\n", 1);
	fprintf(f->stream, "%d\n", 2);
	fflush(f->stream);
	close(open(f->file, O_RDONLY | O_CLOEXEC));
	stat(f->file, &st);
	rt_offload_set_thread_mode(RT_OFFLOAD_MODE_STRICT);
	write(f->wfd, "y", 1);
	fsync(f->wfd);
	accept(f->lsn, NULL, NULL);
}

Test(strict, stats_totals_match_calls, .timeout = TEST_TIMEOUT)
{
	struct fixture f;
	struct sequence s = {&f};
	struct rt_offload_stats z;

	fixture_setup(&f);
	cr_expect(rt_offload_get_stats(NULL) == -1 && errno == EINVAL);
	start_helpers();
	struct rt_offload_stats a = stats_now();
	run_marked(sequence_calls, &s);
	struct rt_offload_stats b = stats_now();

	cr_expect_eq(b.offloaded - a.offloaded, 10, "offloaded %lu for 10 offloadable calls",
		     b.offloaded - a.offloaded);
	cr_expect_eq(b.denied - a.denied, 2, "denied %lu", b.denied - a.denied);
	cr_expect_eq(b.local - a.local, 1, "local %lu", b.local - a.local);
	cr_expect_eq(size_of(f.file), 5 + 3);
	/* Round trips were measured: ordered, non-zero (no value is asserted). */
	cr_expect(b.rtt_p50_ns > 0 && b.rtt_p50_ns <= b.rtt_p99_ns && b.rtt_p99_ns <= b.rtt_max_ns,
		  "p50 %lu p99 %lu max %lu", b.rtt_p50_ns, b.rtt_p99_ns, b.rtt_max_ns);
	memset(&z, 0, sizeof(z));
	cr_expect_arr_eq(b.reserved, z.reserved, sizeof(z.reserved), "reserved must be zero");
	fixture_teardown(&f);
}

/* ---- a strict thread makes no request (the option child) ------------------- */

#define BASE "workers=1:spin_ns=0:fd_local=socket,anon,tmpfs,chr"

/* "name=R/E" in out: R and E. */
static void result(const struct run *r, const char *name, long *ret, long *err)
{
	char key[32];
	const char *p;

	snprintf(key, sizeof(key), " %s=", name);
	p = strstr(r->out, key);
	if (!p && !strncmp(r->out, key + 1, strlen(key) - 1))
		p = r->out - 1;
	cr_assert_not_null(p, "no %s in: %s", name, r->out);
	cr_assert_eq(sscanf(p + strlen(key), "%ld/%ld", ret, err), 2);
}

static void expect_ran(const struct run *r, const char *name)
{
	long ret, err;

	result(r, name, &ret, &err);
	cr_expect_eq(ret, 1, "%s: ran locally, wrote 1 byte; got %ld errno %ld", name, ret, err);
}

static void expect_refused(const struct run *r, const char *name)
{
	long ret, err;

	result(r, name, &ret, &err);
	cr_expect(ret == -1 && err == RT_OFFLOAD_STRICT_ERRNO, "%s: refused; got %ld errno %ld",
		  name, ret, err);
}

static void strict_fd(const char *how, const char *opts)
{
	char all[256], head[128];
	struct run r;

	NEED_DISK();
	snprintf(all, sizeof(all), "%s%s", BASE, opts);
	RUN_CHILD(&r, all, "strict_fd", how, child_dir);
	cr_assert(!WIFSIGNALED(r.status) || WTERMSIG(r.status) != SIGSYS,
		  "%s: the strict thread made a futex call (it enqueued a request):\n%s", how,
		  r.err);
	assert_child_exit0(&r);
	expect_ran(&r, "sock");	     /* a socket: its kind known where it was born */
	expect_ran(&r, "null");	     /* /dev/null open before the mark: classified at mark */
	expect_refused(&r, "disk");  /* a disk file: offload, so refused */
	expect_ran(&r, "null2");     /* opened after the mark: classified where born */
	expect_refused(&r, "disk2"); /* same, a disk file */
	expect_refused(&r, "raw");   /* opened behind our back: unknown, so not local */
	expect_refused(&r, "fsync");
	/* nothing asked of a helper for the strict thread, nor for anyone else here */
	cr_expect_eq(json_count(&r, "fd_classify", "offloaded"), 0);
	cr_expect_eq(json_thread(&r, "strict", "offloaded"), 0);
	cr_expect_eq(json_thread(&r, "strict", "local"), 5); /* 3 writes, 2 barrier waits */
	cr_expect_eq(json_thread(&r, "strict", "denied"), 4);
	snprintf(head, sizeof(head),
		 "==%d==rtoffload: strict 'write' from realtime thread 'strict'", r.pid);
	cr_expect_not_null(strstr(r.err, head), "the refusals are reported:\n%s", r.err);
	run_free(&r);
}

Test(strict, strict_before_the_mark_makes_no_request, .init = child_setup, .fini = child_teardown,
     .timeout = 120)
{
	strict_fd("api", "");
}

Test(strict, strict_after_the_mark_makes_no_request, .init = child_setup, .fini = child_teardown,
     .timeout = 120)
{
	strict_fd("after", "");
}

Test(strict, mode_option_makes_no_request, .init = child_setup, .fini = child_teardown,
     .timeout = 120)
{
	strict_fd("option", ":mode=strict");
}
