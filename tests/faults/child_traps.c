/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Scenarios for traps: mlock=1, prefault_stack_kb=, faults while marked.
 *
 *   vmlck DIR                 a marked thread makes an offloaded call; prints
 *                             ran=1 vmlck_kb=N (VmLck of /proc/self/status)
 *   faults MARKED NPAGES      a thread (marked if MARKED=1) touches NPAGES
 *                             fresh pages mapped by the main thread; prints
 *                             minor=N (the stats' minor_faults delta around
 *                             the touching)
 *   stack_faults KB           a marked thread uses KB KiB of fresh stack
 *                             right after its mark; prints minor=N
 *   fault_read PAGES          a marked thread "ctl" runs fault_loop():
 *                             read_fresh() reads PAGES pages of /dev/zero
 *                             (a character device: the read runs on the
 *                             thread) into a fresh mapping, twice (the
 *                             second time the pages are there), and
 *                             read_again() reads them once more; prints
 *                             pid=N tid=N failed=N
 *
 * Transparent huge pages are turned off on every region touched (madvise),
 * so one touched page is one fault, whatever the system's THP setting.
 */
#include "child.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define PAGE 4096

static void *fresh_region(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED || madvise(p, bytes, MADV_NOHUGEPAGE) != 0)
		fail("mmap/madvise %zu bytes", bytes);
	return p;
}

static long vmlck_kb(void)
{
	char *status = read_whole("/proc/self/status", NULL);
	char *line = status ? strstr(status, "\nVmLck:") : NULL;
	long kb = line ? strtol(line + 7, NULL, 10) : -1;
	free(status);
	return kb;
}

struct offloaded_call {
	char path[PATH_MAX];
	long ret;
};

static void one_offload(void *arg)
{
	struct offloaded_call *c = arg;
	c->ret = mkdir(c->path, 0755);
}

int sc_vmlck(int argc, char **argv)
{
	struct offloaded_call c;

	if (argc < 1)
		fail("usage: vmlck DIR");
	path_join(c.path, argv[0], "vmlck.dir");
	on_thread("ctl", 1, one_offload, &c);
	rmdir(c.path);
	say("ran=%d vmlck_kb=%ld", c.ret == 0, vmlck_kb());
	return 0;
}

/* ---- faults ------------------------------------------------------------------------ */

struct touch {
	volatile char *region;
	size_t pages;
	uint64_t minor;
};

static void touch_pages(void *arg)
{
	struct touch *t = arg;
	uint64_t before = stats_now().minor_faults;

	for (size_t i = 0; i < t->pages; i++)
		t->region[i * PAGE] = 1;
	t->minor = stats_now().minor_faults - before;
}

/* A thread stack of our own: THP off, so its faults are page by page too. */
static void own_stack(struct thread *t, size_t bytes)
{
	t->stack = fresh_region(bytes);
	t->stack_size = bytes;
}

int sc_faults(int argc, char **argv)
{
	struct touch t;

	if (argc < 2)
		fail("usage: faults MARKED NPAGES");
	t.pages = (size_t)atol(argv[1]);
	t.region = fresh_region(t.pages * PAGE);
	struct thread th = {.name = "ctl", .mark = atoi(argv[0]), .fn = touch_pages, .arg = &t};
	own_stack(&th, 1 << 20);
	thread_start(&th);
	thread_join(&th);
	say("minor=%lu", t.minor);
	return 0;
}

/* ---- stack faults ---------------------------------------------------------------------- */

struct stack_use {
	size_t kb;
	uint64_t minor;
};

/* Touch kb KiB of stack below this frame, a byte per page. */
static __attribute__((noinline)) void use_stack(size_t kb)
{
	volatile char *p = __builtin_alloca(kb * 1024);
	for (size_t i = 0; i < kb * 1024; i += PAGE)
		p[i] = 1;
}

static void stack_thread(void *arg)
{
	struct stack_use *s = arg;
	uint64_t before = stats_now().minor_faults;

	use_stack(s->kb);
	s->minor = stats_now().minor_faults - before;
}

int sc_stack_faults(int argc, char **argv)
{
	struct stack_use s;

	if (argc < 1)
		fail("usage: stack_faults KB");
	s.kb = (size_t)atol(argv[0]);
	struct thread th = {.name = "ctl", .mark = 1, .fn = stack_thread, .arg = &s};
	own_stack(&th, 4 << 20);
	thread_start(&th);
	thread_join(&th);
	say("minor=%lu", s.minor);
	return 0;
}

/* ---- faults at a wrapped call ------------------------------------------------------------ */

struct fault_read {
	int fd;
	char *buf;
	size_t len;
	pid_t tid;
	int failed;
};

void read_fresh(struct fault_read *f);
void read_again(struct fault_read *f);
void fault_loop(struct fault_read *f);

__attribute__((noinline)) void read_fresh(struct fault_read *f)
{
	f->failed += read(f->fd, f->buf, f->len) != (ssize_t)f->len;
}

__attribute__((noinline)) void read_again(struct fault_read *f)
{
	f->failed += read(f->fd, f->buf, f->len) != (ssize_t)f->len;
}

/* Two loops: one call site each. */
__attribute__((noinline)) void fault_loop(struct fault_read *f)
{
	for (int i = 0; i < 2; i++)
		read_fresh(f);
	for (int i = 0; i < 1; i++)
		read_again(f);
}

static void fault_thread(void *arg)
{
	struct fault_read *f = arg;

	f->tid = tid_now();
	fault_loop(f);
}

int sc_fault_read(int argc, char **argv)
{
	static struct fault_read f;

	if (argc < 1)
		fail("usage: fault_read PAGES");
	f.len = (size_t)atol(argv[0]) * PAGE;
	f.buf = fresh_region(f.len);
	f.fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	if (f.fd < 0)
		fail("open /dev/zero");
	struct thread th = {.name = "ctl", .mark = 1, .fn = fault_thread, .arg = &f};
	own_stack(&th, 1 << 20);
	thread_start(&th);
	thread_join(&th);
	say("pid=%d tid=%d failed=%d", (int)getpid(), (int)f.tid, f.failed);
	return 0;
}
