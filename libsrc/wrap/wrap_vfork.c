/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * vfork(): the child runs on its parent's stack and thread-local state
 * until it execs or exits, but with its own descriptor table.  Its calls
 * must not be offloaded: the parent's helpers would run them on the
 * parent's descriptors (python's subprocess, gcc -pipe: close/dup2 in the
 * child).  So the calling thread goes BUSY (direct) around vfork, and the
 * parent restores it when it resumes.
 *
 * A C wrapper cannot do this: vfork returns twice on one stack, and the
 * child's return would wreck the wrapper's frame before the parent uses
 * it.  Like glibc's own vfork, the return address is kept in a register
 * across the system call.  x86-64 only; elsewhere vfork is not wrapped
 * and a marked thread should not call it (posix_spawn is fine).
 */
#include "options.h"
#include "rto_fast.h"
#include "route_state.h"

#include <errno.h>

RTO_HIDDEN void rto_vfork_enter(void);
RTO_HIDDEN long rto_vfork_leave(long ret);

static __thread unsigned char route_before_vfork RTO_TLS;

void rto_vfork_enter(void)
{
	rto_self.vforking = 1; /* the child's descriptors are not ours: fdclass.c learns none */
	route_before_vfork = rto_route_go_direct();
}

/* In the parent (or on failure): put the mark back, turn -errno into errno. */
long rto_vfork_leave(long ret)
{
	rto_route_resume(route_before_vfork);
	rto_self.vforking = 0;
	if (ret < 0 && ret > -4096) {
		errno = (int)-ret;
		return -1;
	}
	return ret;
}

#if defined(__x86_64__)
__asm__(".text\n"
	".globl vfork\n"
	".type vfork,@function\n"
	"vfork:\n"
	"	sub $8, %rsp\n" /* keep the stack 16-byte aligned for the call */
	"	call rto_vfork_enter\n"
	"	add $8, %rsp\n"
	"	pop %rdi\n"	 /* the return address, out of the shared stack */
	"	mov $58, %eax\n" /* SYS_vfork */
	"	syscall\n"
	"	push %rdi\n"
	"	test %rax, %rax\n"
	"	jz 1f\n"	  /* the child: return 0, still BUSY */
	"	mov %rax, %rdi\n" /* the parent, or an error */
	"	sub $8, %rsp\n"
	"	call rto_vfork_leave\n"
	"	add $8, %rsp\n"
	"1:	ret\n"
	".size vfork, .-vfork\n");
#endif
