/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A call runs on a helper only in the kernel context the caller would have
 * run it in (issue 28, finding 6).  A marked thread that changed a
 * per-thread attribute which changes what a call means gets what it gets
 * without the library, one attribute class per test:
 *  - fs ids: setfsuid/setfsgid(65534), then a root-only 0600 file: EACCES
 *    (a helper runs as root: the open succeeded); the same through a raw
 *    system call (the backstop's trap), and set before the thread was
 *    marked (seen at its mark);
 *  - capabilities: CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH dropped with
 *    capset, then another user's 0600 file: EACCES;
 *  - Landlock: a domain that allows reading one directory, then a file
 *    outside it: EACCES;
 *  - unshare(CLONE_FS): chdir and umask are the thread's own, a relative
 *    create lands in its cwd with its umask, the process keeps its own;
 *  - setns into a new network namespace: a UDP connect to 127.0.0.1 finds
 *    its loopback down (ENETUNREACH);
 *  - /proc/thread-self/comm: the thread's own name, not a helper's;
 *  - a single-threaded program dropping root while keeping a capability
 *    (setpriv's way): glibc's set*id broadcast finds the helpers alike;
 *  - ioprio_set and set_mempolicy (their effect on an offloaded call cannot
 *    be observed directly): the thread's calls run on it from then on;
 *  - keyrings (stress-ng's key stressor under mark=all): a key in a session
 *    keyring the thread joined is read by its keyctl, wrapped and trapped
 *    (a helper does not possess it: EACCES); a key it adds to its thread
 *    keyring while marked is in its own thread keyring afterwards, and its
 *    calls run on it from then on, as they do when it made its thread
 *    keyring before its mark.
 * Each runs on a thread of its own, which ends with its changed context.
 */
#include "harness.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/keyctl.h>
#include <linux/landlock.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <grp.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rtoffload.h"

int capset(cap_user_header_t hdr, const cap_user_data_t data);
int capget(cap_user_header_t hdr, cap_user_data_t data);

#define NOBODY 65534

/* A system call made by the instruction itself, behind every wrapper: the backstop traps it. */
static long raw1(long nr, long a0)
{
	long ret;
	__asm__ volatile("syscall" : "=a"(ret) : "a"(nr), "D"(a0) : "rcx", "r11", "memory");
	return ret;
}

/* ... with up to five arguments. */
static long raw5(long nr, long a0, long a1, long a2, long a3, long a4)
{
	long ret;
	register long r10 __asm__("r10") = a3;
	register long r8 __asm__("r8") = a4;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a0), "S"(a1), "d"(a2), "r"(r10), "r"(r8)
			 : "rcx", "r11", "memory");
	return ret;
}

struct ctx_case {
	char dir[PATH_MAX], file[PATH_MAX];
	int how;     /* what the job does first (per test) */
	int fd, err; /* what the call under test gave */
	char text[64];
	uint64_t offloaded; /* offloaded calls of the thread after its change */
};

static void open_file(struct ctx_case *c)
{
	errno = 0;
	c->fd = open(c->file, O_RDONLY);
	c->err = errno;
	if (c->fd >= 0)
		close(c->fd);
}

/* A directory anyone may enter, with a file only uid owns and reads (0600). */
static void make_private_file(struct ctx_case *c, uid_t uid)
{
	tmp_make(c->dir);
	cr_assert_eq(chmod(c->dir, 0755), 0);
	path_join(c->file, c->dir, "secret");
	write_file(c->file, "secret\n");
	cr_assert_eq(chmod(c->file, 0600), 0);
	cr_assert_eq(chown(c->file, uid, uid), 0);
}

/* The job on a marked and an unmarked thread: the results must agree. */
static void both(job_fn job, struct ctx_case *c, struct ctx_case *d)
{
	*d = *c;
	run_unmarked(job, d);
	run_marked(job, c);
}

/* ---- fs ids ---------------------------------------------------------------------- */

enum { FS_WRAPPER, FS_RAW, FS_BEFORE_MARK };

static void fsuid_job(void *arg)
{
	struct ctx_case *c = arg;
	if (c->how == FS_RAW) {
		raw1(SYS_setfsgid, NOBODY);
		raw1(SYS_setfsuid, NOBODY);
	} else {
		setfsgid(NOBODY);
		setfsuid(NOBODY);
	}
	open_file(c);
	setfsuid(0);
	setfsgid(0);
}

static void fsuid_case(int how)
{
	struct ctx_case c = {.how = how}, d;

	cr_assert(geteuid() == 0, "needs root: a file the fs ids cannot open");
	make_private_file(&c, 0);
	both(fsuid_job, &c, &d);
	cr_expect(d.fd < 0 && d.err == EACCES, "unmarked: fd %d errno %d", d.fd, d.err);
	cr_expect(c.fd < 0 && c.err == EACCES,
		  "marked, fsuid %d: the root-only file opened (fd %d errno %d)", NOBODY, c.fd,
		  c.err);
	tmp_remove(c.dir);
}

Test(context, setfsuid_then_a_root_only_file_is_refused)
{
	fsuid_case(FS_WRAPPER);
}

Test(context, raw_setfsuid_then_a_root_only_file_is_refused)
{
	fsuid_case(FS_RAW);
}

/* Changed before the mark, behind the wrappers: the mark sees it. */
static void fsuid_before_mark(void *arg)
{
	struct ctx_case *c = arg;
	raw1(SYS_setfsgid, NOBODY);
	raw1(SYS_setfsuid, NOBODY);
	c->fd = rt_offload_mark_thread();
	if (c->fd == 0) {
		open_file(c);
		rt_offload_unmark_thread();
	}
	raw1(SYS_setfsuid, 0);
	raw1(SYS_setfsgid, 0);
}

Test(context, fsuid_set_before_the_mark_is_seen_at_the_mark)
{
	struct ctx_case c = {0};

	cr_assert(geteuid() == 0, "needs root");
	make_private_file(&c, 0);
	start_helpers();
	run_unmarked(fsuid_before_mark, &c);
	cr_expect(c.fd < 0 && c.err == EACCES, "the root-only file opened (fd %d errno %d)", c.fd,
		  c.err);
	tmp_remove(c.dir);
}

/* ---- capabilities ----------------------------------------------------------------- */

static void caps_job(void *arg)
{
	struct ctx_case *c = arg;
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct data[2], dropped[2];

	if (capget(&h, data) != 0) {
		c->fd = -2;
		return;
	}
	memcpy(dropped, data, sizeof(data));
	dropped[0].effective &= ~((1u << CAP_DAC_OVERRIDE) | (1u << CAP_DAC_READ_SEARCH));
	if (capset(&h, dropped) != 0) {
		c->fd = -3;
		return;
	}
	open_file(c);
	capset(&h, data); /* still permitted: back */
}

Test(context, capset_drop_then_another_users_file_is_refused)
{
	struct ctx_case c = {0}, d;

	cr_assert(geteuid() == 0, "needs root: capabilities to drop");
	make_private_file(&c, NOBODY);
	both(caps_job, &c, &d);
	cr_expect(d.fd == -1 && d.err == EACCES, "unmarked: fd %d errno %d", d.fd, d.err);
	cr_expect(c.fd == -1 && c.err == EACCES,
		  "marked, without CAP_DAC_OVERRIDE: another user's 0600 file opened (fd %d "
		  "errno %d)",
		  c.fd, c.err);
	tmp_remove(c.dir);
}

/*
 * A program with one thread of its own drops root keeping a capability,
 * as setpriv, capsh and daemons do: keep-caps, setresuid, CAP_SETGID
 * raised again, then setresgid and setgroups.  glibc runs each set*id on
 * every thread and aborts when one refuses: the helpers must have taken
 * the thread's keep-caps and capabilities (cred_mirror.c).  Before, the
 * helpers' setresgid was refused (EPERM) and glibc aborted (SIGABRT).
 */
SCENARIO(drop_root_keeping_a_capability)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct data[2];
	int fd;

	if (rt_offload_mark_thread() != 0)
		return 100;
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC); /* offloaded: the helpers run */
	if (fd < 0)
		return 101;
	close(fd);
	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) != 0 || setresuid(NOBODY, NOBODY, NOBODY) != 0)
		return 102;
	if (capget(&h, data) != 0)
		return 103;
	data[0].effective = data[0].permitted; /* kept: raise them again */
	data[1].effective = data[1].permitted;
	if (capset(&h, data) != 0)
		return 104;
	if (setresgid(NOBODY, NOBODY, NOBODY) != 0 || setgroups(0, NULL) != 0)
		return 105;
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC); /* still served */
	say("uid=%d gid=%d fd=%d", (int)getuid(), (int)getgid(), fd);
	return fd >= 0 && getuid() == NOBODY && getgid() == NOBODY ? 0 : 106;
}

