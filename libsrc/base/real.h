/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The real functions behind the library's exported names: rto_real_NAME for
 * every line of shim-gen/calls.tbl, generated into shims.h.
 *
 * This is the one way the library calls libc.  Inside libsrc/, a call to a
 * name the library exports (mmap, fclose, pthread_sigmask...) would go
 * through the PLT back into our own interceptor; rto_real_NAME goes to the
 * next definition (libc, or a sanitizer runtime first in the load order).
 * tests/routing checks that librtoffload.so has no PLT slot for a name it
 * exports.  A pointer starts at a stub that resolves it on first use, so a
 * call made before our constructor works; rto_resolve_all() (init.c) fills
 * them all before any thread is marked, so a realtime caller never runs
 * dlsym.  Variadic calls start NULL: use RTO_HAND_REAL(NAME).
 *
 * Concurrency: each pointer is written with CMM_STORE_SHARED, by its stub
 * on first use (any thread, before the constructor: every writer stores
 * the same value) or by rto_resolve_all() in the constructor, and is
 * read-only once a thread can be marked: the caller's path reads it with
 * one load.
 */
#ifndef RTO_REAL_H
#define RTO_REAL_H

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <locale.h>
#include <malloc.h>
#include <mqueue.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <pwd.h>
#include <sched.h>
#include <semaphore.h>
#include <shadow.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/sysinfo.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>
#include <utime.h>
#include <wchar.h>

#include "rto_base.h"
#include "fn.h"
#include "resolve.h"
#include "shims.h" /* generated */

/*
 * The library's own mutexes.  Under ThreadSanitizer the tool must see them
 * (they order what they protect), so there they go through the first
 * definition in the lookup order, the tool's interceptor, which passes them
 * on to ours and ours to libc; tests/routing/check_exports.sh allows those
 * slots in a ThreadSanitizer build only.  Everywhere else, libc's.
 */
#ifdef __SANITIZE_THREAD__
#define rto_mutex_lock(m)	      pthread_mutex_lock(m)
#define rto_mutex_trylock(m)	      pthread_mutex_trylock(m)
#define rto_mutex_timedlock(m, until) pthread_mutex_timedlock(m, until)
#define rto_mutex_unlock(m)	      pthread_mutex_unlock(m)
#else
#define rto_mutex_lock(m)	      rto_real_pthread_mutex_lock(m)
#define rto_mutex_trylock(m)	      rto_real_pthread_mutex_trylock(m)
#define rto_mutex_timedlock(m, until) rto_real_pthread_mutex_timedlock(m, until)
#define rto_mutex_unlock(m)	      rto_real_pthread_mutex_unlock(m)
#endif

#endif
