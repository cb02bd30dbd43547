/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Every wrapped family, success and failure: a marked thread's call (run
 * on a helper) gives the same result, errno and effects as the direct call.
 * The harness is in families.c; here are only the cases, one wrapped call
 * each (the fortified and *64 variants are called by name, so the test does
 * not depend on what the compiler's _FORTIFY_SOURCE would pick).
 */
#ifndef _LARGEFILE64_SOURCE
#define _LARGEFILE64_SOURCE
#endif
#include "families.h"

#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <syslog.h>
#include <unistd.h>

extern char **environ;

/* glibc's fortified and pre-2.33 entry points, declared as glibc defines them. */
extern ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen);
extern ssize_t __pread_chk(int fd, void *buf, size_t n, off_t off, size_t buflen);
extern ssize_t __pread64_chk(int fd, void *buf, size_t n, off64_t off, size_t buflen);
extern int __open_2(const char *path, int flags);
extern int __open64_2(const char *path, int flags);
extern int __openat_2(int dirfd, const char *path, int flags);
extern int __openat64_2(int dirfd, const char *path, int flags);
extern ssize_t __readlink_chk(const char *path, char *buf, size_t len, size_t buflen);
extern char *__realpath_chk(const char *path, char *resolved, size_t resolvedlen);
extern char *__fgets_chk(char *s, size_t size, int n, FILE *f);
extern size_t __fread_chk(void *buf, size_t buflen, size_t size, size_t n, FILE *f);
extern int __printf_chk(int flag, const char *fmt, ...);
extern int __fprintf_chk(FILE *f, int flag, const char *fmt, ...);
extern int __vprintf_chk(int flag, const char *fmt, va_list ap);
extern int __vfprintf_chk(FILE *f, int flag, const char *fmt, va_list ap);
extern void __syslog_chk(int prio, int flag, const char *fmt, ...);
extern void __vsyslog_chk(int prio, int flag, const char *fmt, va_list ap);
extern int __xstat(int ver, const char *path, struct stat *st);
extern int __xstat64(int ver, const char *path, struct stat64 *st);
extern int __lxstat(int ver, const char *path, struct stat *st);
extern int __lxstat64(int ver, const char *path, struct stat64 *st);
extern int __fxstat(int ver, int fd, struct stat *st);
extern int __fxstat64(int ver, int fd, struct stat64 *st);
extern int __fxstatat(int ver, int dirfd, const char *path, struct stat *st, int flags);
extern int __fxstatat64(int ver, int dirfd, const char *path, struct stat64 *st, int flags);

#define STAT_VER 1 /* _STAT_VER_LINUX on x86-64 and friends */

static void note_stat(struct res *r, const struct stat *st)
{
	note(r, "mode=%o size=%lld nlink=%lu", (unsigned)st->st_mode, (long long)st->st_size,
	     (unsigned long)st->st_nlink);
}

static void note_stat64(struct res *r, const struct stat64 *st)
{
	note(r, "mode=%o size=%lld nlink=%lu", (unsigned)st->st_mode, (long long)st->st_size,
	     (unsigned long)st->st_nlink);
}

static void note_buf(struct res *r, const char *buf, long n)
{
	note(r, "got=\"%.*s\"", n > 0 ? (int)n : 0, buf);
}

/* ==== descriptors ======================================================== */

/* clang-format off */
CASE(open_rdonly) { FD(open(P("f"), O_RDONLY)); }
CASE(open_creat) { FD(open(P("new"), O_CREAT | O_WRONLY, 0640)); }
CASE(open_trunc) { FD(open(P("f"), O_WRONLY | O_TRUNC)); }
CASE(open_enoent) { FD(open(P("nope"), O_RDONLY)); }
CASE(open_eexist) { FD(open(P("f"), O_CREAT | O_EXCL | O_WRONLY, 0644)); }
CASE(open_eisdir) { FD(open(P("d"), O_WRONLY)); }
CASE(open_enotdir) { FD(open(P("f"), O_RDONLY | O_DIRECTORY)); }
CASE(open64_creat) { FD(open64(P("new"), O_CREAT | O_RDWR, 0600)); }
CASE(open64_enoent) { FD(open64(P("nope"), O_RDONLY)); }
CASE(openat_rdonly) { FD(openat(x->dirfd, "f", O_RDONLY)); }
CASE(openat_creat) { FD(openat(x->dirfd, "new", O_CREAT | O_WRONLY, 0604)); }
CASE(openat_ebadf) { FD(openat(x->bad, "f", O_RDONLY)); }
CASE(openat64_rdonly) { FD(openat64(x->dirfd, "d/a", O_RDONLY)); }
CASE(__open_2_rdonly) { FD(__open_2(P("f"), O_RDONLY)); }
CASE(__open_2_enoent) { FD(__open_2(P("nope"), O_RDONLY)); }
CASE(__open64_2_rdonly) { FD(__open64_2(P("f"), O_RDWR)); }
CASE(__openat_2_rdonly) { FD(__openat_2(x->dirfd, "f", O_RDONLY)); }
CASE(__openat_2_ebadf) { FD(__openat_2(x->bad, "f", O_RDONLY)); }
CASE(__openat64_2_rdonly) { FD(__openat64_2(x->dirfd, "f", O_RDONLY)); }
CASE(creat_ok) { FD(creat(P("c"), 0600)); }
CASE(creat_enoent) { FD(creat(P("nodir/c"), 0600)); }
CASE(creat64_ok) { FD(creat64(P("c"), 0644)); }
/* clang-format on */
CASE(close_ok)
{
	INT(close(x->wr));
	x->wr = -1;
}
CASE(close_ebadf)
{
	INT(close(x->bad));
}

CASE(read_ok)
{
	char buf[64];
	INT(read(x->rd, buf, sizeof(buf)));
	note_buf(r, buf, r->ret);
}
CASE(read_pipe)
{
	char buf[64];
	INT(read(x->pr, buf, sizeof(buf)));
	note_buf(r, buf, r->ret);
}
CASE(read_ebadf)
{
	char buf[8];
	INT(read(x->bad, buf, sizeof(buf)));
}
CASE(read_wronly)
{
	char buf[8];
	INT(read(x->wo, buf, sizeof(buf)));
}
CASE(read_eisdir)
{
	char buf[8];
	INT(read(x->dirfd, buf, sizeof(buf)));
}
CASE(__read_chk_ok)
{
	char buf[64];
	INT(__read_chk(x->rd, buf, 5, sizeof(buf)));
	note_buf(r, buf, r->ret);
}
CASE(__read_chk_ebadf)
{
	char buf[8];
	INT(__read_chk(x->bad, buf, sizeof(buf), sizeof(buf)));
}
/* clang-format off */
CASE(write_ok) { INT(write(x->wr, "abc", 3)); }
CASE(write_pipe) { INT(write(x->pw, "more", 4)); }
CASE(write_ebadf) { INT(write(x->bad, "abc", 3)); }
CASE(write_rdonly) { INT(write(x->rd, "abc", 3)); }
/* clang-format on */
CASE(pread_ok)
{
	char buf[16];
	INT(pread(x->rd, buf, 5, 6));
	note_buf(r, buf, r->ret);
}
CASE(pread_espipe)
{
	char buf[16];
	INT(pread(x->pr, buf, 5, 0));
}
CASE(pread64_ok)
{
	char buf[16];
	INT(pread64(x->rd, buf, 5, 0));
	note_buf(r, buf, r->ret);
}
CASE(__pread_chk_ok)
{
	char buf[16];
	INT(__pread_chk(x->rd, buf, 5, 6, sizeof(buf)));
	note_buf(r, buf, r->ret);
}
CASE(__pread64_chk_ebadf)
{
	char buf[16];
	INT(__pread64_chk(x->bad, buf, 5, 0, sizeof(buf)));
}
/* clang-format off */
CASE(pwrite_ok) { INT(pwrite(x->wr, "xyz", 3, 10)); }
CASE(pwrite_einval) { INT(pwrite(x->wr, "xyz", 3, -1)); }
CASE(pwrite64_ok) { INT(pwrite64(x->wr, "xyz", 3, 2)); }
/* clang-format on */

static struct iovec two_iov[2];
static char iov_a[4], iov_b[8];
static void iov_read_setup(void)
{
	two_iov[0] = (struct iovec){iov_a, sizeof(iov_a)};
	two_iov[1] = (struct iovec){iov_b, sizeof(iov_b)};
	memset(iov_a, 0, sizeof(iov_a));
	memset(iov_b, 0, sizeof(iov_b));
}
static void note_iov(struct res *r)
{
	note(r, "a=\"%.4s\" b=\"%.8s\"", iov_a, iov_b);
}
static const struct iovec out_iov[2] = {{"one,", 4}, {"two", 3}};

