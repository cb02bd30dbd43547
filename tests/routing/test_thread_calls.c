/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The "thread" rows of calls.tbl: calls that act on the calling thread are
 * never routed.  In a marked thread each runs on that thread (its effect is
 * the caller's, not a helper's) and returns what it returns unmarked,
 * errno included.
 */
#include "harness.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <syslog.h>
#include <unistd.h>

extern void __vsyslog_chk(int prio, int flag, const char *fmt, va_list ap);
extern void (*bsd_signal(int sig, void (*handler)(int)))(int); /* XSI, not in glibc's headers */

/* The calling thread's blocked signals, as the kernel shows them. */
static unsigned long long sigblk_of(pid_t tid)
{
	char path[64], line[256];
	unsigned long long v = 0;

	snprintf(path, sizeof(path), "/proc/self/task/%d/status", (int)tid);
	FILE *f = fopen(path, "r");
	cr_assert_not_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "SigBlk: %llx", &v) == 1)
			break;
	fclose(f);
	return v;
}

struct masks {
	unsigned long long after_block, after_unblock;
	int bad_ret, bad_errno;
};

static void sigprocmask_job(void *arg)
{
	struct masks *m = arg;
	sigset_t s;

	sigemptyset(&s);
	sigaddset(&s, SIGUSR2);
	cr_assert_eq(sigprocmask(SIG_BLOCK, &s, NULL), 0);
	m->after_block = sigblk_of(tid_self());
	cr_assert_eq(sigprocmask(SIG_UNBLOCK, &s, NULL), 0);
	m->after_unblock = sigblk_of(tid_self());
	errno = 0;
	m->bad_ret = sigprocmask(12345, &s, NULL);
	m->bad_errno = errno;
}

Test(thread_calls, sigprocmask_changes_the_callers_mask, .timeout = TEST_TIMEOUT)
{
	struct masks marked = {0}, plain = {0};
	unsigned long long bit = 1ULL << (SIGUSR2 - 1);

	run_marked(sigprocmask_job, &marked);
	run_unmarked(sigprocmask_job, &plain);
	cr_assert(marked.after_block & bit, "SIGUSR2 blocked on the marked thread itself");
	cr_assert_not(marked.after_unblock & bit);
	cr_assert_eq(marked.bad_ret, plain.bad_ret);
	cr_assert_eq(marked.bad_errno, plain.bad_errno);
	cr_assert_eq(marked.bad_errno, EINVAL);
}

static volatile sig_atomic_t caught;
static pid_t caught_tid;

static void on_usr1(int sig)
{
	caught = sig;
	caught_tid = tid_self();
}

struct handler_run {
	int installed, raised;
	pid_t tid, handler_tid;
	void (*old)(int);
};

static void bsd_signal_job(void *arg)
{
	struct handler_run *h = arg;

	caught = 0;
	h->tid = tid_self();
	h->installed = bsd_signal(SIGUSR1, on_usr1) != SIG_ERR;
	h->raised = raise(SIGUSR1) == 0 && caught == SIGUSR1;
	h->handler_tid = caught_tid;
	h->old = bsd_signal(SIGUSR1, SIG_DFL);
}

Test(thread_calls, bsd_signal_installs_the_programs_handler, .timeout = TEST_TIMEOUT)
{
	struct handler_run h = {0};

	run_marked(bsd_signal_job, &h);
	cr_assert(h.installed);
	cr_assert(h.raised, "the handler ran for raise()");
	cr_assert_eq(h.handler_tid, h.tid, "on the marked thread");
	cr_assert_eq((void *)h.old, (void *)on_usr1, "the program sees its own handler back");
}

struct param_run {
	int ret, err;
};

static void sched_setparam_job(void *arg)
{
	struct param_run *p = arg;
	struct sched_param sp = {.sched_priority = 99999}; /* out of range for SCHED_OTHER */

	errno = 0;
	p->ret = sched_setparam(0, &sp);
	p->err = errno;
}

static void sched_setscheduler_job(void *arg)
{
	struct param_run *p = arg;
	struct sched_param sp = {.sched_priority = 12345}; /* beyond SCHED_FIFO's range */

	errno = 0;
	p->ret = sched_setscheduler(0, SCHED_FIFO, &sp);
	p->err = errno;
}

