/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The text of a raw system call function on x86-64, for an __asm__
 * block: RTO_RAW_SYSCALL6_ASM(name) defines
 *
 *	long name(long nr, long a, long b, long c, long d, long e, long f);
 *
 * (the number, then the six arguments in the kernel's order) as one
 * `syscall` instruction, and the label name_after just past it: the
 * address the kernel reports as the instruction pointer of that call
 * (seccomp_data.instruction_pointer, Syscall User Dispatch's region).
 * The library's backstop makes its own calls with it (rto_bs_raw, inside
 * the region it allows); the tests' seccomp witnesses let through only the
 * calls made from their copy (census, periodic), so a SIGSYS handler can
 * make the call it trapped.  Both symbols are hidden.  The caller puts it
 * in a text section (".text" or ".pushsection .text").  It has unwind
 * information (it leaves the stack as it found it): a report's backtrace
 * from a trapped call goes on through its caller (bench/trap.c,
 * tests/backstop/trap_child.c make the program's raw calls with it).
 *
 * Concurrency: code only, no state; async-signal-safe.
 */
#ifndef RTO_RAW_SYSCALL_ASM_H
#define RTO_RAW_SYSCALL_ASM_H

#if defined(__x86_64__)
/* nr in rdi, a..e in rsi, rdx, rcx, r8, r9, f on the stack (the C ABI). */
#define RTO_RAW_SYSCALL6_ASM(name)                    \
	".globl " #name "\n"                          \
	".hidden " #name "\n"                         \
	".type " #name ",@function\n" #name ":\n"     \
	"\t.cfi_startproc\n"                          \
	"\tmov %rdi, %rax\n"                          \
	"\tmov %rsi, %rdi\n"                          \
	"\tmov %rdx, %rsi\n"                          \
	"\tmov %rcx, %rdx\n"                          \
	"\tmov %r8, %r10\n"                           \
	"\tmov %r9, %r8\n"                            \
	"\tmov 8(%rsp), %r9\n"                        \
	"\tsyscall\n"                                 \
	".globl " #name "_after\n"                    \
	".hidden " #name "_after\n" #name "_after:\n" \
	"\tret\n"                                     \
	"\t.cfi_endproc\n"                            \
	".size " #name ", .-" #name "\n"
#endif

#endif /* RTO_RAW_SYSCALL_ASM_H */
