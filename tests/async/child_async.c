/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Scenarios for asynchronous writes (policy=stdio:async, write:async).
 *
 *   lines MODE NT NL DIR END
 *     NT marked threads write NL lines "T I\n" each.  MODE: file (fprintf
 *     to one shared FILE), files (a FILE each), fd (write to one shared
 *     descriptor), fds (a descriptor each); the files are DIR/lines or
 *     DIR/lines.T.  END: close (the main thread closes them) or return
 *     (main returns with them open: exit must drain).  Prints async=N (the
 *     stats total after the threads are joined).
 *
 *   barrier KIND DIR WHO
 *     A marked thread queues 1000 lines to DIR/barrier.file, then KIND
 *     (fflush, fclose, fflush_fsync: fflush then fsync of its descriptor,
 *     fflush_locked: the same under flockfile, on a FILE; fsync, close: on
 *     a descriptor) is called
 *     and the file is read through a descriptor of its own right after.
 *     WHO=marked: the logging thread itself calls KIND.  WHO=unmarked: the
 *     only helper (workers=1) is first held in a blocking read for another
 *     marked thread, so nothing can drain in the background, and the
 *     unmarked main thread calls KIND.  Prints before=N after=N expected=N
 *     (bytes on disk before and right after the call).
 *
 *   exit_drain HOW DIR
 *     The only helper is held as above; a marked thread queues 10000
 *     lines; then the process ends: HOW=return (from main), sigterm (a
 *     SIGTERM handler that calls exit), return_fd (write() instead of a
 *     FILE), abort (abort() from main, write()), abort_stdio (the same
 *     with a FILE), abort_after_flush (abort_stdio after fflush(stdout),
 *     which drains the queue into the FILE's buffer first).  Prints
 *     before=N expected=N first.
 *
 *   async_path DIR SUB
 *     Run with async_path=DIR/SUB, policy=write:strict, workers=1 and
 *     fd_local=none.  The main thread opens DIR/SUB/fd.log (open),
 *     DIR/SUB/stream.log (fopen), DIR/SUB/fdopen.log (open, fdopen) and
 *     DIR/other.log, then holds the only helper.  A marked thread "log0"
 *     writes 100 lines "0 I" to each of the three under SUB (write,
 *     fprintf, fprintf): they must be queued, since nothing offloaded can
 *     finish while the helper is held.  Prints before=N (the bytes of the
 *     three on disk at that point).  The helper is let go; a marked thread
 *     "log1" opens SUB/rel.log (open, relative to the working directory
 *     DIR), at.log (openat in DIR/SUB) and DIR/SUB/f.log (fopen), writes 10
 *     lines "1 I" to each, and one write to DIR/other.log.  Prints
 *     other=R/E: that write's result and errno.
 *
 *   fork_queue DIR          see below.
 *
 *   async_error KIND DIR    enospc, ebadf, reuse: see below.
 *
 *   async_calls DIR
 *     One call of each async-capable stdio function and write().
 *
 *   async_unqueued DIR
 *     Calls the async handling makes synchronously, each after a queued
 *     one, to DIR/unqueued.file: a printf with %m, one longer than a log
 *     line, an fwrite bigger than half the ring.  Prints their returns.
 *
 *   async_mixed DIR
 *     A marked thread and the unmarked main thread take turns writing to
 *     DIR/mixed.file (fputs) and DIR/mixed.write (write), in an order their
 *     synchronisation fixes; the thread's last line comes after it
 *     unmarked itself, and main's last after it joined the thread.
 *
 *   async_handler DIR
 *     Main holds DIR/handler.file's lock while a marked thread queues three
 *     lines to it; then a signal handler on main calls write().  Prints
 *     before=B after=A: the stream's position before and after the handler
 *     (the handler must not write the queued lines into the stream).
 *
 *   async_crossed DIR
 *     Main holds DIR/crossed.f's lock, an unmarked thread "u2" that of
 *     DIR/crossed.g, and a marked thread queues a line to g.  Then main
 *     writes to f with fputs_unlocked, and only then lets u2 go on, which
 *     writes to f (waiting for main's lock) and frees g: main's write must
 *     not wait for g's queued line, which u2's lock holds up.  Killed by
 *     SIGALRM after 20 s if it does.
 *
 *   async_exec DIR HOW
 *     A marked thread writes a line to DIR/exec.file (fprintf, fflush) and
 *     one to DIR/exec.write (write), then replaces the process with
 *     /bin/true: HOW execv (generated wrapper) or execl (hand-written).
 *
 *   async_first
 *     printf("first 1"), its first call: under mark=all with an async
 *     rule, the process's first hand-off is a queued line.
 *
 *   async_spawn DIR HOW
 *     While the only helper is held, a marked thread writes a line to
 *     DIR/spawn.file (fputs, fflush: queued), then main has /bin/cp copy
 *     it to DIR/spawn.copy: HOW fork (then exec in the child), system or
 *     posix_spawn.  Prints status=S (cp's).
 *
 *   async_readback DIR
 *     A marked thread writes "abc\n" to DIR/readback.file opened "w+"
 *     (queued), then asks ftell, rewinds and reads the line back.  Prints
 *     pos=P line=L (L without its newline, "-" for none).
 *
 *   async_exit DIR HOW
 *     A marked thread writes a line to DIR/exit.unbuf (an unbuffered
 *     stream), one to DIR/exit.buf (fflush()ed) and one more after it
 *     (not flushed), and write()s one to DIR/exit.fd, all queued; then it
 *     ends the process with HOW (_exit or _Exit) and status 3.
 *
 *   async_kernel_file
 *     A marked thread writes "abc" (not a number) to
 *     /proc/self/oom_score_adj through a stream (fputs, fflush) and
 *     through a descriptor (write).  Then the same through two
 *     descriptors of the file the unmarked main thread opened before:
 *     write(), and a stream fdopen()ed on the other.  Prints kernel:
 *     flush=R ferr=E write=W werr=E2 eflush= eferr= ewrite= ewerr= (the
 *     calls' results and errnos, e: the early descriptors').
 *
 *   async_trapped DIR
 *     A marked thread writes DIR/trapped.file two bytes at a time, in
 *     turn queued (write()) and not (a raw system call that traps, then
 *     syscall()), and reads it back with a raw pread.  Then a queued
 *     write to DIR/trapped.moved, and a raw dup2 of /dev/null onto its
 *     descriptor.  Prints trapped: pread=P moved=M (the bytes read back,
 *     and trapped.moved's).
 *
 *   async_fpurge DIR
 *     Run with workers=1.  Main opens DIR/fpurge.file line-buffered and
 *     holds the only helper; a marked thread writes "hello" to it and
 *     fflush()es (both queued); then main calls __fpurge() on it.  Prints
 *     fpurge: after=A final=F (the file's size after __fpurge, and at the
 *     end).
 *
 *   async_unlocked DIR [locked]
 *     A marked thread writes 1000 lines "nameI" to DIR/unlocked.file as
 *     ls does: the name with fputs_unlocked or fwrite_unlocked (locked:
 *     fputs or fprintf, as id does), the newline with glibc's inline
 *     putc_unlocked (its body, no call).
 *
 *   async_fd_readback DIR
 *     A marked thread writes four bytes at a time to DIR/fdback.file
 *     (write(), queued), each followed by one call on the descriptor that
 *     is not queued: lseek, fstat, pread, mmap.  Then it writes a stream's
 *     line and fflush()es it (both queued) and asks fstat and mmap of its
 *     descriptor (journal_file_verify's way: fwrite, fflush, mmap).
 *     Between, a queued write() then a dprintf() to the file.  Prints
 *     fd: pos=P size=S pread=R map=M dprintf=D ssize=T smap=N (R, M, D,
 *     N the bytes read or mapped, "-" for none, "." for zeros).  Then
 *     two more lines of the stream, each fflush()ed, and the file by its
 *     path: fopen and fgets after the first, stat after the second.
 *     Prints path: reopen=L size=S.
 */
#include "child.h"
#include "raw_syscall_asm.h" /* libsrc/backstop/: the program's raw calls */

#include <dlfcn.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_THREADS 16

/* ---- lines -------------------------------------------------------------------------- */

struct logger {
	int index, nl;
	FILE *f;
	int fd;
};

static void log_lines(void *arg)
{
	struct logger *l = arg;
	char line[64];

	for (int i = 0; i < l->nl; i++) {
		if (l->f) {
			fprintf(l->f, "%d %d\n", l->index, i);
		} else {
			int n = snprintf(line, sizeof(line), "%d %d\n", l->index, i);
			if (write(l->fd, line, (size_t)n) != n)
				fail("write returned short"); /* async returns the count */
		}
	}
}

/* Bytes that log_lines writes for thread index with nl lines. */
static long lines_bytes(int index, int nl)
{
	long n = 0;
	char line[64];

	for (int i = 0; i < nl; i++)
		n += snprintf(line, sizeof(line), "%d %d\n", index, i);
	return n;
}

static void open_sink(struct logger *l, const char *path, int stream)
{
	l->f = NULL;
	l->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (l->fd < 0)
		fail("open %s", path);
	if (stream && !(l->f = fdopen(l->fd, "w")))
		fail("fdopen %s", path);
}

static void close_sink(struct logger *l)
{
	if (l->f)
		fclose(l->f);
	else
		close(l->fd);
}

int sc_lines(int argc, char **argv)
{
	static struct logger logs[MAX_THREADS];
	static struct thread threads[MAX_THREADS];
	static char names[MAX_THREADS][16];
	char path[PATH_MAX];

	if (argc < 5)
		fail("usage: lines MODE NT NL DIR END");
	const char *mode = argv[0];
	int nt = atoi(argv[1]), nl = atoi(argv[2]);
	int stream = !strcmp(mode, "file") || !strcmp(mode, "files");
	int shared = !strcmp(mode, "file") || !strcmp(mode, "fd");
	if (nt < 1 || nt > MAX_THREADS)
		fail("1 to %d threads", MAX_THREADS);
	for (int t = 0; t < nt; t++) {
		logs[t] = (struct logger){.index = t, .nl = nl};
		if (shared && t > 0) {
			logs[t].f = logs[0].f;
			logs[t].fd = logs[0].fd;
			continue;
		}
		char name[32];
		snprintf(name, sizeof(name), shared ? "lines" : "lines.%d", t);
		path_join(path, argv[3], name);
		open_sink(&logs[t], path, stream);
	}
	for (int t = 0; t < nt; t++) {
		snprintf(names[t], sizeof(names[t]), "log%d", t);
		threads[t] = (struct thread){
			.name = names[t], .mark = 1, .fn = log_lines, .arg = &logs[t]};
		thread_start(&threads[t]);
	}
	for (int t = 0; t < nt; t++)
		thread_join(&threads[t]);
	say("async=%lu", stats_now().async);
	if (strcmp(argv[4], "close") == 0)
		for (int t = 0; t < (shared ? 1 : nt); t++)
			close_sink(&logs[t]);
	return 0; /* END=return: the open files are exit's to drain */
}

/* ---- holding the only helper ----------------------------------------------------------- */

/*
 * With workers=1 and fd_local=none, a marked thread's read of an empty
 * pipe runs on the only helper and blocks it there: until the pipe is
 * written, no queued async write can be drained in the background.
 */
struct blocker {
	int p[2];
	struct thread t;
	char byte;
};

static void blocked_read(void *arg)
{
	struct blocker *b = arg;

	if (read(b->p[0], &b->byte, 1) != 1)
		b->byte = -1;
}

static void hold_helper(struct blocker *b)
{
	if (pipe2(b->p, O_CLOEXEC) != 0)
		fail("pipe2");
	b->t = (struct thread){.name = "blocker", .mark = 1, .fn = blocked_read, .arg = b};
	thread_start(&b->t);
	wait_helper_in_syscall(SYS_read);
}

static void release_helper(struct blocker *b)
{
	if (write(b->p[1], "x", 1) != 1)
		fail("write to the blocker");
	thread_join(&b->t);
}

/* ---- barrier --------------------------------------------------------------------------- */

struct barrier {
	const char *kind;
	char path[PATH_MAX];
	struct logger log;
	int marked;
	long before, after;
};

static void call_barrier(struct barrier *b)
{
	if (!strcmp(b->kind, "fflush"))
		fflush(b->log.f);
	else if (!strcmp(b->kind, "fflush_fsync") || !strcmp(b->kind, "fflush_locked")) {
		if (fflush(b->log.f) == 0) /* a marked thread's only queues */
			fsync(fileno(b->log.f));
	} else if (!strcmp(b->kind, "fclose"))
		fclose(b->log.f);
	else if (!strcmp(b->kind, "fsync"))
		fsync(b->log.fd);
	else if (!strcmp(b->kind, "close"))
		close(b->log.fd);
}

/* What is on disk, read through a descriptor of its own. */
static long bytes_on_disk(const char *path)
{
	size_t len = 0;
	char *text = read_whole(path, &len);
	free(text);
	return text ? (long)len : -1;
}

static void barrier_marked(void *arg)
{
	struct barrier *b = arg;

	/* fflush_locked: the thread holds the stream's lock, which the helpers cannot take. */
	int locked = !strcmp(b->kind, "fflush_locked");
	if (locked)
		flockfile(b->log.f);
	log_lines(&b->log);
	if (b->marked) {
		call_barrier(b);
		b->after = bytes_on_disk(b->path);
	}
	if (locked)
		funlockfile(b->log.f);
}

int sc_barrier(int argc, char **argv)
{
	static struct barrier b;
	struct blocker blk;

	if (argc < 3)
		fail("usage: barrier KIND DIR WHO");
	b.kind = argv[0];
	b.marked = !strcmp(argv[2], "marked");
	path_join(b.path, argv[1], "barrier.file");
	b.log = (struct logger){.index = 0, .nl = 1000};
	open_sink(&b.log, b.path,
		  !strcmp(b.kind, "fflush") || !strcmp(b.kind, "fflush_fsync") ||
			  !strcmp(b.kind, "fflush_locked") || !strcmp(b.kind, "fclose"));
	if (!b.marked)
		hold_helper(&blk);
	on_thread("log0", 1, barrier_marked, &b);
	if (!b.marked) {
		b.before = file_size(b.path);
		call_barrier(&b);
		b.after = bytes_on_disk(b.path);
		release_helper(&blk);
	}
	say("before=%ld after=%ld expected=%ld", b.before, b.after, lines_bytes(0, 1000));
	if (!strcmp(b.kind, "fflush") || !strcmp(b.kind, "fflush_locked"))
		fclose(b.log.f);
	if (!strcmp(b.kind, "fsync"))
		close(b.log.fd);
	return 0;
}

/* ---- exit_drain ------------------------------------------------------------------------ */

static void exit_on_sigterm(int sig)
{
	(void)sig;
	exit(0); /* what many daemons do: exit() from the handler, atexit work included */
}

int sc_exit_drain(int argc, char **argv)
{
	static struct logger log;
	static struct blocker blk;
	char path[PATH_MAX];

	if (argc < 2)
		fail("usage: exit_drain HOW DIR");
	path_join(path, argv[1], "exit.file");
	log = (struct logger){.index = 0, .nl = 10000};
	open_sink(&log, path, strcmp(argv[0], "return_fd") && strcmp(argv[0], "abort"));
	hold_helper(&blk);
	on_thread("log0", 1, log_lines, &log);
	say("before=%ld expected=%ld", file_size(path), lines_bytes(0, log.nl));
	if (!strcmp(argv[0], "abort_after_flush"))
		fflush(stdout); /* a flush point: the queue goes into the stream's buffer */
	if (!strncmp(argv[0], "abort", 5))
		abort(); /* the program's own abort(): what is queued is written first */
	if (!strcmp(argv[0], "sigterm")) {
		struct sigaction sa = {.sa_handler = exit_on_sigterm};
		if (sigaction(SIGTERM, &sa, NULL) != 0)
			fail("sigaction");
		kill(getpid(), SIGTERM);
		pause(); /* the handler exits */
		return 5;
	}
	return 0; /* the helper is still held: exit itself must write the lines */
}

/* ---- lock_release ------------------------------------------------------------------------ */

/*
 * lock_release DIR: the unmarked main thread holds flockfile() on a
 * line-buffered stream while a marked thread "log0" queues 100 lines to it
 * with fprintf, so the helper's drain finds the lock taken.  Once the drain
 * has tried and given up (counted below), main releases the lock with
 * funlockfile() and from then on makes no call the library would act on
 * (no flush point, nothing queued, log0 waits): the lines must reach
 * DIR/lock.file by themselves, which only the idle helper's retry does.
 * Prints refused=N (the drain's tries that found the lock taken, before
 * the release) held_bytes=N (on disk while the lock was held) bytes=N
 * (after waiting up to 10 s for them) expected=N.
 */
struct lock_release {
	FILE *f;
	atomic_int queued;
	atomic_int release;
};

/*
 * The witness that the drain tried: the library's drain takes a stream's
 * lock with ftrylockfile() (async.c), which resolves to this program's
 * definition first.  It counts the tries on the watched stream that found
 * the lock taken, and is otherwise glibc's (resolved before any thread
 * runs: a constructor).
 */
static int (*libc_ftrylockfile)(FILE *);
static FILE *_Atomic watched;
static atomic_long refused;

__attribute__((constructor)) static void resolve_ftrylockfile(void)
{
	libc_ftrylockfile = (int (*)(FILE *))dlsym(RTLD_NEXT, "ftrylockfile");
}

int ftrylockfile(FILE *f)
{
	if (!libc_ftrylockfile) /* called before the constructor: not by this scenario */
		resolve_ftrylockfile();
	int r = libc_ftrylockfile(f);

	if (r != 0 && f == atomic_load(&watched))
		atomic_fetch_add(&refused, 1);
	return r;
}

static void queue_and_wait(void *arg)
{
	struct lock_release *l = arg;

	for (int i = 0; i < 100; i++)
		fprintf(l->f, "0 %d\n", i);
	atomic_store(&l->queued, 1);
	while (!atomic_load(&l->release))
		sched_yield();
}

int sc_lock_release(int argc, char **argv)
{
	static struct lock_release l;
	struct thread t = {.name = "log0", .mark = 1, .fn = queue_and_wait, .arg = &l};
	struct timespec ms = {0, 1000000};
	char path[PATH_MAX];
	long want = 0, size = -1, tried;

	if (argc < 1)
		fail("usage: lock_release DIR");
	path_join(path, argv[0], "lock.file");
	if (!(l.f = fopen(path, "w")) || setvbuf(l.f, NULL, _IOLBF, 0) != 0)
		fail("fopen %s", path);
	if (!libc_ftrylockfile)
		fail("no ftrylockfile in libc");
	for (int i = 0; i < 100; i++)
		want += snprintf(NULL, 0, "0 %d\n", i);
	atomic_store(&watched, l.f);
	flockfile(l.f);
	thread_start(&t);
	/* The drain's try, however late the helper gets to it (bounded: 60 s). */
	for (int i = 0; i < 60000 && !atomic_load(&refused); i++)
		nanosleep(&ms, NULL);
	tried = atomic_load(&refused);
	long held = file_size(path);
	funlockfile(l.f);
	for (int i = 0; i < 10000 && (size = file_size(path)) < want; i++)
		nanosleep(&ms, NULL);
	say("refused=%ld held_bytes=%ld bytes=%ld expected=%ld", tried, held, size, want);
	atomic_store(&l.release, 1);
	thread_join(&t);
	atomic_store(&watched, NULL);
	fclose(l.f);
	return 0;
}

/* ---- fork_queue -------------------------------------------------------------------------- */

/*
 * fork_queue DIR: 1000 lines queued with write() behind the held helper,
 * then the unmarked main thread forks and the child exits at once.  The
 * lines were written, as far as the program knows, before the fork: they
 * must reach DIR/fork.file once, not once per process.  Prints
 * child_status=N (the child's waitpid status).
 */
static volatile pid_t forked = -1;

static void fork_in_handler(int sig)
{
	(void)sig;
	forked = fork();
}

int sc_fork_queue(int argc, char **argv)
{
	static struct logger log;
	static struct blocker blk;
	char path[PATH_MAX];
	int status = -1;

	if (argc < 1)
		fail("usage: fork_queue DIR");
	path_join(path, argv[0], "fork.file");
	log = (struct logger){.index = 0, .nl = 1000};
	open_sink(&log, path, 0);
	hold_helper(&blk);
	on_thread("log0", 1, log_lines, &log);
	/*
	 * fork() writes what is queued first; not inside a signal handler,
	 * where writing into streams is not async-signal-safe: forked there,
	 * the child has a copy of the queue.
	 */
	struct sigaction sa = {.sa_handler = fork_in_handler};
	if (sigaction(SIGUSR1, &sa, NULL) != 0)
		fail("sigaction");
	raise(SIGUSR1);
	pid_t pid = forked;
	if (pid == 0)
		exit(0); /* an ordinary exit: the library's destructor runs in the child */
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		fail("fork");
	release_helper(&blk);
	close(log.fd);
	say("child_status=%d", status);
	return 0;
}

/* ---- async_error ------------------------------------------------------------------------- */

/*
 * The writes are made while the only helper is held (workers=1,
 * fd_local=none), so every one is accepted whatever the helper's pace;
 * then the helper is let go and a second marked thread calls fsync (a
 * barrier: every queued write is tried first) and writes again.
 *
 * enospc: a 64 KiB tmpfs in a private mount namespace; 128 KiB of async
 * writes are accepted, then fail on the helper; the next async write
 * returns -1 with ENOSPC.
 * ebadf: an async write to a descriptor that was closed is accepted, fails
 * on the helper, and the next async write to it returns -1 with EBADF.
 * reuse: as ebadf, but the number is then reopened for another file before
 * the next write, which belongs to the new file and must succeed.
 */
struct errcase {
	const char *kind;
	char path[PATH_MAX], other[PATH_MAX];
	int fd, newfd;
	int accepted; /* writes that returned their count */
	long drain_ret, next_ret, again_ret;
	int drain_errno, next_errno;
};

static int tiny_tmpfs(const char *dir, char *mnt)
{
	path_join(mnt, dir, "tiny");
	if (mkdir(mnt, 0700) != 0 || unshare(CLONE_NEWNS) != 0 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
	    mount("tmpfs", mnt, "tmpfs", 0, "size=64k") != 0)
		return -1;
	return 0;
}

static void err_writes(void *arg)
{
	struct errcase *e = arg;
	static char chunk[4096];
	int n = !strcmp(e->kind, "enospc") ? 32 : 1;

	memset(chunk, 'e', sizeof(chunk));
	for (int i = 0; i < n; i++)
		e->accepted += write(e->fd, chunk, sizeof(chunk)) == (ssize_t)sizeof(chunk);
}

static void err_later(void *arg)
{
	struct errcase *e = arg;

	errno = 0;
	e->drain_ret = fsync(e->fd);
	e->drain_errno = errno;
	if (!strcmp(e->kind, "reuse"))
		e->newfd = open(e->other, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int fd = !strcmp(e->kind, "reuse") ? e->newfd : e->fd;
	errno = 0;
	e->next_ret = write(fd, "next", 4);
	e->next_errno = errno;
	e->again_ret = write(fd, "more", 4);
}

/* The file the writes go to: on the tiny tmpfs for enospc.  -1: no tmpfs. */
static int err_setup(struct errcase *e, const char *dir)
{
	char mnt[PATH_MAX];

	path_join(e->path, dir, "err.file");
	path_join(e->other, dir, "other.file");
	if (!strcmp(e->kind, "enospc")) {
		if (tiny_tmpfs(dir, mnt) != 0)
			return -1;
		path_join(e->path, mnt, "err.file");
	}
	e->fd = open(e->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (e->fd < 0)
		fail("open %s", e->path);
	return 0;
}

int sc_async_error(int argc, char **argv)
{
	static struct errcase e;
	static struct blocker blk;

	if (argc < 2)
		fail("usage: async_error KIND DIR");
	e.kind = argv[0];
	if (err_setup(&e, argv[1]) != 0) {
		say("skip=cannot mount a tmpfs in a private mount namespace (errno %d)", errno);
		return 0;
	}
	hold_helper(&blk); /* its pipe first: it must not take the number closed below */
	if (strcmp(e.kind, "enospc") != 0)
		close(e.fd); /* ebadf, reuse: the writes go to a closed number */
	on_thread("log0", 1, err_writes, &e);
	release_helper(&blk);
	on_thread("log1", 1, err_later, &e);
	if (!strcmp(e.kind, "reuse"))
		close(e.newfd);
	char *other = read_whole(e.other, NULL);
	say("accepted=%d drain_ret=%ld drain_errno=%d next_ret=%ld next_errno=%d again_ret=%ld "
	    "same=%d other=%s",
	    e.accepted, e.drain_ret, e.drain_errno, e.next_ret, e.next_errno, e.again_ret,
	    e.newfd == e.fd, other && other[0] ? other : "(empty)");
	free(other);
	return 0;
}

/* DIR/NAME.file as a stream ("w"), and DIR/NAME.write as a descriptor. */
static void open_file_and_fd(const char *dir, const char *name, FILE **f, int *fd)
{
	char base[PATH_MAX], path[PATH_MAX + 8];

	path_join(base, dir, name);
	snprintf(path, sizeof(path), "%s.file", base);
	*f = fopen(path, "w");
	snprintf(path, sizeof(path), "%s.write", base);
	*fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (!*f || *fd < 0)
		fail("open");
}

/* ---- async_calls ----------------------------------------------------------------------- */

struct calls {
	FILE *f;
	int fd;
	long r_fwrite, r_fputs, r_fputc, r_putc, r_fprintf, r_write, r_puts, r_putchar, r_printf;
};

/* Each stdio write the async handling covers, once, in a known order. */
static void each_call(void *arg)
{
	struct calls *c = arg;

	c->r_fwrite = (long)fwrite("fwrite|", 7, 1, c->f);
	c->r_fputs = fputs("fputs|", c->f);
	c->r_fputc = fputc('c', c->f);
	c->r_putc = putc('d', c->f);
	c->r_fprintf = fprintf(c->f, "|fprintf %d|", 7);
	c->r_write = write(c->fd, "write|", 6);
	c->r_puts = puts("puts-line");
	c->r_putchar = putchar('P');
	c->r_printf = printf("|printf %d\n", 8);
}

int sc_async_calls(int argc, char **argv)
{
	struct calls c;

	if (argc < 1)
		fail("usage: async_calls DIR");
	open_file_and_fd(argv[0], "calls", &c.f, &c.fd);
	on_thread("ctl", 1, each_call, &c);
	fclose(c.f);
	close(c.fd);
	fflush(stdout);
	say("fwrite=%ld fputs=%ld fputc=%ld putc=%ld fprintf=%ld write=%ld puts=%ld putchar=%ld "
	    "printf=%ld",
	    c.r_fwrite, c.r_fputs, c.r_fputc, c.r_putc, c.r_fprintf, c.r_write, c.r_puts,
	    c.r_putchar, c.r_printf);
	return 0;
}

/* ---- async_unqueued --------------------------------------------------------------------- */

struct unqueued {
	const char *dir;
	FILE *f;
	long r_m, r_long, r_big;
};

static char unqueued_big[200 * 1024]; /* more than half the ring (async_ring_kb=256) */

/* Each call not queued comes right after one that is (fputs). */
static void unqueued_calls(void *arg)
{
	struct unqueued *u = arg;
	struct stat st;

	/* A round trip first: the helper then polls, and finds a request before a queued line. */
	if (stat(u->dir, &st) != 0)
		fail("stat");
	fputs("q|", u->f);
	errno = ENOENT; /* %m: strerror may read a catalogue, so not formatted here */
	u->r_m = fprintf(u->f, "%m|");
	fputs("a|", u->f);
	u->r_long = fprintf(u->f, "%*s|", 1100, "L"); /* longer than a log line */
	fputs("b|", u->f);
	u->r_big = (long)fwrite(unqueued_big, 1, sizeof(unqueued_big), u->f);
}

int sc_async_unqueued(int argc, char **argv)
{
	struct unqueued u;
	char path[PATH_MAX];

	if (argc < 1)
		fail("usage: async_unqueued DIR");
	path_join(path, argv[0], "unqueued.file");
	memset(unqueued_big, 'B', sizeof(unqueued_big));
	u.dir = argv[0];
	u.f = fopen(path, "w");
	if (!u.f)
		fail("open");
	on_thread("ctl", 1, unqueued_calls, &u);
	fclose(u.f);
	say("m=%ld long=%ld big=%ld", u.r_m, u.r_long, u.r_big);
	return 0;
}

/* ---- async_mixed ------------------------------------------------------------------------ */

struct mixed {
	const char *dir;
	FILE *f;
	int fd;
	atomic_int turn; /* 1: main's, 2: the thread's again */
};

static void mixed_wait(atomic_int *turn, int want)
{
	while (atomic_load(turn) != want)
		sched_yield();
}

static void mixed_thread(void *arg)
{
	struct mixed *m = arg;
	struct stat st;

	if (rt_offload_mark_thread() != 0)
		fail("rt_offload_mark_thread");
	/* A round trip first: the helper then polls, and drains within microseconds. */
	if (stat(m->dir, &st) != 0)
		fail("stat");
	for (int i = 0; i < 5; i++)
		fprintf(m->f, "rt %d\n", i);
	if (write(m->fd, "rt w\n", 5) != 5)
		fail("write");
	atomic_store(&m->turn, 1);
	mixed_wait(&m->turn, 2);
	fputs("rt after\n", m->f);
	rt_offload_unmark_thread();
	fputs("rt unmarked\n", m->f);
}

int sc_async_mixed(int argc, char **argv)
{
	struct mixed m = {.dir = argc > 0 ? argv[0] : NULL};

	if (argc < 1)
		fail("usage: async_mixed DIR");
	open_file_and_fd(argv[0], "mixed", &m.f, &m.fd);
	fputs("main first\n", m.f);
	struct thread t = {.name = "ctl", .fn = mixed_thread, .arg = &m};
	thread_start(&t);
	mixed_wait(&m.turn, 1);
	fputs("main between\n", m.f);
	if (write(m.fd, "main w\n", 7) != 7)
		fail("write");
	atomic_store(&m.turn, 2);
	thread_join(&t);
	fputs("main last\n", m.f);
	if (write(m.fd, "main last w\n", 12) != 12)
		fail("write");
	fclose(m.f);
	close(m.fd);
	return 0;
}

/* ---- async_handler ---------------------------------------------------------------------- */

static int handler_fd = -1;

static void handler_writes(int sig)
{
	(void)sig;
	if (write(handler_fd, "h", 1) != 1) /* async-signal-safe, with the library too */
		_exit(3);
}

static void handler_lines(void *arg)
{
	struct mixed *m = arg;

	for (int i = 0; i < 3; i++)
		fprintf(m->f, "queued %d\n", i);
	atomic_store(&m->turn, 1);
}

int sc_async_handler(int argc, char **argv)
{
	struct mixed m = {0};
	char path[PATH_MAX];

	if (argc < 1)
		fail("usage: async_handler DIR");
	path_join(path, argv[0], "handler.file");
	m.f = fopen(path, "w");
	handler_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (!m.f || handler_fd < 0)
		fail("open");
	struct sigaction sa = {.sa_handler = handler_writes};
	if (sigaction(SIGUSR1, &sa, NULL) != 0)
		fail("sigaction");
	flockfile(m.f); /* as if main were inside a stdio call on it */
	struct thread t = {.name = "ctl", .mark = 1, .fn = handler_lines, .arg = &m};
	thread_start(&t);
	mixed_wait(&m.turn, 1);
	long before = ftell(m.f);
	raise(SIGUSR1);
	long after = ftell(m.f);
	funlockfile(m.f);
	thread_join(&t);
	fclose(m.f);
	say("before=%ld after=%ld", before, after);
	return 0;
}

/* ---- async_crossed ---------------------------------------------------------------------- */

struct crossed {
	FILE *f, *g;
	atomic_int turn; /* 1: u2 holds g; 2: main's line may go */
};

static void crossed_u2(void *arg)
{
	struct crossed *c = arg;

	flockfile(c->g);
	atomic_store(&c->turn, 1);
	mixed_wait(&c->turn, 2);
	fputs("u2\n", c->f); /* waits for main's lock on f */
	funlockfile(c->g);
}

static void crossed_queue(void *arg)
{
	struct crossed *c = arg;

	fputs("queued\n", c->g); /* queued; no drain can write it while u2 holds g */
}

int sc_async_crossed(int argc, char **argv)
{
	struct crossed c = {0};
	char path[PATH_MAX];

	if (argc < 1)
		fail("usage: async_crossed DIR");
	path_join(path, argv[0], "crossed.f");
	c.f = fopen(path, "w");
	path_join(path, argv[0], "crossed.g");
	c.g = fopen(path, "w");
	if (!c.f || !c.g)
		fail("open");
	alarm(20);
	flockfile(c.f);
	struct thread u2 = {.name = "u2", .fn = crossed_u2, .arg = &c};
	thread_start(&u2);
	mixed_wait(&c.turn, 1);
	on_thread("ctl", 1, crossed_queue, &c);
	fputs_unlocked("main\n", c.f); /* u2 holds g meanwhile, and waits for turn 2 */
	atomic_store(&c.turn, 2);
	funlockfile(c.f);
	thread_join(&u2);
	fclose(c.f);
	fclose(c.g);
	return 0;
}

/* ---- async_exec --------------------------------------------------------------------------- */

struct exec_lines {
	FILE *f;
	int fd;
	const char *how;
};

static void exec_after_lines(void *arg)
{
	struct exec_lines *e = arg;
	char *const argv[] = {"true", NULL};

	fprintf(e->f, "before exec\n");
	fflush(e->f); /* queued: a helper flushes it when it gets there */
	if (write(e->fd, "written\n", 8) != 8)
		fail("write");
	if (!strcmp(e->how, "execl"))
		execl("/bin/true", "true", (char *)NULL);
	else
		execv("/bin/true", argv);
	fail("exec");
}

int sc_async_exec(int argc, char **argv)
{
	struct exec_lines e = {0};

	if (argc < 2)
		fail("usage: async_exec DIR execv|execl");
	open_file_and_fd(argv[0], "exec", &e.f, &e.fd);
	e.how = argv[1];
	on_thread("ctl", 1, exec_after_lines, &e);
	fail("the thread came back");
	return 1;
}

/* ---- async_first --------------------------------------------------------------------------- */

int sc_async_first(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	printf("first %d\n", 1);
	return 0;
}

/* ---- async_spawn --------------------------------------------------------------------------- */

struct spawn_copy {
	const char *dir, *how;
	FILE *f;
	int status;
};

static void spawn_line(void *arg)
{
	struct spawn_copy *c = arg;

	fputs("line\n", c->f);
	fflush(c->f); /* queued: the only helper is held, so it stays queued */
}

/* Main, unmarked, runs cp while the line is still queued. */
static void spawn_cp(struct spawn_copy *c)
{
	char src[PATH_MAX], dst[PATH_MAX], cmd[3 * PATH_MAX];

	path_join(src, c->dir, "spawn.file");
	path_join(dst, c->dir, "spawn.copy");
	char *const argv[] = {"cp", src, dst, NULL};
	if (!strcmp(c->how, "fork")) {
		pid_t pid = fork();
		if (pid == 0) {
			execv("/bin/cp", argv);
			_exit(127);
		}
		if (pid < 0 || waitpid(pid, &c->status, 0) != pid)
			fail("fork");
	} else if (!strcmp(c->how, "system")) {
		snprintf(cmd, sizeof(cmd), "/bin/cp '%s' '%s'", src, dst);
		c->status = system(cmd);
	} else {
		pid_t pid;
		if (posix_spawn(&pid, "/bin/cp", NULL, NULL, argv, environ) != 0 ||
		    waitpid(pid, &c->status, 0) != pid)
			fail("posix_spawn");
	}
}

int sc_async_spawn(int argc, char **argv)
{
	static struct blocker blk;
	char path[PATH_MAX];

	if (argc < 2)
		fail("usage: async_spawn DIR fork|system|posix_spawn");
	struct spawn_copy c = {.dir = argv[0], .how = argv[1], .status = -1};
	path_join(path, c.dir, "spawn.file");
	c.f = fopen(path, "w");
	if (!c.f)
		fail("fopen");
	hold_helper(&blk);
	on_thread("ctl", 1, spawn_line, &c);
	spawn_cp(&c);
	release_helper(&blk);
	fclose(c.f);
	say("status=%d", c.status);
	return 0;
}

/* ---- async_readback ------------------------------------------------------------------------ */

struct readback {
	FILE *f;
	long pos;
	char line[64];
};

static void readback_line(void *arg)
{
	struct readback *b = arg;

	fputs("abc\n", b->f);
	b->pos = ftell(b->f);
	rewind(b->f);
	if (!fgets(b->line, sizeof(b->line), b->f))
		strcpy(b->line, "-");
	b->line[strcspn(b->line, "\n")] = 0;
}

int sc_async_readback(int argc, char **argv)
{
	struct readback b = {0};
	char path[PATH_MAX];

	if (argc < 1)
		fail("usage: async_readback DIR");
	path_join(path, argv[0], "readback.file");
	b.f = fopen(path, "w+");
	if (!b.f)
		fail("fopen");
	on_thread("ctl", 1, readback_line, &b);
	fclose(b.f);
	say("pos=%ld line=%s", b.pos, b.line);
	return 0;
}

/* ---- async_exit --------------------------------------------------------------------------- */

struct exit_now {
	const char *dir, *how;
};

static FILE *open_in(const char *dir, const char *name)
{
	char path[PATH_MAX];

	path_join(path, dir, name);
	FILE *f = fopen(path, "w");
	if (!f)
		fail("fopen %s", name);
	return f;
}

static void exit_now(void *arg)
{
	struct exit_now *e = arg;
	char path[PATH_MAX];
	FILE *u = open_in(e->dir, "exit.unbuf"), *b = open_in(e->dir, "exit.buf");

	setvbuf(u, NULL, _IONBF, 0);
	fputs("unbuffered\n", u);
	fputs("flushed\n", b);
	fflush(b);
	fputs("in the buffer\n", b); /* lost, as without the library */
	path_join(path, e->dir, "exit.fd");
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, "written\n", 8) != 8)
		fail("exit.fd");
	if (strcmp(e->how, "_Exit") == 0)
		_Exit(3);
	_exit(3);
}

int sc_async_exit(int argc, char **argv)
{
	struct exit_now e;

	if (argc < 2)
		fail("usage: async_exit DIR _exit|_Exit");
	e = (struct exit_now){.dir = argv[0], .how = argv[1]};
	on_thread("ctl", 1, exit_now, &e);
	return 0; /* not reached */
}

/* ---- async_kernel_file --------------------------------------------------------------------- */

struct kernel_file {
	int flush, ferr;
	long write, werr;
	int early_fd, early_stream_fd; /* opened before any thread was marked */
	int eflush, eferr;
	long ewrite, ewerr;
};

static void write_kernel_file(void *arg)
{
	struct kernel_file *k = arg;
	FILE *f = fopen("/proc/self/oom_score_adj", "w");

	if (!f)
		fail("fopen /proc/self/oom_score_adj");
	fputs("abc\n", f);
	errno = 0;
	k->flush = fflush(f);
	k->ferr = errno;
	fclose(f);
	int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		fail("open /proc/self/oom_score_adj");
	errno = 0;
	k->write = write(fd, "abc", 3);
	k->werr = errno;
	close(fd);
	/* Descriptors the unmarked main thread opened: their file system was never asked. */
	errno = 0;
	k->ewrite = write(k->early_fd, "abc", 3);
	k->ewerr = errno;
	FILE *ef = fdopen(k->early_stream_fd, "w");
	if (!ef)
		fail("fdopen");
	fputs("abc\n", ef);
	errno = 0;
	k->eflush = fflush(ef);
	k->eferr = errno;
	fclose(ef);
}

int sc_async_kernel_file(int argc, char **argv)
{
	struct kernel_file k = {0};

	(void)argc;
	(void)argv;
	k.early_fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
	k.early_stream_fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
	if (k.early_fd < 0 || k.early_stream_fd < 0)
		fail("open /proc/self/oom_score_adj");
	on_thread("ctl", 1, write_kernel_file, &k);
	close(k.early_fd);
	say("kernel: flush=%d ferr=%d write=%ld werr=%ld eflush=%d eferr=%d ewrite=%ld ewerr=%ld",
	    k.flush, k.ferr, k.write, k.werr, k.eflush, k.eferr, k.ewrite, k.ewerr);
	return 0;
}

/* ---- async_fd_readback --------------------------------------------------------------------- */

struct fdback {
	const char *dir;
	long pos, size, ssize, psize;
	char pread[8], map[8], smap[8], dprintf[8], reopen[16];
};

/* The n bytes at off of fd's mapping ("-" when it cannot be mapped). */
static void mapped(int fd, off_t off, char *out, size_t n)
{
	char *p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);

	if (p == MAP_FAILED) {
		strcpy(out, "-");
		return;
	}
	memcpy(out, p + off, n); /* past the end of the file, in its page: zeros */
	out[n] = 0;
	munmap(p, 4096);
}

static void fd_readback(void *arg)
{
	struct fdback *b = arg;
	char path[PATH_MAX];
	struct stat st;

	path_join(path, b->dir, "fdback.file");
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		fail("open fdback.file");
	if (write(fd, "abcd", 4) != 4 || write(fd, "", 0) != 0)
		fail("write abcd");
	b->pos = lseek(fd, 0, SEEK_CUR);
	if (write(fd, "efgh", 4) != 4)
		fail("write efgh");
	b->size = fstat(fd, &st) == 0 ? (long)st.st_size : -1;
	if (write(fd, "ijkl", 4) != 4)
		fail("write ijkl");
	if (pread(fd, b->pread, 4, 8) != 4)
		strcpy(b->pread, "-");
	if (write(fd, "mnop", 4) != 4)
		fail("write mnop");
	mapped(fd, 12, b->map, 4);
	if (write(fd, "stuv", 4) != 4 || dprintf(fd, "%s", "wx") != 2)
		fail("write stuv, dprintf wx");
	if (pread(fd, b->dprintf, 6, 16) != 6)
		strcpy(b->dprintf, "-");
	close(fd);

	path_join(path, b->dir, "fdback.stream");
	FILE *f = fopen(path, "w+");
	if (!f)
		fail("fopen fdback.stream");
	fputs("qrst", f);
	fflush(f);
	b->ssize = fstat(fileno(f), &st) == 0 ? (long)st.st_size : -1;
	fputs("uvwx", f);
	fflush(f);
	mapped(fileno(f), 4, b->smap, 4);
	fputs("yz\n", f);
	fflush(f);
	FILE *g = fopen(path, "r"); /* the same file by its path */
	if (!g || !fgets(b->reopen, sizeof(b->reopen), g))
		strcpy(b->reopen, "-");
	b->reopen[strcspn(b->reopen, "\n")] = 0;
	if (g)
		fclose(g);
	fputs("0123", f);
	fflush(f);
	b->psize = stat(path, &st) == 0 ? (long)st.st_size : -1;
	fclose(f);
}

int sc_async_fd_readback(int argc, char **argv)
{
	struct fdback b = {0};

	if (argc < 1)
		fail("usage: async_fd_readback DIR");
	b.dir = argv[0];
	on_thread("ctl", 1, fd_readback, &b);
	say("fd: pos=%ld size=%ld pread=%s map=%s dprintf=%s ssize=%ld smap=%s", b.pos, b.size,
	    b.pread[0] ? b.pread : ".", b.map[0] ? b.map : ".", b.dprintf[0] ? b.dprintf : ".",
	    b.ssize, b.smap[0] ? b.smap : ".");
	say("path: reopen=%s size=%ld", b.reopen[0] ? b.reopen : ".", b.psize);
	return 0;
}

/* ---- async_trapped ------------------------------------------------------------------------ */

/* The program's own raw system call: it traps (Syscall User Dispatch), as a JIT's would. */
__asm__(".pushsection .text\n" RTO_RAW_SYSCALL6_ASM(async_raw6) ".popsection\n");
long async_raw6(long nr, long a, long b, long c, long d, long e, long f);

struct trapped {
	const char *dir;
	char pread[16], moved[8];
};

static void trapped_calls(void *arg)
{
	struct trapped *t = arg;
	char path[PATH_MAX];

	path_join(path, t->dir, "trapped.file");
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	path_join(path, t->dir, "trapped.moved");
	int moved = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (fd < 0 || moved < 0 || null < 0)
		fail("open trapped.*");
	if (write(fd, "ab", 2) != 2 || async_raw6(SYS_write, fd, (long)"cd", 2, 0, 0, 0) != 2)
		fail("write ab, raw write cd");
	if (write(fd, "ef", 2) != 2 || syscall(SYS_write, fd, "gh", 2) != 2)
		fail("write ef, syscall write gh");
	if (async_raw6(SYS_pread64, fd, (long)t->pread, 8, 0, 0, 0) != 8)
		strcpy(t->pread, "-");
	/* A raw dup2 over a descriptor with queued writes: they go to its file of before. */
	if (write(moved, "xy", 2) != 2 || async_raw6(SYS_dup2, null, moved, 0, 0, 0, 0) != moved)
		fail("write xy, raw dup2");
	close(fd);
	close(moved);
	close(null);
	int back = open(path, O_RDONLY | O_CLOEXEC);
	if (back < 0 || read(back, t->moved, sizeof(t->moved) - 1) < 0)
		strcpy(t->moved, "-");
	close(back);
}

int sc_async_trapped(int argc, char **argv)
{
	struct trapped t = {0};

	if (argc < 1)
		fail("usage: async_trapped DIR");
	t.dir = argv[0];
	on_thread("ctl", 1, trapped_calls, &t);
	say("trapped: pread=%s moved=%s", t.pread[0] ? t.pread : ".", t.moved[0] ? t.moved : ".");
	return 0;
}

/* ---- async_unlocked ------------------------------------------------------------------------ */

struct macro_lines {
	char path[PATH_MAX];
	int locked;
};

static void macro_lines(void *arg)
{
	struct macro_lines *m = arg;
	FILE *f = fopen(m->path, "w");
	char name[32];

	if (!f)
		fail("fopen unlocked.file");
	for (int i = 0; i < 1000; i++) {
		snprintf(name, sizeof(name), "name%d", i);
		if (m->locked && i % 2)
			fputs(name, f);
		else if (m->locked)
			fprintf(f, "name%d", i);
		else if (i % 2)
			fputs_unlocked(name, f);
		else
			fwrite_unlocked(name, 1, strlen(name), f);
		/* What putc_unlocked is, inlined by an optimised build: no call. */
		__putc_unlocked_body('\n', f);
	}
	fclose(f);
}

int sc_async_unlocked(int argc, char **argv)
{
	struct macro_lines m = {.locked = argc > 1 && !strcmp(argv[1], "locked")};

	if (argc < 1)
		fail("usage: async_unlocked DIR [locked]");
	path_join(m.path, argv[0], "unlocked.file");
	on_thread("ls", 1, macro_lines, &m);
	return 0;
}

/* ---- async_fpurge -------------------------------------------------------------------------- */

struct fpurge {
	FILE *f;
};

/* Queued, both: the stream has never been written, and the helper is held. */
static void fpurge_queue(void *arg)
{
	struct fpurge *p = arg;

	fputs("hello", p->f);
	fflush(p->f);
}

int sc_async_fpurge(int argc, char **argv)
{
	struct blocker blk;
	struct fpurge p;
	char path[PATH_MAX];

	if (argc < 1)
		fail("usage: async_fpurge DIR");
	path_join(path, argv[0], "fpurge.file");
	p.f = fopen(path, "w");
	if (!p.f || setvbuf(p.f, NULL, _IOLBF, 0) != 0) /* as bash's stdout */
		fail("fopen fpurge.file");
	hold_helper(&blk);
	on_thread("sh", 1, fpurge_queue, &p);
	__fpurge(p.f); /* bash's "fflush (stdout); fpurge (stdout);" before a dup2 */
	long after = file_size(path);
	release_helper(&blk);
	fclose(p.f);
	say("fpurge: after=%ld final=%ld", after, file_size(path));
	return 0;
}

/* ---- async_path ----------------------------------------------------------------------- */

struct pathlog {
	char sub[PATH_MAX], rel[PATH_MAX];
	struct logger fd, stream, fdopened, later[3];
	int other_fd;
	long other_ret;
	int other_errno;
};

static void log_three(void *arg)
{
	struct pathlog *p = arg;

	log_lines(&p->fd);
	log_lines(&p->stream);
	log_lines(&p->fdopened);
}

/* A marked thread's own opens: a helper runs them, and learns where the files are. */
static void open_and_log(void *arg)
{
	struct pathlog *p = arg;
	char path[PATH_MAX];

	p->later[0].fd = open(p->rel, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int dir = open(p->sub, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	p->later[1].fd = openat(dir, "at.log", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	path_join(path, p->sub, "f.log");
	p->later[2].f = fopen(path, "w");
	if (p->later[0].fd < 0 || dir < 0 || p->later[1].fd < 0 || !p->later[2].f)
		fail("open in the marked thread");
	close(dir);
	for (int i = 0; i < 3; i++)
		log_lines(&p->later[i]);
	errno = 0;
	p->other_ret = write(p->other_fd, "other\n", 6);
	p->other_errno = errno;
}

static long size_under(const char *dir, const char *name)
{
	char path[PATH_MAX];

	path_join(path, dir, name);
	return file_size(path);
}

int sc_async_path(int argc, char **argv)
{
	static struct pathlog p;
	static struct blocker blk;
	char path[PATH_MAX];

	if (argc < 2)
		fail("usage: async_path DIR SUB");
	path_join(p.sub, argv[0], argv[1]);
	path_join(p.rel, argv[1], "rel.log");
	if (mkdir(p.sub, 0755) != 0 && errno != EEXIST)
		fail("mkdir %s", p.sub);
	path_join(path, p.sub, "fd.log");
	p.fd = (struct logger){.index = 0, .nl = 100};
	open_sink(&p.fd, path, 0);
	path_join(path, p.sub, "stream.log");
	p.stream = (struct logger){.index = 0, .nl = 100, .f = fopen(path, "w")};
	path_join(path, p.sub, "fdopen.log");
	p.fdopened = (struct logger){.index = 0, .nl = 100};
	open_sink(&p.fdopened, path, 1);
	path_join(path, argv[0], "other.log");
	p.other_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (!p.stream.f || p.other_fd < 0)
		fail("open");
	for (int i = 0; i < 3; i++)
		p.later[i] = (struct logger){.index = 1, .nl = 10, .fd = -1};

	hold_helper(&blk);
	on_thread("log0", 1, log_three, &p);
	say("before=%ld", size_under(p.sub, "fd.log") + size_under(p.sub, "stream.log") +
				  size_under(p.sub, "fdopen.log"));
	release_helper(&blk);
	on_thread("log1", 1, open_and_log, &p);
	say("other=%ld/%d", p.other_ret, p.other_errno);
	close_sink(&p.fd);
	close_sink(&p.stream);
	close_sink(&p.fdopened);
	for (int i = 0; i < 3; i++)
		close_sink(&p.later[i]);
	close(p.other_fd);
	return 0;
}
