/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The harness of the family tests: fixture, one run, comparison. */
#include "families.h"

#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

const char *fx_path(struct fx *x, int slot, const char *name)
{
	/* Never truncated (the fixture is short); the check keeps gcc quiet. */
	if (snprintf(x->path[slot], PATH_MAX, "%s/%s", x->dir, name) >= PATH_MAX)
		x->path[slot][0] = '\0';
	return x->path[slot];
}

void note(struct res *r, const char *fmt, ...)
{
	size_t n = strlen(r->data);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->data + n, sizeof(r->data) - n, fmt, ap);
	va_end(ap);
}

/* ---- the fixture ----------------------------------------------------------- */

static void make_file(struct fx *x, const char *name, const char *text)
{
	cr_assert_eq(spit(P(name), text, strlen(text)), 0, "fixture %s", name);
}

static void fx_files(struct fx *x)
{
	cr_assert_eq(mkdir(x->dir, 0755), 0, "fixture: %s", strerror(errno));
	make_file(x, "f", "hello world\n");
	make_file(x, "w", "");
	make_file(x, "wo", "");
	cr_assert_eq(mkdir(P("d"), 0755), 0);
	cr_assert_eq(mkdir(P("e"), 0755), 0);
	make_file(x, "d/a", "a");
	make_file(x, "d/b", "bb");
	make_file(x, "d/c", "ccc");
	cr_assert_eq(symlink("f", P("l")), 0);
	cr_assert_eq(truncate(P("w"), 0), 0);
	int fd = open(P("m"), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	cr_assert_geq(fd, 0);
	cr_assert_eq(ftruncate(fd, (off_t)x->page), 0);
	x->fmap = mmap(NULL, x->page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	cr_assert_neq(x->fmap, MAP_FAILED);
	close(fd);
}

static void fx_fds(struct fx *x)
{
	int p[2];

	x->dirfd = open(x->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	x->rd = open(P("f"), O_RDONLY | O_CLOEXEC);
	x->wr = open(P("w"), O_RDWR | O_CLOEXEC);
	x->wo = open(P("wo"), O_WRONLY | O_CLOEXEC);
	x->ddir = open(P("d"), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert(x->dirfd >= 0 && x->rd >= 0 && x->wr >= 0 && x->wo >= 0 && x->ddir >= 0);
	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	x->pr = p[0];
	x->pw = p[1];
	cr_assert_eq(write(x->pw, "pipe data", 9), 9);
	x->bad = 1000; /* far above anything a test opens */
	cr_assert(fcntl(x->bad, F_GETFD) < 0 && errno == EBADF);
	x->fr = fopen(P("f"), "r");
	x->fw = fopen(P("fw"), "w+");
	x->fwo = fopen(P("fwo"), "w");
	x->fpipe = fdopen(dup(x->pr), "r");
	x->dp = opendir(P("d"));
	cr_assert(x->fr && x->fw && x->fwo && x->fpipe && x->dp);
}

static void fx_maps(struct fx *x)
{
	/*
	 * With a PROT_NONE page of the fixture's after it: the EINVAL cases
	 * pass map + 1 and a page, a range into the next page, and memory of
	 * the library's own there (a helper's stack) would rightly keep the
	 * call on its caller (route.h: rto_range_arg).  Under ThreadSanitizer
	 * and load that happened once in a CI run.
	 */
	x->map =
		mmap(NULL, 2 * x->page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(x->map, MAP_FAILED);
	x->map_guard = (char *)x->map + x->page;
	cr_assert_eq(mprotect(x->map_guard, x->page, PROT_NONE), 0);
	memset(x->map, 'A', x->page);
	/*
	 * Low in the address space, where the kernel's top-down choice of
	 * addresses never goes: any mmap (malloc's, a thread stack, a
	 * sanitizer runtime's own) could take a hole left up there, and the
	 * ENOMEM cases, mremap_fixed and the teardown would hit its memory.
	 */
	char *three = MAP_FAILED;
	for (uintptr_t at = 0x10000000; three == MAP_FAILED && at < 0x20000000; at += 0x1000000) {
		three = mmap((void *)at, 3 * x->page, PROT_READ,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (three != MAP_FAILED && three != (char *)at) { /* a kernel that took a hint */
			munmap(three, 3 * x->page);
			three = MAP_FAILED;
		}
	}
	cr_assert_neq(three, MAP_FAILED, "no room for the fixture's hole: %s", strerror(errno));
	x->hole = three + x->page;
	cr_assert_eq(munmap(x->hole, x->page), 0);
}

static int loopback_socket(int type, struct sockaddr_in *addr)
{
	socklen_t len = sizeof(*addr);
	int s = socket(AF_INET, type | SOCK_CLOEXEC, 0);

	cr_assert_geq(s, 0);
	memset(addr, 0, sizeof(*addr));
	addr->sin_family = AF_INET;
	addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	cr_assert_eq(bind(s, (struct sockaddr *)addr, sizeof(*addr)), 0);
	cr_assert_eq(getsockname(s, (struct sockaddr *)addr, &len), 0);
	return s;
}

static void fx_sockets(struct fx *x)
{
	x->tcp = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	x->udp = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	cr_assert(x->tcp >= 0 && x->udp >= 0);
	x->lsn = loopback_socket(SOCK_STREAM | SOCK_NONBLOCK, &x->lsn_addr);
	cr_assert_eq(listen(x->lsn, 8), 0);
	/* Bound then closed: nobody listens there (a port is not reused at once). */
	close(loopback_socket(SOCK_STREAM, &x->dead_addr));
}

static void capture_reset(struct fx *x)
{
	if (!x->capture)
		return;
	fflush(stdout);
	cr_assert_eq(ftruncate(1, 0), 0);
	cr_assert_eq(lseek(1, 0, SEEK_SET), 0);
}

static void fx_setup(struct fx *x, const char *root, int capture)
{
	memset(x, 0, sizeof(*x));
	strcpy(x->root, root);
	pathf(x->dir, "%s/fx", root);
	x->capture = capture;
	x->page = (size_t)sysconf(_SC_PAGESIZE);
	fx_files(x);
	fx_fds(x);
	fx_maps(x);
	fx_sockets(x);
	capture_reset(x);
}

static void close_if(int fd)
{
	if (fd >= 0)
		close(fd);
}

static void fx_teardown(struct fx *x)
{
	int fds[] = {x->dirfd, x->rd, x->wr, x->wo, x->pr, x->pw, x->ddir, x->tcp, x->udp, x->lsn};

	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		close_if(fds[i]);
	FILE *fps[] = {x->fr, x->fw, x->fwo, x->fpipe};
	for (size_t i = 0; i < sizeof(fps) / sizeof(fps[0]); i++) {
		if (fps[i])
			fclose(fps[i]);
	}
	if (x->dp)
		closedir(x->dp);
	if (x->map)
		munmap(x->map, x->page);
	munmap(x->map_guard, x->page);
	munmap(x->hole - x->page, 3 * x->page);
	munmap(x->fmap, x->page);
	tmp_remove(x->dir);
}

/* ---- describing the outcome ---------------------------------------------- */

/* What the descriptor a call returned is: type, access mode, size. */
static void describe_fd(struct res *r)
{
	struct stat st;

	if (fstat(r->fd, &st) != 0) {
		note(r, " fd:unusable");
		return;
	}
	note(r, " fd:type=%o acc=%d size=%lld", (unsigned)(st.st_mode & S_IFMT),
	     fcntl(r->fd, F_GETFL) & O_ACCMODE, S_ISREG(st.st_mode) ? (long long)st.st_size : 0);
}

/* The two ends a pipe() or socketpair() returned: do bytes go through? */
static void describe_pair(struct res *r)
{
	char c = 0;

	note(r, " pair:%zd", write(r->pair[1], "z", 1));
	note(r, ",%zd,%c", read(r->pair[0], &c, 1), c);
	close(r->pair[0]);
	close(r->pair[1]);
}

static void cleanup(struct res *r)
{
	if (r->pair[0] >= 0 && r->pair[1] >= 0)
		describe_pair(r);
	if (r->fd >= 0) {
		describe_fd(r);
		close(r->fd);
	}
	if (r->fp)
		fclose(r->fp);
	if (r->pfp)
		note(r, " pclose=%d", pclose(r->pfp));
	if (r->dp)
		closedir(r->dp);
	if (r->mem)
		munmap(r->mem, r->memlen);
	free(r->heap);
	if (r->ai)
		freeaddrinfo(r->ai);
	if (r->dl)
		dlclose(r->dl);
	if (r->pid > 0) {
		int st = -1;
		waitpid(r->pid, &st, 0);
		note(r, " child=%#x", (unsigned)st);
	}
}

static void snap_add(char *snap, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void snap_add(char *snap, size_t len, const char *fmt, ...)
{
	size_t n = strlen(snap);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(snap + n, len - n, fmt, ap);
	va_end(ap);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void snap_entry(const char *path, const char *name, char *snap, size_t len)
{
	struct stat st;
	char buf[65] = "";

	if (lstat(path, &st) != 0)
		return;
	snap_add(snap, len, "%s:%o:%lld", name, (unsigned)st.st_mode, (long long)st.st_size);
	if (S_ISLNK(st.st_mode)) {
		ssize_t n = readlink(path, buf, sizeof(buf) - 1);
		buf[n > 0 ? n : 0] = '\0';
		snap_add(snap, len, "->%s", buf);
	} else if (S_ISREG(st.st_mode)) {
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
		buf[n > 0 ? n : 0] = '\0';
		close_if(fd);
		snap_add(snap, len, "=\"%s\"", buf);
	}
	snap_add(snap, len, "; ");
}

/* Every entry of dir (and one level below), sorted, with mode, size, bytes. */
static void snapshot(const char *dir, const char *prefix, char *snap, size_t len)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char *names[64], path[PATH_MAX], sub[PATH_MAX];
	size_t n = 0;

	if (!d)
		return;
	while ((e = readdir(d)) && n < 64) {
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			names[n++] = strdup(e->d_name);
	}
	closedir(d);
	qsort(names, n, sizeof(names[0]), by_name);
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		pathf(path, "%s/%s", dir, names[i]);
		pathf(sub, "%s%s", prefix, names[i]);
		snap_entry(path, sub, snap, len);
		if (!prefix[0] && lstat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
			pathf(sub, "%s/", names[i]);
			snapshot(path, sub, snap, len);
		}
		free(names[i]);
	}
}

static void capture_note(struct fx *x, struct res *r)
{
	char path[PATH_MAX];

	if (!x->capture)
		return;
	fflush(stdout);
	pathf(path, "%s/stdout", x->root);
	char *s = slurp(path, NULL);
	note(r, " stdout=\"%s\"", s ? s : "?");
	free(s);
}

/* ---- one run ------------------------------------------------------------- */

struct job {
	const struct fcase *c;
	struct fx *x;
	struct res *r;
};

static void job_run(void *p)
{
	struct job *j = p;

	h_errno = 0;
	errno = ERRNO_SENTINEL;
	j->c->call(j->x, j->r);
}

static void run_case(const struct fcase *c, const char *root, int capture, int marked,
		     struct res *r)
{
	struct fx x;
	struct job j = {c, &x, r};

	memset(r, 0, sizeof(*r));
	r->fd = r->pair[0] = r->pair[1] = -1;
	fx_setup(&x, root, capture);
	if (c->prep)
		c->prep(&x, r);
	struct rt_offload_stats s0 = stats_now();
	if (marked)
		run_marked(job_run, &j);
	else
		run_unmarked(job_run, &j);
	struct rt_offload_stats s1 = stats_now();
	r->offloaded = s1.offloaded - s0.offloaded;
	r->local = s1.local - s0.local;
	r->denied = s1.denied - s0.denied;
	if (c->post)
		c->post(&x, r);
	cleanup(r);
	fflush(NULL);
	capture_note(&x, r);
	snapshot(x.dir, "", r->snap, sizeof(r->snap));
	fx_teardown(&x);
}

/* stdout into root/stdout for the rest of this test process. */
static void capture_stdout(const char *root)
{
	char path[PATH_MAX];

	pathf(path, "%s/stdout", root);
	fflush(stdout);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	cr_assert_geq(fd, 0);
	cr_assert_eq(dup2(fd, 1), 1);
	close(fd);
}

/* ---- comparison ------------------------------------------------------------ */

static void expect_outcome(const struct fcase *c, const struct res *r)
{
	if (c->either)
		return;
	cr_expect_eq(r->fail, c->fail, "[%s] %s (ret %ld errno %d %s)", c->name,
		     c->fail ? "should fail" : "should succeed", r->ret, r->err, strerror(r->err));
	if (c->fail && c->err)
		cr_expect_eq(r->err, c->err, "[%s] errno %d (%s), expected %d (%s)", c->name,
			     r->err, strerror(r->err), c->err, strerror(c->err));
	if (c->code)
		cr_expect_eq(r->code, c->code, "[%s] returned %d, expected %d", c->name, r->code,
			     c->code);
}

static void expect_same(const struct fcase *c, const struct res *d, const struct res *m)
{
	cr_expect_eq(m->ret, d->ret, "[%s] result: marked %ld, direct %ld", c->name, m->ret,
		     d->ret);
	cr_expect_eq(m->err, d->err, "[%s] errno: marked %d (%s), direct %d (%s)", c->name, m->err,
		     strerror(m->err), d->err, strerror(d->err));
	cr_expect_eq(m->code, d->code, "[%s] code: marked %d, direct %d", c->name, m->code,
		     d->code);
	cr_expect_eq(m->herr, d->herr, "[%s] h_errno: marked %d, direct %d", c->name, m->herr,
		     d->herr);
	cr_expect_str_eq(m->data, d->data, "[%s] output:\n  marked: %s\n  direct: %s", c->name,
			 m->data, d->data);
	cr_expect_str_eq(m->snap, d->snap, "[%s] files:\n  marked: %s\n  direct: %s", c->name,
			 m->snap, d->snap);
}

/*
 * Each call of the marked run was offloaded: counted as such, exactly once,
 * never as local or denied (every wrapped call of a marked thread is one
 * of the three; the library's own requests, such as learning a
 * descriptor's kind, are not in the totals).
 */
static void expect_counted(const struct fcase *c, const struct res *d, const struct res *m)
{
	cr_expect_gt(m->calls, 0, "[%s] made no recorded call", c->name);
	cr_expect_eq(m->calls, d->calls, "[%s] call count differs", c->name);
	cr_expect(d->offloaded == 0 && d->local == 0 && d->denied == 0,
		  "[%s] an unmarked thread's calls were counted", c->name);
	if (c->first) {
		cr_expect_leq(m->offloaded, 1, "[%s] offloaded %lu, expected at most one", c->name,
			      m->offloaded);
		cr_expect_eq(m->offloaded + m->local, (uint64_t)m->calls,
			     "[%s] %lu+%lu of %d calls", c->name, m->offloaded, m->local, m->calls);
	} else if (c->local) {
		cr_expect_eq(m->offloaded, 0, "[%s] offloaded %lu, expected none", c->name,
			     m->offloaded);
		cr_expect_eq(m->local, (uint64_t)m->calls, "[%s] local %lu, expected %d", c->name,
			     m->local, m->calls);
	} else {
		cr_expect_eq(m->offloaded, (uint64_t)m->calls, "[%s] offloaded %lu, expected %d",
			     c->name, m->offloaded, m->calls);
		cr_expect_eq(m->local, 0, "[%s] %lu calls ran locally", c->name, m->local);
	}
	cr_expect_eq(m->denied, 0, "[%s] denied %lu", c->name, m->denied);
}

void check_family(const char *family, const struct fcase *cases, size_t n, int capture)
{
	char root[PATH_MAX];
	struct res *d = malloc(sizeof(*d)), *m = malloc(sizeof(*m));

	cr_assert(d && m);
	tmp_make(root);
	if (capture)
		capture_stdout(root);
	start_helpers();
	for (size_t i = 0; i < n; i++) {
		run_case(&cases[i], root, capture, 0, d);
		run_case(&cases[i], root, capture, 1, m);
		expect_outcome(&cases[i], d);
		expect_outcome(&cases[i], m);
		expect_same(&cases[i], d, m);
		expect_counted(&cases[i], d, m);
	}
	cr_log_info("%s: %zu cases, each direct and offloaded", family, n);
	tmp_remove(root);
	free(d);
	free(m);
}
