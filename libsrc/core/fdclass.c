/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Calls that are deterministic in some cases: a write to a pipe, a socket,
 * an eventfd, a tmpfs file or a character device (/dev/null, a tty, a
 * serial port) has a short, bounded kernel path, or waits for an external
 * event, which the caller would wait for anyway; a write to a disk file
 * does neither.  Keeping those waits local also keeps their signal (EINTR)
 * and cancellation semantics exactly as without the library.  Calls marked "byfd" in calls.tbl run
 * locally on the former kinds (fd_local=) and are offloaded on the rest.
 * The same cache says whether a descriptor's file lies under async_path=.
 *
 * The class of a descriptor is cached in a table indexed by fd number.
 * Each entry carries a generation: every call that creates, replaces or
 * closes a descriptor ("forget:" and "born:" in calls.tbl: open, close,
 * dup2, fclose...) bumps it, and a classification only lands if the
 * generation it started from is still there.  So a reused fd number never
 * gets the old file's answer, even when a close races with the
 * classification.
 *
 * Where the class comes from, cheapest first:
 *   - the call that made the descriptor says what it is (pipe, socket,
 *     eventfd, accept, dup of a known one): cached on the spot, on any
 *     thread, without a system call;
 *   - a helper that runs an offloaded open, creat, fopen... asks the kernel
 *     (fstat, fstatfs, readlink of /proc/self/fd/N) right after the call;
 *   - an unmarked thread does the same for what it opens, once classifying
 *     at birth is on (a strict thread was marked, mode=strict, or
 *     async_path= is set): a few system calls per open, on threads that are
 *     not realtime;
 *   - a strict thread classifies every open descriptor at mark time;
 *   - otherwise a marked thread's first by-descriptor call asks a helper
 *     (one round trip, then cached).  Never a strict thread: strict means
 *     no request at all, so there an unknown descriptor is not local and
 *     the call is refused (and reported) like any other strict call.
 *
 * What cannot be seen: descriptors closed and reborn under the same number
 * by raw syscall() or by code that bypasses libc's exported functions.
 */
#include "options.h"
#include "rto_fast.h"
#include "self.h"
#include "decide.h"
#include "fn.h"
#include "async_path.h"
#include "callsite.h"
#include "resolve.h"
#include "fdclass.h"
#include "timerfd_track.h"
#include "real.h"

#include "rtoffload.h"

#include <linux/magic.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/statfs.h>
#include <sys/syscall.h>

/* fd_local= and mode=strict: copied once at load (rto_fd_configure), read-only afterwards. */
static struct {
	unsigned fd_local; /* RTO_FD_* kinds that run on their caller */
	int strict;
} opt;

void rto_fd_configure(const struct rto_options *o)
{
	opt.fd_local = o->fd_local;
	opt.strict = o->mode == RT_OFFLOAD_MODE_STRICT;
}

#define FD_MAX 65536 /* descriptors above run by handling alone (offloaded) */

enum {
	CLASS_UNKNOWN,
	CLASS_LOCAL,
	CLASS_REMOTE,
	CLASS_MASK = 3,
	ASYNC_PATH = 4,	 /* the file lies under async_path= */
	KERNEL_FILE = 8, /* a file of a kernel interface: procfs, sysfs, cgroupfs... */
	BITS = 15,	 /* what a classification sets */
	GEN_ONE = 16,	 /* the generation counts above */
};

static uint32_t table[FD_MAX];
static int table_used; /* 0 until a marked thread classifies: forgetting is free */
static int eager;      /* unmarked threads classify what they create */

/* ---- asking the kernel ------------------------------------------------------- */

/* What /proc/self/fd/FD names (not NUL-terminated): its length, or -1. */
static long fd_target(int fd, char *buf, size_t size)
{
	char link[32];

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	return rto_syscall(SYS_readlinkat, AT_FDCWD, link, buf, size);
}

/*
 * A signalfd (RTO_FD_THREAD): its read takes the signals pending for the
 * thread that reads, beside the process's.  On a helper, a signal sent to
 * the caller alone (raise, pthread_kill) is never read, while the caller's
 * epoll sees the descriptor ready: sd-event spun on EAGAIN for ever under
 * fd_local=none.  Its calls run on the caller whatever fd_local= says:
 * learnt at its birth (signalfd(), calls.tbl), or here when it is asked.
 */
static int is_signalfd(int fd)
{
	static const char name[] = "anon_inode:[signalfd]";
	char target[sizeof(name)];
	long n = fd_target(fd, target, sizeof(target));

	return n == (long)sizeof(name) - 1 && memcmp(target, name, sizeof(name) - 1) == 0;
}