/*
 * Not under ThreadSanitizer: its runtime starts a background thread at
 * the first pthread_create() (our first helper's), with every signal
 * blocked but glibc's SIGSETXID, so it never takes the thread's
 * capability state and glibc aborts; the runtime alone does the same to
 * a program that has created one thread.  A known limit (docs/LIMITS.md).
 */
Test(context, a_single_threaded_program_drops_root_keeping_a_capability, .disabled = RTO_TSAN)
{
	struct proc p;
	char st[64];
	char *env[] = {"RTOFFLOAD_OPTIONS=fd_local=none", NULL};

	cr_assert(geteuid() == 0, "needs root: a user to drop to");
	cr_assert_eq(run_scenario("drop_root_keeping_a_capability", env, &p), 0);
	cr_expect(WIFEXITED(p.status) && WEXITSTATUS(p.status) == 0,
		  "%s (abort: glibc's set*id broadcast was refused on a helper); %s %s",
		  status_str(p.status, st, sizeof(st)), p.out, p.err);
}

/* ---- Landlock --------------------------------------------------------------------- */

/* Its ABI version: the kernel's own answer (securityfs may not be mounted). */
static int landlock_present(void)
{
	return syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION) >= 1;
}

static void landlock_job(void *arg)
{
	struct ctx_case *c = arg;
	struct landlock_ruleset_attr ra = {.handled_access_fs = LANDLOCK_ACCESS_FS_READ_FILE};
	int rs = (int)syscall(SYS_landlock_create_ruleset, &ra, sizeof(ra), 0);
	int allowed = open(c->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	struct landlock_path_beneath_attr pb = {.allowed_access = LANDLOCK_ACCESS_FS_READ_FILE,
						.parent_fd = allowed};

	if (rs < 0 || allowed < 0 ||
	    syscall(SYS_landlock_add_rule, rs, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) != 0 ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    syscall(SYS_landlock_restrict_self, rs, 0) != 0) {
		c->fd = -2;
		return;
	}
	close(rs);
	close(allowed);
	open_file(c); /* c->file lies outside c->dir: see the test */
}

Test(context, landlock_then_a_file_outside_the_ruleset_is_refused)
{
	struct ctx_case c = {0}, d;
	char outside[PATH_MAX];

	/* Every kernel this project supports has Landlock; a machine without it is not one. */
	cr_assert(landlock_present(), "Landlock is not enabled: %s", strerror(errno));
	tmp_make(c.dir);
	tmp_make(outside);
	path_join(c.file, outside, "readable");
	write_file(c.file, "anyone\n");
	both(landlock_job, &c, &d);
	cr_expect(d.fd == -1 && d.err == EACCES, "unmarked: fd %d errno %d", d.fd, d.err);
	cr_expect(c.fd == -1 && c.err == EACCES,
		  "marked, Landlock-restricted: a file outside its ruleset opened (fd %d errno "
		  "%d)",
		  c.fd, c.err);
	tmp_remove(c.dir);
	tmp_remove(outside);
}

/* ---- unshare(CLONE_FS) ------------------------------------------------------------ */

static void unshare_fs_job(void *arg)
{
	struct ctx_case *c = arg;

	if (unshare(CLONE_FS) != 0 || chdir(c->dir) != 0) {
		c->fd = -2;
		return;
	}
	umask(077);
	c->fd = open("made", O_CREAT | O_WRONLY, 0666);
	c->err = errno;
	if (c->fd >= 0)
		close(c->fd);
}

Test(context, unshare_fs_gives_the_thread_its_own_cwd_and_umask)
{
	struct ctx_case c = {0};
	char cwd[PATH_MAX], after[PATH_MAX], made[PATH_MAX];
	struct stat st;

	tmp_make(c.dir);
	cr_assert(getcwd(cwd, sizeof(cwd)));
	mode_t mask = umask(022);
	run_marked(unshare_fs_job, &c);
	mode_t mask_after = umask(mask);
	cr_assert(getcwd(after, sizeof(after)));
	cr_expect_str_eq(after, cwd, "the process's cwd moved to %s", after);
	cr_expect_eq(mask_after, 022, "the process's umask became %03o", (unsigned)mask_after);
	cr_assert_geq(c.fd, 0, "open: %d errno %d", c.fd, c.err);
	path_join(made, c.dir, "made");
	cr_assert_eq(stat(made, &st), 0, "the relative create did not land in the thread's cwd");
	cr_expect_eq(st.st_mode & 0777, 0600, "mode %03o: not the thread's umask",
		     (unsigned)(st.st_mode & 0777));
	tmp_remove(c.dir);
}

/* ---- setns ------------------------------------------------------------------------ */

/* A new network namespace, held by a descriptor (made by an unmarked thread). */
static void new_netns(void *arg)
{
	int *fd = arg;
	*fd = unshare(CLONE_NEWNET) == 0 ? open("/proc/thread-self/ns/net", O_RDONLY) : -1;
}

static void setns_job(void *arg)
{
	struct ctx_case *c = arg;
	struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(9)};

	to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (setns(c->how, CLONE_NEWNET) != 0) {
		c->fd = -2;
		return;
	}
	int s = socket(AF_INET, SOCK_DGRAM, 0);
	errno = 0;
	c->fd = connect(s, (struct sockaddr *)&to, sizeof(to));
	c->err = errno;
	close(s);
}

