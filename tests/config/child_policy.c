/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Scenarios for policy=, policy_file= and on_strict=: one representative
 * call per class (and a few more), made by a marked thread.
 *
 *   op NAME[,NAME...] DIR [filter] [apistrict]
 *
 * Each named op is set up by the main thread (unmarked: not counted), made
 * once by a marked thread named "ctl", then its effect is checked and it is
 * cleaned up by the main thread again.  With "filter" the marked thread
 * first installs a seccomp filter, on itself only, that fails the op's
 * syscalls with FILTER_ERRNO: a call that runs on the caller fails, an
 * offloaded one does not.  With "apistrict" it sets its own mode to
 * RT_OFFLOAD_MODE_STRICT.  One line per op:
 *
 *   op=NAME ret=N errno=N effect=0|1 tid=N
 *
 * effect=1: what the call does is visible afterwards (the file exists, the
 * descriptor is valid...); a refused call must leave effect=0.
 */
#include "child.h"

#include <dirent.h>
#include <fcntl.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

struct opctx {
	const char *dir;
	char path[PATH_MAX];
	char cmd[PATH_MAX + 32];
	int fd, fd2, fd3;
	void *ptr;
	long ret;
	int err;
};

struct op {
	const char *name; /* also the wrapped function it calls */
	long nrs[4];	  /* the syscalls behind it, for the filter; -1 ends */
	void (*setup)(struct opctx *c);
	void (*call)(struct opctx *c); /* on the marked thread: sets ret and err */
	int (*effect)(struct opctx *c);
	void (*cleanup)(struct opctx *c);
};

/* ---- shared pieces ------------------------------------------------------------- */

static void name_path(struct opctx *c, const char *name)
{
	path_join(c->path, c->dir, name);
	c->fd = c->fd2 = c->fd3 = -1;
}

static void open_path(struct opctx *c, const char *name)
{
	name_path(c, name);
	c->fd = open(c->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (c->fd < 0)
		fail("open %s", c->path);
}

static int path_exists(struct opctx *c)
{
	return access(c->path, F_OK) == 0;
}

static int ret_ok(struct opctx *c)
{
	return c->ret >= 0;
}

static void close_all(struct opctx *c)
{
	int fds[] = {c->fd, c->fd2, c->fd3};

	for (int i = 0; i < 3; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	unlink(c->path);
}

/* ---- desc --------------------------------------------------------------------- */

static void creat_setup(struct opctx *c)
{
	name_path(c, "creat.file");
}

static void creat_call(struct opctx *c)
{
	c->ret = c->fd = creat(c->path, 0644);
}

static void fsync_setup(struct opctx *c)
{
	open_path(c, "fsync.file");
}

static void fsync_call(struct opctx *c)
{
	c->ret = fsync(c->fd);
}

static void write_setup(struct opctx *c)
{
	open_path(c, "write.file");
}

static void write_call(struct opctx *c)
{
	c->ret = write(c->fd, "x", 1);
}

/* The byte reached the file: the write ran (wherever it ran). */
static int write_effect(struct opctx *c)
{
	return file_size(c->path) == 1;
}

/* ---- path, dir ------------------------------------------------------------------- */

static void mkdir_setup(struct opctx *c)
{
	name_path(c, "mkdir.dir");
}

static void mkdir_call(struct opctx *c)
{
	c->ret = mkdir(c->path, 0755);
}

static int mkdir_effect(struct opctx *c)
{
	struct stat st;
	return stat(c->path, &st) == 0 && S_ISDIR(st.st_mode);
}

static void mkdir_cleanup(struct opctx *c)
{
	rmdir(c->path);
}

static void unlink_setup(struct opctx *c)
{
	open_path(c, "unlink.file");
	close(c->fd);
	c->fd = -1;
}

static void unlink_call(struct opctx *c)
{
	c->ret = unlink(c->path);
}

static int unlink_effect(struct opctx *c)
{
	return !path_exists(c);
}

static void opendir_setup(struct opctx *c)
{
	name_path(c, ".");
	c->ptr = NULL;
}

static void opendir_call(struct opctx *c)
{
	c->ptr = opendir(c->dir);
	c->ret = c->ptr ? 0 : -1;
}

static void opendir_cleanup(struct opctx *c)
{
	if (c->ptr)
		closedir(c->ptr);
}

/* ---- stdio -------------------------------------------------------------------- */

static void fopen_setup(struct opctx *c)
{
	name_path(c, "fopen.file");
	c->ptr = NULL;
}

static void fopen_call(struct opctx *c)
{
	c->ptr = fopen(c->path, "w");
	c->ret = c->ptr ? 0 : -1;
}

static void fopen_cleanup(struct opctx *c)
{
	if (c->ptr)
		fclose(c->ptr);
	unlink(c->path);
}

static void fprintf_setup(struct opctx *c)
{
	name_path(c, "fprintf.file");
	if (!(c->ptr = fopen(c->path, "w")))
		fail("fopen %s", c->path);
}

static void fprintf_call(struct opctx *c)
{
	c->ret = fprintf(c->ptr, "x");
}

/* fflush by the unmarked main thread: what the call put in the stream reaches the file. */
static int fprintf_effect(struct opctx *c)
{
	fflush(c->ptr);
	return file_size(c->path) == 1;
}

/* ---- dns, net -------------------------------------------------------------------- */

static void plain_setup(struct opctx *c)
{
	name_path(c, "unused");
	c->ptr = NULL;
}

static void getaddrinfo_call(struct opctx *c)
{
	struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM};
	struct addrinfo *res = NULL;

	c->ret = getaddrinfo("localhost", "80", &hints, &res);
	c->ptr = res;
}

static int getaddrinfo_effect(struct opctx *c)
{
	return c->ret == 0 && c->ptr != NULL;
}

static void getaddrinfo_cleanup(struct opctx *c)
{
	if (c->ptr)
		freeaddrinfo(c->ptr);
}

static void socket_call(struct opctx *c)
{
	c->ret = c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
}

/* A listening socket with one connection waiting: accept returns at once. */
static void accept_setup(struct opctx *c)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};

	name_path(c, "accept.sock");
	if (strlen(c->path) >= sizeof(sa.sun_path))
		fail("socket path too long");
	strcpy(sa.sun_path, c->path);
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	c->fd2 = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0 || c->fd2 < 0 || bind(c->fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    listen(c->fd, 1) != 0 || connect(c->fd2, (struct sockaddr *)&sa, sizeof(sa)) != 0)
		fail("listening socket");
}