/*
 * A file system of a kernel interface (/proc/sys, /sys, a cgroup's,
 * debugfs...): a write to its files is a command, whose effect and error
 * are the call's.
 */
static int is_kernel_fs(unsigned long f_type)
{
	switch (f_type) {
	case PROC_SUPER_MAGIC:
	case SYSFS_MAGIC:
	case CGROUP_SUPER_MAGIC:
	case CGROUP2_SUPER_MAGIC:
	case DEBUGFS_MAGIC:
	case TRACEFS_MAGIC:
	case SECURITYFS_MAGIC:
	case BPF_FS_MAGIC:
	case PSTOREFS_MAGIC:
	case EFIVARFS_MAGIC:
		return 1;
	default:
		return 0;
	}
}

/* fd's kind (RTO_FD_*, 0 for a file elsewhere), or -1; *kernel: is_kernel_fs(). */
static int kind_of(int fd, int *kernel)
{
	struct stat st;
	struct statfs sf;

	*kernel = 0;
	if (rto_real_fstat(fd, &st) != 0)
		return -1;
	switch (st.st_mode & S_IFMT) {
	case S_IFIFO:
		return RTO_FD_PIPE;
	case S_IFSOCK:
		return RTO_FD_SOCKET;
	case 0: /* anon_inode: eventfd, timerfd, signalfd, epoll */
		return is_signalfd(fd) ? RTO_FD_THREAD : RTO_FD_ANON;
	case S_IFCHR: /* /dev/null, ttys, serial ports: reads wait for the outside */
		return RTO_FD_CHR;
	case S_IFREG:
	case S_IFDIR:
		if (rto_syscall(SYS_fstatfs, fd, &sf) != 0)
			return 0;
		if (sf.f_type == TMPFS_MAGIC || sf.f_type == RAMFS_MAGIC)
			return RTO_FD_TMPFS; /* memfd too: it lives on shmem */
		*kernel = is_kernel_fs((unsigned long)sf.f_type);
		return 0;
	default:
		return 0;
	}
}

/* The file's path as the kernel knows it now, matched against async_path=. */
static int under_async_path(int fd)
{
	char path[PATH_MAX];
	long n = fd_target(fd, path, sizeof(path) - 1);

	if (n <= 0 || path[0] != '/') /* sockets, pipes: "socket:[N]", no path */
		return 0;
	path[n] = '\0';
	return rto_async_path_match(path);
}

static int kind_bits(int fd, int kind, int kernel)
{
	int bits = (kind & ((int)opt.fd_local | RTO_FD_THREAD)) ? CLASS_LOCAL : CLASS_REMOTE;
	if (RTO_UNLIKELY(rto_async_paths) && under_async_path(fd))
		bits |= ASYNC_PATH;
	if (kernel)
		bits |= KERNEL_FILE;
	return bits;
}

/* Class bits of fd, or -1 if it is not open.  Keeps errno. */
static int class_bits(int fd)
{
	int saved = errno;
	int kernel;
	int kind = kind_of(fd, &kernel);
	int bits = kind < 0 ? -1 : kind_bits(fd, kind, kernel);
	errno = saved;
	return bits;
}

static void use_table(void)
{
	if (!CMM_LOAD_SHARED(table_used)) {
		uatomic_set(&table_used, 1);
		cmm_smp_mb(); /* before the generation we start from: see rto_fd_forget */
	}
}

/* Land bits on fd unless its generation moved on since e was read. */
static void store(int fd, uint32_t e, int bits)
{
	uatomic_cmpxchg(&table[fd], e, (e & ~(uint32_t)BITS) | (uint32_t)bits);
}

/* Classify fd on this thread (not a realtime call path) if it is unknown. */
static void classify_here(int fd)
{
	uint32_t e = CMM_LOAD_SHARED(table[fd]);
	if ((e & CLASS_MASK) != CLASS_UNKNOWN)
		return;
	int bits = class_bits(fd);
	if (bits >= 0)
		store(fd, e, bits);
}

/* ---- on the helper ------------------------------------------------------------- */

struct classify_args {
	int fd;
	int bits; /* class bits, -1 when fstat failed */
};

static void run_classify(void *p)
{
	struct classify_args *a = p;
	a->bits = class_bits(a->fd);
}

RTO_FN_FULL(fd_classify, RTO_CLASS_INTERNAL, RTO_OFFLOAD, run_classify, RTO_F_INTERNAL);