Test(context, setns_into_a_new_network_namespace_is_seen_by_the_calls)
{
	struct ctx_case c = {0}, d;
	int ns = -1;

	run_unmarked(new_netns, &ns);
	cr_assert_geq(ns, 0, "no new network namespace: %s", strerror(errno));
	c.how = ns;
	both(setns_job, &c, &d);
	cr_expect(d.fd == -1 && d.err == ENETUNREACH, "unmarked: %d errno %d", d.fd, d.err);
	cr_expect(c.fd == -1 && c.err == ENETUNREACH,
		  "marked, in a namespace whose loopback is down: connect gave %d errno %d", c.fd,
		  c.err);
	close(ns);
}

/* ---- /proc/thread-self ------------------------------------------------------------ */

static void comm_job(void *arg)
{
	struct ctx_case *c = arg;
	pthread_setname_np(pthread_self(), "ctx-own-name");
	FILE *f = fopen("/proc/thread-self/comm", "r");
	if (!f || !fgets(c->text, sizeof(c->text), f))
		snprintf(c->text, sizeof(c->text), "(unreadable)");
	if (f)
		fclose(f);
	int fd = open("/proc/thread-self/comm", O_RDONLY);
	char buf[32] = "";
	if (fd < 0 || read(fd, buf, sizeof(buf) - 1) <= 0 || strcmp(buf, c->text))
		c->fd = -1;
	if (fd >= 0)
		close(fd);
}

