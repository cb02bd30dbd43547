/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Issue 13's descriptor and IPC rows, each direct and marked through the
 * family harness (tests/harness/families.c): same result, errno and effects.
 */
#include "more.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <mqueue.h>
#include <semaphore.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/timerfd.h>
#include <unistd.h>

/* clang-format off */
CASE(fcntl_getfl) { INT(fcntl(x->wr, F_GETFL)); }
CASE(fcntl_dupfd) { FD(fcntl(x->rd, F_DUPFD_CLOEXEC, 100)); }
CASE(fcntl_setlk)
{
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_len = 1};
	INT(fcntl(x->wr, F_SETLK, &fl));
}
CASE(fcntl_setlkw)
{
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_len = 1};
	INT(fcntl(x->wr, F_SETLKW, &fl));
}
CASE(fcntl_ebadf) { INT(fcntl(x->bad, F_GETFD)); }
CASE(fcntl64_getfd) { INT(fcntl64(x->rd, F_GETFD)); }
CASE(fcntl64_ofd_setlkw)
{
	struct flock fl = {.l_type = F_RDLCK, .l_whence = SEEK_SET, .l_len = 4};
	INT(fcntl64(x->rd, F_OFD_SETLKW, &fl));
}
CASE(ioctl_fionread)
{
	int n = -1;
	INT(ioctl(x->pr, FIONREAD, &n));
	note(r, "n=%d", n);
}
CASE(ioctl_enotty) { INT(ioctl(x->rd, TIOCGWINSZ, &(char[64]){0})); }
CASE(ioctl_ebadf) { INT(ioctl(x->bad, FIONREAD, &(int){0})); }
CASE(flock_ok) { INT(flock(x->wr, LOCK_EX | LOCK_NB)); }
CASE(flock_ebadf) { INT(flock(x->bad, LOCK_EX)); }
CASE(lockf_ok) { INT(lockf(x->wr, F_TLOCK, 0)); }
CASE(lockf_ebadf) { INT(lockf(x->rd, F_TLOCK, 0)); }
CASE(lockf64_ok) { INT(lockf64(x->wr, F_LOCK, 0)); }
CASE(syncfs_ok) { INT(syncfs(x->wr)); }
CASE(syncfs_ebadf) { INT(syncfs(x->bad)); }
CASE(posix_fadvise_ok) { CODE(posix_fadvise(x->rd, 0, 0, POSIX_FADV_SEQUENTIAL)); }
CASE(posix_fadvise_espipe) { CODE(posix_fadvise(x->pr, 0, 0, POSIX_FADV_SEQUENTIAL)); }
CASE(posix_fadvise64_ok) { CODE(posix_fadvise64(x->rd, 0, 0, POSIX_FADV_DONTNEED)); }
CASE(posix_fallocate_ok) { CODE(posix_fallocate(x->wr, 0, 10)); }
CASE(posix_fallocate_ebadf) { CODE(posix_fallocate(x->rd, 0, 10)); }
CASE(posix_fallocate64_ok) { CODE(posix_fallocate64(x->wr, 0, 20)); }
CASE(sendfile_ok) { INT(sendfile(x->wr, x->rd, NULL, 5)); }
CASE(sendfile_ebadf) { INT(sendfile(x->bad, x->rd, NULL, 5)); }
CASE(sendfile64_ok)
{
	off64_t off = 6;
	INT(sendfile64(x->wr, x->rd, &off, 5));
	note(r, "off=%lld", (long long)off);
}
CASE(copy_file_range_ok) { INT(copy_file_range(x->rd, NULL, x->wr, NULL, 11, 0)); }
CASE(copy_file_range_einval) { INT(copy_file_range(x->rd, NULL, x->wr, NULL, 11, 7)); }
CASE(splice_ok) { INT(splice(x->pr, NULL, x->wr, NULL, 4, 0)); }
CASE(splice_einval) { INT(splice(x->rd, NULL, x->wr, NULL, 4, 0)); }
HOOK(pair_pipe) { cr_assert_eq(pipe(r->pair), 0); }
CASE(tee_ok) { INT(tee(x->pr, r->pair[1], 4, 0)); }
CASE(tee_einval) { INT(tee(x->rd, r->pair[1], 4, 0)); }
CASE(inotify_init_ok) { FD(inotify_init()); }
CASE(inotify_init1_ok) { FD(inotify_init1(IN_CLOEXEC)); }
CASE(inotify_init1_einval) { FD(inotify_init1(0x7fff0000)); }
HOOK(prep_inotify) { r->fd = inotify_init1(IN_CLOEXEC); cr_assert_geq(r->fd, 0); }
CASE(inotify_add_watch_ok) { INT(inotify_add_watch(r->fd, x->dir, IN_CREATE)); }
CASE(inotify_add_watch_enoent) { INT(inotify_add_watch(r->fd, P("none"), IN_CREATE)); }
HOOK(prep_watch)
{
	prep_inotify(x, r);
	cr_assert_geq(inotify_add_watch(r->fd, x->dir, IN_CREATE), 0);
}
CASE(inotify_rm_watch_ok) { INT(inotify_rm_watch(r->fd, 1)); }
CASE(inotify_rm_watch_einval) { INT(inotify_rm_watch(r->fd, 99)); }
CASE(epoll_create_ok) { FD(epoll_create(4)); }
CASE(epoll_create_einval) { FD(epoll_create(0)); }
CASE(epoll_create1_ok) { FD(epoll_create1(EPOLL_CLOEXEC)); }
HOOK(prep_epoll) { r->fd = epoll_create1(EPOLL_CLOEXEC); cr_assert_geq(r->fd, 0); }
CASE(epoll_ctl_ok)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.fd = x->pr};
	INT(epoll_ctl(r->fd, EPOLL_CTL_ADD, x->pr, &ev));
}
CASE(epoll_ctl_eperm)
{
	struct epoll_event ev = {.events = EPOLLIN};
	INT(epoll_ctl(r->fd, EPOLL_CTL_ADD, x->rd, &ev));
}
CASE(timerfd_create_ok) { FD(timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC)); }
CASE(timerfd_create_einval) { FD(timerfd_create(12345, 0)); }
HOOK(prep_timerfd) { r->fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC); cr_assert_geq(r->fd, 0); }
CASE(timerfd_settime_ok)
{
	struct itimerspec it = {.it_value = {1000, 0}}, old;
	INT(timerfd_settime(r->fd, 0, &it, &old));
	note(r, "old=%ld", (long)old.it_value.tv_sec);
}
CASE(timerfd_settime_einval)
{
	struct itimerspec it = {.it_value = {0, 2000000000L}};
	INT(timerfd_settime(r->fd, 0, &it, NULL));
}
CASE(timerfd_gettime_ok)
{
	struct itimerspec it;
	INT(timerfd_gettime(r->fd, &it));
	note(r, "armed=%d", it.it_value.tv_sec || it.it_value.tv_nsec);
}
CASE(timerfd_gettime_ebadf) { INT(timerfd_gettime(x->bad, &(struct itimerspec){{0, 0}, {0, 0}})); }
HOOK(prep_eventfd) { r->fd = eventfd(3, EFD_CLOEXEC | EFD_NONBLOCK); cr_assert_geq(r->fd, 0); }
CASE(eventfd_read_ok)
{
	eventfd_t v = 0;
	INT(eventfd_read(r->fd, &v));
	note(r, "v=%llu", (unsigned long long)v);
}
CASE(eventfd_read_ebadf) { INT(eventfd_read(x->bad, &(eventfd_t){0})); }
CASE(eventfd_write_ok) { INT(eventfd_write(r->fd, 4)); }
CASE(eventfd_write_einval) { INT(eventfd_write(r->fd, ~0ULL)); }

