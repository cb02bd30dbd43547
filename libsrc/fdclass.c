/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Calls that are deterministic in some cases: a write to a pipe, a socket,
 * an eventfd, a tmpfs file or a character device (/dev/null, a tty, a
 * serial port) has a short, bounded kernel path, or waits for an external
 * event, which the caller would wait for anyway; a write to a disk file
 * does neither.  Keeping those waits local also keeps their signal (EINTR)
 * and cancellation semantics exactly as without the library.  Calls marked "byfd" in calls.tbl run
 * locally on the former kinds (fd_local=) and are offloaded on the rest.
 *
 * The kind of a descriptor is learnt on its first such call (fstat and
 * fstatfs, run on a helper) and cached in a table indexed by fd number.
 * Each entry carries a generation: every call that creates, replaces or
 * closes a descriptor ("forget:" in calls.tbl: open, close, dup2, fclose...)
 * bumps it, and a classification only lands if the generation it started
 * from is still there.  So a reused fd number never gets the old file's
 * answer, even when a close races with the classification.
 *
 * What cannot be seen: descriptors closed and reborn under the same number
 * by raw syscall() or by code that bypasses libc's exported functions.
 */
#include "shims_prelude.h"

#include <linux/magic.h>
#include <sys/statfs.h>
#include <sys/syscall.h>

#define FD_MAX 65536 /* descriptors above run by handling alone (offloaded) */

enum { CLASS_UNKNOWN, CLASS_LOCAL, CLASS_REMOTE, CLASS_MASK = 3, GEN_ONE = 4 };

static uint16_t table[FD_MAX];
static int table_used; /* 0 until a marked thread classifies: forgetting is free */

/* ---- on the helper --------------------------------------------------------- */

struct classify_args {
	int fd;
	int kind; /* RTO_FD_*, 0 for "other", -1 when fstat failed */
};

static int kind_of(int fd)
{
	struct stat st;
	struct statfs sf;

	if (rto_real_fstat(fd, &st) != 0)
		return -1;
	switch (st.st_mode & S_IFMT) {
	case S_IFIFO:
		return RTO_FD_PIPE;
	case S_IFSOCK:
		return RTO_FD_SOCKET;
	case 0: /* anon_inode: eventfd, timerfd, signalfd, epoll */
		return RTO_FD_ANON;
	case S_IFCHR: /* /dev/null, ttys, serial ports: reads wait for the outside */
		return RTO_FD_CHR;
	case S_IFREG:
	case S_IFDIR:
		if (syscall(SYS_fstatfs, fd, &sf) == 0 &&
		    (sf.f_type == TMPFS_MAGIC || sf.f_type == RAMFS_MAGIC))
			return RTO_FD_TMPFS; /* memfd too: it lives on shmem */
		return 0;
	default:
		return 0;
	}
}

static void run_classify(void *p)
{
	struct classify_args *a = p;
	int saved = errno;
	a->kind = kind_of(a->fd);
	errno = saved;
}

RTO_FN(fd_classify, RTO_CLASS_INTERNAL, RTO_OFFLOAD, run_classify);

/* ---- on the caller ---------------------------------------------------------- */

int rto_fd_runs_local(int fd)
{
	if (fd < 0 || fd >= FD_MAX || !rto_opt.fd_local)
		return 0; /* fd_local=none: nothing to learn */
	uint16_t e = CMM_LOAD_SHARED(table[fd]);
	if (RTO_LIKELY((e & CLASS_MASK) != CLASS_UNKNOWN))
		return (e & CLASS_MASK) == CLASS_LOCAL;

	/* First use since the descriptor was born: ask the kernel, off this CPU. */
	if (!CMM_LOAD_SHARED(table_used)) {
		uatomic_set(&table_used, 1);
		cmm_smp_mb(); /* before the generation we start from: see rto_fd_forget */
		e = CMM_LOAD_SHARED(table[fd]);
	}
	struct classify_args a = {.fd = fd};
	rto_offload_internal(&rto_fn_fd_classify, &a);
	if (a.kind < 0)
		return 0; /* not open (EBADF): let the call itself fail, offloaded */
	int local = (a.kind & (int)rto_opt.fd_local) != 0;
	uint16_t known = (uint16_t)((e & ~CLASS_MASK) | (local ? CLASS_LOCAL : CLASS_REMOTE));
	uatomic_cmpxchg(&table[fd], e, known); /* lost to a forget: answer this call only */
	return local;
}

void rto_fd_forget(int fd)
{
	rto_async_forget(fd);
	if (fd < 0 || fd >= FD_MAX || RTO_LIKELY(!CMM_LOAD_SHARED(table_used)))
		return;
	uatomic_add(&table[fd], GEN_ONE); /* class bits stay; the generation moves on */
	uatomic_and(&table[fd], (uint16_t)~CLASS_MASK);
}

void rto_fd_forget_all(void)
{
	for (int fd = 0; fd < FD_MAX; fd++)
		rto_fd_forget(fd);
}

int rto_fd_of_file(FILE *f)
{
	int saved = errno; /* fileno() sets EBADF for a stream without a descriptor */
	int fd = f ? fileno(f) : -1;
	errno = saved;
	return fd;
}
