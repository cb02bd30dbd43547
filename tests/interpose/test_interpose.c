/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The interposer checklist (issue 6):
 *  - wrapped calls from the program's .preinit_array and its constructor,
 *    linked and preloaded (ctor_prog.c);
 *  - stacked with another preload: Debian's libjemalloc2, in both orders,
 *    with memory allocated on a helper and freed by the caller and back;
 *  - open() with O_CREAT, O_TMPFILE, O_DIRECTORY: results and mode bits
 *    exactly as a direct call's;
 *  - a program that dlopen()s the library (dlopen_prog.c): works cleanly,
 *    intercepts nothing of the program's own (documented there);
 *  - seccomp: a filter the program installs keeps its effect on the calls
 *    its marked threads make, whether installed with TSYNC before any
 *    marking, with TSYNC after the helpers started, or on one thread only;
 *    and a program whose filter allows only the system calls it uses
 *    (EPERM for the rest) still runs correctly when it marks a thread.
 */
#include "harness.h"

#include <criterion/criterion.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <netdb.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define JEMALLOC "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"

static void expect_exit0(const struct proc *p, const char *what)
{
	char st[64];

	cr_expect_not(p->timed_out, "%s: hung", what);
	cr_expect(WIFEXITED(p->status) && WEXITSTATUS(p->status) == 0, "%s: %s; stderr: %s", what,
		  status_str(p->status, st, sizeof(st)), p->err);
}

/* ---- .preinit_array and the constructor ------------------------------------------------ */

static void expect_step(const char *out, const char *step, int offloaded)
{
	char key[64];

	snprintf(key, sizeof(key), "%s_fd_ok", step);
	cr_expect_eq(kv(out, key, -1), 1, "%s: open failed", step);
	snprintf(key, sizeof(key), "%s_wrote", step);
	cr_expect_eq(kv(out, key, -1), (long)strlen(step), "%s: write", step);
	snprintf(key, sizeof(key), "%s_closed", step);
	cr_expect_eq(kv(out, key, -1), 0, "%s: close", step);
	snprintf(key, sizeof(key), "%s_printed", step);
	cr_expect_gt(kv(out, key, -1), 0, "%s: fprintf", step);
	snprintf(key, sizeof(key), "%s_offloaded", step);
	if (offloaded)
		cr_expect_geq(kv(out, key, -1), 4, "%s: the calls were not offloaded", step);
	else
		cr_expect_eq(kv(out, key, -1), 0, "%s: offloaded before any mark", step);
}

static void run_ctor_program(const char *prog, int preload, int preinit_mark, struct proc *p,
			     char *dir)
{
	char envdir[PATH_MAX + 8], pre[2 * PATH_MAX];

	tmp_make(dir);
	snprintf(envdir, sizeof(envdir), "SC_DIR=%s", dir);
	snprintf(pre, sizeof(pre), "LD_PRELOAD=%s %s", rto_sanitizer_runtime(), rto_lib_path());
	char *env[] = {envdir, "RTOFFLOAD_OPTIONS=mark=main:fd_local=none",
		       preload ? pre : "LD_PRELOAD",
		       preinit_mark ? "SC_PREINIT_MARK=1" : "SC_PREINIT_MARK", NULL};
	char *argv[] = {(char *)prog, NULL};
	cr_assert_eq(run_proc(argv, env, p), 0);
}

static void ctor_case(const char *prog, int preload)
{
	char dir[PATH_MAX], path[PATH_MAX];
	struct proc p;

	run_ctor_program(prog, preload, 0, &p, dir);
	expect_exit0(&p, prog);
	cr_expect_eq(kv(p.out, "available", -1), 1, "the library is not there");
	expect_step(p.out, "preinit", 0);
	expect_step(p.out, "ctor", 1);
	cr_expect_eq(kv(p.out, "ctor_marked", -1), 1, "mark=main: main not marked in a ctor");
	path_join(path, dir, "preinit.stdio");
	char *s = slurp(path, NULL);
	cr_expect_str_eq(s ? s : "", "preinit via stdio\n");
	free(s);
	path_join(path, dir, "ctor.stdio");
	s = slurp(path, NULL);
	cr_expect_str_eq(s ? s : "", "ctor via stdio\n");
	free(s);
	tmp_remove(dir);
}