CASE(readv_ok)
{
	iov_read_setup();
	INT(readv(x->rd, two_iov, 2));
	note_iov(r);
}
CASE(readv_einval)
{
	volatile int count = -1; /* hidden from gcc, which rejects a negative constant */
	iov_read_setup();
	INT(readv(x->rd, two_iov, count));
}
/* clang-format off */
CASE(writev_ok) { INT(writev(x->wr, out_iov, 2)); }
CASE(writev_ebadf) { INT(writev(x->bad, out_iov, 2)); }
/* clang-format on */
CASE(preadv_ok)
{
	iov_read_setup();
	INT(preadv(x->rd, two_iov, 2, 2));
	note_iov(r);
}
CASE(preadv_espipe)
{
	iov_read_setup();
	INT(preadv(x->pr, two_iov, 2, 0));
}
CASE(preadv64_ok)
{
	iov_read_setup();
	INT(preadv64(x->rd, two_iov, 2, 1));
	note_iov(r);
}
/* clang-format off */
CASE(pwritev_ok) { INT(pwritev(x->wr, out_iov, 2, 4)); }
CASE(pwritev64_ok) { INT(pwritev64(x->wr, out_iov, 2, 1)); }
CASE(pwritev_einval) { INT(pwritev(x->wr, out_iov, 2, -5)); }
CASE(lseek_ok) { INT(lseek(x->rd, 6, SEEK_SET)); }
CASE(lseek_end) { INT(lseek(x->rd, -2, SEEK_END)); }
CASE(lseek_einval) { INT(lseek(x->rd, 0, 99)); }
CASE(lseek_espipe) { INT(lseek(x->pr, 0, SEEK_SET)); }
CASE(lseek64_ok) { INT(lseek64(x->rd, 3, SEEK_CUR)); }
CASE(fsync_ok) { INT(fsync(x->wr)); }
CASE(fsync_ebadf) { INT(fsync(x->bad)); }
CASE(fsync_einval) { INT(fsync(x->pr)); }
CASE(fdatasync_ok) { INT(fdatasync(x->wr)); }
CASE(fdatasync_ebadf) { INT(fdatasync(x->bad)); }
CASE(sync_file_range_ok) { INT(sync_file_range(x->wr, 0, 0, SYNC_FILE_RANGE_WRITE)); }
CASE(sync_file_range_einval) { INT(sync_file_range(x->wr, 0, 0, 0xff)); }
CASE(sync_file_range_espipe) { INT(sync_file_range(x->pr, 0, 0, SYNC_FILE_RANGE_WRITE)); }
CASE(ftruncate_ok) { INT(ftruncate(x->wr, 100)); }
CASE(ftruncate_einval) { INT(ftruncate(x->wr, -1)); }
CASE(ftruncate_rdonly) { INT(ftruncate(x->rd, 0)); }
CASE(ftruncate64_ok) { INT(ftruncate64(x->wr, 7)); }
CASE(fallocate_ok) { INT(fallocate(x->wr, 0, 0, 4096)); }
CASE(fallocate_einval) { INT(fallocate(x->wr, 0, 0, 0)); }
CASE(fallocate_ebadf) { INT(fallocate(x->bad, 0, 0, 16)); }
CASE(fallocate64_ok) { INT(fallocate64(x->wr, 0, 0, 33)); }
CASE(dup_ok) { FD(dup(x->rd)); }
CASE(dup_ebadf) { FD(dup(x->bad)); }
CASE(dup2_ok) { FD(dup2(x->rd, 900)); }
CASE(dup2_ebadf) { FD(dup2(x->bad, 900)); }
CASE(dup3_ok) { FD(dup3(x->wo, 901, O_CLOEXEC)); }
CASE(dup3_einval) { FD(dup3(x->rd, x->rd, 0)); }
CASE(pipe_ok) { INT(pipe(r->pair)); }
CASE(pipe2_ok) { INT(pipe2(r->pair, O_CLOEXEC)); }
CASE(pipe2_einval) { INT(pipe2(r->pair, 0x7fff0000)); }
CASE(socketpair_ok) { INT(socketpair(AF_UNIX, SOCK_STREAM, 0, r->pair)); }
CASE(socketpair_eopnotsupp) { INT(socketpair(AF_INET, SOCK_STREAM, 0, r->pair)); }
CASE(eventfd_ok) { FD(eventfd(3, EFD_CLOEXEC)); }
CASE(eventfd_einval) { FD(eventfd(0, 0x7fff0000)); }
CASE(signalfd_ok)
{
	sigset_t m;
	sigemptyset(&m);
	sigaddset(&m, SIGUSR2);
	FD(signalfd(-1, &m, SFD_CLOEXEC));
}
CASE(signalfd_einval)
{
	sigset_t m;
	sigemptyset(&m);
	FD(signalfd(-1, &m, 0x7fff0000));
}
CASE(memfd_create_ok) { FD(memfd_create("rtoffload-test", MFD_CLOEXEC)); }
CASE(memfd_create_einval) { FD(memfd_create("rtoffload-test", 0x7fff0000)); }
CASE(close_range_ok)
{
	INT(close_range((unsigned)x->wo, (unsigned)x->wo, 0));
	x->wo = -1;
}
CASE(close_range_einval) { INT(close_range(10, 5, 0)); }
/* clang-format on */

static const struct fcase desc_cases[] = {
	OK(open_rdonly),
	OK(open_creat),
	OK(open_trunc),
	FAIL(open_enoent, ENOENT),
	FAIL(open_eexist, EEXIST),
	FAIL(open_eisdir, EISDIR),
	FAIL(open_enotdir, ENOTDIR),
	OK(open64_creat),
	FAIL(open64_enoent, ENOENT),
	OK(openat_rdonly),
	OK(openat_creat),
	FAIL(openat_ebadf, EBADF),
	OK(openat64_rdonly),
	OK(__open_2_rdonly),
	FAIL(__open_2_enoent, ENOENT),
	OK(__open64_2_rdonly),
	OK(__openat_2_rdonly),
	FAIL(__openat_2_ebadf, EBADF),
	OK(__openat64_2_rdonly),
	OK(creat_ok),
	FAIL(creat_enoent, ENOENT),
	OK(creat64_ok),
	OK(close_ok),
	FAIL(close_ebadf, EBADF),
	OK(read_ok),
	OK(read_pipe),
	FAIL(read_ebadf, EBADF),
	FAIL(read_wronly, EBADF),
	FAIL(read_eisdir, EISDIR),
	OK(__read_chk_ok),
	FAIL(__read_chk_ebadf, EBADF),
	OK(write_ok),
	OK(write_pipe),
	FAIL(write_ebadf, EBADF),
	FAIL(write_rdonly, EBADF),
	OK(pread_ok),
	FAIL(pread_espipe, ESPIPE),
	OK(pread64_ok),
	OK(__pread_chk_ok),
	FAIL(__pread64_chk_ebadf, EBADF),
	OK(pwrite_ok),
	FAIL(pwrite_einval, EINVAL),
	OK(pwrite64_ok),
	OK(readv_ok),
	FAIL(readv_einval, EINVAL),
	OK(writev_ok),
	FAIL(writev_ebadf, EBADF),
	OK(preadv_ok),
	FAIL(preadv_espipe, ESPIPE),
	OK(preadv64_ok),
	OK(pwritev_ok),
	OK(pwritev64_ok),
	FAIL(pwritev_einval, EINVAL),
	OK(lseek_ok),
	OK(lseek_end),
	FAIL(lseek_einval, EINVAL),
	FAIL(lseek_espipe, ESPIPE),
	OK(lseek64_ok),
	OK(fsync_ok),
	FAIL(fsync_ebadf, EBADF),
	FAIL(fsync_einval, EINVAL),
	OK(fdatasync_ok),
	FAIL(fdatasync_ebadf, EBADF),
	OK(sync_file_range_ok),
	FAIL(sync_file_range_einval, EINVAL),
	FAIL(sync_file_range_espipe, ESPIPE),
	OK(ftruncate_ok),
	FAIL(ftruncate_einval, EINVAL),
	FAIL(ftruncate_rdonly, EINVAL),
	OK(ftruncate64_ok),
	OK(fallocate_ok),
	FAIL(fallocate_einval, EINVAL),
	FAIL(fallocate_ebadf, EBADF),
	OK(fallocate64_ok),
	OK(dup_ok),
	FAIL(dup_ebadf, EBADF),
	OK(dup2_ok),
	FAIL(dup2_ebadf, EBADF),
	OK(dup3_ok),
	FAIL(dup3_einval, EINVAL),
	OK(pipe_ok),
	OK(pipe2_ok),
	FAIL(pipe2_einval, EINVAL),
	OK(socketpair_ok),
	FAIL(socketpair_eopnotsupp, EOPNOTSUPP),
	OK(eventfd_ok),
	FAIL(eventfd_einval, EINVAL),
	OK(signalfd_ok),
	FAIL(signalfd_einval, EINVAL),
	OK(memfd_create_ok),
	FAIL(memfd_create_einval, EINVAL),
	OK(close_range_ok),
	FAIL(close_range_einval, EINVAL),
};

