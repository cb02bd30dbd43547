/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Issue 13's path, directory and memory rows through the family harness. */
#include "more.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/time.h>
#include <unistd.h>
#include <utime.h>

extern ssize_t __readlinkat_chk(int dirfd, const char *path, char *buf, size_t len, size_t buflen);

/* A made-up name (mkstemp's XXXXXX) is random: the post hook removes it and notes its shape. */
HOOK(post_made)
{
	const char *base = strrchr(x->path[0], '/') + 1;
	struct stat st;
	int none = lstat(x->path[0], &st) != 0;
	note(r, " made=%zu:%s", strlen(base), none ? "none" : S_ISDIR(st.st_mode) ? "dir" : "file");
	if (!none && rmdir(x->path[0]) != 0)
		unlink(x->path[0]);
}
static char cwd0[PATH_MAX];
HOOK(post_cwd)
{
	char now[PATH_MAX] = "";
	cr_assert(getcwd(now, sizeof(now)));
	note(r, " cwd=%s", strncmp(now, x->dir, strlen(x->dir)) ? now : now + strlen(x->dir));
	cr_assert_eq(chdir(cwd0), 0);
}
HOOK(prep_cwd)
{
	cr_assert(getcwd(cwd0, sizeof(cwd0)));
}
static void note_times(struct res *r, const char *path)
{
	struct stat st;
	if (lstat(path, &st) == 0)
		note(r, " %s:mtime=%lld", strrchr(path, '/') + 1,
		     st.st_mtime < 100000 ? (long long)st.st_mtime : -1LL); /* -1: now, untouched */
}
HOOK(post_times)
{
	note_times(r, P("f"));
	note_times(r, P("w"));
	note_times(r, P("l"));
}
static const struct timeval tv2[2] = {{1000, 0}, {2000, 0}};
static const struct timespec ts2[2] = {{3000, 0}, {4000, 0}};