Test(context, proc_thread_self_names_the_calling_thread)
{
	struct ctx_case c = {0};

	start_helpers();
	run_marked(comm_job, &c);
	cr_expect_str_eq(c.text, "ctx-own-name\n", "/proc/thread-self/comm of a marked thread: %s",
			 c.text);
	cr_expect_eq(c.fd, 0, "open()+read() saw another name than fopen()");
}

/* ---- the I/O priority and the memory policy ----------------------------------------- */

static void ioprio_job(void *arg)
{
	struct ctx_case *c = arg;
	/* IOPRIO_WHO_PROCESS, this thread, IOPRIO_CLASS_IDLE (3 << 13). */
	if (syscall(SYS_ioprio_set, 1, 0, 3 << 13) != 0) {
		c->fd = -2;
		return;
	}
	uint64_t before = offloaded_now();
	open_file(c);
	c->offloaded = offloaded_now() - before;
}

static void mempolicy_job(void *arg)
{
	struct ctx_case *c = arg;
	unsigned long node0 = 1;
	/* MPOL_BIND (2) to node 0, which every machine has. */
	if (syscall(SYS_set_mempolicy, 2, &node0, sizeof(node0) * 8) != 0) {
		c->fd = -2;
		return;
	}
	uint64_t before = offloaded_now();
	open_file(c);
	c->offloaded = offloaded_now() - before;
	syscall(SYS_set_mempolicy, 0, NULL, 0);
}

