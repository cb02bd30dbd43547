/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Proof, from the kernel's side, that a marked thread's calls run on
 * another thread: not a counter of the library's, but
 *  - a seccomp filter installed on the marked thread only (no TSYNC):
 *    the syscalls it forbids still succeed when the thread is marked, and
 *    fail when it is not;
 *  - a filter that lets the marked thread make no system call but futex
 *    (everything else traps into a SIGSYS handler that records it): a
 *    long mixed workload leaves the record empty, which is the caller-path
 *    rule of docs/ARCHITECTURE.md ("no system call except futex");
 *  - the per-thread I/O counters (/proc/self/task/TID/io): the marked
 *    thread's syscr/syscw do not move while it reads and writes, the
 *    helpers' do.
 */
#include "harness.h"

#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/futex.h>
#include <linux/seccomp.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>
#include "raw_seccomp.h"

#if !defined(__x86_64__)
#define WITNESS_UNSUPPORTED 1 /* the filters and the SIGSYS fix-up are x86-64 */
#endif

/* ---- seccomp filters on the calling thread ------------------------------- */

#define MAX_INSNS 64

struct filter {
	struct sock_filter insn[MAX_INSNS];
	unsigned short n;
};

static void emit(struct filter *f, struct sock_filter s)
{
	if (f->n < MAX_INSNS)
		f->insn[f->n++] = s;
}

/* Load the arch; anything but x86-64 gets `other`.  Then load the number. */
static void prologue(struct filter *f, uint32_t other)
{
	emit(f, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					     offsetof(struct seccomp_data, arch)));
	emit(f, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0));
	emit(f, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, other));
	emit(f, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					     offsetof(struct seccomp_data, nr)));
}

/* if (nr == k) return action; */
static void match(struct filter *f, long k, uint32_t action)
{
	emit(f, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)k, 0, 1));
	emit(f, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, action));
}

static void finish(struct filter *f, uint32_t action)
{
	emit(f, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, action));
}

/* Without SECCOMP_FILTER_FLAG_TSYNC the filter binds this thread only. */

static int install(struct filter *f)
{
	struct sock_fprog prog = {.len = f->n, .filter = f->insn};

	if (f->n >= MAX_INSNS)
		return -1;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return -1;
	/*
	 * A raw syscall, not glibc's syscall(): the library honours a filter a
	 * thread installs for itself by running that thread's calls locally
	 * (libsrc/wrap/wrap_syscall.c).  This filter is a witness of where the calls run,
	 * so it is installed where the library cannot see it.
	 */
	return (int)raw_seccomp_filter(&prog);
}

/*
 * AddressSanitizer and ThreadSanitizer map their memory on the thread that
 * needs it (ASan: the fake stack of detect_stack_use_after_return,
 * allocator regions; TSan: its trace parts): a thread denied mmap dies in
 * the runtime (tests/sanitizers/README.md).  There mmap stays allowed and
 * only the marked side of OP_MMAP is checked.
 */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define MMAP_DENIED 0
#else
#define MMAP_DENIED 1
#endif

/* The syscalls behind the calls the EPERM test makes. */
static const long denied_nrs[] = {
	SYS_read,   SYS_pread64, SYS_write,   SYS_pwrite64,   SYS_open,	 SYS_openat,
	SYS_stat,   SYS_lstat,	 SYS_fstat,   SYS_newfstatat, SYS_statx, SYS_fsync,
	SYS_socket, SYS_mkdir,	 SYS_mkdirat, SYS_getdents64,
#if MMAP_DENIED
	SYS_mmap,
#endif
};

static int install_deny_filter(void)
{
	struct filter f = {.n = 0};

	prologue(&f, SECCOMP_RET_ALLOW);
	for (size_t i = 0; i < sizeof(denied_nrs) / sizeof(denied_nrs[0]); i++)
		match(&f, denied_nrs[i], SECCOMP_RET_ERRNO | EPERM);
	finish(&f, SECCOMP_RET_ALLOW);
	return install(&f);
}