/* ---- on the caller -------------------------------------------------------------- */

/*
 * How a class request is made: the routing core's rto_call(), which is
 * above us (it asks us about descriptors).  Stored by rto_fd_init() in the
 * constructor, before any thread is marked; only marked threads classify.
 * Relaxed accesses: unset, a descriptor stays unknown, which is not local.
 */
static int (*classify_call)(struct rto_fn *fn, void *args, int fd, FILE *stream, unsigned how);

static int learn_bits(int fd, uint32_t e);

/*
 * The class bits of fd for a marked thread; -1: unknown (and not to be
 * learnt).  Known, a table load inline in the caller's one call here;
 * learning it is out of line.
 */
static inline __attribute__((always_inline)) int bits_of(int fd)
{
	uint32_t e = CMM_LOAD_SHARED(table[fd]);
	if (RTO_LIKELY((e & CLASS_MASK) != CLASS_UNKNOWN))
		return (int)(e & BITS);
	return learn_bits(fd, e);
}

static __attribute__((noinline)) int learn_bits(int fd, uint32_t e)
{
	/*
	 * Only a request the decision would hand off (decide.h): none from a
	 * strict thread, nor from one under its own filter, which runs it all
	 * here.  Helpers not up yet: the request starts them (route.c).
	 */
	struct rto_decide_in in = {.flags = RTO_F_INTERNAL, .helpers = RTO_HELPERS_READY};
	rto_decide_self(&in);
	if (rto_decide(&in) != RTO_RUN_OFFLOAD)
		return -1;
	/* First use since the descriptor was born: ask the kernel, off this CPU. */
	if (!CMM_LOAD_SHARED(table_used)) {
		use_table();
		e = CMM_LOAD_SHARED(table[fd]);
	}
	struct classify_args a = {.fd = fd};
	typeof(classify_call) call = CMM_LOAD_SHARED(classify_call);
	if (!call)
		return -1;
	call(&rto_fn_fd_classify, &a, fd, NULL, 0); /* fd: the trace's, for the call that asked */
	if (a.bits < 0)
		return -1;    /* not open (EBADF): let the call itself fail */
	store(fd, e, a.bits); /* lost to a forget: answer this call only */
	return a.bits;
}

/*
 * What the cache already says (decide.h's enum rto_fact): RTO_UNASKED when
 * only learning would tell (rto_fd_runs_local() learns it).  A load and a
 * few compares, asked before the decision so that a known descriptor costs
 * it no second pass.
 */
int rto_fd_local_known(int fd)
{
	if (fd < 0 || fd >= FD_MAX)
		return RTO_NO;
	uint32_t e = CMM_LOAD_SHARED(table[fd]);
	if (RTO_UNLIKELY((e & CLASS_MASK) == CLASS_UNKNOWN))
		return opt.fd_local ? RTO_UNASKED : RTO_NO; /* fd_local=none: nothing to learn */
	return (e & CLASS_MASK) == CLASS_LOCAL ? RTO_YES : RTO_NO;
}

int rto_fd_runs_local(int fd)
{
	if (fd < 0 || fd >= FD_MAX)
		return 0;
	if (!opt.fd_local) /* only a signalfd known at its birth */
		return rto_fd_local_known(fd) == RTO_YES;
	int bits = bits_of(fd);
	return bits >= 0 && (bits & CLASS_MASK) == CLASS_LOCAL;
}

int rto_fd_kernel_file(int fd)
{
	if (fd < 0 || fd >= FD_MAX)
		return 0;
	int bits = bits_of(fd);
	return bits >= 0 && (bits & KERNEL_FILE);
}

int rto_fd_async_path(int fd)
{
	if (fd < 0 || fd >= FD_MAX)
		return 0;
	int bits = bits_of(fd);
	return bits >= 0 && (bits & ASYNC_PATH);
}

/* ---- where descriptors are born and die ------------------------------------------ */

/*
 * Registered by a module above this one (async.c), once, in the
 * constructor (rto_async_init), before any thread is marked: the marking
 * thread ran the constructor itself or was started after it
 * (pthread_create orders the store before it).  A thread that was running
 * before the library loaded may race with the store: relaxed accesses,
 * and an unset hook means what it means before async.c is set up, that
 * nothing is queued to act on.
 */
static void (*forget_hook)(int fd); /* async.c: a failed write's deferred errno */

void rto_fd_on_forget(void (*fn)(int fd))
{
	CMM_STORE_SHARED(forget_hook, fn);
}