/* clang-format off */
CASE(mkstemp_ok) { FD(mkstemp((char *)(P("tXXXXXX")))); }
CASE(mkstemp_einval) { FD(mkstemp((char *)(P("t")))); }
CASE(mkstemp64_ok) { FD(mkstemp64((char *)(P("tXXXXXX")))); }
CASE(mkostemp_ok) { FD(mkostemp((char *)(P("tXXXXXX")), O_CLOEXEC)); }
CASE(mkostemp64_ok) { FD(mkostemp64((char *)(P("tXXXXXX")), O_CLOEXEC)); }
CASE(mkstemps_ok) { FD(mkstemps((char *)(P("tXXXXXX.s")), 2)); }
CASE(mkstemps_einval) { FD(mkstemps((char *)(P("tXXXXXX")), 2)); }
CASE(mkstemps64_ok) { FD(mkstemps64((char *)(P("tXXXXXX.s")), 2)); }
CASE(mkostemps_ok) { FD(mkostemps((char *)(P("tXXXXXX.s")), 2, O_CLOEXEC)); }
CASE(mkostemps64_ok) { FD(mkostemps64((char *)(P("tXXXXXX.s")), 2, O_CLOEXEC)); }
CASE(mkdtemp_ok) { char *d; PTR(d, mkdtemp((char *)(P("dXXXXXX"))), NULL); }
CASE(mkdtemp_enoent) { char *d; PTR(d, mkdtemp((char *)(P("none/dXXXXXX"))), NULL); }
CASE(chdir_ok) { INT(chdir(P("d"))); }
CASE(chdir_enoent) { INT(chdir(P("none"))); }
CASE(fchdir_ok) { INT(fchdir(x->ddir)); }
CASE(fchdir_enotdir) { INT(fchdir(x->rd)); }
CASE(fchmod_ok) { INT(fchmod(x->wr, 0604)); }
CASE(fchmod_ebadf) { INT(fchmod(x->bad, 0604)); }
CASE(fchmodat_ok) { INT(fchmodat(x->dirfd, "f", 0640, 0)); }
CASE(fchmodat_enoent) { INT(fchmodat(x->dirfd, "none", 0640, 0)); }
CASE(fchown_ok) { INT(fchown(x->wr, (uid_t)-1, (gid_t)-1)); }
CASE(fchown_ebadf) { INT(fchown(x->bad, 0, 0)); }
CASE(lchown_ok) { INT(lchown(P("l"), (uid_t)-1, (gid_t)-1)); }
CASE(lchown_enoent) { INT(lchown(P("none"), 0, 0)); }
CASE(fchownat_ok) { INT(fchownat(x->dirfd, "f", (uid_t)-1, (gid_t)-1, AT_SYMLINK_NOFOLLOW)); }
CASE(fchownat_einval) { INT(fchownat(x->dirfd, "f", 0, 0, 0x7fff0000)); }
CASE(symlinkat_ok) { INT(symlinkat("f", x->dirfd, "s")); }
CASE(symlinkat_eexist) { INT(symlinkat("f", x->dirfd, "l")); }
CASE(readlinkat_ok)
{
	char buf[32] = "";
	INT(readlinkat(x->dirfd, "l", buf, sizeof(buf)));
	note(r, "%s", buf);
}
CASE(readlinkat_einval) { INT(readlinkat(x->dirfd, "f", (char[8]){0}, 8)); }
CASE(__readlinkat_chk_ok)
{
	char buf[32] = "";
	INT(__readlinkat_chk(x->dirfd, "l", buf, sizeof(buf), sizeof(buf)));
	note(r, "%s", buf);
}
CASE(linkat_ok) { INT(linkat(x->dirfd, "f", x->dirfd, "h", 0)); }
CASE(linkat_eexist) { INT(linkat(x->dirfd, "f", x->dirfd, "w", 0)); }
CASE(renameat2_ok) { INT(renameat2(x->dirfd, "f", x->dirfd, "g", RENAME_NOREPLACE)); }
CASE(renameat2_eexist) { INT(renameat2(x->dirfd, "f", x->dirfd, "w", RENAME_NOREPLACE)); }
CASE(utime_ok) { INT(utime(P("f"), &(struct utimbuf){500, 600})); }
CASE(utime_enoent) { INT(utime(P("none"), NULL)); }
CASE(utimes_ok) { INT(utimes(P("f"), tv2)); }
CASE(lutimes_ok) { INT(lutimes(P("l"), tv2)); }
CASE(futimes_ok) { INT(futimes(x->wr, tv2)); }
CASE(futimes_ebadf) { INT(futimes(x->bad, tv2)); }
CASE(utimensat_ok) { INT(utimensat(x->dirfd, "f", ts2, 0)); }
CASE(utimensat_enoent) { INT(utimensat(x->dirfd, "none", ts2, 0)); }
CASE(futimens_ok) { INT(futimens(x->wr, ts2)); }
CASE(futimens_ebadf) { INT(futimens(x->bad, ts2)); }
CASE(statfs_ok)
{
	struct statfs sf;
	INT(statfs(x->dir, &sf));
	note(r, "type=%lx", (unsigned long)sf.f_type);
}
CASE(statfs_enoent) { struct statfs sf; INT(statfs(P("none"), &sf)); }
CASE(statfs64_ok)
{
	struct statfs64 sf;
	INT(statfs64(x->dir, &sf));
	note(r, "type=%lx", (unsigned long)sf.f_type);
}
CASE(fstatfs_ok)
{
	struct statfs sf;
	INT(fstatfs(x->rd, &sf));
	note(r, "type=%lx", (unsigned long)sf.f_type);
}
CASE(fstatfs_ebadf) { struct statfs sf; INT(fstatfs(x->bad, &sf)); }
CASE(fstatfs64_ok) { struct statfs64 sf; INT(fstatfs64(x->rd, &sf)); note(r, "bs=%ld", (long)sf.f_bsize); }
CASE(statvfs_ok) { struct statvfs sv; INT(statvfs(x->dir, &sv)); note(r, "bs=%lu", sv.f_bsize); }
CASE(statvfs_enoent) { struct statvfs sv; INT(statvfs(P("none"), &sv)); }
CASE(statvfs64_ok) { struct statvfs64 sv; INT(statvfs64(x->dir, &sv)); note(r, "bs=%lu", sv.f_bsize); }
CASE(fstatvfs_ok) { struct statvfs sv; INT(fstatvfs(x->rd, &sv)); note(r, "bs=%lu", sv.f_bsize); }
CASE(fstatvfs_ebadf) { struct statvfs sv; INT(fstatvfs(x->bad, &sv)); }
CASE(fstatvfs64_ok) { struct statvfs64 sv; INT(fstatvfs64(x->rd, &sv)); note(r, "bs=%lu", sv.f_bsize); }
CASE(sync_ok) { sync(); INT(0); }
CASE(mkfifo_ok) { INT(mkfifo(P("p"), 0640)); }
CASE(mkfifo_eexist) { INT(mkfifo(P("f"), 0640)); }
CASE(mkfifoat_ok) { INT(mkfifoat(x->dirfd, "p", 0600)); }
CASE(mknod_ok) { INT(mknod(P("n"), S_IFIFO | 0644, 0)); }
CASE(mknod_eexist) { INT(mknod(P("f"), S_IFIFO | 0644, 0)); }
CASE(mknodat_ok) { INT(mknodat(x->dirfd, "n", S_IFREG | 0600, 0)); }
CASE(umask_ok)
{
	INT(umask(022));
	r->fail = 0;
}
CASE(getdents64_ok)
{
	char buf[4096];
	INT(getdents64(x->ddir, buf, sizeof(buf)));
	int n = 0;
	for (long off = 0; off < r->ret; n++)
		off += ((struct dirent64 *)(buf + off))->d_reclen;
	note(r, "entries=%d", n);
	r->ret = r->ret > 0;
}
CASE(getdents64_enotdir) { INT(getdents64(x->rd, (char[512]){0}, 512)); }
CASE(posix_madvise_ok) { CODE(posix_madvise(x->map, x->page, POSIX_MADV_WILLNEED)); }
CASE(posix_madvise_einval) { CODE(posix_madvise(x->map + 1, x->page, POSIX_MADV_WILLNEED)); }
CASE(mincore_ok)
{
	unsigned char vec[1] = {0};
	INT(mincore(x->map, x->page, vec));
	note(r, "resident=%d", vec[0] & 1);
}
CASE(mincore_enomem) { INT(mincore(x->hole, x->page, (unsigned char[1]){0})); }
/* clang-format on */