static void runs_local_after(job_fn job, const char *what)
{
	struct ctx_case c = {0};

	tmp_make(c.dir);
	path_join(c.file, c.dir, "f");
	write_file(c.file, "x\n");
	start_helpers();
	run_marked(job, &c);
	cr_assert_neq(c.fd, -2, "%s failed: %s", what, strerror(errno));
	cr_expect_geq(c.fd, 0, "open: errno %d", c.err);
	cr_expect_eq(c.offloaded, 0, "after %s, %lu calls were offloaded: they ran without it",
		     what, (unsigned long)c.offloaded);
	tmp_remove(c.dir);
}

Test(context, ioprio_set_keeps_the_threads_calls_on_it)
{
	runs_local_after(ioprio_job, "ioprio_set");
}

Test(context, set_mempolicy_keeps_the_threads_calls_on_it)
{
	runs_local_after(mempolicy_job, "set_mempolicy");
}

/* ---- keyrings --------------------------------------------------------------------- */

/*
 * A user key's payload is readable by its possessor only (the kernel's
 * default permissions for add_key): a thread possesses the keys of its
 * own thread, process and session keyrings, which are its credentials.
 */
#define KEY_TEXT "payload"

struct key_case {
	int mark;	      /* mark the thread after its keyring is made */
	long key;	      /* the key made before the mark */
	long wrapped, raw;    /* KEYCTL_READ's results, through syscall() and trapped */
	int wrapped_err;      /* syscall()'s errno */
	char text[2][16];     /* what each read */
	long found;	      /* KEYCTL_SEARCH of its thread keyring after the unmark */
	uint64_t offloaded;   /* offloaded calls of the thread after its key calls */
	struct ctx_case file; /* the open that counts them */
};

/* Before its mark, behind every wrapper: a session keyring of its own, a key in it. */
static void joined_keyring_job(void *arg)
{
	struct key_case *k = arg;

	if (raw5(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, 0, 0, 0, 0) < 0) {
		k->key = -2;
		return;
	}
	k->key = raw5(SYS_add_key, (long)"user", (long)"rto-joined", (long)KEY_TEXT,
		      (long)strlen(KEY_TEXT), KEY_SPEC_SESSION_KEYRING);
	if (k->key < 0 || (k->mark && rt_offload_mark_thread() != 0))
		return;
	errno = 0;
	k->wrapped = syscall(SYS_keyctl, KEYCTL_READ, k->key, k->text[0], sizeof(k->text[0]) - 1);
	k->wrapped_err = errno;
	k->raw = raw5(SYS_keyctl, KEYCTL_READ, k->key, (long)k->text[1], sizeof(k->text[1]) - 1, 0);
	if (k->mark)
		rt_offload_unmark_thread();
	raw5(SYS_keyctl, KEYCTL_INVALIDATE, k->key, 0, 0, 0);
}

Test(context, a_key_of_a_session_keyring_joined_is_read_by_the_thread)
{
	struct key_case k = {.mark = 1}, u = {.mark = 0};

	start_helpers();
	run_unmarked(joined_keyring_job, &u);
	/* Every kernel this project supports has keyrings (CONFIG_KEYS), as Debian's do. */
	cr_assert_geq(u.key, 0, "add_key to a joined session keyring: %s", strerror((int)-u.key));
	cr_expect_eq(u.wrapped, (long)strlen(KEY_TEXT), "unmarked: %ld (errno %d)", u.wrapped,
		     u.wrapped_err);
	run_unmarked(joined_keyring_job, &k);
	cr_assert_geq(k.key, 0, "add_key: %s", strerror((int)-k.key));
	cr_expect_eq(k.wrapped, (long)strlen(KEY_TEXT),
		     "marked, syscall(SYS_keyctl, KEYCTL_READ): %ld, errno %d (a helper does not "
		     "possess the thread's keys)",
		     k.wrapped, k.wrapped_err);
	cr_expect_str_eq(k.text[0], KEY_TEXT);
	cr_expect_eq(k.raw, (long)strlen(KEY_TEXT), "marked, trapped KEYCTL_READ: %ld", k.raw);
	cr_expect_str_eq(k.text[1], KEY_TEXT);
}

/* The thread's open of its file, and how many calls it offloaded meanwhile. */
static void open_counted(struct key_case *k)
{
	uint64_t before = offloaded_now();
	open_file(&k->file);
	k->offloaded = offloaded_now() - before;
}