Test(interpose, wrapped_calls_from_preinit_array_and_constructor_linked, .timeout = TEST_TIMEOUT)
{
	ctor_case(CTOR_LINKED, 0);
}

Test(interpose, wrapped_calls_from_preinit_array_and_constructor_preloaded, .timeout = TEST_TIMEOUT)
{
	ctor_case(CTOR_PLAIN, 1);
}

Test(interpose, marking_from_preinit_array_works_or_fails_cleanly, .timeout = TEST_TIMEOUT)
{
	char dir[PATH_MAX];
	struct proc p;

	char st[64];

	run_ctor_program(CTOR_LINKED, 0, 1, &p, dir);
	tmp_remove(dir);
	cr_assert(WIFEXITED(p.status) && WEXITSTATUS(p.status) == 0,
		  "rt_offload_mark_thread() from .preinit_array, before the library's "
		  "constructor: the program %s",
		  status_str(p.status, st, sizeof(st)));
	long rc = kv(p.out, "preinit_mark_rc", -9);
	cr_expect(rc == 0 || rc == -1, "rt_offload_mark_thread() returned %ld", rc);
	expect_step(p.out, "ctor", 1);
}

/* ---- stacked with jemalloc ----------------------------------------------------------------- */

struct churn {
	const char *dir;
	long failures;
};

/* Memory that crosses threads: allocated on a helper, freed here, and back. */
static void churn_once(struct churn *c, int i)
{
	char path[PATH_MAX];
	struct addrinfo *ai = NULL, hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM};
	struct dirent **list;

	char *real = realpath(c->dir, NULL); /* malloc'd by the helper */
	c->failures += !real;
	free(real); /* freed by the caller */
	snprintf(path, sizeof(path), "%s/churn%d", c->dir, i % 4);
	FILE *f = fopen(path, "w"); /* FILE and buffer allocated on a helper... */
	c->failures += !f || fprintf(f, "%d\n", i) <= 0 || fclose(f) != 0; /* ...freed there */
	c->failures += getaddrinfo("localhost", "80", &hints, &ai) != 0;
	if (ai)
		freeaddrinfo(ai);
	int n = scandir(c->dir, &list, NULL,
			NULL); /* no callback: offloaded under a sanitizer too */
	c->failures += n < 0;
	for (int k = 0; k < n; k++)
		free(list[k]);
	if (n >= 0)
		free(list);
	char *copy = strdup(path); /* the caller's allocation, freed by fclose-free path */
	free(copy);
}

static void churn_job(void *arg)
{
	struct churn *c = arg;

	for (int i = 0; i < 300; i++)
		churn_once(c, i);
}

