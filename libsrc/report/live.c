/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The live view (live=1): a segment /dev/shm/rtoffload.PID, mode 0600,
 * that `rtoffload stat` and `rtoffload top` read while the process runs.
 *
 * Nothing is added to the caller's path: the segment holds copies of the
 * counters the library keeps anyway (stats.c), made by a thread of its
 * own, "rtoffload-live", pinned to the helpers' CPUs at SCHED_OTHER.  That
 * thread sleeps on a futex word in the segment (shared between processes)
 * and copies only when a reader asks, so a process nobody watches pays a
 * sleeping thread and the segment's pages, nothing per call.
 *
 * The segment is made when the helpers start (a process that never
 * offloads has none), not under AT_SECURE (another user's environment
 * would make a file in this process's name), and unlinked at exit.  A
 * process killed by a signal leaves its segment: the next one to start
 * its publisher removes the segments of processes that are gone (its
 * user's only; the kernel would refuse the others in a sticky /dev/shm).
 * Raw system calls throughout: the library's own wrappers are not for it.
 *
 * Descriptors: a program may rely on open() and dup() giving the lowest
 * free number.  tar starts gzip with close(n); dup(x), and calls abort()
 * when dup() gives another number.  The publisher's descriptors (the
 * /dev/shm scan, the segment, /proc/PID/stat) therefore exist only while
 * the thread that started the helpers waits in rto_live_start(): from the
 * program's side they come and go inside one library call, like those of
 * any libc function that reads a file.  Once started, the publisher opens
 * nothing (stats.c leaves the names of running threads to the reader).
 * Before this, the gzip child of `tar czf` under mark=all died of SIGABRT
 * in about one run in six: its first offloaded close() started the
 * helpers and the publisher, whose opendir took the number tar had just
 * closed (tests/live: live_fork_exec).
 */
#include "options.h"
#include "procfs.h"
#include "cpulist.h"
#include "own_thread.h"
#include "fn.h"
#include "async.h"
#include "resolve.h"
#include "futex.h"
#include "stats.h"
#include "report.h"
#include "live.h"
#include "signals.h"
#include "stall.h"
#include "lifetime.h"
#include "transport.h"
#include "real.h"

#include "live_layout.h"
#include "rtoffload.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <signal.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define LIVE_STACK (256 * 1024)

/* live=: copied once at load (rto_live_configure), read-only afterwards. */
static struct {
	int live;
} opt;

void rto_live_configure(const struct rto_options *o)
{
	opt.live = o->live;
}

static struct rto_live *seg;
static pid_t seg_pid; /* the process that made seg: a forked child makes its own */
static char seg_path[64];
static cpu_set_t live_cpus; /* set before the publisher starts */
static unsigned live_workers;
/*
 * The publisher's descriptors are all closed: 1.  A futex word, between
 * full barriers on both sides (liburcu's, which the tsan and valgrind
 * builds see as synchronisation), so seg (stored before it) is seen by the
 * starter: a program that exits at once still unlinks its segment.
 */
static uint32_t fds_closed;

static long sys_open(const char *path, int flags, int mode)
{
	return rto_syscall(SYS_openat, AT_FDCWD, path, flags, mode);
}

/* Field 22 of /proc/PID/stat (0: the caller): when the process started, in ticks. */
static uint64_t start_time(pid_t pid)
{
	char path[64], buf[1024];
	uint64_t v = 0;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/stat");
	if (rto_procfs_read(path, buf, sizeof(buf)) <= 0)
		return 0;
	const char *p = strrchr(buf, ')'); /* the name may hold spaces */
	for (int field = 2; p && *p && field < 22; p++)
		field += *p == ' ';
	for (; p && *p >= '0' && *p <= '9'; p++)
		v = v * 10 + (uint64_t)(*p - '0');
	return v;
}

/*
 * A segment of ours whose process is gone, whatever it holds: one killed
 * while making it has no magic yet, or no size.  Or a whole segment whose
 * pid now names another process (not one still being made: no magic yet).
 */
static int stale(const char *name, uid_t me)
{
	char path[300];
	struct stat st;
	/* Only the header: the whole segment would not fit on this thread's stack. */
	unsigned char head[offsetof(struct rto_live, request)];
	uint64_t magic, started;
	long pid = 0;

	for (const char *p = name + sizeof(RTO_LIVE_PREFIX) - 1; *p; p++) {
		if (*p < '0' || *p > '9' || pid > 1 << 22)
			return 0;
		pid = pid * 10 + (*p - '0');
	}
	if (pid <= 0)
		return 0;
	snprintf(path, sizeof(path), RTO_LIVE_DIR "/%s", name);
	long fd = sys_open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW, 0);
	if (fd < 0)
		return 0;
	int mine = rto_syscall(SYS_fstat, fd, &st) == 0 && st.st_uid == me;
	int whole =
		mine && rto_syscall(SYS_pread64, fd, head, sizeof(head), 0) == (long)sizeof(head);
	rto_syscall(SYS_close, fd);
	if (!mine)
		return 0;
	if (rto_real_kill((pid_t)pid, 0) < 0)
		return errno == ESRCH;
	if (!whole)
		return 0;
	memcpy(&magic, head + offsetof(struct rto_live, magic), sizeof(magic));
	memcpy(&started, head + offsetof(struct rto_live, starttime), sizeof(started));
	return magic == RTO_LIVE_MAGIC && start_time((pid_t)pid) != started;
}