/* ---- POSIX shared memory, semaphores, message queues ---------------------------- */

static char ipc_name[64];
static const char *ipc(void)
{
	snprintf(ipc_name, sizeof(ipc_name), "/rtoffload-test-%d", (int)getpid());
	return ipc_name;
}
HOOK(post_shm) { shm_unlink(ipc()); }
CASE(shm_open_ok) { FD(shm_open(ipc(), O_RDWR | O_CREAT | O_EXCL, 0600)); }
CASE(shm_open_enoent) { FD(shm_open(ipc(), O_RDWR, 0)); }
HOOK(post_mq) { mq_unlink(ipc()); }
CASE(mq_open_ok) { FD(mq_open(ipc(), O_RDWR | O_CREAT | O_EXCL | O_NONBLOCK, 0600, NULL)); }
CASE(mq_open_enoent) { FD(mq_open(ipc(), O_RDWR)); }
HOOK(prep_mq)
{
	struct mq_attr at = {.mq_maxmsg = 4, .mq_msgsize = 16};
	r->fd = mq_open(ipc(), O_RDWR | O_CREAT | O_NONBLOCK, 0600, &at);
	cr_assert_geq(r->fd, 0, "mq_open: %s", strerror(errno));
	cr_assert_eq(mq_send(r->fd, "queued", 6, 3), 0);
}
CASE(mq_send_ok) { INT(mq_send(r->fd, "msg", 3, 1)); }
CASE(mq_send_emsgsize) { INT(mq_send(r->fd, "0123456789abcdefX", 17, 1)); }
CASE(mq_receive_ok)
{
	char buf[16] = "";
	unsigned prio = 0;
	INT(mq_receive(r->fd, buf, sizeof(buf), &prio));
	note(r, "%s/%u", buf, prio);
}
CASE(mq_receive_emsgsize) { INT(mq_receive(r->fd, (char[4]){0}, 4, NULL)); }
CASE(mq_timedsend_ok) { INT(mq_timedsend(r->fd, "t", 1, 2, &(struct timespec){0, 0})); }
CASE(mq_timedreceive_ok)
{
	char buf[16] = "";
	INT(mq_timedreceive(r->fd, buf, sizeof(buf), NULL, &(struct timespec){0, 0}));
	note(r, "%s", buf);
}
CASE(mq_close_ok)
{
	INT(mq_close(r->fd));
	r->fd = -1;
}
CASE(mq_close_ebadf) { INT(mq_close(x->bad)); }
CASE(mq_unlink_ok) { INT(mq_unlink(ipc())); }
CASE(mq_unlink_enoent) { INT(mq_unlink(ipc())); }
HOOK(post_sem) { sem_unlink(ipc()); }
static sem_t *sem;
CASE(sem_open_ok)
{
	PTR(sem, sem_open(ipc(), O_CREAT | O_EXCL, 0600, 2), SEM_FAILED);
	int v = -1;
	if (sem != SEM_FAILED)
		sem_getvalue(sem, &v);
	note(r, "value=%d", v);
}
HOOK(post_sem_close)
{
	if (sem != SEM_FAILED)
		sem_close(sem);
	post_sem(x, r);
}
CASE(sem_open_enoent) { PTR(sem, sem_open(ipc(), 0), SEM_FAILED); }
HOOK(prep_sem)
{
	sem = sem_open(ipc(), O_CREAT, 0600, 0);
	cr_assert_neq(sem, SEM_FAILED);
}
CASE(sem_close_ok) { INT(sem_close(sem)); sem = SEM_FAILED; }
CASE(sem_unlink_ok) { INT(sem_unlink(ipc())); }
CASE(sem_unlink_enoent) { INT(sem_unlink(ipc())); }
HOOK(prep_shm) { int fd = shm_open(ipc(), O_RDWR | O_CREAT, 0600); cr_assert_geq(fd, 0); close(fd); }
CASE(shm_unlink_ok) { INT(shm_unlink(ipc())); }
CASE(shm_unlink_enoent) { INT(shm_unlink(ipc())); }
/* clang-format on */