Test(families, desc, .timeout = TEST_TIMEOUT)
{
	CHECK_FAMILY("desc", desc_cases, 0);
}

/* ==== paths ============================================================== */

CASE(stat_ok)
{
	struct stat st;
	INT(stat(P("f"), &st));
	note_stat(r, &st);
}
CASE(stat_follows)
{
	struct stat st;
	INT(stat(P("l"), &st));
	note_stat(r, &st);
}
CASE(stat_enoent)
{
	struct stat st;
	INT(stat(P("nope"), &st));
}
CASE(stat_enotdir)
{
	struct stat st;
	INT(stat(P("f/x"), &st));
}
CASE(stat64_ok)
{
	struct stat64 st;
	INT(stat64(P("d"), &st));
	note(r, "dir=%d", S_ISDIR(st.st_mode));
}
CASE(lstat_ok)
{
	struct stat st;
	INT(lstat(P("l"), &st));
	note_stat(r, &st);
}
CASE(lstat_enoent)
{
	struct stat st;
	INT(lstat(P("nope"), &st));
}
CASE(lstat64_ok)
{
	struct stat64 st;
	INT(lstat64(P("l"), &st));
	note_stat64(r, &st);
}
CASE(fstat_ok)
{
	struct stat st;
	INT(fstat(x->rd, &st));
	note_stat(r, &st);
}
CASE(fstat_ebadf)
{
	struct stat st;
	INT(fstat(x->bad, &st));
}
CASE(fstat64_ok)
{
	struct stat64 st;
	INT(fstat64(x->rd, &st));
	note_stat64(r, &st);
}
CASE(fstatat_nofollow)
{
	struct stat st;
	INT(fstatat(x->dirfd, "l", &st, AT_SYMLINK_NOFOLLOW));
	note_stat(r, &st);
}
CASE(fstatat_einval)
{
	struct stat st;
	INT(fstatat(x->dirfd, "f", &st, 0x40000000));
}
CASE(fstatat64_ok)
{
	struct stat64 st;
	INT(fstatat64(x->dirfd, "d/b", &st, 0));
	note_stat64(r, &st);
}
CASE(statx_ok)
{
	struct statx stx;
	INT(statx(x->dirfd, "f", 0, STATX_BASIC_STATS, &stx));
	note(r, "mode=%o size=%llu", (unsigned)stx.stx_mode, (unsigned long long)stx.stx_size);
}
CASE(statx_enoent)
{
	struct statx stx;
	INT(statx(x->dirfd, "nope", 0, STATX_BASIC_STATS, &stx));
}
CASE(__xstat_ok)
{
	struct stat st;
	INT(__xstat(STAT_VER, P("f"), &st));
	note_stat(r, &st);
}
CASE(__xstat_enoent)
{
	struct stat st;
	INT(__xstat(STAT_VER, P("nope"), &st));
}
CASE(__xstat64_ok)
{
	struct stat64 st;
	INT(__xstat64(STAT_VER, P("f"), &st));
	note_stat64(r, &st);
}
CASE(__lxstat_ok)
{
	struct stat st;
	INT(__lxstat(STAT_VER, P("l"), &st));
	note_stat(r, &st);
}
CASE(__lxstat64_ok)
{
	struct stat64 st;
	INT(__lxstat64(STAT_VER, P("l"), &st));
	note_stat64(r, &st);
}
CASE(__fxstat_ok)
{
	struct stat st;
	INT(__fxstat(STAT_VER, x->rd, &st));
	note_stat(r, &st);
}
CASE(__fxstat_ebadf)
{
	struct stat st;
	INT(__fxstat(STAT_VER, x->bad, &st));
}
CASE(__fxstat64_ok)
{
	struct stat64 st;
	INT(__fxstat64(STAT_VER, x->rd, &st));
	note_stat64(r, &st);
}
CASE(__fxstatat_ok)
{
	struct stat st;
	INT(__fxstatat(STAT_VER, x->dirfd, "l", &st, AT_SYMLINK_NOFOLLOW));
	note_stat(r, &st);
}
CASE(__fxstatat64_ok)
{
	struct stat64 st;
	INT(__fxstatat64(STAT_VER, x->dirfd, "f", &st, 0));
	note_stat64(r, &st);
}
/* clang-format off */
CASE(access_ok) { INT(access(P("f"), R_OK | W_OK)); }
CASE(access_enoent) { INT(access(P("nope"), F_OK)); }
CASE(access_einval) { INT(access(P("f"), 0x100)); }
CASE(faccessat_ok) { INT(faccessat(x->dirfd, "d", X_OK, 0)); }
CASE(faccessat_ebadf) { INT(faccessat(x->bad, "f", F_OK, 0)); }
CASE(unlink_ok) { INT(unlink(P("f"))); }
CASE(unlink_enoent) { INT(unlink(P("nope"))); }
CASE(unlink_eisdir) { INT(unlink(P("d"))); }
CASE(unlinkat_ok) { INT(unlinkat(x->dirfd, "d/a", 0)); }
CASE(unlinkat_rmdir) { INT(unlinkat(x->dirfd, "e", AT_REMOVEDIR)); }
CASE(unlinkat_enotempty) { INT(unlinkat(x->dirfd, "d", AT_REMOVEDIR)); }
CASE(rename_ok) { INT(rename(P("f"), P2("g"))); }
CASE(rename_enoent) { INT(rename(P("nope"), P2("g"))); }
CASE(rename_eisdir) { INT(rename(P("f"), P2("e"))); }
CASE(renameat_ok) { INT(renameat(x->dirfd, "d/c", x->dirfd, "c2")); }
CASE(renameat_ebadf) { INT(renameat(x->bad, "f", x->dirfd, "g")); }
CASE(mkdir_ok) { INT(mkdir(P("m2"), 0750)); }
CASE(mkdir_eexist) { INT(mkdir(P("d"), 0755)); }
CASE(mkdir_enoent) { INT(mkdir(P("no/m2"), 0755)); }
CASE(mkdirat_ok) { INT(mkdirat(x->dirfd, "d/sub", 0700)); }
CASE(mkdirat_ebadf) { INT(mkdirat(x->bad, "sub", 0700)); }
CASE(rmdir_ok) { INT(rmdir(P("e"))); }
CASE(rmdir_enotempty) { INT(rmdir(P("d"))); }
CASE(rmdir_enotdir) { INT(rmdir(P("f"))); }
CASE(chmod_ok) { INT(chmod(P("f"), 0604)); }
CASE(chmod_enoent) { INT(chmod(P("nope"), 0600)); }
CASE(chown_ok) { INT(chown(P("f"), getuid(), getgid())); }
CASE(chown_enoent) { INT(chown(P("nope"), getuid(), getgid())); }
CASE(link_ok) { INT(link(P("f"), P2("hard"))); }
CASE(link_eexist) { INT(link(P("f"), P2("l"))); }
CASE(symlink_ok) { INT(symlink("d/a", P("s2"))); }
CASE(symlink_eexist) { INT(symlink("f", P("l"))); }
/* clang-format on */
CASE(readlink_ok)
{
	char buf[64];
	INT(readlink(P("l"), buf, sizeof(buf)));
	note_buf(r, buf, r->ret);
}
CASE(readlink_einval)
{
	char buf[64];
	INT(readlink(P("f"), buf, sizeof(buf)));
}
CASE(__readlink_chk_ok)
{
	char buf[64];
	INT(__readlink_chk(P("l"), buf, sizeof(buf), sizeof(buf)));
	note_buf(r, buf, r->ret);
}
CASE(realpath_buf)
{
	char buf[PATH_MAX], *p;
	PTR(p, realpath(P("l"), buf), NULL);
	note(r, "path=%s", p ? p : "-");
}
CASE(realpath_alloc)
{
	char *p;
	PTR(p, realpath(P("d/../f"), NULL), NULL);
	r->heap = p;
	note(r, "path=%s", p ? p : "-");
}
CASE(realpath_enoent)
{
	char buf[PATH_MAX], *p;
	PTR(p, realpath(P("nope/x"), buf), NULL);
}
CASE(__realpath_chk_ok)
{
	char buf[PATH_MAX], *p;
	PTR(p, __realpath_chk(P("l"), buf, sizeof(buf)), NULL);
	note(r, "path=%s", p ? p : "-");
}
/* clang-format off */
CASE(truncate_ok) { INT(truncate(P("f"), 5)); }
CASE(truncate_enoent) { INT(truncate(P("nope"), 5)); }
CASE(truncate_eisdir) { INT(truncate(P("d"), 0)); }
CASE(truncate64_ok) { INT(truncate64(P("f"), 20)); }
/* clang-format on */

