/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A clone(CLONE_VM) child without CLONE_FILES (issue 28, finding 3; what
 * stress-ng's vm-rw does): it shares the parent's memory, and without
 * CLONE_SETTLS its TLS too, so it looks like the marked parent to the
 * library; but its descriptor table is a copy.  Its close() of its copy
 * of a pipe end must act on its table, not run on the parent's helper in
 * the parent's: the parent's read of that end must still work.
 * Through glibc's clone() and through syscall(SYS_clone) style raw use
 * alike, the child's calls run directly.
 */
#include "harness.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHILD_STACK (256 * 1024)

struct vm_case {
	int p[2];
	int child_close; /* what the child's close gave */
	int wait_rc, status;
	ssize_t got; /* the parent's read after the child exited */
	int err;
};

static int child_main(void *arg)
{
	struct vm_case *c = arg;
	c->child_close = close(c->p[0]); /* its own copy */
	return 0;
}

static void clone_job(void *arg)
{
	struct vm_case *c = arg;
	char *stack = malloc(CHILD_STACK);
	char buf[8];

	if (!stack || pipe(c->p) != 0) {
		c->got = -2;
		return;
	}
	int pid = clone(child_main, stack + CHILD_STACK, CLONE_VM | SIGCHLD, c);
	c->wait_rc = pid > 0 ? (int)waitpid(pid, &c->status, 0) : -1;
	if (write(c->p[1], "x", 1) != 1) {
		c->got = -3;
	} else {
		errno = 0;
		c->got = read(c->p[0], buf, sizeof(buf));
		c->err = errno;
	}
	close(c->p[0]);
	close(c->p[1]);
	free(stack);
}

Test(clone_vm, child_without_clone_files_closes_its_own_descriptor, .timeout = 60)
{
	struct vm_case d = {0}, m = {0};

	start_helpers();
	run_unmarked(clone_job, &d);
	run_marked(clone_job, &m);
	cr_assert_gt(d.wait_rc, 0);
	cr_expect_eq(d.got, 1, "unmarked: read %zd errno %d", d.got, d.err);
	cr_assert_gt(m.wait_rc, 0, "waitpid: %s", strerror(errno));
	cr_expect_eq(m.child_close, 0, "the child's close: %d", m.child_close);
	cr_expect_eq(m.got, 1,
		     "marked: the parent's read of the end its CLONE_VM child closed gave %zd "
		     "errno %d (%s)",
		     m.got, m.err, strerror(m.err));
}