void rto_fd_forget(int fd)
{
	void (*hook)(int) = CMM_LOAD_SHARED(forget_hook);

	if (hook)
		hook(fd);
	rto_timerfd_forget(fd); /* no longer the timerfd a read's wake word came from */
	if (fd < 0 || fd >= FD_MAX || RTO_LIKELY(!CMM_LOAD_SHARED(table_used)))
		return;
	uatomic_add(&table[fd], GEN_ONE); /* class bits stay; the generation moves on */
	uatomic_and(&table[fd], ~(uint32_t)BITS);
}

void rto_fd_forget_all(void)
{
	for (int fd = 0; fd < FD_MAX; fd++)
		rto_fd_forget(fd);
}

/* May this thread ask the kernel about a new descriptor here? */
static int may_classify_here(void)
{
	/* A marked thread: no system call; a vfork child: its descriptors are not ours. */
	if (rto_self.route != RTO_ROUTE_DIRECT || rto_self.vforking)
		return 0;
	return rto_helper_is_self() || CMM_LOAD_SHARED(eager);
}

void rto_fd_born(int fd, int kind)
{
	rto_fd_forget(fd);
	if (kind == RTO_FD_THREAD && fd >= 0 && fd < FD_MAX && !rto_self.vforking)
		use_table(); /* under fd_local=none too: nothing else makes it the caller's */
	if (fd < 0 || fd >= FD_MAX || !CMM_LOAD_SHARED(table_used) || rto_self.vforking)
		return;
	if (kind >= 0) { /* a pipe, a socket, an eventfd: no path, no question to ask */
		uint32_t e = CMM_LOAD_SHARED(table[fd]);
		store(fd, e,
		      (kind & ((int)opt.fd_local | RTO_FD_THREAD)) ? CLASS_LOCAL : CLASS_REMOTE);
		return;
	}
	if (may_classify_here())
		classify_here(fd);
}

void rto_fd_born_like(int newfd, int oldfd)
{
	if (oldfd < 0 || oldfd >= FD_MAX || newfd < 0 || newfd >= FD_MAX || newfd == oldfd) {
		rto_fd_born(newfd, -1);
		return;
	}
	rto_fd_forget(newfd);
	if (!CMM_LOAD_SHARED(table_used) || rto_self.vforking)
		return;
	uint32_t e = CMM_LOAD_SHARED(table[newfd]);
	uint32_t like = CMM_LOAD_SHARED(table[oldfd]);
	if ((like & CLASS_MASK) != CLASS_UNKNOWN)
		store(newfd, e, (int)(like & BITS)); /* the same open file */
	else if (may_classify_here())
		classify_here(newfd);
}

void rto_fd_eager(void)
{
	use_table();
	uatomic_set(&eager, 1);
}

/* Each descriptor listed in /proc/self/fd (raw system calls: any thread may call this). */
static int classify_listed(void)
{
	char buf[4096];
	long n;
	int dir = (int)rto_syscall(SYS_openat, AT_FDCWD, "/proc/self/fd",
				   O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (dir < 0)
		return -1;
	while ((n = rto_syscall(SYS_getdents64, dir, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < n;) {
			struct dirent64 *d = (struct dirent64 *)(buf + off);
			char *end;
			long fd = strtol(d->d_name, &end, 10);
			if (d->d_name[0] >= '0' && d->d_name[0] <= '9' && !*end && fd != dir &&
			    fd < FD_MAX)
				classify_here((int)fd);
			off += d->d_reclen;
		}
	}
	rto_syscall(SYS_close, dir);
	return 0;
}

void rto_fd_classify_open(void)
{
	if (rto_self.vforking)
		return;
	use_table();
	if (classify_listed() == 0)
		return;
	/* No /proc: every number up to the descriptor limit. */
	struct rlimit rl;
	long max = rto_real_getrlimit(RLIMIT_NOFILE, &rl) == 0 ? (long)rl.rlim_cur : 1024;
	for (long fd = 0; fd < max && fd < FD_MAX; fd++)
		classify_here((int)fd);
}

void rto_fd_init(int (*call)(struct rto_fn *fn, void *args, int fd, FILE *stream, unsigned how))
{
	CMM_STORE_SHARED(classify_call, call);
	if (opt.strict || rto_async_paths)
		rto_fd_eager();
}

int rto_fd_of_file(FILE *f)
{
	int saved = errno; /* fileno() sets EBADF for a stream without a descriptor */
	int fd = f ? fileno(f) : -1;
	errno = saved;
	return fd;
}