static const struct fcase path_cases[] = {
	OK(stat_ok),
	OK(stat_follows),
	FAIL(stat_enoent, ENOENT),
	FAIL(stat_enotdir, ENOTDIR),
	OK(stat64_ok),
	OK(lstat_ok),
	FAIL(lstat_enoent, ENOENT),
	OK(lstat64_ok),
	OK(fstat_ok),
	FAIL(fstat_ebadf, EBADF),
	OK(fstat64_ok),
	OK(fstatat_nofollow),
	FAIL(fstatat_einval, EINVAL),
	OK(fstatat64_ok),
	OK(statx_ok),
	FAIL(statx_enoent, ENOENT),
	OK(__xstat_ok),
	FAIL(__xstat_enoent, ENOENT),
	OK(__xstat64_ok),
	OK(__lxstat_ok),
	OK(__lxstat64_ok),
	OK(__fxstat_ok),
	FAIL(__fxstat_ebadf, EBADF),
	OK(__fxstat64_ok),
	OK(__fxstatat_ok),
	OK(__fxstatat64_ok),
	OK(access_ok),
	FAIL(access_enoent, ENOENT),
	FAIL(access_einval, EINVAL),
	OK(faccessat_ok),
	FAIL(faccessat_ebadf, EBADF),
	OK(unlink_ok),
	FAIL(unlink_enoent, ENOENT),
	FAIL(unlink_eisdir, EISDIR),
	OK(unlinkat_ok),
	OK(unlinkat_rmdir),
	FAIL(unlinkat_enotempty, ENOTEMPTY),
	OK(rename_ok),
	FAIL(rename_enoent, ENOENT),
	FAIL(rename_eisdir, EISDIR),
	OK(renameat_ok),
	FAIL(renameat_ebadf, EBADF),
	OK(mkdir_ok),
	FAIL(mkdir_eexist, EEXIST),
	FAIL(mkdir_enoent, ENOENT),
	OK(mkdirat_ok),
	FAIL(mkdirat_ebadf, EBADF),
	OK(rmdir_ok),
	FAIL(rmdir_enotempty, ENOTEMPTY),
	FAIL(rmdir_enotdir, ENOTDIR),
	OK(chmod_ok),
	FAIL(chmod_enoent, ENOENT),
	OK(chown_ok),
	FAIL(chown_enoent, ENOENT),
	OK(link_ok),
	FAIL(link_eexist, EEXIST),
	OK(symlink_ok),
	FAIL(symlink_eexist, EEXIST),
	OK(readlink_ok),
	FAIL(readlink_einval, EINVAL),
	OK(__readlink_chk_ok),
	OK(realpath_buf),
	OK(realpath_alloc),
	FAIL(realpath_enoent, ENOENT),
	OK(__realpath_chk_ok),
	OK(truncate_ok),
	FAIL(truncate_enoent, ENOENT),
	FAIL(truncate_eisdir, EISDIR),
	OK(truncate64_ok),
};

Test(families, path, .timeout = TEST_TIMEOUT)
{
	CHECK_FAMILY("path", path_cases, 0);
}

/* ==== directories ======================================================== */

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Names in readdir order are the file system's business: sort them. */
static void note_names(struct res *r, char names[][NAME_MAX + 1], size_t n)
{
	char *p[32];
	for (size_t i = 0; i < n; i++)
		p[i] = names[i];
	qsort(p, n, sizeof(p[0]), by_name);
	for (size_t i = 0; i < n; i++)
		note(r, "%s ", p[i]);
}

CASE(opendir_ok)
{
	DIR *d;
	PTR(d, opendir(P("d")), NULL);
	r->dp = d;
}
CASE(opendir_enoent)
{
	DIR *d;
	PTR(d, opendir(P("nope")), NULL);
}
CASE(opendir_enotdir)
{
	DIR *d;
	PTR(d, opendir(P("f")), NULL);
}
CASE(fdopendir_ok)
{
	DIR *d;
	PTR(d, fdopendir(x->ddir), NULL);
	r->dp = d;
	x->ddir = -1; /* the DIR owns it now */
}
CASE(fdopendir_ebadf)
{
	DIR *d;
	PTR(d, fdopendir(x->bad), NULL);
}
CASE(fdopendir_enotdir)
{
	DIR *d;
	PTR(d, fdopendir(x->rd), NULL);
}
/* Every entry, one offloaded readdir each, then the NULL at the end. */
CASE(readdir_all)
{
	char names[32][NAME_MAX + 1];
	struct dirent *e;
	size_t n = 0;

	do {
		PTR(e, readdir(x->dp), NULL);
		if (e && n < 32)
			strcpy(names[n++], e->d_name);
	} while (e);
	note_names(r, names, n);
	r->fail = 0; /* the final NULL is the end, not a failure: errno says */
	r->ret = (long)n;
}
CASE(readdir64_all)
{
	char names[32][NAME_MAX + 1];
	struct dirent64 *e;
	size_t n = 0;

	do {
		PTR(e, readdir64(x->dp), NULL);
		if (e && n < 32)
			strcpy(names[n++], e->d_name);
	} while (e);
	note_names(r, names, n);
	r->fail = 0;
	r->ret = (long)n;
}
/* A DIR whose descriptor went away: the getdents fails with EBADF. */
HOOK(prep_dir_no_fd)
{
	r->dp = opendir(P("e"));
	cr_assert_not_null(r->dp);
	close(dirfd(r->dp));
}
HOOK(post_dir_no_fd)
{
	/* Free the DIR; its number may be in use again: keep whatever holds it now. */
	int fd = dirfd(r->dp), now = dup(fd);
	closedir(r->dp);
	if (now >= 0) {
		dup2(now, fd);
		close(now);
	}
	r->dp = NULL;
}
CASE(readdir_ebadf)
{
	struct dirent *e;
	PTR(e, readdir(r->dp), NULL);
}
CASE(closedir_ok)
{
	INT(closedir(x->dp));
	x->dp = NULL;
}
CASE(scandir_ok)
{
	struct dirent **list = NULL;
	INT(scandir(P("d"), &list, NULL, alphasort));
	for (long i = 0; i < r->ret; i++) {
		note(r, "%s ", list[i]->d_name);
		free(list[i]);
	}
	free(list);
}
CASE(scandir_enoent)
{
	struct dirent **list = NULL;
	INT(scandir(P("nope"), &list, NULL, alphasort));
}
CASE(scandir64_ok)
{
	struct dirent64 **list = NULL;
	INT(scandir64(P("e"), &list, NULL, alphasort64));
	for (long i = 0; i < r->ret; i++) {
		note(r, "%s ", list[i]->d_name);
		free(list[i]);
	}
	free(list);
}

/* The DIR a case returned: its entries, read on the main thread. */
HOOK(post_list_dir)
{
	char names[32][NAME_MAX + 1];
	struct dirent *e;
	size_t n = 0;

	while (r->dp && (e = readdir(r->dp)) && n < 32)
		strcpy(names[n++], e->d_name);
	note_names(r, names, n);
}

static const struct fcase dir_cases[] = {
	OKP(opendir_ok, NULL, post_list_dir),
	FAIL(opendir_enoent, ENOENT),
	FAIL(opendir_enotdir, ENOTDIR),
	OKP(fdopendir_ok, NULL, post_list_dir),
	FAIL(fdopendir_ebadf, EBADF),
	FAIL(fdopendir_enotdir, ENOTDIR),
	OK(readdir_all),
	OK(readdir64_all),
	ENTRY(readdir_ebadf, .fail = 1, .err = EBADF, .prep = prep_dir_no_fd,
	      .post = post_dir_no_fd),
	OK(closedir_ok),
	ENTRY(scandir_ok, .local = RTO_SANITIZER_CALLBACKS_LOCAL),
	ENTRY(scandir_enoent, .fail = 1, .err = ENOENT, .local = RTO_SANITIZER_CALLBACKS_LOCAL),
	ENTRY(scandir64_ok, .local = RTO_SANITIZER_CALLBACKS_LOCAL),
};

Test(families, dir, .timeout = TEST_TIMEOUT)
{
	CHECK_FAMILY("dir", dir_cases, 0);
}

/* ==== stdio (stdout is captured to a file) =============================== */

static int vfprintf_call(FILE *f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vfprintf(f, fmt, ap);
	va_end(ap);
	return n;
}
static int vprintf_call(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vprintf(fmt, ap);
	va_end(ap);
	return n;
}
static int vfprintf_chk_call(FILE *f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = __vfprintf_chk(f, 1, fmt, ap);
	va_end(ap);
	return n;
}
static int vprintf_chk_call(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = __vprintf_chk(1, fmt, ap);
	va_end(ap);
	return n;
}

