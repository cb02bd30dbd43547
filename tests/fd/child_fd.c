/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Scenarios for fd_local=: decisions by descriptor.
 *
 *   fdkind KIND DIR    KIND: pipe eventfd memfd tmpfs null socketpair disk
 *     The main thread makes the descriptors; a marked thread makes exactly
 *     one write, one read and one fsync on them (so the stats_file rows of
 *     write, read and fsync say where each ran).  Prints
 *       write=N read=N fsync=N fsync_errno=N
 *
 *   fdreuse CASE DIR   CASE: close cross dup2 fclose reverse
 *     A descriptor number is learnt as one kind, then reborn as another;
 *     a marked thread writes 8 bytes to the new one.  Prints
 *       same=0|1 ret=N local=N offloaded=N content=TEXT
 *     same: the new descriptor got the old number (else the case proves
 *     nothing); local/offloaded: stats deltas around that one write;
 *     content: the disk file afterwards.
 */
#include "child.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#define PAYLOAD "payload!" /* 8 bytes: also a valid eventfd value */

/* ---- fdkind ----------------------------------------------------------------------- */

struct kind {
	int w, r, s; /* write to w, read from r, fsync s */
	char path[PATH_MAX];
	long wret, rret, sret;
	int serr;
};

static int open_or_fail(const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC, 0644);
	if (fd < 0)
		fail("open %s", path);
	return fd;
}

/* A file kind: write through one descriptor, read back through another. */
static void file_pair(struct kind *k, const char *path)
{
	k->w = k->s = open_or_fail(path, O_RDWR | O_CREAT | O_TRUNC);
	k->r = open_or_fail(path, O_RDONLY);
}

static void make_tmpfs(struct kind *k)
{
	strcpy(k->path, "/dev/shm/rtopol.XXXXXX");
	int fd = mkostemp(k->path, O_CLOEXEC);
	if (fd < 0)
		fail("mkostemp /dev/shm");
	close(fd);
	file_pair(k, k->path);
	unlink(k->path); /* open descriptors keep it: nothing is left behind in /dev/shm */
	k->path[0] = '\0';
}

static void make_memfd(struct kind *k)
{
	char self[64];
	k->w = k->s = memfd_create("rtopol", MFD_CLOEXEC);
	if (k->w < 0)
		fail("memfd_create");
	snprintf(self, sizeof(self), "/proc/self/fd/%d", k->w);
	k->r = open_or_fail(self, O_RDONLY);
}

static void make_kind(struct kind *k, const char *name, const char *dir)
{
	int p[2];

	k->path[0] = '\0';
	if (!strcmp(name, "pipe") && pipe2(p, O_CLOEXEC) == 0) {
		k->r = p[0];
		k->w = k->s = p[1];
	} else if (!strcmp(name, "eventfd") && (k->w = eventfd(0, EFD_CLOEXEC)) >= 0) {
		k->r = k->s = k->w;
	} else if (!strcmp(name, "socketpair") &&
		   socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p) == 0) {
		k->w = k->s = p[0];
		k->r = p[1];
	} else if (!strcmp(name, "null")) {
		k->w = k->r = k->s = open_or_fail("/dev/null", O_RDWR);
	} else if (!strcmp(name, "memfd")) {
		make_memfd(k);
	} else if (!strcmp(name, "tmpfs")) {
		make_tmpfs(k);
	} else if (!strcmp(name, "disk")) {
		path_join(k->path, dir, "fdkind.file");
		file_pair(k, k->path);
	} else {
		fail("unknown kind '%s'", name);
	}
}

static void kind_calls(void *arg)
{
	struct kind *k = arg;
	char buf[8];

	k->wret = write(k->w, PAYLOAD, 8);
	k->rret = read(k->r, buf, sizeof(buf));
	errno = 0;
	k->sret = fsync(k->s);
	k->serr = errno;
}

int sc_fdkind(int argc, char **argv)
{
	struct kind k;

	if (argc < 2)
		fail("usage: fdkind KIND DIR");
	make_kind(&k, argv[0], argv[1]);
	on_thread("ctl", 1, kind_calls, &k);
	say("write=%ld read=%ld fsync=%ld fsync_errno=%d", k.wret, k.rret, k.sret, k.serr);
	if (k.path[0])
		unlink(k.path);
	return 0;
}

/* ---- fdreuse ----------------------------------------------------------------------- */

