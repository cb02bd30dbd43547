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
 */
#ifndef RTO_REAL_H
#define RTO_REAL_H

#include <dirent.h>
#include <malloc.h>
#include <netdb.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "shims.h" /* generated */

#endif