static void note_line(struct res *r, const char *s)
{
	note(r, "got=\"%s\"", s ? s : "(null)");
}

CASE(fopen_ok)
{
	FILE *f;
	PTR(f, fopen(P("f"), "r"), NULL);
	r->fp = f;
}
CASE(fopen_create)
{
	FILE *f;
	PTR(f, fopen(P("new"), "w"), NULL);
	r->fp = f;
}
CASE(fopen_enoent)
{
	FILE *f;
	PTR(f, fopen(P("nope"), "r"), NULL);
}
CASE(fopen_einval)
{
	FILE *f;
	PTR(f, fopen(P("f"), "q"), NULL);
}
CASE(fopen64_ok)
{
	FILE *f;
	PTR(f, fopen64(P("f"), "r+"), NULL);
	r->fp = f;
}
CASE(fdopen_ok)
{
	FILE *f;
	PTR(f, fdopen(x->wr, "w"), NULL);
	r->fp = f;
	x->wr = -1; /* the FILE owns it now */
}
CASE(fdopen_ebadf)
{
	FILE *f;
	PTR(f, fdopen(x->bad, "r"), NULL);
}
CASE(fdopen_einval)
{
	FILE *f;
	PTR(f, fdopen(x->rd, "w"), NULL);
}
CASE(freopen_ok)
{
	FILE *f;
	PTR(f, freopen(P("f"), "r", x->fw), NULL);
	x->fw = f;
}
CASE(freopen_enoent)
{
	FILE *f;
	FILE *old = x->fw;
	PTR(f, freopen(P("nope"), "r", x->fw), NULL);
	x->fw = f; /* freopen closed the old stream whatever happened */
	/* ...but glibc keeps the FILE: fclose() of a closed stream frees it (EOF). */
	if (!f)
		r->fp = old;
}
CASE(freopen64_ok)
{
	FILE *f;
	PTR(f, freopen64(P("d/c"), "r", x->fwo), NULL);
	x->fwo = f;
}
/* The FILE a case opened for reading: what a first line reads. */
HOOK(post_first_line)
{
	char buf[64] = "";
	if (r->fp && !fgets(buf, sizeof(buf), r->fp))
		strcpy(buf, "(eof)");
	note(r, " line=\"%s\"", buf);
}
HOOK(post_fw_line)
{
	char buf[64] = "";
	if (x->fw && !fgets(buf, sizeof(buf), x->fw))
		strcpy(buf, "(eof)");
	note(r, " line=\"%s\"", buf);
}
CASE(fclose_ok)
{
	INT(fclose(x->fw)); /* with data pending: it flushes */
	x->fw = NULL;
}
/* A stream whose descriptor was closed behind its back, with data pending. */
HOOK(prep_orphan_stream)
{
	r->pfp = NULL;
	r->fp = fopen(P("orphan"), "w");
	cr_assert_not_null(r->fp);
	fputs("pending", r->fp);
	close(fileno(r->fp));
}
CASE(fclose_ebadf)
{
	INT(fclose(r->fp));
	r->fp = NULL;
}
CASE(fflush_ebadf)
{
	INT(fflush(r->fp));
}
HOOK(post_orphan_stream)
{
	r->fp = NULL; /* its number may be reused: leak the FILE */
}
CASE(fread_ok)
{
	char buf[16] = "";
	INT(fread(buf, 1, 5, x->fr));
	note_buf(r, buf, r->ret);
}
CASE(fread_ebadf)
{
	char buf[16];
	INT(fread(buf, 1, 5, x->fwo));
	r->fail = r->ret == 0;
}
CASE(__fread_chk_ok)
{
	char buf[16] = "";
	INT(__fread_chk(buf, sizeof(buf), 2, 3, x->fr));
	note_buf(r, buf, r->ret * 2);
}
CASE(fwrite_ok)
{
	INT(fwrite("data", 1, 4, x->fw));
}
CASE(fwrite_ebadf)
{
	INT(fwrite("data", 1, 4, x->fr));
	r->fail = r->ret == 0;
}
CASE(fgets_ok)
{
	char buf[64], *s;
	PTR(s, fgets(buf, sizeof(buf), x->fr), NULL);
	note_line(r, s);
}
CASE(fgets_eof)
{
	char buf[64], *s;
	PTR(s, fgets(buf, sizeof(buf), x->fw), NULL);
}
CASE(fgets_ebadf)
{
	char buf[64], *s;
	PTR(s, fgets(buf, sizeof(buf), x->fwo), NULL);
}
CASE(__fgets_chk_ok)
{
	char buf[64], *s;
	PTR(s, __fgets_chk(buf, sizeof(buf), 6, x->fr), NULL);
	note_line(r, s);
}
/* clang-format off */
CASE(fputs_ok) { INT(fputs("line\n", x->fw)); }
CASE(fputs_ebadf) { INT(fputs("line\n", x->fr)); }
CASE(puts_ok) { INT(puts("to stdout")); }
CASE(fputc_ok) { INT(fputc('Q', x->fw)); }
CASE(fputc_ebadf) { INT(fputc('Q', x->fr)); }
CASE(putc_ok) { INT((putc)('R', x->fwo)); }
CASE(putchar_ok) { INT((putchar)('S')); }
CASE(fgetc_ok) { INT(fgetc(x->fr)); }
CASE(fgetc_buffered) { INT(fgetc(x->fr)); }
HOOK(prep_fw_put1) { fputc('p', x->fw); }
CASE(fwrite_buffered) { INT(fwrite("abc", 1, 3, x->fw)); }
CASE(fgetc_eof) { INT(fgetc(x->fw)); }
CASE(fgetc_ebadf) { INT(fgetc(x->fwo)); }
CASE(getc_ok) { INT((getc)(x->fpipe)); }
HOOK(prep_fw_pending) { fputs("pending\n", x->fw); }
CASE(fflush_ok) { INT(fflush(x->fw)); }
CASE(fflush_read) { INT(fflush(x->fr)); }
CASE(fseek_ok) { INT(fseek(x->fr, 6, SEEK_SET)); }
CASE(fseek_einval) { INT(fseek(x->fr, -1, SEEK_SET)); }
CASE(fseek_espipe) { INT(fseek(x->fpipe, 0, SEEK_SET)); }
/* clang-format on */
HOOK(prep_fr_read3)
{
	char buf[4];
	cr_assert_eq(fread(buf, 1, 3, x->fr), 3);
}
/* clang-format off */
CASE(ftell_ok) { INT(ftell(x->fr)); }
CASE(ftell_espipe) { INT(ftell(x->fpipe)); }
CASE(__overflow_ok) { INT(__overflow(x->fw, 'Z')); }
CASE(__overflow_ebadf) { INT(__overflow(x->fr, 'Z')); }
CASE(__uflow_ok) { INT(__uflow(x->fr)); }
CASE(__uflow_ebadf) { INT(__uflow(x->fwo)); }
CASE(printf_ok) { INT(printf("printf %d %s|", 42, "x")); }
/* clang-format on */
/* More arguments than registers, floats too: the va_list crosses threads. */
CASE(fprintf_many)
{
	INT(fprintf(
		x->fw, "%d %d %d %d %d %d %d %d %s %.1f %.1f %.1f %.1f %.1f %.1f %.1f %.1f %.1f %c",
		1, 2, 3, 4, 5, 6, 7, 8, "eight", 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5, '!'));
}
/* clang-format off */
CASE(fprintf_ebadf) { INT(fprintf(x->fr, "%d", 7)); }
CASE(vprintf_ok) { INT(vprintf_call("vprintf %s %ld|", "y", 123456789L)); }
CASE(vfprintf_ok) { INT(vfprintf_call(x->fw, "vfprintf %x %s", 255u, "z")); }
CASE(vfprintf_ebadf) { INT(vfprintf_call(x->fr, "vfprintf %d", 1)); }
CASE(__printf_chk_ok) { INT(__printf_chk(1, "chk %d %.3f|", -5, 0.125)); }
CASE(__fprintf_chk_ok) { INT(__fprintf_chk(x->fw, 1, "chk %s %d", "fw", 99)); }
CASE(__fprintf_chk_ebadf) { INT(__fprintf_chk(x->fr, 1, "chk %s", "x")); }
CASE(__vprintf_chk_ok) { INT(vprintf_chk_call("vchk %s|", "out")); }
CASE(__vfprintf_chk_ok) { INT(vfprintf_chk_call(x->fwo, "vchk %d %d %d", 1, 2, 3)); }
/*
 * glibc's headers inline some *_unlocked functions into the caller (no call
 * at all while the buffer has room); through a pointer, the exported
 * function runs, which is what the library wraps.
 */
