/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The memory a helper runs on: the loaded modules' code and data (the
 * program, libc, ld.so, this library...) and the library's threads'
 * stacks.  A call that unmaps, moves or protects any of it (stress-ng's
 * vm-segv unmaps the whole address space) would end the helper that runs
 * it, and the process with it, where the caller alone would have met the
 * fault on its return: such a call runs on its caller (route.c).
 *
 * The modules are taken once, in the constructor (dl_iterate_phdr takes
 * ld.so's lock, never on a caller's path); one loaded later by dlopen()
 * is not in the list.  Concurrency: the table is written before any
 * helper starts and read-only afterwards; the stacks are own_thread.c's.
 */
#include "rto_base.h"
#include "own_memory.h"
#include "own_thread.h"

#include <link.h>
#include <stdint.h>

#define MODULES_MAX 64

static struct {
	uintptr_t lo, hi;
} module[MODULES_MAX];
static int modules;

static int add_module(struct dl_phdr_info *info, size_t size, void *data)
{
	uintptr_t lo = UINTPTR_MAX, hi = 0;

	(void)size;
	(void)data;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;
		if (a < lo)
			lo = a;
		if (a + ph->p_memsz > hi)
			hi = a + ph->p_memsz;
	}
	if (lo < hi && modules < MODULES_MAX) {
		module[modules].lo = lo;
		module[modules].hi = hi;
		modules++;
	}
	return 0;
}

void rto_own_memory_init(void)
{
	modules = 0;
	dl_iterate_phdr(add_module, NULL);
}

int rto_own_memory_overlaps(const void *addr, size_t len)
{
	uintptr_t lo = (uintptr_t)addr, hi = lo + len;

	if (hi < lo) /* wraps: up to the top */
		hi = UINTPTR_MAX;
	for (int i = 0; i < modules; i++)
		if (lo < module[i].hi && module[i].lo < hi)
			return 1;
	return rto_own_stacks_overlap(lo, hi);
}