SCENARIO(malloc_stack)
{
	Dl_info info;
	struct churn c[4];
	struct test_thread t[4];
	struct rt_offload_stats s0, s1;
	const char *dir = getenv("SC_DIR");

	if (!dir || !dladdr(dlsym(RTLD_DEFAULT, "malloc"), &info))
		return 100;
	/*
	 * Served by jemalloc: it knows the block (arenas.lookup).  The symbol
	 * malloc itself may be ours (rtoffload first: libsrc/alloc/malloc.c forwards
	 * an unmarked thread's malloc to the next one, jemalloc's).
	 */
	int (*ctl)(const char *, void *, size_t *, void *, size_t) =
		(int (*)(const char *, void *, size_t *, void *, size_t))dlsym(RTLD_DEFAULT,
									       "mallctl");
	void *probe = malloc(100);
	unsigned arena;
	size_t arena_len = sizeof(arena);
	/* Under a sanitizer the block is its runtime's: not one to show jemalloc. */
	say("jemalloc=%d",
	    !rto_sanitizer_runtime()[0] && ctl &&
		    ctl("arenas.lookup", &arena, &arena_len, &probe, sizeof(probe)) == 0);
	free(probe);
	say("sanitizer_malloc=%d", info.dli_fname && rto_sanitizer_runtime()[0] &&
					   strstr(info.dli_fname, "san.so") != NULL);
	say("jemalloc_loaded=%d", dlsym(RTLD_DEFAULT, "mallctl") != NULL);
	rt_offload_get_stats(&s0);
	for (int i = 0; i < 4; i++) {
		c[i] = (struct churn){.dir = dir};
		if (thread_start(&t[i], churn_job, &c[i], TH_MARK, 0) != 0)
			return 101;
	}
	long failures = 0;
	for (int i = 0; i < 4; i++) {
		if (thread_join(&t[i]) != 0)
			return 102;
		failures += c[i].failures;
	}
	rt_offload_get_stats(&s1);
	say("failures=%ld\noffloaded=%lu", failures, (unsigned long)(s1.offloaded - s0.offloaded));
	return 0;
}

static void jemalloc_case(int jemalloc_first)
{
	char dir[PATH_MAX], envdir[PATH_MAX + 8], pre[2 * PATH_MAX];
	struct proc p;

	cr_assert_eq(access(JEMALLOC, R_OK), 0,
		     "%s is missing: install Debian's libjemalloc2 (apt-get install libjemalloc2)",
		     JEMALLOC);
	tmp_make(dir);
	snprintf(envdir, sizeof(envdir), "SC_DIR=%s", dir);
	/*
	 * This program links the library: preloading it too only moves it
	 * first.  In the sanitizer presets the runtime comes before both: it
	 * owns malloc (jemalloc is loaded and stacked, but cannot serve it).
	 */
	snprintf(pre, sizeof(pre), "LD_PRELOAD=%s %s %s", rto_sanitizer_runtime(),
		 jemalloc_first ? JEMALLOC : rto_lib_path(),
		 jemalloc_first ? rto_lib_path() : JEMALLOC);
	char *env[] = {envdir, pre, NULL};
	cr_assert_eq(run_scenario("malloc_stack", env, &p), 0);
	expect_exit0(&p, jemalloc_first ? "jemalloc first" : "rtoffload first");
	cr_expect_eq(kv(p.out, "jemalloc_loaded", -1), 1, "jemalloc is not loaded");
	if (rto_sanitizer_runtime()[0])
		cr_expect_eq(kv(p.out, "sanitizer_malloc", -1), 1, "malloc is not the sanitizer's");
	else
		cr_expect_eq(kv(p.out, "jemalloc", -1), 1, "malloc is not jemalloc's");
	cr_expect_eq(kv(p.out, "failures", -1), 0, "calls failed with jemalloc");
	cr_expect_geq(kv(p.out, "offloaded", -1), 4 * 300 * 6, "the calls were not offloaded");
	tmp_remove(dir);
}

Test(interpose, stacked_with_jemalloc_preloaded_first, .timeout = TEST_TIMEOUT)
{
	jemalloc_case(1);
}

Test(interpose, stacked_with_jemalloc_preloaded_second, .timeout = TEST_TIMEOUT)
{
	jemalloc_case(0);
}

/* ---- open() flags and the modes they create ---------------------------------------------- */

#define NOPENS 11

struct opens {
	const char *dir;
	const char *tag; /* file names differ per run */
	int ret[NOPENS], err[NOPENS];
	unsigned mode[NOPENS]; /* st_mode & 07777, or S_IFMT bits for O_DIRECTORY */
};