#define EXPORTED(fn) static __typeof__(&fn) volatile p_##fn = &fn
EXPORTED(fwrite_unlocked);
EXPORTED(fread_unlocked);
EXPORTED(fputs_unlocked);
EXPORTED(fgets_unlocked);
EXPORTED(fputc_unlocked);
EXPORTED(putc_unlocked);
EXPORTED(putchar_unlocked);
EXPORTED(fflush_unlocked);

CASE(fwrite_unlocked_ok) { INT(p_fwrite_unlocked("data", 1, 4, x->fw)); }
CASE(fread_unlocked_ok)
{
	char buf[16] = "";
	INT(p_fread_unlocked(buf, 1, 5, x->fr));
	note_buf(r, buf, r->ret);
}
CASE(fputs_unlocked_ok) { INT(p_fputs_unlocked("line\n", x->fw)); }
CASE(fputs_unlocked_ebadf) { INT(p_fputs_unlocked("line\n", x->fr)); }
CASE(fgets_unlocked_ok)
{
	char buf[64], *s;
	PTR(s, p_fgets_unlocked(buf, sizeof(buf), x->fr), NULL);
	note_line(r, s);
}
CASE(fputc_unlocked_ok) { INT(p_fputc_unlocked('U', x->fw)); }
CASE(putc_unlocked_ok) { INT(p_putc_unlocked('V', x->fwo)); }
CASE(putchar_unlocked_ok) { INT(p_putchar_unlocked('W')); }
CASE(fflush_unlocked_ok) { INT(p_fflush_unlocked(x->fw)); }
/* What the buffer held is dropped: none of it pending, nothing written. */
CASE(__fpurge_drops) { __fpurge(x->fw); INT(__fpending(x->fw)); }
/* clang-format on */

static const struct fcase stdio_cases[] = {
	OKP(fopen_ok, NULL, post_first_line),
	OK(fopen_create),
	FAIL(fopen_enoent, ENOENT),
	FAIL(fopen_einval, EINVAL),
	OKP(fopen64_ok, NULL, post_first_line),
	OK(fdopen_ok),
	FAIL(fdopen_ebadf, EBADF),
	FAIL(fdopen_einval, EINVAL),
	OKP(freopen_ok, NULL, post_fw_line),
	FAIL(freopen_enoent, ENOENT),
	OK(freopen64_ok),
	OKP(fclose_ok, prep_fw_pending, NULL),
	ENTRY(fclose_ebadf, .fail = 1, .err = EBADF, .prep = prep_orphan_stream),
	ENTRY(fflush_ebadf, .fail = 1, .err = EBADF, .prep = prep_orphan_stream,
	      .post = post_orphan_stream),
	OK(fread_ok),
	FAIL(fread_ebadf, EBADF),
	OK(__fread_chk_ok),
	OK(fwrite_ok),
	FAIL(fwrite_ebadf, EBADF),
	OK(fgets_ok),
	ENTRY(fgets_eof, .fail = 1), /* end of file: errno untouched */
	FAIL(fgets_ebadf, EBADF),
	OK(__fgets_chk_ok),
	OK(fputs_ok),
	FAIL(fputs_ebadf, EBADF),
	/* stdout's buffer has room (the capture flushed it): a copy into it, here. */
	ENTRY(puts_ok, .local = 1),
	OK(fputc_ok),
	FAIL(fputc_ebadf, EBADF),
	OK(putc_ok),
	ENTRY(putchar_ok, .local = 1), /* the same */
	OK(fgetc_ok),
	/* Its buffer holds the byte, or has room (calls.tbl's buffered:): here. */
	ENTRY(fgetc_buffered, .local = 1, .prep = prep_fr_read3),
	ENTRY(fwrite_buffered, .local = 1, .prep = prep_fw_put1),
	ENTRY(fgetc_eof, .fail = 1),
	FAIL(fgetc_ebadf, EBADF),
	OK(getc_ok),
	OKP(fflush_ok, prep_fw_pending, NULL),
	OKP(fflush_read, prep_fr_read3, NULL),
	OK(fseek_ok),
	FAIL(fseek_einval, EINVAL),
	FAIL(fseek_espipe, ESPIPE),
	OKP(ftell_ok, prep_fr_read3, NULL),
	FAIL(ftell_espipe, ESPIPE),
	OK(__overflow_ok),
	FAIL(__overflow_ebadf, EBADF),
	OK(__uflow_ok),
	FAIL(__uflow_ebadf, EBADF),
	ENTRY(printf_ok, .local = 1), /* stdout's room, as puts_ok: formatted here */
	OK(fprintf_many),
	FAIL(fprintf_ebadf, EBADF),
	ENTRY(vprintf_ok, .local = 1), /* the same */
	OK(vfprintf_ok),
	FAIL(vfprintf_ebadf, EBADF),
	ENTRY(__printf_chk_ok, .local = 1), /* the same */
	OK(__fprintf_chk_ok),
	FAIL(__fprintf_chk_ebadf, EBADF),
	ENTRY(__vprintf_chk_ok, .local = 1), /* the same */
	OK(__vfprintf_chk_ok),
	OK(fwrite_unlocked_ok),
	OK(fread_unlocked_ok),
	OK(fputs_unlocked_ok),
	FAIL(fputs_unlocked_ebadf, EBADF),
	OK(fgets_unlocked_ok),
	OK(fputc_unlocked_ok),
	OK(putc_unlocked_ok),
	ENTRY(putchar_unlocked_ok, .local = 1), /* the same */
	OKP(fflush_unlocked_ok, prep_fw_pending, NULL),
	/* rtsafe: on the caller */
	ENTRY(__fpurge_drops, .local = 1, .prep = prep_fw_pending),
};

Test(families, stdio, .timeout = TEST_TIMEOUT)
{
	CHECK_FAMILY("stdio", stdio_cases, 1);
}

/* ==== name resolution ==================================================== */

static void note_ai(struct res *r, const struct addrinfo *ai)
{
	char host[64], serv[16];

	for (; ai; ai = ai->ai_next) {
		getnameinfo(ai->ai_addr, ai->ai_addrlen, host, sizeof(host), serv, sizeof(serv),
			    NI_NUMERICHOST | NI_NUMERICSERV);
		note(r, "%d/%d %s:%s ", ai->ai_family, ai->ai_socktype, host, serv);
	}
}
static int gai(struct res *r, const char *node, const char *serv, int flags)
{
	struct addrinfo hints = {
		.ai_family = AF_INET, .ai_socktype = SOCK_STREAM, .ai_flags = flags};
	return getaddrinfo(node, serv, &hints, &r->ai);
}
static struct sockaddr_in loopback(int port)
{
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return sin;
}

/* The results land in r->ai; post_ai reads them on the main thread. */
/* clang-format off */
CASE(getaddrinfo_localhost) { CODE(gai(r, "localhost", "80", 0)); }
CASE(getaddrinfo_numeric) { CODE(gai(r, "127.0.0.1", "8080", AI_NUMERICHOST)); }
CASE(getaddrinfo_noname) { CODE(gai(r, "not.a.number", "80", AI_NUMERICHOST)); }
CASE(getaddrinfo_badflags) { CODE(gai(r, "localhost", "80", 0x7fff0000)); }
CASE(getaddrinfo_service) { CODE(gai(r, "127.0.0.1", "no-such-service", AI_NUMERICSERV)); }
HOOK(post_ai) { note_ai(r, r->ai); }
/* clang-format on */
CASE(getnameinfo_numeric)
{
	struct sockaddr_in sin = loopback(80);
	char host[64] = "", serv[16] = "";
	CODE(getnameinfo((struct sockaddr *)&sin, sizeof(sin), host, sizeof(host), serv,
			 sizeof(serv), NI_NUMERICHOST | NI_NUMERICSERV));
	note(r, "%s:%s", host, serv);
}
CASE(getnameinfo_hosts)
{
	struct sockaddr_in sin = loopback(22);
	char host[256] = "";
	CODE(getnameinfo((struct sockaddr *)&sin, sizeof(sin), host, sizeof(host), NULL, 0,
			 NI_NAMEREQD));
	note(r, "%s", host);
}
CASE(getnameinfo_family)
{
	struct sockaddr_in sin = loopback(80);
	char host[64];
	CODE(getnameinfo((struct sockaddr *)&sin, 1, host, sizeof(host), NULL, 0, 0));
}
CASE(gethostbyname_ok)
{
	struct hostent *h;
	PTR(h, gethostbyname("localhost"), NULL); /* h_errno is unspecified on success */
	if (h)
		note(r, "%s len=%d %s", h->h_name, h->h_length,
		     inet_ntoa(*(struct in_addr *)h->h_addr_list[0]));
}
/* All digits and dots but no address: refused before any lookup. */
CASE(gethostbyname_notfound)
{
	struct hostent *h;
	PTR(h, gethostbyname("1.2.3.4.5"), NULL);
	r->herr = h_errno;
}

