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

#endif /* RTO_PROCFS_H */