static unsigned mode_of(int fd)
{
	struct stat st;

	return fd >= 0 && fstat(fd, &st) == 0 ? (unsigned)(st.st_mode & (S_IFMT | 07777)) : 0;
}

static void one_open(struct opens *o, int i, int fd)
{
	o->ret[i] = fd >= 0 ? 0 : -1;
	o->err[i] = fd >= 0 ? 0 : errno;
	o->mode[i] = mode_of(fd);
	if (fd >= 0)
		close(fd);
}

static void opens_job(void *arg)
{
	struct opens *o = arg;
	char p[8][PATH_MAX], name[32];

	for (int i = 0; i < 8; i++) {
		snprintf(name, sizeof(name), "%s%d", o->tag, i);
		path_join(p[i], o->dir, name);
	}
	int dfd = open(o->dir, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
	one_open(o, 0, open(p[0], O_CREAT | O_WRONLY | O_CLOEXEC, 0640));
	one_open(o, 1, open(p[1], O_CREAT | O_WRONLY | O_CLOEXEC, 0777)); /* umask 022 */
	one_open(o, 2, openat(dfd, p[2] + strlen(o->dir) + 1, O_CREAT | O_RDWR | O_CLOEXEC, 0600));
	one_open(o, 3, creat(p[3], 0666));
	one_open(o, 4, open(p[4], O_CREAT | O_WRONLY | O_CLOEXEC, 04755));	   /* setuid kept */
	one_open(o, 5, open(p[0], O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600)); /* EEXIST */
	one_open(o, 6, open(o->dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0604));
	one_open(o, 7, open(o->dir, O_DIRECTORY | O_RDONLY | O_CLOEXEC));
	one_open(o, 8, open(p[0], O_DIRECTORY | O_RDONLY | O_CLOEXEC)); /* ENOTDIR */
	one_open(o, 9, open64(p[5], O_CREAT | O_WRONLY | O_LARGEFILE | O_CLOEXEC, 0600));
	one_open(o, 10, open(p[6], O_CREAT | O_DIRECTORY | O_RDONLY | O_CLOEXEC, 0600));
	close(dfd);
}

Test(interpose, open_flags_and_created_modes_are_a_direct_calls, .timeout = TEST_TIMEOUT)
{
	char dir[PATH_MAX];
	struct opens d = {.tag = "d"}, m = {.tag = "m"};
	static const unsigned want[NOPENS] = {S_IFREG | 0640,
					      S_IFREG | 0755,
					      S_IFREG | 0600,
					      S_IFREG | 0644,
					      S_IFREG | 04755,
					      0,
					      S_IFREG | 0604,
					      S_IFDIR | 0700,
					      0,
					      S_IFREG | 0600,
					      0};
	struct rt_offload_stats s0, s1;

	tmp_make(dir);
	umask(022);
	d.dir = m.dir = dir;
	cr_assert_eq(thread_run(opens_job, &d, 0, 0), 0);
	rt_offload_get_stats(&s0);
	cr_assert_eq(thread_run(opens_job, &m, TH_MARK | TH_PIN_RT, 0), 0);
	rt_offload_get_stats(&s1);
	cr_expect_geq(s1.offloaded - s0.offloaded, NOPENS, "the opens were not offloaded");
	for (int i = 0; i < NOPENS; i++) {
		cr_expect_eq(m.ret[i], d.ret[i], "open %d: %d, direct %d", i, m.ret[i], d.ret[i]);
		cr_expect_eq(m.err[i], d.err[i], "open %d: errno %d, direct %d", i, m.err[i],
			     d.err[i]);
		cr_expect_eq(m.mode[i], d.mode[i], "open %d: mode %o, direct %o", i, m.mode[i],
			     d.mode[i]);
		cr_expect_eq(m.mode[i], want[i], "open %d: mode %o, want %o", i, m.mode[i],
			     want[i]);
	}
	cr_expect_eq(m.err[5], EEXIST);
	cr_expect_eq(m.err[8], ENOTDIR);
	tmp_remove(dir);
}

/* ---- dlopen() instead of LD_PRELOAD ---------------------------------------------------- */

static void dlopen_case(int global)
{
	char dir[PATH_MAX], out[PATH_MAX];
	struct proc p;

	tmp_make(dir);
	path_join(out, dir, "out");
	char *argv[] = {DLOPEN_PROG, (char *)rto_lib_path(), out, NULL};
	char *env[] = {"RTOFFLOAD_OPTIONS=fd_local=none", "LD_PRELOAD",
		       global ? "SC_DLOPEN_GLOBAL=1" : "SC_DLOPEN_GLOBAL", NULL};
	cr_assert_eq(run_proc(argv, env, &p), 0);
	expect_exit0(&p, "dlopen");
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	/*
	 * A sanitizer's runtime takes the static TLS that dlopen() of an
	 * initial-exec library needs: there a clean failure is what we check.
	 */
	if (kv(p.out, "dlopen", -1) == 0) {
		tmp_remove(dir);
		cr_skip_test("under a sanitizer dlopen() of the library failed cleanly: %s", p.out);
	}
#endif
	cr_assert_eq(kv(p.out, "dlopen", -1), 1, "dlopen of the library failed: %s", p.out);
	cr_expect_eq(kv(p.out, "dlsym", -1), 1);
	cr_expect_eq(kv(p.out, "mark_rc", -1), 0, "marking after dlopen failed");
	cr_expect_eq(kv(p.out, "program_wrote", -1), 8);
	cr_expect_eq(kv(p.out, "library_wrote", -1), 8);
	cr_expect_eq(kv(p.out, "program_offloaded", -1), 0,
		     "the program's own write() was intercepted after dlopen");
	cr_expect_geq(kv(p.out, "library_offloaded", -1), 1,
		      "the library's write() (from dlsym) was not offloaded");
	cr_expect_eq(kv(p.out, "dlclose", -1), 0);
	char *s = slurp(out, NULL);
	cr_expect_str_eq(s ? s : "", "program\nlibrary\n");
	free(s);
	tmp_remove(dir);
}

Test(interpose, dlopen_instead_of_preload_works_but_intercepts_nothing, .timeout = TEST_TIMEOUT)
{
	dlopen_case(0);
	dlopen_case(1);
}

/* ---- seccomp --------------------------------------------------------------------------------- */

#define ALLOW	 SECCOMP_RET_ALLOW
#define DENY	 (SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA))
#define MAX_BPF	 160
#define LOAD_NR	 BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr))
#define LOAD_ARC BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch))

/*
 * A filter: the listed system calls get `listed`, the others `other`.
 * flags: SECCOMP_FILTER_FLAG_TSYNC for every thread, 0 for the caller.
 */
static int install_filter(const int *nrs, int n, unsigned listed, unsigned other, unsigned flags)
{
	struct sock_filter f[MAX_BPF];
	int k = 0;

	if (n + 6 > MAX_BPF)
		return -1;
	f[k++] = (struct sock_filter)LOAD_ARC;
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
	f[k++] = (struct sock_filter)LOAD_NR;
	for (int i = 0; i < n; i++) /* the last jump lands on `listed` */
		f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nrs[i],
						      (unsigned char)(n - i), 0);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, other);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, listed);
	struct sock_fprog prog = {.len = (unsigned short)k, .filter = f};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return -1;
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
}