static const struct fcase dns_cases[] = {
	OKP(getaddrinfo_localhost, NULL, post_ai),
	OKP(getaddrinfo_numeric, NULL, post_ai),
	ENTRY(getaddrinfo_noname, .fail = 1, .code = EAI_NONAME),
	ENTRY(getaddrinfo_badflags, .fail = 1, .code = EAI_BADFLAGS),
	ENTRY(getaddrinfo_service, .fail = 1, .code = EAI_NONAME),
	OK(getnameinfo_numeric),
	OK(getnameinfo_hosts),
	ENTRY(getnameinfo_family, .fail = 1, .code = EAI_FAMILY),
	OK(gethostbyname_ok),
	ENTRY(gethostbyname_notfound, .fail = 1), /* h_errno is compared */
};

Test(families, dns, .timeout = TEST_TIMEOUT)
{
	CHECK_FAMILY("dns", dns_cases, 0);
}

/* ==== sockets (loopback) ================================================= */

static int bind_to(int fd, struct sockaddr_in sin)
{
	return bind(fd, (struct sockaddr *)&sin, sizeof(sin));
}
static int connect_to(int fd, struct sockaddr_in sin)
{
	return connect(fd, (struct sockaddr *)&sin, sizeof(sin));
}

/* clang-format off */
CASE(socket_tcp) { FD(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)); }
CASE(socket_unix) { FD(socket(AF_UNIX, SOCK_DGRAM, 0)); }
CASE(socket_eafnosupport) { FD(socket(12345, SOCK_STREAM, 0)); }
CASE(socket_einval) { FD(socket(AF_INET, 12345, 0)); }
CASE(socket_eprotonosupport) { FD(socket(AF_INET, SOCK_STREAM, IPPROTO_UDP)); }
CASE(bind_ok) { INT(bind_to(x->tcp, loopback(0))); }
CASE(bind_ebadf) { INT(bind_to(x->bad, loopback(0))); }
CASE(bind_enotsock) { INT(bind_to(x->rd, loopback(0))); }
CASE(bind_eaddrinuse) { INT(bind_to(x->tcp, x->lsn_addr)); }
CASE(bind_einval) { INT(bind_to(x->lsn, loopback(0))); }
CASE(listen_ok) { INT(listen(x->tcp, 4)); }
CASE(listen_ebadf) { INT(listen(x->bad, 4)); }
CASE(listen_enotsock) { INT(listen(x->rd, 4)); }
CASE(listen_eopnotsupp) { INT(listen(x->udp, 4)); }
CASE(connect_ok) { INT(connect_to(x->tcp, x->lsn_addr)); }
CASE(connect_udp) { INT(connect_to(x->udp, x->lsn_addr)); }
CASE(connect_refused) { INT(connect_to(x->tcp, x->dead_addr)); }
CASE(connect_ebadf) { INT(connect_to(x->bad, x->lsn_addr)); }
CASE(connect_enotsock) { INT(connect_to(x->rd, x->lsn_addr)); }
/* clang-format on */
/* accept is an event wait: on the allow-list, it runs on the caller. */
/* clang-format off */
CASE(accept_local) { FD(accept(x->lsn, NULL, NULL)); }
CASE(accept4_local) { FD(accept4(x->lsn, NULL, NULL, SOCK_CLOEXEC)); }
/* clang-format on */

/* What the fixture's sockets are now: bound where, listening, connected to. */
HOOK(post_sock)
{
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	int on = 0;
	socklen_t olen = sizeof(on);

	if (getsockname(x->tcp, (struct sockaddr *)&sin, &len) == 0)
		note(r, " tcp=%s", inet_ntoa(sin.sin_addr));
	if (getsockopt(x->tcp, SOL_SOCKET, SO_ACCEPTCONN, &on, &olen) == 0)
		note(r, " listening=%d", on);
	len = sizeof(sin);
	if (getpeername(x->tcp, (struct sockaddr *)&sin, &len) == 0)
		note(r, " peer=%d", sin.sin_port == x->lsn_addr.sin_port);
	len = sizeof(sin);
	if (getpeername(x->udp, (struct sockaddr *)&sin, &len) == 0)
		note(r, " udp-peer=%d", sin.sin_port == x->lsn_addr.sin_port);
}

#define SOCK_OK(id)	 ENTRY(id, .post = post_sock)
#define SOCK_FAIL(id, e) ENTRY(id, .fail = 1, .err = e, .post = post_sock)

static const struct fcase net_cases[] = {
	OK(socket_tcp),
	OK(socket_unix),
	FAIL(socket_eafnosupport, EAFNOSUPPORT),
	FAIL(socket_einval, EINVAL),
	FAIL(socket_eprotonosupport, EPROTONOSUPPORT),
	SOCK_OK(bind_ok),
	SOCK_FAIL(bind_ebadf, EBADF),
	SOCK_FAIL(bind_enotsock, ENOTSOCK),
	SOCK_FAIL(bind_eaddrinuse, EADDRINUSE),
	SOCK_FAIL(bind_einval, EINVAL),
	SOCK_OK(listen_ok),
	SOCK_FAIL(listen_ebadf, EBADF),
	SOCK_FAIL(listen_enotsock, ENOTSOCK),
	SOCK_FAIL(listen_eopnotsupp, EOPNOTSUPP),
	SOCK_OK(connect_ok),
	SOCK_OK(connect_udp),
	SOCK_FAIL(connect_refused, ECONNREFUSED),
	SOCK_FAIL(connect_ebadf, EBADF),
	SOCK_FAIL(connect_enotsock, ENOTSOCK),
	ENTRY(accept_local, .fail = 1, .err = EAGAIN, .local = 1),
	ENTRY(accept4_local, .fail = 1, .err = EAGAIN, .local = 1),
};

Test(families, net, .timeout = TEST_TIMEOUT)
{
	CHECK_FAMILY("net", net_cases, 0);
}

/* ==== memory ============================================================= */

#define MAPPED(dst, expr) PTR(dst, expr, MAP_FAILED)

/* The protection and lock state of the page at addr, from /proc/self/smaps. */
static void note_vma(struct res *r, const void *addr)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512], perms[8] = "";
	unsigned long lo, hi, a = (unsigned long)addr;
	int in = 0, found = 0;

	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) == 3) {
			in = a >= lo && a < hi;
			found |= in;
			if (in)
				note(r, " perms=%s", perms);
		} else if (in && strncmp(line, "VmFlags:", 8) == 0) {
			note(r, " locked=%d", strstr(line, " lo") != NULL);
		}
	}
	if (!found)
		note(r, " unmapped");
	if (f)
		fclose(f);
}

