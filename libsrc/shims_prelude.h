/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the generated wrappers (shims.c) need: the libc types of calls.tbl. */
#ifndef RTO_SHIMS_PRELUDE_H
#define RTO_SHIMS_PRELUDE_H

#undef _FORTIFY_SOURCE /* we define __read_chk and friends ourselves */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#ifndef _LARGEFILE64_SOURCE
#define _LARGEFILE64_SOURCE
#endif
#include "rto.h"

#include <dirent.h>
#include <errno.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <netdb.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <syslog.h>
#include <unistd.h>
#include <grp.h>
#include <locale.h>
#include <mqueue.h>
#include <poll.h>
#include <pwd.h>
#include <semaphore.h>
#include <shadow.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/sendfile.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/sysinfo.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <utime.h>
#include <wchar.h>

#include "shims.h" /* generated: rto_real_* and rto_fn_* */

/* The descriptor of a directory stream, for "forget:dir:D" (NULL: -1). */
static inline int rto_fd_of_dir(DIR *d)
{
	return d ? dirfd(d) : -1;
}

/* glibc may define these as macros over the functions we wrap. */
#undef putc
#undef getc
#undef putchar
#undef putc_unlocked
#undef putchar_unlocked
#undef fputc_unlocked
#undef fread_unlocked
#undef fwrite_unlocked
#undef getc_unlocked
#undef getchar_unlocked
#undef fgetc_unlocked
#undef getchar

#endif