/* Only futex and the return from the SIGSYS handler; the rest traps. */
static int install_trap_filter(void)
{
	struct filter f = {.n = 0};

	prologue(&f, SECCOMP_RET_TRAP);
	match(&f, SYS_futex, SECCOMP_RET_ALLOW);
	match(&f, SYS_rt_sigreturn, SECCOMP_RET_ALLOW);
#ifdef __SANITIZE_THREAD__
	/*
	 * Not the library's but ThreadSanitizer's (tsan preset,
	 * tests/sanitizers/README.md): its mmap/munmap interceptors reset the
	 * shadow of the range with madvise, and it maps memory of its own.
	 * The check that every call was offloaded still sees a call run here.
	 */
	match(&f, SYS_madvise, SECCOMP_RET_ALLOW);
	match(&f, SYS_mmap, SECCOMP_RET_ALLOW);
	match(&f, SYS_munmap, SECCOMP_RET_ALLOW);
#endif
	finish(&f, SECCOMP_RET_TRAP);
	return install(&f);
}

/* ---- the SIGSYS record ---------------------------------------------------- */

#define MAX_TRAPS 256

static _Atomic int ntraps;
static int traps[MAX_TRAPS];

/* Record the number; the syscall returns -ENOSYS; no syscall in here. */
static void on_sigsys(int sig, siginfo_t *si, void *ctx)
{
	(void)sig;
	int i = atomic_fetch_add(&ntraps, 1);
	if (i < MAX_TRAPS)
		traps[i] = si->si_syscall;
#ifdef __x86_64__
	((ucontext_t *)ctx)->uc_mcontext.gregs[REG_RAX] = -ENOSYS;
#else
	(void)ctx;
#endif
}

static void catch_sigsys(void)
{
	struct sigaction sa = {.sa_sigaction = on_sigsys, .sa_flags = SA_SIGINFO};

	sigemptyset(&sa.sa_mask);
	cr_assert_eq(sigaction(SIGSYS, &sa, NULL), 0);
}

/* Trapped numbers in [from, to) as text, skipping `skip` (-1: none). */
static void traps_text(int from, int to, long skip, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (int i = from; i < to && i < MAX_TRAPS && n + 16 < len; i++) {
		if (traps[i] != skip)
			n += (size_t)snprintf(buf + n, len - n, "%d ", traps[i]);
	}
}

static int count_traps(int from, int to, long nr)
{
	int n = 0;

	for (int i = from; i < to && i < MAX_TRAPS; i++)
		n += traps[i] == nr;
	return n;
}

static int traps_except(int from, int to, long skip)
{
	int n = 0;

	for (int i = from; i < to && i < MAX_TRAPS; i++)
		n += traps[i] != skip;
	return n;
}