static const int unlink_nrs[] = {SYS_unlink, SYS_unlinkat};

struct victim {
	const char *path;
	int own_filter; /* install a filter on this thread only, first */
	int filter_rc;
	int warm_up; /* one offloaded call first: the helpers are running */
	struct flag ready, go;
	int ret, err;
};

static void victim_job(void *arg)
{
	struct victim *v = arg;
	struct stat st;

	if (v->warm_up)
		stat(v->path, &st);
	if (v->own_filter)
		v->filter_rc = install_filter(unlink_nrs, 2, DENY, ALLOW, 0);
	flag_set(&v->ready);
	flag_wait(&v->go);
	v->ret = unlink(v->path);
	v->err = errno;
}

/* SC_WHEN: before (TSYNC, before any mark), after (TSYNC, helpers running), thread. */
SCENARIO(seccomp_deny_unlink)
{
	const char *when = getenv("SC_WHEN"), *dir = getenv("SC_DIR");
	char path[PATH_MAX];
	struct victim v = {.path = path};
	struct test_thread t;
	int flags = getenv("SC_UNMARKED") ? 0 : TH_MARK | TH_PIN_RT;

	if (!when || !dir)
		return 100;
	path_join(path, dir, "victim");
	if (close(open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600)) != 0)
		return 101;
	if (!strcmp(when, "before") &&
	    install_filter(unlink_nrs, 2, DENY, ALLOW, SECCOMP_FILTER_FLAG_TSYNC) != 0)
		return 102;
	v.warm_up = strcmp(when, "before") != 0;
	v.own_filter = !strcmp(when, "thread");
	if (thread_start(&t, victim_job, &v, flags, 0) != 0 || !flag_wait_s(&v.ready, WAIT_S))
		return 103;
	if (!strcmp(when, "after") &&
	    install_filter(unlink_nrs, 2, DENY, ALLOW, SECCOMP_FILTER_FLAG_TSYNC) != 0)
		return 104;
	flag_set(&v.go);
	thread_join(&t);
	say("filter_rc=%d\nunlink_ret=%d\nunlink_errno=%d\nstill_there=%d", v.filter_rc, v.ret,
	    v.err, access(path, F_OK) == 0);
	return 0;
}