static void remove_stale(void)
{
	char buf[4096], path[300];
	long fd = sys_open(RTO_LIVE_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
	long n;
	uid_t me = geteuid();

	if (fd < 0)
		return;
	while ((n = rto_syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < n;) {
			struct {
				uint64_t ino;
				int64_t off;
				unsigned short reclen;
				unsigned char type;
				char name[];
			} *d = (void *)(buf + off);
			if (!strncmp(d->name, RTO_LIVE_PREFIX, sizeof(RTO_LIVE_PREFIX) - 1) &&
			    stale(d->name, me)) {
				snprintf(path, sizeof(path), RTO_LIVE_DIR "/%s", d->name);
				rto_syscall(SYS_unlinkat, AT_FDCWD, path, 0);
			}
			off += d->reclen;
		}
	}
	rto_syscall(SYS_close, fd);
}

static struct rto_live *create(void)
{
	pid_t pid = getpid();
	long fd;
	void *p;

	snprintf(seg_path, sizeof(seg_path), RTO_LIVE_DIR "/" RTO_LIVE_PREFIX "%d", (int)pid);
	rto_syscall(SYS_unlinkat, AT_FDCWD, seg_path, 0); /* this pid's, from before an exec */
	fd = sys_open(seg_path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		rto_say(1, "live: cannot create %s: %s", seg_path, strerror(errno));
		return NULL;
	}
	/* 0600 whatever the umask; and fchmod, since the umask may have taken bits. */
	rto_syscall(SYS_fchmod, fd, 0600);
	if (rto_syscall(SYS_ftruncate, fd, sizeof(struct rto_live)) < 0 ||
	    (p = (void *)rto_syscall(SYS_mmap, NULL, sizeof(struct rto_live),
				     PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED) {
		rto_say(1, "live: cannot map %s: %s", seg_path, strerror(errno));
		rto_syscall(SYS_close, fd);
		rto_syscall(SYS_unlinkat, AT_FDCWD, seg_path, 0);
		return NULL;
	}
	rto_syscall(SYS_close, fd);
	struct rto_live *l = p;
	l->version = RTO_LIVE_VERSION;
	l->pid = pid;
	l->size = sizeof(*l);
	l->starttime = start_time(0);
	rto_cpulist_format(&live_cpus, l->helper_cpus, sizeof(l->helper_cpus));
	l->workers = (int32_t)live_workers;
	l->helpers = RTO_LIVE_HELPERS_RUNNING;
	CMM_STORE_SHARED(l->magic, RTO_LIVE_MAGIC); /* last: readers check it */
	seg_pid = pid;
	return l;
}

static void copy_counts(struct rto_live_counts *c, const struct rto_counters *k)
{
	c->offloaded = rto_counters_offloaded(k);
	c->local = CMM_LOAD_SHARED(k->local);
	c->denied = CMM_LOAD_SHARED(k->denied);
	c->async = CMM_LOAD_SHARED(k->async);
	c->fallback = CMM_LOAD_SHARED(k->fallback);
}

static void copy_fns(struct rto_live *l)
{
	unsigned n = 0;

	for (struct rto_fn *const *f = __start_rto_fns; f < __stop_rto_fns && n < RTO_LIVE_FNS;
	     f++) {
		const struct rto_counters *k = (*f)->ctr;
		struct rto_live_fn *o = &l->fns[n];
		struct rto_live_counts c;

		copy_counts(&c, k);
		if (!(c.offloaded | c.local | c.denied | c.async | c.fallback))
			continue;
		snprintf(o->name, sizeof(o->name), "%s", (*f)->name);
		o->c = c;
		o->max_ns = CMM_LOAD_SHARED(k->max_ns);
		for (unsigned b = 0; b < RTO_HIST_BUCKETS; b++)
			o->hist[b] = CMM_LOAD_SHARED(k->hist[b]);
		n++;
	}
	l->nfns = n;
}

static void copy_threads(struct rto_live *l)
{
	struct rto_thread_row r;
	unsigned i = 0, n = 0;

	while (n < RTO_LIVE_THREADS && rto_stats_thread_next(&i, &r, 0)) {
		struct rto_live_thread *o = &l->threads[n++];
		memcpy(o->name, r.name, sizeof(o->name));
		o->tid = r.tid;
		o->exited = (unsigned char)r.exited;
		o->c = (struct rto_live_counts){r.st.offloaded, r.st.local, r.st.denied, r.st.async,
						r.st.fallback};
		o->marked_ns = r.st.marked_ns;
		o->minor = r.st.minor;
		o->major = r.st.major;
	}
	l->nthreads = n;
	l->other_threads = rto_stats_other_threads();
}

/* The stall counts, and the calls stalled now (rtoffload top shows them while they last). */
static void copy_stalls(struct rto_live *l)
{
	struct rto_stall_counts c;
	struct rto_stall_row r;
	unsigned n = 0;

	rto_stall_counts(&c);
	l->stalls = c.calls;
	l->stalls_unclaimed = c.unclaimed;
	l->stalls_running = c.running;
	l->stalls_taken_back = c.taken_back;
	l->workers_grown = c.grown;
	l->input_waits = c.input;
	for (unsigned pos = 0;
	     n < sizeof(l->stalled) / sizeof(l->stalled[0]) && rto_stall_next(&pos, &r); n++) {
		snprintf(l->stalled[n].fn, sizeof(l->stalled[n].fn), "%s", r.fn);
		l->stalled[n].tid = r.tid;
		l->stalled[n].helper = r.helper;
		l->stalled[n].ns = r.ns;
		l->stalled[n].input = r.input;
	}
	l->nstalled = n;
}

/*
 * Seqlock: seq odd while the copy is made.  Readers are other processes
 * that copy the segment and retry when seq moved or was odd.
 */
static void publish(struct rto_live *l)
{
	struct rt_offload_stats t;

	uatomic_add(&l->seq, 1);
	cmm_smp_wmb();
	rto_stats_get(&t);
	l->total = (struct rto_live_counts){t.offloaded, t.local, t.denied, t.async, t.fallback};
	l->p50_ns = t.rtt_p50_ns;
	l->p99_ns = t.rtt_p99_ns;
	l->max_ns = t.rtt_max_ns;
	l->minor = t.minor_faults;
	l->major = t.major_faults;
	rto_stats_async_counts(&l->async_queued, &l->async_full);
	rto_async_ring_use(&l->ring_used, &l->ring_cap, &l->rings);
	copy_fns(l);
	copy_threads(l);
	copy_stalls(l);
	l->published_ns = rto_now_ns();
	l->copies++;
	cmm_smp_wmb();
	uatomic_add(&l->seq, 1);
}

static long shared_futex(uint32_t *word, int op, uint32_t val)
{
	return rto_syscall(SYS_futex, word, op, val, NULL, NULL,
			   0); /* not _PRIVATE: readers are processes */
}

/* arg: the segment of an earlier publisher of this process (alone.c), NULL: a new one. */
static void *publisher(void *arg)
{
	struct rto_live *l = arg;

	rto_signal_own_thread_init(); /* cred_mirror.c's signal: its futex wait only wakes */
	if (!l) {
		remove_stale();
		l = create();
	}
	if (l) /* before the starter goes on: its exit must find the segment to unlink */
		__atomic_store_n(&seg, l, __ATOMIC_RELEASE); /* seg_pid and seg_path first */
	cmm_smp_mb();
	uatomic_set(&fds_closed, 1);
	rto_futex_wake(&fds_closed, 1);
	if (!l)
		return NULL;
	publish(l); /* a first copy: a reader that does not ask still sees something */
	for (;;) {
		uint32_t want = CMM_LOAD_SHARED(l->request);
		cmm_smp_rmb(); /* rto_live_leave() stores leave, then moves request */
		if (CMM_LOAD_SHARED(rto_q->leave))
			break;
		if (want != CMM_LOAD_SHARED(l->published)) {
			publish(l);
			uatomic_set(&l->published, want);
			shared_futex(&l->published, FUTEX_WAKE, INT32_MAX);
		}
		shared_futex(&l->request, FUTEX_WAIT, want);
	}
	rto_lifetime_helper_exiting(); /* rto_live_start() counted it out */
	return NULL;
}

/* The process whose publisher runs, or ran: a forked child starts its own. */
static pid_t started;

void rto_live_leave(void)
{
	struct rto_live *l = __atomic_load_n(&seg, __ATOMIC_ACQUIRE);

	if (!l || seg_pid != getpid())
		return;
	cmm_smp_mb(); /* rto_q->leave (alone.c) before the word moves */
	uatomic_inc(&l->request);
	shared_futex(&l->request, FUTEX_WAKE, INT32_MAX);
}

void rto_live_left(void)
{
	started = 0; /* its segment stays: the next publisher writes it */
}

void rto_live_start(const cpu_set_t *cpus, unsigned workers)
{
	pthread_attr_t attr;
	sigset_t all, old;
	pthread_t tid;

	if (!opt.live || getauxval(AT_SECURE) || started == getpid())
		return;
	started = getpid();
	struct rto_live *old_seg = __atomic_load_n(&seg, __ATOMIC_ACQUIRE);
	if (old_seg && seg_pid != started) { /* the parent's, inherited: not ours to write */
		rto_syscall(SYS_munmap, old_seg, sizeof(*old_seg));
		__atomic_store_n(&seg, NULL, __ATOMIC_RELAXED);
		old_seg = NULL;
	}
	live_cpus = *cpus;
	live_workers = workers;
	sigfillset(&all);
	rto_real_pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setaffinity_np(&attr, sizeof(*cpus), cpus);
	pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
	struct sched_param other = {0};
	pthread_attr_setschedpolicy(&attr, SCHED_OTHER);
	pthread_attr_setschedparam(&attr, &other);
	pthread_attr_setstacksize(&attr, LIVE_STACK);
	uatomic_set(&fds_closed, 0); /* a forked child's start */
	int err = rto_create_own_thread(&tid, &attr, publisher, old_seg);
	if (!err)
		rto_real_pthread_setname_np(tid, "rtoffload-live");
	else
		rto_say(1, "live: cannot start its thread: %s", strerror(err));
	pthread_attr_destroy(&attr);
	rto_real_pthread_sigmask(SIG_SETMASK, &old, NULL);
	/* Its descriptors come and go before the program's next call (above). */
	while (!err && !uatomic_read(&fds_closed))
		rto_futex_wait(&fds_closed, 0);
	cmm_smp_mb();
	/*
	 * Like a helper it keeps no process alive, but only once it stays: a
	 * publisher that could not make its segment (another user's file of
	 * this pid, left by the image before an exec that changed user) ends,
	 * and glibc counts that end.  Counted out before, its end took the
	 * count to zero and glibc called exit(0) for the whole program.
	 */
	if (!err && __atomic_load_n(&seg, __ATOMIC_ACQUIRE))
		rto_lifetime_helper_started();
}

void rto_live_at_exit(void)
{
	if (__atomic_load_n(&seg, __ATOMIC_ACQUIRE) && seg_pid == getpid())
		rto_syscall(SYS_unlinkat, AT_FDCWD, seg_path, 0);
}