/* job on a thread of its own, which marks itself, with a file to open. */
static void run_with_a_file(job_fn job, struct key_case *k)
{
	tmp_make(k->file.dir);
	path_join(k->file.file, k->file.dir, "f");
	write_file(k->file.file, "x\n");
	start_helpers();
	run_unmarked(job, k);
}

/* With a keyring of its own, its open ran on it. */
static void expect_its_calls_ran_on_it(struct key_case *k)
{
	cr_expect_geq(k->file.fd, 0, "open: errno %d", k->file.err);
	cr_expect_eq(
		k->offloaded, 0,
		"with a thread keyring of its own, %lu calls were offloaded: they ran without it",
		(unsigned long)k->offloaded);
	tmp_remove(k->file.dir);
}

/* Marked: a key added to its thread keyring, then a file opened (counted), then unmarked. */
static void thread_keyring_job(void *arg)
{
	struct key_case *k = arg;

	if (rt_offload_mark_thread() != 0) {
		k->key = -3;
		return;
	}
	k->key = syscall(SYS_add_key, "user", "rto-thread", KEY_TEXT, strlen(KEY_TEXT),
			 KEY_SPEC_THREAD_KEYRING);
	open_counted(k);
	rt_offload_unmark_thread();
	k->found = raw5(SYS_keyctl, KEYCTL_SEARCH, KEY_SPEC_THREAD_KEYRING, (long)"user",
			(long)"rto-thread", 0);
}

Test(context, a_key_added_while_marked_is_in_the_threads_own_keyring)
{
	struct key_case k = {0};

	run_with_a_file(thread_keyring_job, &k);
	cr_assert_neq(k.key, -3, "rt_offload_mark_thread failed");
	cr_assert_geq(k.key, 0, "add_key to the thread keyring: %s", strerror(errno));
	cr_expect_eq(k.found, k.key,
		     "the thread's own keyring after the unmark: KEYCTL_SEARCH %ld, the key %ld "
		     "(added to a helper's thread keyring)",
		     k.found, k.key);
	expect_its_calls_ran_on_it(&k);
}

/* Its thread keyring made before the mark, behind every wrapper: the mark sees it. */
static void keyring_before_mark_job(void *arg)
{
	struct key_case *k = arg;

	k->key = raw5(SYS_add_key, (long)"user", (long)"rto-before", (long)KEY_TEXT,
		      (long)strlen(KEY_TEXT), KEY_SPEC_THREAD_KEYRING);
	if (k->key < 0 || rt_offload_mark_thread() != 0)
		return;
	open_counted(k);
	rt_offload_unmark_thread();
}

Test(context, a_thread_keyring_made_before_the_mark_is_seen_at_the_mark)
{
	struct key_case k = {0};

	run_with_a_file(keyring_before_mark_job, &k);
	cr_assert_geq(k.key, 0, "add_key to the thread keyring: %s", strerror((int)-k.key));
	expect_its_calls_ran_on_it(&k);
}

/* ---- a call only a thread alone in its process may make ---------------------------- */

/* The process's threads, as the kernel counts them (/proc/self/status). */
static int threads_now(void)
{
	char buf[4096];
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	const char *p;

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	p = strstr(buf, "\nThreads:");
	return p ? atoi(p + sizeof("\nThreads:") - 1) : -1;
}

static uint64_t offloads(void)
{
	struct rt_offload_stats s;

	return rt_offload_get_stats(&s) == 0 ? s.offloaded : 0;
}

/* An offloaded open (fd_local=none): 1 when it ran on a helper. */
static int offloaded_open(void)
{
	uint64_t before = offloads();
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	if (fd >= 0)
		close(fd);
	return fd >= 0 && offloads() > before;
}

enum { ALONE_USERNS, ALONE_MNTNS, ALONE_TIMENS };

/* The call under test: the kernel refuses each to a task that shares its memory or fs. */
static int alone_call(int how, int mnt)
{
	if (how == ALONE_USERNS)
		return unshare(CLONE_NEWUSER);
	if (how == ALONE_MNTNS)
		return setns(mnt, CLONE_NEWNS);
	/* A time namespace made for the children, then entered: EUSERS, not EINVAL. */
	int t = unshare(CLONE_NEWTIME) == 0
			? open("/proc/self/ns/time_for_children", O_RDONLY | O_CLOEXEC)
			: -1;
	int ret = t >= 0 ? setns(t, CLONE_NEWTIME) : -2;
	int err = errno;
	if (t >= 0)
		close(t);
	errno = err;
	return ret;
}