#define MADE(id)	 ENTRY(id, .post = post_made)
#define MADE_FAIL(id, e) ENTRY(id, .fail = 1, .err = e, .post = post_made)
#define CWD(id)		 ENTRY(id, .prep = prep_cwd, .post = post_cwd)
#define CWD_FAIL(id, e)	 ENTRY(id, .fail = 1, .err = e, .prep = prep_cwd, .post = post_cwd)
#define TIMES(id)	 ENTRY(id, .post = post_times)

const struct fcase more_path_cases[] = {
	MADE(mkstemp_ok),
	MADE_FAIL(mkstemp_einval, EINVAL),
	MADE(mkstemp64_ok),
	MADE(mkostemp_ok),
	MADE(mkostemp64_ok),
	MADE(mkstemps_ok),
	MADE_FAIL(mkstemps_einval, EINVAL),
	MADE(mkstemps64_ok),
	MADE(mkostemps_ok),
	MADE(mkostemps64_ok),
	MADE(mkdtemp_ok),
	MADE_FAIL(mkdtemp_enoent, ENOENT),
	CWD(chdir_ok),
	CWD_FAIL(chdir_enoent, ENOENT),
	CWD(fchdir_ok),
	CWD_FAIL(fchdir_enotdir, ENOTDIR),
	OK(fchmod_ok),
	FAIL(fchmod_ebadf, EBADF),
	OK(fchmodat_ok),
	FAIL(fchmodat_enoent, ENOENT),
	OK(fchown_ok),
	FAIL(fchown_ebadf, EBADF),
	OK(lchown_ok),
	FAIL(lchown_enoent, ENOENT),
	OK(fchownat_ok),
	FAIL(fchownat_einval, EINVAL),
	OK(symlinkat_ok),
	FAIL(symlinkat_eexist, EEXIST),
	OK(readlinkat_ok),
	FAIL(readlinkat_einval, EINVAL),
	OK(__readlinkat_chk_ok),
	OK(linkat_ok),
	FAIL(linkat_eexist, EEXIST),
	OK(renameat2_ok),
	FAIL(renameat2_eexist, EEXIST),
	TIMES(utime_ok),
	FAIL(utime_enoent, ENOENT),
	TIMES(utimes_ok),
	TIMES(lutimes_ok),
	TIMES(futimes_ok),
	FAIL(futimes_ebadf, EBADF),
	TIMES(utimensat_ok),
	FAIL(utimensat_enoent, ENOENT),
	TIMES(futimens_ok),
	FAIL(futimens_ebadf, EBADF),
	OK(statfs_ok),
	FAIL(statfs_enoent, ENOENT),
	OK(statfs64_ok),
	OK(fstatfs_ok),
	FAIL(fstatfs_ebadf, EBADF),
	OK(fstatfs64_ok),
	OK(statvfs_ok),
	FAIL(statvfs_enoent, ENOENT),
	OK(statvfs64_ok),
	OK(fstatvfs_ok),
	FAIL(fstatvfs_ebadf, EBADF),
	OK(fstatvfs64_ok),
	OK(sync_ok),
	OK(mkfifo_ok),
	FAIL(mkfifo_eexist, EEXIST),
	OK(mkfifoat_ok),
	OK(mknod_ok),
	FAIL(mknod_eexist, EEXIST),
	OK(mknodat_ok),
	OK(umask_ok),
	OK(getdents64_ok),
	FAIL(getdents64_enotdir, ENOTDIR),
	OK(posix_madvise_ok),
	ENTRY(posix_madvise_einval, .fail = 1, .code = EINVAL),
	OK(mincore_ok),
	FAIL(mincore_enomem, ENOMEM),
};
const size_t more_path_count = sizeof(more_path_cases) / sizeof(more_path_cases[0]);