static void seccomp_deny_case(const char *when, int marked)
{
	char dir[PATH_MAX], envdir[PATH_MAX + 8], envwhen[64], what[96];
	struct proc p;

	tmp_make(dir);
	snprintf(envdir, sizeof(envdir), "SC_DIR=%s", dir);
	snprintf(envwhen, sizeof(envwhen), "SC_WHEN=%s", when);
	snprintf(what, sizeof(what), "filter %s, %s", when, marked ? "marked" : "unmarked");
	char *env[] = {envdir, envwhen, marked ? "SC_MARKED" : "SC_UNMARKED=1", NULL};
	cr_assert_eq(run_scenario("seccomp_deny_unlink", env, &p), 0);
	expect_exit0(&p, what);
	cr_expect_eq(kv(p.out, "filter_rc", -1), 0, "%s: the filter was refused", what);
	cr_expect_eq(kv(p.out, "unlink_ret", 0), -1,
		     "%s: the denied unlink() succeeded: the filter was bypassed", what);
	cr_expect_eq(kv(p.out, "unlink_errno", 0), EPERM, "%s: errno %ld", what,
		     kv(p.out, "unlink_errno", 0));
	cr_expect_eq(kv(p.out, "still_there", 0), 1, "%s: the file was removed", what);
	tmp_remove(dir);
}

Test(interpose, seccomp_tsync_filter_before_marking_holds_for_offloaded_calls,
     .timeout = TEST_TIMEOUT)
{
	seccomp_deny_case("before", 0);
	seccomp_deny_case("before", 1);
}

Test(interpose, seccomp_tsync_filter_after_helpers_started_holds_for_offloaded_calls,
     .timeout = TEST_TIMEOUT)
{
	seccomp_deny_case("after", 0);
	seccomp_deny_case("after", 1);
}

Test(interpose, seccomp_filter_of_one_thread_holds_for_its_offloaded_calls, .timeout = TEST_TIMEOUT)
{
	seccomp_deny_case("thread", 0);
	seccomp_deny_case("thread", 1);
}

/*
 * The system calls this scenario's own code makes when its thread is not
 * marked (found with strace -f; glibc's thread start and exit included).
 * Everything else fails with EPERM.
 */