/* A thread that must never return (its filter forbids exiting). */
static void park_forever(void)
{
	static _Atomic uint32_t never;

	for (;;)
		syscall(SYS_futex, &never, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
}

/* ---- the workload: one of each class ------------------------------------ */

struct work {
	char dir[PATH_MAX];
	char file[PATH_MAX]; /* exists, "hello world\n" */
	int wfd, rfd;	     /* a scratch file for writing; the file for reading */
	FILE *out;	     /* a stream on a scratch file */
	struct sockaddr_in lsn_addr;
	int lsn;
	/* results, written by the working thread */
	int calls, failures;
	char first_failure[64];
	struct addrinfo *ai[64];
	int nai;
};

static void failed(struct work *w, const char *what)
{
	if (w->failures++ == 0)
		snprintf(w->first_failure, sizeof(w->first_failure), "%s errno %d", what, errno);
}

/* One wrapped call, counted, and whether it did what it should. */
#define CHECK(w, what, ok)               \
	do {                             \
		(w)->calls++;            \
		if (!(ok))               \
			failed(w, what); \
	} while (0)

static void work_files(struct work *w, int round)
{
	char path[PATH_MAX + 32], path2[PATH_MAX + 32]; /* room for dir + suffix */
	struct stat st;
	char buf[16];

	CHECK(w, "write", write(w->wfd, "0123456789", 10) == 10);
	CHECK(w, "pwrite", pwrite(w->wfd, "ab", 2, 0) == 2);
	CHECK(w, "fsync", fsync(w->wfd) == 0);
	CHECK(w, "fdatasync", fdatasync(w->wfd) == 0);
	CHECK(w, "pread", pread(w->rfd, buf, 5, 0) == 5 && memcmp(buf, "hello", 5) == 0);
	CHECK(w, "fprintf", fprintf(w->out, "round %d %s\n", round, "text") > 0);
	CHECK(w, "fflush", fflush(w->out) == 0);
	CHECK(w, "stat", stat(w->file, &st) == 0 && st.st_size == 12);
	CHECK(w, "lstat", lstat(w->file, &st) == 0);
	CHECK(w, "access", access(w->file, R_OK) == 0);
	snprintf(path, sizeof(path), "%s/t%d", w->dir, round);
	snprintf(path2, sizeof(path2), "%s/u%d", w->dir, round);
	int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	CHECK(w, "open", fd >= 0);
	CHECK(w, "close", close(fd) == 0);
	CHECK(w, "rename", rename(path, path2) == 0);
	CHECK(w, "unlink", unlink(path2) == 0);
	CHECK(w, "mkdir", mkdir(path, 0700) == 0);
	CHECK(w, "rmdir", rmdir(path) == 0);
}

static void work_dir(struct work *w)
{
	DIR *d = opendir(w->dir);
	int n = 0;

	CHECK(w, "opendir", d != NULL);
	if (!d)
		return;
	struct dirent *e;
	do {
		e = readdir(d);
		w->calls++;
		n += e != NULL;
	} while (e);
	if (n < 3)
		failed(w, "readdir");
	CHECK(w, "closedir", closedir(d) == 0);
}

static void work_net(struct work *w)
{
	struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM};
	struct sockaddr_in any = {.sin_family = AF_INET};
	struct addrinfo *ai = NULL;
	char host[64];

	CHECK(w, "getaddrinfo", getaddrinfo("localhost", "80", &hints, &ai) == 0);
	if (ai && w->nai < 64)
		w->ai[w->nai++] = ai; /* freed by the main thread */
	any.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CHECK(w, "getnameinfo",
	      getnameinfo((struct sockaddr *)&any, sizeof(any), host, sizeof(host), NULL, 0,
			  NI_NUMERICHOST) == 0);
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(w, "socket", s >= 0);
	CHECK(w, "bind", bind(s, (struct sockaddr *)&any, sizeof(any)) == 0);
	CHECK(w, "connect", connect(s, (struct sockaddr *)&w->lsn_addr, sizeof(w->lsn_addr)) == 0);
	CHECK(w, "close", close(s) == 0);
	s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(w, "socket", s >= 0);
	CHECK(w, "listen", listen(s, 1) == 0);
	CHECK(w, "close", close(s) == 0);
}

static void work_memory(struct work *w)
{
	size_t page = 4096;
	char *p = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	CHECK(w, "mmap", p != MAP_FAILED);
	if (p == MAP_FAILED)
		return;
	p[0] = 1; /* a page fault is not a system call */
	CHECK(w, "mprotect", mprotect(p + page, page, PROT_READ) == 0);
	CHECK(w, "madvise", madvise(p, page, MADV_DONTNEED) == 0);
	CHECK(w, "mlock", mlock(p, page) == 0);
	CHECK(w, "munlock", munlock(p, page) == 0);
#ifdef RTO_SANITIZER_OWNS_MLOCK
	w->calls -= 2; /* answered by the sanitizer's interceptors: not the library's calls */
#endif
	CHECK(w, "munmap", munmap(p, 2 * page) == 0);
}

static void work_round(struct work *w, int round)
{
	work_files(w, round);
	work_dir(w);
	work_net(w);
	work_memory(w);
}