struct reuse {
	const char *dir;
	char disk[PATH_MAX], shm[PATH_MAX];
	int p[2];
	int old;  /* the number, as first learnt */
	int fd;	  /* the descriptor written to at the end */
	FILE *f;  /* for the fclose case */
	int same; /* fd == old */
	long ret;
	uint64_t local, offloaded;
};

/* One write, with exact stats deltas around it. */
static void measured_write(struct reuse *u)
{
	struct rt_offload_stats a = stats_now();
	u->ret = write(u->fd, PAYLOAD, 8);
	struct rt_offload_stats b = stats_now();
	u->local = b.local - a.local;
	u->offloaded = b.offloaded - a.offloaded;
	u->same = u->fd == u->old;
}

/* Learn the pipe's write end as local: its class is now cached. */
static void learn_pipe(struct reuse *u)
{
	u->old = u->p[1];
	if (write(u->p[1], PAYLOAD, 8) != 8)
		u->ret = -100;
}

/* close: the pipe's number, closed and reopened as a disk file, all while marked. */
static void case_close(void *arg)
{
	struct reuse *u = arg;

	learn_pipe(u);
	close(u->p[1]);
	u->fd = open(u->disk, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	measured_write(u);
}

/* dup2: a disk descriptor copied over the pipe's number. */
static void case_dup2(void *arg)
{
	struct reuse *u = arg;
	int d = open(u->disk, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	learn_pipe(u);
	u->fd = dup2(d, u->p[1]);
	close(d);
	measured_write(u);
}

/* reverse: a disk number (learnt as offloaded) reborn as an eventfd. */
static void case_reverse(void *arg)
{
	struct reuse *u = arg;

	u->old = open(u->disk, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (write(u->old, "x", 1) != 1)
		u->ret = -100;
	close(u->old);
	u->fd = eventfd(0, EFD_CLOEXEC);
	measured_write(u);
}

static void learn_only(void *arg)
{
	learn_pipe(arg);
}

static void write_only(void *arg)
{
	measured_write(arg);
}

/* fclose: a tmpfs stream's number (learnt local) reborn by fopen of a disk file. */
static void case_fclose(void *arg)
{
	struct reuse *u = arg;

	u->old = fileno(u->f);
	if (write(u->old, PAYLOAD, 8) != 8)
		u->ret = -100;
	fclose(u->f);
	u->f = fopen(u->disk, "w");
	u->fd = u->f ? fileno(u->f) : -1;
	measured_write(u);
}

/*
 * cross: the number is learnt by one marked thread, closed and reborn by
 * the unmarked main thread, and written by another marked thread.
 */
static void case_cross(struct reuse *u)
{
	on_thread("ctl", 1, learn_only, u);
	close(u->p[1]);
	u->fd = open(u->disk, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	on_thread("ctl2", 1, write_only, u);
}

static void reuse_setup(struct reuse *u, const char *dir)
{
	u->dir = dir;
	path_join(u->disk, dir, "reuse.file");
	strcpy(u->shm, "/dev/shm/rtopol.XXXXXX");
	int fd = mkostemp(u->shm, O_CLOEXEC);
	if (fd < 0 || pipe2(u->p, O_CLOEXEC) != 0)
		fail("setup");
	close(fd);
	if (!(u->f = fopen(u->shm, "w")))
		fail("fopen %s", u->shm);
	unlink(u->shm); /* the stream keeps it: nothing is left behind in /dev/shm */
}

int sc_fdreuse(int argc, char **argv)
{
	static struct reuse u;

	if (argc < 2)
		fail("usage: fdreuse CASE DIR");
	reuse_setup(&u, argv[1]);
	if (!strcmp(argv[0], "close"))
		on_thread("ctl", 1, case_close, &u);
	else if (!strcmp(argv[0], "dup2"))
		on_thread("ctl", 1, case_dup2, &u);
	else if (!strcmp(argv[0], "reverse"))
		on_thread("ctl", 1, case_reverse, &u);
	else if (!strcmp(argv[0], "fclose"))
		on_thread("ctl", 1, case_fclose, &u);
	else if (!strcmp(argv[0], "cross"))
		case_cross(&u);
	else
		fail("unknown case '%s'", argv[0]);
	if (u.f)
		fclose(u.f);
	char *content = read_whole(u.disk, NULL);
	say("same=%d ret=%ld local=%lu offloaded=%lu content=%s", u.same, u.ret, u.local,
	    u.offloaded, content && content[0] ? content : "(empty)");
	free(content);
	unlink(u.disk);
	return 0;
}