#define LOCAL(id)      ENTRY(id, .local = 1)
#define WITH(id, p, q) ENTRY(id, .prep = p, .post = q)

const struct fcase more_desc_cases[] = {
	LOCAL(fcntl_getfl),
	LOCAL(fcntl_dupfd),
	OK(fcntl_setlk),
	OK(fcntl_setlkw),
	ENTRY(fcntl_ebadf, .fail = 1, .err = EBADF, .local = 1),
	LOCAL(fcntl64_getfd),
	OK(fcntl64_ofd_setlkw),
	OK(ioctl_fionread),
	FAIL(ioctl_enotty, ENOTTY),
	FAIL(ioctl_ebadf, EBADF),
	OK(flock_ok),
	FAIL(flock_ebadf, EBADF),
	OK(lockf_ok),
	FAIL(lockf_ebadf, EBADF),
	OK(lockf64_ok),
	OK(syncfs_ok),
	FAIL(syncfs_ebadf, EBADF),
	OK(posix_fadvise_ok),
	ENTRY(posix_fadvise_espipe, .fail = 1, .code = ESPIPE),
	OK(posix_fadvise64_ok),
	OK(posix_fallocate_ok),
	ENTRY(posix_fallocate_ebadf, .fail = 1, .code = EBADF),
	OK(posix_fallocate64_ok),
	OK(sendfile_ok),
	FAIL(sendfile_ebadf, EBADF),
	OK(sendfile64_ok),
	OK(copy_file_range_ok),
	FAIL(copy_file_range_einval, EINVAL),
	OK(splice_ok),
	FAIL(splice_einval, EINVAL),
	ENTRY(tee_ok, .prep = pair_pipe),
	ENTRY(tee_einval, .fail = 1, .err = EINVAL, .prep = pair_pipe),
	OK(inotify_init_ok),
	OK(inotify_init1_ok),
	FAIL(inotify_init1_einval, EINVAL),
	ENTRY(inotify_add_watch_ok, .prep = prep_inotify),
	ENTRY(inotify_add_watch_enoent, .fail = 1, .err = ENOENT, .prep = prep_inotify),
	ENTRY(inotify_rm_watch_ok, .prep = prep_watch),
	ENTRY(inotify_rm_watch_einval, .fail = 1, .err = EINVAL, .prep = prep_watch),
	OK(epoll_create_ok),
	FAIL(epoll_create_einval, EINVAL),
	OK(epoll_create1_ok),
	ENTRY(epoll_ctl_ok, .prep = prep_epoll),
	ENTRY(epoll_ctl_eperm, .fail = 1, .err = EPERM, .prep = prep_epoll),
	OK(timerfd_create_ok),
	FAIL(timerfd_create_einval, EINVAL),
	ENTRY(timerfd_settime_ok, .prep = prep_timerfd),
	ENTRY(timerfd_settime_einval, .fail = 1, .err = EINVAL, .prep = prep_timerfd),
	ENTRY(timerfd_gettime_ok, .prep = prep_timerfd),
	FAIL(timerfd_gettime_ebadf, EBADF),
	ENTRY(eventfd_read_ok, .prep = prep_eventfd),
	FAIL(eventfd_read_ebadf, EBADF),
	ENTRY(eventfd_write_ok, .prep = prep_eventfd),
	ENTRY(eventfd_write_einval, .fail = 1, .err = EINVAL, .prep = prep_eventfd),
	ENTRY(shm_open_ok, .post = post_shm),
	FAIL(shm_open_enoent, ENOENT),
	ENTRY(mq_open_ok, .post = post_mq),
	FAIL(mq_open_enoent, ENOENT),
	ENTRY(mq_send_ok, .local = 1, .prep = prep_mq, .post = post_mq),
	ENTRY(mq_send_emsgsize, .local = 1, .fail = 1, .err = EMSGSIZE, .prep = prep_mq,
	      .post = post_mq),
	ENTRY(mq_receive_ok, .local = 1, .prep = prep_mq, .post = post_mq),
	ENTRY(mq_receive_emsgsize, .local = 1, .fail = 1, .err = EMSGSIZE, .prep = prep_mq,
	      .post = post_mq),
	ENTRY(mq_timedsend_ok, .local = 1, .prep = prep_mq, .post = post_mq),
	ENTRY(mq_timedreceive_ok, .local = 1, .prep = prep_mq, .post = post_mq),
	WITH(mq_close_ok, prep_mq, post_mq),
	FAIL(mq_close_ebadf, EBADF),
	WITH(mq_unlink_ok, prep_mq, post_mq),
	FAIL(mq_unlink_enoent, ENOENT),
	ENTRY(sem_open_ok, .post = post_sem_close),
	FAIL(sem_open_enoent, ENOENT),
	WITH(sem_close_ok, prep_sem, post_sem),
	WITH(sem_unlink_ok, prep_sem, post_sem_close),
	FAIL(sem_unlink_enoent, ENOENT),
	WITH(shm_unlink_ok, prep_shm, post_shm),
	FAIL(shm_unlink_enoent, ENOENT),
};
const size_t more_desc_count = sizeof(more_desc_cases) / sizeof(more_desc_cases[0]);