static void work_setup(struct work *w)
{
	char path[PATH_MAX];
	socklen_t len = sizeof(w->lsn_addr);

	memset(w, 0, sizeof(*w));
	tmp_make(w->dir);
	pathf(w->file, "%s/f", w->dir);
	cr_assert_eq(spit(w->file, "hello world\n", 12), 0);
	pathf(path, "%s/scratch", w->dir);
	w->wfd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	w->rfd = open(w->file, O_RDONLY | O_CLOEXEC);
	pathf(path, "%s/stream", w->dir);
	w->out = fopen(path, "w");
	cr_assert(w->wfd >= 0 && w->rfd >= 0 && w->out);
	/* Line-buffered: each fprintf line is a write, offloaded (a buffered one would run here).
	 */
	cr_assert_eq(setvbuf(w->out, NULL, _IOLBF, BUFSIZ), 0);
	w->lsn = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	w->lsn_addr = (struct sockaddr_in){.sin_family = AF_INET};
	w->lsn_addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	cr_assert_eq(bind(w->lsn, (struct sockaddr *)&w->lsn_addr, sizeof(w->lsn_addr)), 0);
	cr_assert_eq(getsockname(w->lsn, (struct sockaddr *)&w->lsn_addr, &len), 0);
	cr_assert_eq(listen(w->lsn, 256), 0);
}

static void work_teardown(struct work *w)
{
	for (int i = 0; i < w->nai; i++)
		freeaddrinfo(w->ai[i]);
	tmp_remove(w->dir);
}

/* ---- 1. EPERM filter: marked calls succeed, unmarked ones are refused ------ */

enum {
	OP_WRITE,
	OP_READ,
	OP_OPEN,
	OP_STAT,
	OP_FSYNC,
	OP_OPENDIR,
	OP_MMAP,
	OP_SOCKET,
	OP_MKDIR,
	OP_FPRINTF,
	OP_GAI,
	NOPS
};
static const char *const op_names[NOPS] = {"write", "read",    "open",	     "stat",
					   "fsync", "opendir", "mmap",	     "socket",
					   "mkdir", "fprintf", "getaddrinfo"};

struct opres {
	int ok, err;
};

struct eperm {
	struct work w;
	FILE *unbuffered;
	int filter_rc;
	struct opres phase[3][NOPS]; /* marked, unmarked, marked again */
};

static void op_result(struct opres *o, int ok)
{
	o->err = ok ? 0 : errno;
	o->ok = ok;
}

/* Each op undoes its effect with calls the filter allows (close, munmap...). */
static void ops(struct eperm *e, struct opres *res, int phase)
{
	char buf[8], path[PATH_MAX + 32];
	struct stat st;
	struct addrinfo *ai = NULL;

	op_result(&res[OP_WRITE], write(e->w.wfd, "w", 1) == 1);
	op_result(&res[OP_READ], pread(e->w.rfd, buf, 5, 0) == 5);
	int fd = open(e->w.file, O_RDONLY | O_CLOEXEC);
	op_result(&res[OP_OPEN], fd >= 0);
	if (fd >= 0)
		close(fd);
	op_result(&res[OP_STAT], stat(e->w.file, &st) == 0);
	op_result(&res[OP_FSYNC], fsync(e->w.wfd) == 0);
	DIR *d = opendir(e->w.dir);
	op_result(&res[OP_OPENDIR], d != NULL);
	if (d)
		closedir(d);
	void *p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	op_result(&res[OP_MMAP], p != MAP_FAILED);
	if (p != MAP_FAILED)
		munmap(p, 4096);
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	op_result(&res[OP_SOCKET], s >= 0);
	if (s >= 0)
		close(s);
	snprintf(path, sizeof(path), "%s/dir%d", e->w.dir, phase);
	op_result(&res[OP_MKDIR], mkdir(path, 0700) == 0);
	op_result(&res[OP_FPRINTF], fprintf(e->unbuffered, "phase %d\n", phase) > 0);
	int rc = getaddrinfo("localhost", NULL, NULL, &ai);
	res[OP_GAI] = (struct opres){rc == 0, rc};
	if (ai && e->w.nai < 64)
		e->w.ai[e->w.nai++] = ai;
}