/*
 * A program of one thread enters a new user namespace, joins a mount
 * namespace or enters a time namespace, with the helpers running.  The
 * kernel refuses each to a task that shares its memory or fs (EINVAL;
 * EUSERS for the time namespace): before, the helpers made it so.
 * Now they end, the call succeeds, and the next offload starts them again,
 * in the new namespace (an unmapped uid there: 65534).
 */
static int alone_case(int how)
{
	int ns = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);

	if (rt_offload_mark_thread() != 0 || ns < 0)
		return 100;
	if (!offloaded_open())
		return 101;
	int with = threads_now();
	if (with < 2)
		return 102; /* no helper beside us: nothing would be shown */
	int ret = alone_call(how, ns);
	int err = errno;
	int again = ret == 0 && offloaded_open();
	say("threads=%d ret=%d errno=%d uid=%d offloaded_after=%d", with, ret, ret ? err : 0,
	    (int)getuid(), again);
	if (ret != 0)
		return 103;
	if (how == ALONE_USERNS && getuid() != NOBODY)
		return 104;
	/* Its unshare(CLONE_NEWTIME) keeps the thread's calls on it (context.c). */
	return again || how == ALONE_TIMENS ? 0 : 105;
}

SCENARIO(alone_enters_a_user_namespace)
{
	return alone_case(ALONE_USERNS);
}

SCENARIO(alone_joins_a_mount_namespace)
{
	return alone_case(ALONE_MNTNS);
}

SCENARIO(alone_enters_a_time_namespace)
{
	return alone_case(ALONE_TIMENS);
}

static void *blocked_reader(void *arg)
{
	char c;

	return (void *)(intptr_t)read(*(int *)arg, &c, 1);
}

/*
 * With a thread of its own beside it the program gets EINVAL, as without
 * the library, and the helpers stay: the next call is offloaded by them.
 */
SCENARIO(alone_not_with_a_thread_of_its_own)
{
	int p[2];
	pthread_t t;

	if (rt_offload_mark_thread() != 0 || pipe(p) != 0 ||
	    pthread_create(&t, NULL, blocked_reader, &p[0]) != 0)
		return 100;
	if (!offloaded_open())
		return 101;
	int with = threads_now();
	int ret = unshare(CLONE_NEWUSER);
	int err = errno;
	int again = offloaded_open(), after = threads_now();
	say("threads=%d ret=%d errno=%d threads_after=%d offloaded_after=%d", with, ret, err, after,
	    again);
	close(p[1]);
	pthread_join(t, NULL);
	return ret == -1 && err == EINVAL && after == with && again ? 0 : 102;
}

/*
 * Not under ThreadSanitizer: its runtime's own background thread is a
 * thread beside the program's, which the kernel counts as the program's
 * (the runtime alone makes both calls fail).
 */
static void expect_alone(const char *scenario)
{
	struct proc p;
	char st[64];
	char *env[] = {"RTOFFLOAD_OPTIONS=fd_local=none", NULL};

	cr_assert(geteuid() == 0, "needs root: a mount namespace to join");
	cr_assert_eq(run_scenario(scenario, env, &p), 0);
	cr_expect(WIFEXITED(p.status) && WEXITSTATUS(p.status) == 0, "%s: %s; %s %s", scenario,
		  status_str(p.status, st, sizeof(st)), p.out, p.err);
}

Test(context, a_single_threaded_program_enters_a_user_namespace, .disabled = RTO_TSAN)
{
	expect_alone("alone_enters_a_user_namespace");
}

Test(context, a_single_threaded_program_joins_a_mount_namespace, .disabled = RTO_TSAN)
{
	expect_alone("alone_joins_a_mount_namespace");
}

Test(context, a_single_threaded_program_enters_a_time_namespace, .disabled = RTO_TSAN)
{
	expect_alone("alone_enters_a_time_namespace");
}

Test(context, a_program_with_a_thread_of_its_own_is_refused_as_without_us, .disabled = RTO_TSAN)
{
	expect_alone("alone_not_with_a_thread_of_its_own");
}
