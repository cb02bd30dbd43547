/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * seccomp(SECCOMP_SET_MODE_FILTER, 0, prog) without going through libc.
 * The library honours a filter a thread installs for itself through libc
 * by running that thread's calls locally (libsrc/wrap/wrap_syscall.c); the tests'
 * witness filters must not be seen, so they are installed this way.
 */
#ifndef RTO_TEST_RAW_SECCOMP_H
#define RTO_TEST_RAW_SECCOMP_H

#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/syscall.h>

static inline long raw_seccomp_filter(const struct sock_fprog *prog)
{
	long ret;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"((long)SYS_seccomp), "D"((long)SECCOMP_SET_MODE_FILTER), "S"(0L),
			   "d"(prog)
			 : "rcx", "r11", "memory");
	if (ret < 0) {
		errno = (int)-ret;
		return -1;
	}
	return ret;
}

/*
 * The per-thread witness: every system call of this thread traps (SIGSYS)
 * but rt_sigreturn and those made by the syscall instruction that ends at
 * `after` (the handler's own stub: seccomp_data.instruction_pointer is
 * after the instruction, or at it).  Installed raw, as above.
 */
static inline long raw_seccomp_witness(uintptr_t after)
{
	uint32_t lo = (uint32_t)after, hi = (uint32_t)((uint64_t)after >> 32);
	struct sock_filter insn[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_rt_sigreturn, 6, 0),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, instruction_pointer) + 4),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, hi, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, instruction_pointer)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, lo, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, lo - 2, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {.len = sizeof(insn) / sizeof(insn[0]), .filter = insn};

	return raw_seccomp_filter(&prog);
}

typedef int libc_sigaction_fn(int, const struct sigaction *, struct sigaction *);

/*
 * libc's own sigaction, not the library's: its trampoline would note the
 * witness's SIGSYS as a signal that interrupted an offloaded call, and the
 * caller would then ask the kernel for its flags (signals.c), a system
 * call caused by the witness itself.  NULL if not found.
 */
static inline libc_sigaction_fn *libc_sigaction_of_libc(void)
{
	void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);

	return libc ? (libc_sigaction_fn *)dlsym(libc, "sigaction") : NULL;
}

#endif