CASE(mmap_anon)
{
	char *p;
	MAPPED(p,
	       mmap(NULL, 2 * x->page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	if (r->fail)
		return;
	r->mem = p;
	r->memlen = 2 * x->page;
	p[x->page] = 'x'; /* usable by the caller: a page fault, not a call */
	note(r, "zero=%d x=%c", p[0], p[x->page]);
}
CASE(mmap_file)
{
	char *p;
	MAPPED(p, mmap(NULL, x->page, PROT_READ, MAP_PRIVATE, x->rd, 0));
	if (r->fail)
		return;
	r->mem = p;
	r->memlen = x->page;
	note(r, "got=\"%.11s\"", p);
}
CASE(mmap_ebadf)
{
	char *p;
	MAPPED(p, mmap(NULL, x->page, PROT_READ, MAP_PRIVATE, x->bad, 0));
}
CASE(mmap_einval)
{
	char *p;
	MAPPED(p, mmap(NULL, 0, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
}
CASE(mmap_eacces)
{
	char *p;
	MAPPED(p, mmap(NULL, x->page, PROT_WRITE, MAP_SHARED, x->rd, 0));
}
CASE(mmap64_anon)
{
	char *p;
	MAPPED(p, mmap64(NULL, x->page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	if (r->fail)
		return;
	r->mem = p;
	r->memlen = x->page;
	note(r, "zero=%d", p[0]);
}
CASE(munmap_ok)
{
	INT(munmap(x->map, x->page));
}
HOOK(post_munmap)
{
	note_vma(r, x->map);
	x->map = NULL;
}
/* clang-format off */
CASE(munmap_einval) { INT(munmap(x->map + 1, x->page)); }
CASE(mprotect_ok) { INT(mprotect(x->map, x->page, PROT_READ)); }
CASE(mprotect_einval) { INT(mprotect(x->map + 1, x->page, PROT_READ)); }
CASE(mprotect_enomem) { INT(mprotect(x->hole, x->page, PROT_READ)); }
/* clang-format on */
HOOK(post_map_state)
{
	if (x->map)
		note_vma(r, x->map);
}
CASE(madvise_dontneed)
{
	INT(madvise(x->map, x->page, MADV_DONTNEED));
	note(r, "first=%d", x->map[0]); /* zero-fill on demand again */
}
/* clang-format off */
CASE(madvise_einval) { INT(madvise(x->map, x->page, 12345)); }
CASE(madvise_enomem) { INT(madvise(x->hole, x->page, MADV_WILLNEED)); }
#ifndef RTO_SANITIZER_OWNS_MLOCK
CASE(mlock_ok) { INT(mlock(x->map, x->page)); }
CASE(mlock_enomem) { INT(mlock(x->hole, x->page)); }
HOOK(prep_mlock) { cr_assert_eq(mlock(x->map, x->page), 0); }
CASE(munlock_ok) { INT(munlock(x->map, x->page)); }
CASE(munlock_enomem) { INT(munlock(x->hole, x->page)); }
#endif
/* clang-format on */
CASE(msync_ok)
{
	memcpy(x->fmap, "synced", 6);
	INT(msync(x->fmap, x->page, MS_SYNC));
}
/* clang-format off */
CASE(msync_einval) { INT(msync(x->fmap, x->page, MS_SYNC | MS_ASYNC)); }
CASE(msync_enomem) { INT(msync(x->hole, x->page, MS_ASYNC)); }
/* clang-format on */
CASE(mremap_grow)
{
	char *p;
	MAPPED(p, mremap(x->map, x->page, 2 * x->page, MREMAP_MAYMOVE));
	if (r->fail)
		return;
	x->map = NULL;
	r->mem = p;
	r->memlen = 2 * x->page;
	note(r, "kept=%c new=%d", p[0], p[x->page]);
}
/* MREMAP_FIXED: the new address is the variadic fifth argument. */
CASE(mremap_fixed)
{
	char *p;
	MAPPED(p, mremap(x->map, x->page, x->page, MREMAP_MAYMOVE | MREMAP_FIXED, x->hole));
	if (r->fail)
		return;
	x->map = NULL;
	note(r, "moved=%d kept=%c", p == x->hole, p[0]);
}
CASE(mremap_einval)
{
	char *p;
	MAPPED(p, mremap(x->map + 1, x->page, 2 * x->page, MREMAP_MAYMOVE));
}

#define MEM_OK(id)	ENTRY(id, .post = post_map_state)
#define MEM_FAIL(id, e) ENTRY(id, .fail = 1, .err = e, .post = post_map_state)

static const struct fcase memory_cases[] = {
	OK(mmap_anon),
	OK(mmap_file),
	FAIL(mmap_ebadf, EBADF),
	FAIL(mmap_einval, EINVAL),
	FAIL(mmap_eacces, EACCES),
	OK(mmap64_anon),
	OKP(munmap_ok, NULL, post_munmap),
	MEM_FAIL(munmap_einval, EINVAL),
	MEM_OK(mprotect_ok),
	MEM_FAIL(mprotect_einval, EINVAL),
	MEM_FAIL(mprotect_enomem, ENOMEM),
	MEM_OK(madvise_dontneed),
	MEM_FAIL(madvise_einval, EINVAL),
	MEM_FAIL(madvise_enomem, ENOMEM),
#ifndef RTO_SANITIZER_OWNS_MLOCK /* the sanitizer answers them: they reach nothing */
	MEM_OK(mlock_ok),
	MEM_FAIL(mlock_enomem, ENOMEM),
	ENTRY(munlock_ok, .prep = prep_mlock, .post = post_map_state),
	MEM_FAIL(munlock_enomem, ENOMEM),
#endif
	OK(msync_ok),
	FAIL(msync_einval, EINVAL),
	FAIL(msync_enomem, ENOMEM),
	OK(mremap_grow),
	OK(mremap_fixed),
	MEM_FAIL(mremap_einval, EINVAL),
};

Test(families, memory, .timeout = TEST_TIMEOUT)
{
	CHECK_FAMILY("memory", memory_cases, 0);
}

/* ==== process-wide ======================================================= */

static char *const sh_exit7[] = {"sh", "-c", "exit 7", NULL};

/* clang-format off */
CASE(system_status) { INT(system("exit 3")); }
CASE(system_null) { INT(system(NULL)); }
/* clang-format on */
CASE(system_effect)
{
	char cmd[PATH_MAX + 32];
	snprintf(cmd, sizeof(cmd), "echo from-system > '%s'", P("sys"));
	INT(system(cmd));
}
CASE(popen_ok)
{
	FILE *f;
	PTR(f, popen("echo popen-out", "r"), NULL);
	r->pfp = f;
}
HOOK(post_popen)
{
	char buf[64] = "";
	if (r->pfp && !fgets(buf, sizeof(buf), r->pfp))
		strcpy(buf, "(eof)");
	note(r, "line=\"%s\"", buf);
}
CASE(popen_einval)
{
	FILE *f;
	PTR(f, popen("true", "x"), NULL);
}
HOOK(prep_popen)
{
	cr_assert_not_null(r->pfp = popen("exit 5", "r"));
}
CASE(pclose_ok)
{
	INT(pclose(r->pfp));
	r->pfp = NULL;
}
CASE(posix_spawn_ok)
{
	CODE(posix_spawn(&r->pid, "/bin/sh", NULL, NULL, sh_exit7, environ));
}
CASE(posix_spawn_enoent)
{
	pid_t pid;
	CODE(posix_spawn(&pid, P("no-such-program"), NULL, NULL, sh_exit7, environ));
}
CASE(posix_spawnp_ok)
{
	CODE(posix_spawnp(&r->pid, "sh", NULL, NULL, sh_exit7, environ));
}
CASE(posix_spawnp_enoent)
{
	pid_t pid;
	CODE(posix_spawnp(&pid, "rtoffload-no-such-program", NULL, NULL, sh_exit7, environ));
}
CASE(dlopen_ok)
{
	void *h;
	PTR(h, dlopen("libm.so.6", RTLD_NOW), NULL);
	r->dl = h;
	note(r, "cos=%d", h && dlsym(h, "cos") != NULL);
}
/* dlopen's error report is dlerror(), which the caller reads afterwards. */
CASE(dlopen_fail)
{
	void *h;
	PTR(h, dlopen("/nonexistent/librtoffload-none.so", RTLD_NOW), NULL);
	const char *e = dlerror();
	note(r, "dlerror=%s", e ? e : "(none)");
}
HOOK(prep_dlopen)
{
	cr_assert_not_null(r->dl = dlopen("libm.so.6", RTLD_NOW));
}
CASE(dlclose_ok)
{
	INT(dlclose(r->dl));
	r->dl = NULL;
}
static void vsyslog_call(int prio, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsyslog(prio, fmt, ap);
	va_end(ap);
}
static void vsyslog_chk_call(int prio, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	__vsyslog_chk(prio, 1, fmt, ap);
	va_end(ap);
}
/* void: only that it runs, once, through the helper. */
CASE(syslog_runs)
{
	syslog(LOG_USER | LOG_DEBUG, "librtoffload test %d", 1);
	r->calls++;
}
CASE(__syslog_chk_runs)
{
	__syslog_chk(LOG_USER | LOG_DEBUG, 1, "librtoffload test %s", "chk");
	r->calls++;
}
CASE(vsyslog_runs)
{
	vsyslog_call(LOG_USER | LOG_DEBUG, "librtoffload test %d", 3);
	r->calls++;
}
CASE(__vsyslog_chk_runs)
{
	vsyslog_chk_call(LOG_USER | LOG_DEBUG, "librtoffload test %d", 4);
	r->calls++;
}

/* A child starts on the calling thread (children=caller): local. */
#define LOCAL(id) ENTRY(id, .local = 1)

static const struct fcase process_cases[] = {
	LOCAL(system_status),
	LOCAL(system_null),
	LOCAL(system_effect),
	ENTRY(popen_ok, .local = 1, .post = post_popen),
	ENTRY(popen_einval, .local = 1, .fail = 1, .err = EINVAL),
	OKP(pclose_ok, prep_popen, NULL),
	LOCAL(posix_spawn_ok),
	ENTRY(posix_spawn_enoent, .local = 1, .fail = 1, .code = ENOENT),
	LOCAL(posix_spawnp_ok),
	ENTRY(posix_spawnp_enoent, .local = 1, .fail = 1, .code = ENOENT),
	OK(dlopen_ok),
	ENTRY(dlopen_fail, .fail = 1), /* dlerror() is compared */
	OKP(dlclose_ok, prep_dlopen, NULL),
	OK(syslog_runs),
	OK(__syslog_chk_runs),
	OK(vsyslog_runs),
	OK(__vsyslog_chk_runs),
};

Test(families, process, .timeout = TEST_TIMEOUT)
{
	CHECK_FAMILY("process", process_cases, 0);
}