static void same_failure(job_fn job)
{
	struct param_run marked = {0}, plain = {0};

	run_marked(job, &marked);
	run_unmarked(job, &plain);
	cr_assert_eq(marked.ret, -1);
	cr_assert_eq(marked.ret, plain.ret);
	cr_assert_eq(marked.err, plain.err);
	cr_assert_eq(marked.err, EINVAL);
}

Test(thread_calls, sched_setparam_fails_as_unmarked, .timeout = TEST_TIMEOUT)
{
	same_failure(sched_setparam_job);
}

Test(thread_calls, sched_setscheduler_fails_as_unmarked, .timeout = TEST_TIMEOUT)
{
	same_failure(sched_setscheduler_job);
}

static void vsyslog_chk_call(int prio, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	__vsyslog_chk(prio, 1, fmt, ap);
	va_end(ap);
}

static void vsyslog_chk_job(void *arg)
{
	uint64_t *offloaded = arg;
	uint64_t before = offloaded_now();

	vsyslog_chk_call(LOG_USER | LOG_DEBUG, "librtoffload test %s", "vchk");
	*offloaded = offloaded_now() - before;
}

/* A "hand" row, not a thread row: it is routed, to a helper. */
Test(thread_calls, vsyslog_chk_is_offloaded, .timeout = TEST_TIMEOUT)
{
	uint64_t offloaded = 0;

	run_marked(vsyslog_chk_job, &offloaded);
	cr_assert_geq(offloaded, 1);
}

struct page_blocks {
	int aligned, usable;
};

static void valloc_job(void *arg)
{
	struct page_blocks *b = arg;
	long page = sysconf(_SC_PAGESIZE);
	void *v = valloc(100), *pv = pvalloc(100);

	b->aligned = v && pv && (uintptr_t)v % (uintptr_t)page == 0 &&
		     (uintptr_t)pv % (uintptr_t)page == 0;
	b->usable = pv && malloc_usable_size(pv) >= (size_t)page; /* pvalloc rounds up */
	free(v);
	free(pv);
}

/* "alloc" rows: served on the calling thread, page-aligned as unmarked. */
Test(thread_calls, valloc_and_pvalloc_are_page_aligned, .timeout = TEST_TIMEOUT)
{
	struct page_blocks marked = {0}, plain = {0};

	run_marked(valloc_job, &marked);
	run_unmarked(valloc_job, &plain);
	cr_assert(plain.aligned && plain.usable);
	cr_assert(marked.aligned, "marked: not page-aligned");
	cr_assert(marked.usable, "marked: pvalloc did not round up to a page");
}

/*
 * A call that would unmap, move or protect memory a helper runs on (the
 * loaded modules' code, the library's threads' stacks) runs on its caller,
 * who alone would have met the fault: stress-ng's vm-segv unmaps the whole
 * address space of a child, and on a helper that ended the helper, where
 * plainly the child's own thread faulted on its return.  Witness: a
 * harmless madvise(MADV_NORMAL) on a page of libc's code is not offloaded,
 * one on a page of its own is.
 */
struct range_calls {
	uint64_t on_code, on_own;
	int ret_code, ret_own;
};

static void range_job(void *arg)
{
	struct range_calls *r = arg;
	long page = sysconf(_SC_PAGESIZE);
	void *code = (void *)((uintptr_t)&printf & ~(uintptr_t)(page - 1));
	void *own = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
	uint64_t before = offloaded_now();

	r->ret_code = madvise(code, (size_t)page, MADV_NORMAL);
	r->on_code = offloaded_now() - before;
	before = offloaded_now();
	r->ret_own = madvise(own, (size_t)page, MADV_NORMAL);
	r->on_own = offloaded_now() - before;
	munmap(own, (size_t)page);
}

Test(thread_calls, a_range_holding_a_helpers_code_stays_on_the_caller, .timeout = TEST_TIMEOUT)
{
	struct range_calls r = {0};

	run_marked(range_job, &r);
	cr_expect(r.ret_code == 0 && r.ret_own == 0, "madvise: %d on code, %d on its own page",
		  r.ret_code, r.ret_own);
	cr_expect_eq(r.on_code, 0, "madvise on libc's code was offloaded (%llu calls)",
		     (unsigned long long)r.on_code);
	cr_expect_eq(r.on_own, 1, "madvise on the thread's own page: %llu offloaded, 1 expected",
		     (unsigned long long)r.on_own);
}
