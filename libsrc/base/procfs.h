/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * procfs.c: a small file of /proc read in one go, by raw system calls.
 *
 * Concurrency: no state: any thread, but not the caller's path (it makes
 * system calls: open, read, close).
 */
#ifndef RTO_PROCFS_H
#define RTO_PROCFS_H

#include "rto_base.h"

#include <stddef.h>

/*
 * Read what path holds into buf, at most size - 1 bytes, and end it with a
 * NUL: its length, or -1 (errno set) when it cannot be opened or read.
 * Any thread; open, read and close are raw system calls (the library's
 * own wrappers are not for it), so a helper's or the live thread's read
 * takes the lowest free descriptor number only for that moment.
 */
RTO_HIDDEN long rto_procfs_read(const char *path, char *buf, size_t size);
/* /proc/PID/task/TID/FILE ("stat", "comm", "syscall"), read so; pid 0: this process. */
RTO_HIDDEN long rto_procfs_task(pid_t pid, pid_t tid, const char *file, char *buf, size_t size);
/* A thread's name (its comm) without the newline, "?" when it cannot be read; pid 0: ours. */
RTO_HIDDEN void rto_procfs_comm(pid_t pid, pid_t tid, char *name, size_t size);
/*
 * Field n of a task's stat line, numbered as proc(5) numbers them (3: the
 * state letter, 10: minflt, 39: processor), or NULL.  The name (field 2)
 * may hold spaces and parentheses: it ends at the last ')'.
 */
RTO_HIDDEN const char *rto_procfs_stat_field(const char *line, int n);

#endif /* RTO_PROCFS_H */