static void eperm_thread(void *arg)
{
	struct eperm *e = arg;

	pin_rt_cpu();
	if (rt_offload_mark_thread() != 0)
		return;
	e->filter_rc = install_deny_filter();
	if (e->filter_rc != 0)
		return;
	ops(e, e->phase[0], 0);
	rt_offload_unmark_thread();
	ops(e, e->phase[1], 1);
	rt_offload_mark_thread();
	ops(e, e->phase[2], 2);
	rt_offload_unmark_thread();
}

Test(witness, seccomp_eperm_on_marked_thread, .timeout = TEST_TIMEOUT)
{
#ifdef WITNESS_UNSUPPORTED
	cr_skip_test("x86-64 only");
#endif
	struct eperm *e = calloc(1, sizeof(*e));
	char path[PATH_MAX];

	work_setup(&e->w);
	pathf(path, "%s/unbuffered", e->w.dir);
	e->unbuffered = fopen(path, "w");
	cr_assert_not_null(e->unbuffered);
	setvbuf(e->unbuffered, NULL, _IONBF, 0); /* every fprintf is a write() */
	start_helpers(); /* before the filter exists: helpers must not inherit it */
	run_unmarked(eperm_thread, e);
	cr_assert_eq(e->filter_rc, 0, "seccomp filter: %s", strerror(errno));
	for (int i = 0; i < NOPS; i++) {
		cr_expect(e->phase[0][i].ok, "%s failed on the marked thread (errno %d)",
			  op_names[i], e->phase[0][i].err);
		int denied = i != OP_MMAP || MMAP_DENIED; /* else nothing to witness unmarked */
		if (denied)
			cr_expect(!e->phase[1][i].ok,
				  "%s succeeded on the unmarked, filtered thread", op_names[i]);
		if (denied && i != OP_GAI)
			cr_expect_eq(e->phase[1][i].err, EPERM,
				     "%s unmarked: errno %d, expected EPERM from the filter",
				     op_names[i], e->phase[1][i].err);
		cr_expect(e->phase[2][i].ok, "%s failed after marking again (errno %d)",
			  op_names[i], e->phase[2][i].err);
	}
	/* The filter stayed on that thread: this one still writes. */
	cr_assert_eq(fprintf(e->unbuffered, "main\n"), 5);
	fclose(e->unbuffered);
	work_teardown(&e->w);
	free(e);
}

/* ---- 2. trap filter: the caller's path makes no syscall but futex --------- */

#define ROUNDS 20

struct trapped {
	struct work w;
	struct flag done;
	int filter_rc;
	int clock_traps; /* clock_gettime is a syscall here (no vDSO clock) */
	int traps_start, traps_work;
	int control_ret, control_err, control_traps;
	int calls_before;
};

static void trapped_thread_body(struct trapped *t)
{
	struct timespec ts;

	pin_rt_cpu();
	if (rt_offload_mark_thread() != 0)
		return;
	work_round(&t->w, -1); /* warm-up: lazy binding, first-use paths, no filter */
	t->calls_before = t->w.calls;
	t->filter_rc = install_trap_filter();
	if (t->filter_rc != 0)
		return;
	/* The library reads CLOCK_MONOTONIC; is that a vDSO call on this machine? */
	t->traps_start = atomic_load(&ntraps);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	t->clock_traps = atomic_load(&ntraps) - t->traps_start;
	t->traps_start = atomic_load(&ntraps);
	for (int r = 0; r < ROUNDS; r++)
		work_round(&t->w, r);
	t->traps_work = atomic_load(&ntraps);
	/* Control: unmarked, the same filter catches a plain write. */
	rt_offload_unmark_thread(); /* its own syscalls are marking_is_a_flag_flip's business */
	t->control_ret = (int)write(t->w.wfd, "u", 1);
	t->control_err = errno;
	t->control_traps = atomic_load(&ntraps) - t->traps_work;
}

static void *trapped_thread(void *arg)
{
	struct trapped *t = arg;

	trapped_thread_body(t);
	flag_set(&t->done);
	park_forever(); /* exiting needs system calls the filter traps */
	return NULL;
}

