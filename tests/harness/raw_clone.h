/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fork() by a raw clone() system call, behind glibc's back: no atfork
 * handler runs, so the library learns of the child only from its own
 * means (MADV_WIPEONFORK).  Under a sanitizer the call is announced with
 * the runtime's system call hooks (__sanitizer_syscall_pre/post_fork of
 * sanitizer/linux_syscall_hooks.h), as any program that makes raw system
 * calls under one must: ThreadSanitizer then takes its locks around it and
 * knows the child.  Without a sanitizer the weak hooks are absent.
 */
#ifndef RTO_TEST_RAW_CLONE_H
#define RTO_TEST_RAW_CLONE_H

#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

void __sanitizer_syscall_pre_impl_fork(void) __attribute__((weak));
void __sanitizer_syscall_post_impl_fork(long res) __attribute__((weak));

static inline long raw_clone_fork(void)
{
	if (__sanitizer_syscall_pre_impl_fork)
		__sanitizer_syscall_pre_impl_fork();
	long pid = syscall(SYS_clone, SIGCHLD, 0, NULL, NULL, 0);
	if (__sanitizer_syscall_post_impl_fork)
		__sanitizer_syscall_post_impl_fork(pid);
	return pid;
}

#endif