static const int used_nrs[] = {
	SYS_read,
	SYS_write,
	SYS_openat,
	SYS_close,
	SYS_fstat,
	SYS_newfstatat,
	SYS_fsync,
	SYS_pread64,
	SYS_lseek,
	SYS_mmap,
	SYS_munmap,
	SYS_mprotect,
	SYS_madvise,
	SYS_brk,
	SYS_rt_sigaction,
	SYS_rt_sigprocmask,
	SYS_rt_sigreturn,
	SYS_clone,
	SYS_clone3,
	SYS_set_robust_list,
	SYS_rseq,
	SYS_futex,
	SYS_gettid,
	SYS_getpid,
	SYS_exit,
	SYS_exit_group,
	SYS_nanosleep,
	SYS_clock_nanosleep,
	SYS_clock_gettime,
	SYS_sched_yield,
	SYS_sched_setaffinity,
	SYS_getdents64, /* the scenario lists its helpers (/proc/self/task) */
#ifdef __SANITIZE_ADDRESS__
	/*
	 * Not the program's but AddressSanitizer's (the asan preset; see
	 * tests/sanitizers/README.md).  Its thread start asks
	 * pthread_getattr_np() for the stack (sched_getaffinity) and sets an
	 * alternate signal stack; LeakSanitizer's check at exit stops every
	 * thread from a tracer it clones: ptrace, wait4, getppid, and
	 * /proc/PID/task read with open and getdents (prctl PR_SET_PTRACER
	 * lets the tracer in under Yama).
	 */
	SYS_sched_getaffinity,
	SYS_sigaltstack,
	SYS_ptrace,
	SYS_wait4,
	SYS_getppid,
	SYS_open,
	SYS_getdents,
	SYS_prctl,
#endif
#ifdef __SANITIZE_THREAD__
	/*
	 * Not the program's but ThreadSanitizer's (the tsan preset): its
	 * thread start asks pthread_getattr_np() for the stack
	 * (sched_getaffinity); its background thread reads the time of day.
	 */
	SYS_sched_getaffinity,
	SYS_gettimeofday,
#endif
};

struct plain_io {
	const char *path;
	int ok;
};

static void plain_io_job(void *arg)
{
	struct plain_io *io = arg;
	struct stat st;
	char buf[8] = "";
	int fd = open(io->path, O_CREAT | O_RDWR | O_TRUNC | O_CLOEXEC, 0600);

	io->ok = fd >= 0 && write(fd, "seccomp", 7) == 7 && fsync(fd) == 0 &&
		 pread(fd, buf, 7, 0) == 7 && memcmp(buf, "seccomp", 7) == 0 &&
		 fstat(fd, &st) == 0 && st.st_size == 7 && close(fd) == 0 &&
		 stat(io->path, &st) == 0;
}

/* The helpers' read and write system calls so far (/proc/self/task/TID/io). */
static void helpers_io(uint64_t *syscr, uint64_t *syscw)
{
	pid_t tids[64];
	int n = helper_tids(tids, 64);

	*syscr = *syscw = 0;
	for (int i = 0; i < n; i++) {
		uint64_t r, w;
		if (task_io(tids[i], &r, &w) == 0) {
			*syscr += r;
			*syscw += w;
		}
	}
}

/*
 * SC_WHEN: before (the filter before any mark) or after (helpers running).
 * Besides the library's counters, the kernel's: the helpers' syscr/syscw
 * around the marked job (the helpers that exist once it ran: a helper
 * started for it counts from zero).
 */