Test(witness, marked_thread_makes_only_futex_syscalls, .timeout = TEST_TIMEOUT)
{
#ifdef WITNESS_UNSUPPORTED
	cr_skip_test("x86-64 only");
#endif
	struct trapped *t = calloc(1, sizeof(*t));
	pthread_t th;
	char list[1024];

	work_setup(&t->w);
	catch_sigsys();
	start_helpers();
	uint64_t before = offloaded_now();
	cr_assert_eq(pthread_create(&th, NULL, trapped_thread, t), 0);
	cr_assert(flag_wait_timeout(&t->done), "the filtered thread did not finish");
	uint64_t offloaded = offloaded_now() - before;
	cr_assert_eq(t->filter_rc, 0, "seccomp filter refused");

	long clock_nr = t->clock_traps ? SYS_clock_gettime : -1;
	if (t->clock_traps)
		cr_log_warn("clock_gettime is a real syscall on this machine: not counted");
	traps_text(t->traps_start, t->traps_work, clock_nr, list, sizeof(list));
	cr_expect_eq(traps_except(t->traps_start, t->traps_work, clock_nr), 0,
		     "the marked thread made system calls (numbers): %s", list);
	cr_expect_eq(t->w.failures, 0, "%d offloaded calls failed, first: %s", t->w.failures,
		     t->w.first_failure);
	/* Every call of the workload (warm-up included) was offloaded. */
	cr_expect_eq(offloaded, (uint64_t)t->w.calls, "offloaded %lu, calls made %d", offloaded,
		     t->w.calls);
	cr_expect_gt(t->w.calls - t->calls_before, ROUNDS * 30);
	/* The filter was live: unmarked, the write trapped and got ENOSYS. */
	cr_expect_eq(count_traps(t->traps_work, t->traps_work + t->control_traps, SYS_write), 1);
	cr_expect(t->control_ret == -1 && t->control_err == ENOSYS, "control write: %d errno %d",
		  t->control_ret, t->control_err);
	work_teardown(&t->w);
}

/*
 * rtoffload.h: "Every later mark only flips a thread-local flag", unmark is
 * async-signal-safe and realtime-safe, and the README promises a batch loop
 * can mark and unmark around each batch: neither may enter the kernel.
 */
struct flip {
	struct flag done;
	int filter_rc, mark_rc, unmark_rc;
	int from, after_unmark, after_mark;
};

static void *flip_thread(void *arg)
{
	struct flip *m = arg;

	if (rt_offload_mark_thread() == 0 && rt_offload_unmark_thread() == 0) {
		m->filter_rc = install_trap_filter();
		m->from = m->after_unmark = m->after_mark = atomic_load(&ntraps);
		if (m->filter_rc == 0) {
			m->mark_rc = rt_offload_mark_thread();
			m->after_mark = atomic_load(&ntraps);
			m->unmark_rc = rt_offload_unmark_thread();
			m->after_unmark = atomic_load(&ntraps);
		}
	}
	flag_set(&m->done);
	park_forever();
	return NULL;
}

Test(witness, marking_is_a_flag_flip, .timeout = TEST_TIMEOUT)
{
#ifdef WITNESS_UNSUPPORTED
	cr_skip_test("x86-64 only");
#endif
	struct flip *m = calloc(1, sizeof(*m));
	pthread_t th;
	char list[256];

	catch_sigsys();
	start_helpers(); /* so the mark below is not the process's first */
	cr_assert_eq(pthread_create(&th, NULL, flip_thread, m), 0);
	cr_assert(flag_wait_timeout(&m->done));
	cr_assert_eq(m->filter_rc, 0);
	cr_expect(m->mark_rc == 0 && m->unmark_rc == 0);
	traps_text(m->from, m->after_mark, -1, list, sizeof(list));
	cr_expect_eq(m->after_mark - m->from, 0,
		     "a later rt_offload_mark_thread() made system calls: %s", list);
	traps_text(m->after_mark, m->after_unmark, -1, list, sizeof(list));
	cr_expect_eq(m->after_unmark - m->after_mark, 0,
		     "rt_offload_unmark_thread() made system calls: %s", list);
}