static void accept_call(struct opctx *c)
{
	c->ret = c->fd3 = accept(c->fd, NULL, NULL);
}

/* ---- memory, process ----------------------------------------------------------- */

static void mmap_call(struct opctx *c)
{
	c->ptr = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	c->ret = c->ptr == MAP_FAILED ? -1 : 0;
}

static void mmap_cleanup(struct opctx *c)
{
	if (c->ptr && c->ptr != MAP_FAILED)
		munmap(c->ptr, 4096);
}

static void system_setup(struct opctx *c)
{
	name_path(c, "system.out");
	snprintf(c->cmd, sizeof(c->cmd), "echo ran > %s", c->path);
}

static void system_call(struct opctx *c)
{
	c->ret = system(c->cmd);
}

static const struct op ops[] = {
	{"creat",
	 {SYS_creat, SYS_open, SYS_openat, -1},
	 creat_setup,
	 creat_call,
	 path_exists,
	 close_all},
	{"fsync", {SYS_fsync, -1}, fsync_setup, fsync_call, ret_ok, close_all},
	{"write", {SYS_write, -1}, write_setup, write_call, write_effect, close_all},
	{"mkdir",
	 {SYS_mkdir, SYS_mkdirat, -1},
	 mkdir_setup,
	 mkdir_call,
	 mkdir_effect,
	 mkdir_cleanup},
	{"unlink",
	 {SYS_unlink, SYS_unlinkat, -1},
	 unlink_setup,
	 unlink_call,
	 unlink_effect,
	 close_all},
	{"opendir",
	 {SYS_open, SYS_openat, -1},
	 opendir_setup,
	 opendir_call,
	 ret_ok,
	 opendir_cleanup},
	{"fopen", {SYS_open, SYS_openat, -1}, fopen_setup, fopen_call, path_exists, fopen_cleanup},
	{"fprintf", {-1}, fprintf_setup, fprintf_call, fprintf_effect, fopen_cleanup},
	{"getaddrinfo",
	 {-1},
	 plain_setup,
	 getaddrinfo_call,
	 getaddrinfo_effect,
	 getaddrinfo_cleanup},
	{"socket", {SYS_socket, -1}, plain_setup, socket_call, ret_ok, close_all},
	{"accept", {SYS_accept, SYS_accept4, -1}, accept_setup, accept_call, ret_ok, close_all},
	{"mmap", {SYS_mmap, -1}, plain_setup, mmap_call, ret_ok, mmap_cleanup},
	{"system",
	 {SYS_clone, SYS_clone3, SYS_vfork, -1},
	 system_setup,
	 system_call,
	 path_exists,
	 close_all},
};

#define NOPS	 (sizeof(ops) / sizeof(ops[0]))
#define MAX_PLAN 8

/* ---- the scenario --------------------------------------------------------------------- */

