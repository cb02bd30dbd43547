/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fdclass.c: by-descriptor decisions: is this descriptor's kernel path short?.
 *
 * Concurrency: rto_fd_runs_local()/rto_fd_async_path() run on the caller's path: a
 * relaxed load of the cache, or one internal offload to learn the class.
 * rto_fd_born()/forget() run wherever descriptors are made or closed.
 */
#ifndef RTO_FDCLASS_H
#define RTO_FDCLASS_H

#include "rto_base.h"
#include "options.h" /* the fd_local= kinds, RTO_FD_PIPE... */

struct rto_fn;

/* Not a kind of fd_local=: a signalfd, whose calls run on their caller whatever it says. */
#define RTO_FD_THREAD 0x100

/*
 * 1: run locally.  May classify fd first (fstat/fstatfs, offloaded), but
 * never for a strict thread: an unknown descriptor is not local there.
 */
RTO_HIDDEN int rto_fd_runs_local(int fd);
/* The same, if the cache knows (RTO_YES, RTO_NO), else RTO_UNASKED: never learns. */
RTO_HIDDEN int rto_fd_local_known(int fd);
/*
 * 1: fd's file is one of a kernel interface (procfs, sysfs, cgroupfs...:
 * a write is a command).  async.c has every descriptor classified from
 * its first ring on (rto_fd_classify_open, rto_fd_eager); one still
 * unknown (made by a raw system call) is classified as above.
 */
RTO_HIDDEN int rto_fd_kernel_file(int fd);
/* 1: fd's file lies under async_path= (classified as above when unknown). */
RTO_HIDDEN int rto_fd_async_path(int fd);
struct rto_options;
/* fd_local= and mode=, copied at load (before any descriptor is classified). */
RTO_HIDDEN void rto_fd_configure(const struct rto_options *o);
/* fn(fd) is called by rto_fd_forget() from now on (async.c, at load). */
RTO_HIDDEN void rto_fd_on_forget(void (*fn)(int fd));
/* fd was replaced or closed: its cached class is no longer true. */
RTO_HIDDEN void rto_fd_forget(int fd);
RTO_HIDDEN void rto_fd_forget_all(void);
/*
 * fd was just created (kind: RTO_FD_* when the call says what it is, -1
 * when only the kernel knows).  A known kind is cached on the spot; an
 * unknown one is asked of the kernel by a helper, or by an unmarked thread
 * when descriptors are classified where they are born (rto_fd_eager).
 */
RTO_HIDDEN void rto_fd_born(int fd, int kind);
/* newfd was made from oldfd (dup): the same open file, the same class. */
RTO_HIDDEN void rto_fd_born_like(int newfd, int oldfd);
/* From now on unmarked threads classify the descriptors they create. */
RTO_HIDDEN void rto_fd_eager(void);
/* Classify every open descriptor the cache does not know, here (not a call path). */
RTO_HIDDEN void rto_fd_classify_open(void);
/* At load: call is how a descriptor's class is asked of a helper (route.c's rto_call). */
RTO_HIDDEN void rto_fd_init(int (*call)(struct rto_fn *fn, void *args, int fd, FILE *stream,
					unsigned how));
RTO_HIDDEN int rto_fd_of_file(FILE *f);
RTO_HIDDEN extern struct rto_fn rto_fn_fd_classify; /* counted like a call */

#endif /* RTO_FDCLASS_H */