/* ---- 3. per-thread I/O counters ------------------------------------------ */

#define IO_N 200

struct io {
	int wfd, rfd, mark;
	pid_t tid;
	struct flag ready, go, done, finish;
	int bad;
};

static void *io_thread(void *arg)
{
	struct io *o = arg;
	char c;

	o->tid = tid_self();
	pin_rt_cpu();
	if (o->mark && rt_offload_mark_thread() != 0)
		o->bad = -1;
	flag_set(&o->ready);
	flag_wait(&o->go);
	for (int i = 0; i < IO_N; i++) {
		o->bad += write(o->wfd, "w", 1) != 1;
		o->bad += pread(o->rfd, &c, 1, i % 12) != 1;
	}
	flag_set(&o->done);
	flag_wait(&o->finish);
	if (o->mark)
		rt_offload_unmark_thread();
	return NULL;
}

struct io_sums {
	uint64_t self_r, self_w, help_r, help_w;
};

static void io_sample(pid_t tid, struct io_sums *s)
{
	pid_t helpers[64];
	uint64_t r, w;
	int n = helper_tids(helpers, 64);

	cr_assert_eq(task_io(tid, &s->self_r, &s->self_w), 0, "no /proc/self/task/%d/io", tid);
	s->help_r = s->help_w = 0;
	for (int i = 0; i < n; i++) {
		if (task_io(helpers[i], &r, &w) == 0) {
			s->help_r += r;
			s->help_w += w;
		}
	}
}

/* Run the read/write loop on a thread, return the counters' growth. */
static void io_measure(struct io *o, struct io_sums *d)
{
	struct io_sums a, b;
	pthread_t th;

	cr_assert_eq(pthread_create(&th, NULL, io_thread, o), 0);
	cr_assert(flag_wait_timeout(&o->ready));
	io_sample(o->tid, &a);
	flag_set(&o->go);
	cr_assert(flag_wait_timeout(&o->done));
	io_sample(o->tid, &b);
	flag_set(&o->finish);
	pthread_join(th, NULL);
	cr_assert_eq(o->bad, 0, "reads or writes failed");
	*d = (struct io_sums){b.self_r - a.self_r, b.self_w - a.self_w, b.help_r - a.help_r,
			      b.help_w - a.help_w};
}

Test(witness, io_counters_move_on_the_helper, .timeout = TEST_TIMEOUT)
{
	char dir[PATH_MAX], path[PATH_MAX];
	struct io_sums marked, plain;
	struct stat st;

	tmp_make(dir);
	pathf(path, "%s/f", dir);
	cr_assert_eq(spit(path, "hello world\n", 12), 0);
	start_helpers();
	struct io m = {.mark = 1}, u = {.mark = 0};
	m.wfd = u.wfd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	m.rfd = u.rfd = open(path, O_RDONLY | O_CLOEXEC);
	cr_assert(m.wfd >= 0 && m.rfd >= 0);

	io_measure(&m, &marked);
	cr_expect_eq(marked.self_w, 0, "the marked thread's syscw grew by %lu", marked.self_w);
	cr_expect_eq(marked.self_r, 0, "the marked thread's syscr grew by %lu", marked.self_r);
	cr_expect_geq(marked.help_w, IO_N, "helpers' syscw grew by %lu only", marked.help_w);
	cr_expect_geq(marked.help_r, IO_N, "helpers' syscr grew by %lu only", marked.help_r);

	/* Control: the counters do see an unmarked thread's own I/O. */
	io_measure(&u, &plain);
	cr_expect_geq(plain.self_w, IO_N);
	cr_expect_geq(plain.self_r, IO_N);

	cr_assert_eq(fstat(m.wfd, &st), 0);
	cr_expect_eq(st.st_size, 12 + 2 * IO_N, "every byte landed");
	close(m.wfd);
	close(m.rfd);
	tmp_remove(dir);
}