SCENARIO(seccomp_allowlist)
{
	const char *when = getenv("SC_WHEN"), *dir = getenv("SC_DIR");
	char path[PATH_MAX];
	struct plain_io io = {.path = path};
	int n = (int)(sizeof(used_nrs) / sizeof(used_nrs[0]));

	if (!when || !dir)
		return 100;
	path_join(path, dir, "io");
	if (!strcmp(when, "after") && thread_run(plain_io_job, &io, TH_MARK, 0) != 0)
		return 101;
	if (install_filter(used_nrs, n, ALLOW, DENY, SECCOMP_FILTER_FLAG_TSYNC) != 0)
		return 102;
	struct rt_offload_stats before, after;
	uint64_t r0, w0, r1, w1;
	helpers_io(&r0, &w0);
	rt_offload_get_stats(&before);
	int marked = thread_run(plain_io_job, &io, TH_MARK | TH_PIN_RT, 0) == 0;
	rt_offload_get_stats(&after);
	helpers_io(&r1, &w1);
	if (!marked) /* marking may fail cleanly: then the program goes on unmarked */
		thread_run(plain_io_job, &io, 0, 0);
	say("marked=%d\nio_ok=%d\noffloaded=%llu\nlocal=%llu\nhelper_syscr=%lld\nhelper_syscw=%lld",
	    marked, io.ok, (unsigned long long)(after.offloaded - before.offloaded),
	    (unsigned long long)(after.local - before.local), (long long)(r1 - r0),
	    (long long)(w1 - w0));
	return 0;
}

static void allowlist_case(const char *when)
{
	char dir[PATH_MAX], envdir[PATH_MAX + 8], envwhen[64];
	struct proc p;

	tmp_make(dir);
	snprintf(envdir, sizeof(envdir), "SC_DIR=%s", dir);
	snprintf(envwhen, sizeof(envwhen), "SC_WHEN=%s", when);
	char *env[] = {envdir, envwhen, NULL};
	cr_assert_eq(run_scenario("seccomp_allowlist", env, &p), 0);
	expect_exit0(&p, when);
	cr_expect_eq(kv(p.out, "io_ok", -1), 1, "filter %s: the calls failed", when);
	/*
	 * With the helpers already running (after), marking must work and the
	 * calls must go through the marked path: offloaded, or run locally
	 * because the library saw the thread's filter (wrap_syscall.c; whether
	 * PR_GET_SECCOMP is in the allow-list decides which), counted either
	 * way, where an unmarked thread's calls count nothing.  Before, the
	 * filter may refuse the helpers' creation, and then marking fails
	 * cleanly and the calls run unmarked (io_ok above).
	 */
	int marked = kv(p.out, "marked", 0);
	long offloaded = kv(p.out, "offloaded", 0), local = kv(p.out, "local", 0);
	if (!strcmp(when, "after"))
		cr_expect_eq(marked, 1, "marking failed with the helpers already running");
	if (marked) {
		cr_expect_geq(offloaded + local, 7, "filter %s: not routed: %s", when, p.out);
		/*
		 * Which path ran them, from the kernel's side: offloaded, the
		 * helpers made the write and the pread (syscw, syscr); run
		 * locally, no helper wrote anything.
		 */
		if (offloaded >= 7) {
			cr_expect_geq(kv(p.out, "helper_syscw", 0), 1,
				      "filter %s: offloaded, but no helper wrote: %s", when, p.out);
			cr_expect_geq(kv(p.out, "helper_syscr", 0), 1,
				      "filter %s: offloaded, but no helper read: %s", when, p.out);
		} else if (local >= 7) {
			cr_expect_eq(kv(p.out, "helper_syscw", -1), 0,
				     "filter %s: run locally, but a helper wrote: %s", when, p.out);
		} else {
			cr_expect_fail("filter %s: the calls split between paths: %s", when, p.out);
		}
	}
	cr_log_info("allow-list filter %s: marking %s", when, marked ? "worked" : "failed cleanly");
	tmp_remove(dir);
}

Test(interpose, seccomp_allowlist_of_the_programs_own_calls, .timeout = TEST_TIMEOUT)
{
	allowlist_case("before");
	allowlist_case("after");
}