struct plan {
	const struct op *op[MAX_PLAN];
	struct opctx ctx[MAX_PLAN];
	int n;
	int filter, apistrict;
	int filter_rc;
	pid_t tid;
};

static const struct op *op_named(const char *name, size_t n)
{
	for (size_t i = 0; i < NOPS; i++)
		if (strlen(ops[i].name) == n && memcmp(ops[i].name, name, n) == 0)
			return &ops[i];
	fail("unknown op '%.*s'", (int)n, name);
}

static void plan_parse(struct plan *p, const char *names, const char *dir)
{
	for (const char *s = names; *s && p->n < MAX_PLAN;) {
		size_t n = strcspn(s, ",");
		p->op[p->n] = op_named(s, n);
		p->ctx[p->n].dir = dir;
		p->n++;
		s += n + (s[n] == ',');
	}
}

/* Every syscall of every op of the plan, for one filter. */
static void plan_filter(struct plan *p)
{
	long nrs[4 * MAX_PLAN + 1];
	int k = 0;

	for (int i = 0; i < p->n; i++)
		for (const long *nr = p->op[i]->nrs; *nr >= 0; nr++)
			nrs[k++] = *nr;
	nrs[k] = -1;
	p->filter_rc = filter_syscalls(nrs, FILTER_ERRNO);
}

static void plan_marked(void *arg)
{
	struct plan *p = arg;

	p->tid = tid_now();
	if (p->apistrict)
		rt_offload_set_thread_mode(RT_OFFLOAD_MODE_STRICT);
	if (p->filter)
		plan_filter(p);
	for (int i = 0; i < p->n; i++) {
		errno = 0;
		p->op[i]->call(&p->ctx[i]);
		p->ctx[i].err = errno;
	}
}

int sc_op(int argc, char **argv)
{
	static struct plan p;

	if (argc < 2)
		fail("usage: op NAME[,NAME...] DIR [filter] [apistrict]");
	plan_parse(&p, argv[0], argv[1]);
	for (int i = 2; i < argc; i++) {
		p.filter |= strcmp(argv[i], "filter") == 0;
		p.apistrict |= strcmp(argv[i], "apistrict") == 0;
	}
	for (int i = 0; i < p.n; i++)
		p.op[i]->setup(&p.ctx[i]);
	on_thread("ctl", 1, plan_marked, &p);
	if (p.filter && p.filter_rc != 0)
		fail("seccomp filter refused");
	for (int i = 0; i < p.n; i++) {
		struct opctx *c = &p.ctx[i];
		say("op=%s ret=%ld errno=%d effect=%d tid=%d", p.op[i]->name, c->ret, c->err,
		    p.op[i]->effect(c), (int)p.tid);
		p.op[i]->cleanup(c);
	}
	return 0;
}

/* ---- on_strict=signal ----------------------------------------------------------------- */

static volatile sig_atomic_t handled;
static pid_t handler_tid;
static int handler_signo, handler_code;
static char handler_name[64];

/* Runs on the thread the signal was sent to: note which, and what it says. */
static void on_sigdebug(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;

	(void)sig;
	(void)uc;
	handler_tid = tid_now();
	handler_signo = si->si_signo;
	handler_code = si->si_code;
	if (si->si_value.sival_ptr)
		strncpy(handler_name, si->si_value.sival_ptr, sizeof(handler_name) - 1);
	handled++;
	errno = saved;
}

struct refused {
	int fd;
	long ret;
	int err;
	int handled_at_return; /* the handler had run when the call returned */
	pid_t tid;
};

static void refused_call(void *arg)
{
	struct refused *r = arg;

	r->tid = tid_now();
	errno = 0;
	r->ret = fsync(r->fd);
	r->err = errno;
	r->handled_at_return = handled;
}

/* sigdebug DIR: with policy=fsync:strict:on_strict=signal. */
int sc_sigdebug(int argc, char **argv)
{
	struct sigaction sa = {.sa_sigaction = on_sigdebug, .sa_flags = SA_SIGINFO};
	struct refused r = {.fd = -1};
	char path[PATH_MAX];

	if (argc < 1)
		fail("usage: sigdebug DIR");
	path_join(path, argv[0], "sigdebug.file");
	r.fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (r.fd < 0 || sigaction(RT_OFFLOAD_SIGDEBUG, &sa, NULL) != 0)
		fail("setup");
	on_thread("ctl", 1, refused_call, &r);
	say("ret=%ld errno=%d handled=%d handled_at_return=%d thread_tid=%d handler_tid=%d "
	    "signo=%d code=%d name=%s",
	    r.ret, r.err, (int)handled, r.handled_at_return, (int)r.tid, (int)handler_tid,
	    handler_signo, handler_code, handler_name[0] ? handler_name : "(none)");
	close(r.fd);
	unlink(path);
	return 0;
}
