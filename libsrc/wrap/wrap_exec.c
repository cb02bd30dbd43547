/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * execl(), execlp(), execle(): variadic argument lists, gathered into an
 * argv on the caller's stack (as glibc does) and run as execv, execvp or
 * execve.  exec from any thread replaces the whole process, and the new
 * program keeps the exec'ing thread's affinity, scheduling and signal
 * mask: a marked thread's exec runs on that thread, never on a helper
 * (calls.tbl "caller", route.c).
 */
#include "shims_prelude.h"
#include "callsite.h"

struct rto_args_execl {
	int ret;
	int how; /* 0 execv, 1 execvp, 2 execve */
	const char *path;
	char *const *argv;
	char *const *envp;
};

static void run_execl(void *p)
{
	struct rto_args_execl *a = p;
	a->ret = a->how == 0   ? rto_real_execv(a->path, a->argv)
		 : a->how == 1 ? rto_real_execvp(a->path, a->argv)
			       : rto_real_execve(a->path, a->argv, a->envp);
}

void rto_run_execl(void *p) __attribute__((alias("run_execl")));
RTO_FN_HAND(execl);
void rto_run_execlp(void *p) __attribute__((alias("run_execl")));
RTO_FN_HAND(execlp);
void rto_run_execle(void *p) __attribute__((alias("run_execl")));
RTO_FN_HAND(execle);

static int route_execl(struct rto_fn *fn, struct rto_args_execl *a)
{
	rto_async_flush_point(); /* calls.tbl "flush": the new image would never write them */
	if (rto_direct()) {
		run_execl(a);
		return a->ret;
	}
	int ret;
	RTO_WATCHED(fn, ret = rto_call(fn, a, -1, NULL, 0) ? -1 : a->ret);
	return ret;
}

/* argv[] from arg and the rest of the list up to NULL; execle's envp after it. */
#define RTO_EXECL(fn, how_, path_, arg)                                           \
	do {                                                                      \
		va_list ap, count;                                                \
		va_start(ap, arg);                                                \
		va_copy(count, ap);                                               \
		size_t n = 1;                                                     \
		while (va_arg(count, char *))                                     \
			n++;                                                      \
		va_end(count);                                                    \
		char *argv[n + 1];                                                \
		argv[0] = (char *)(arg);                                          \
		for (size_t i = 1; i <= n; i++)                                   \
			argv[i] = va_arg(ap, char *);                             \
		char *const *envp = how_ == 2 ? va_arg(ap, char *const *) : NULL; \
		va_end(ap);                                                       \
		struct rto_args_execl a = {-1, how_, path_, argv, envp};          \
		return route_execl(fn, &a);                                       \
	} while (0)

/* ---- the calls ------------------------------------------------------------- */

RTO_EXPORT int execl(const char *path, const char *arg, ...)
{
	RTO_EXECL(&rto_fn_execl, 0, path, arg);
}

RTO_EXPORT int execlp(const char *file, const char *arg, ...)
{
	RTO_EXECL(&rto_fn_execlp, 1, file, arg);
}

RTO_EXPORT int execle(const char *path, const char *arg, ...)
{
	RTO_EXECL(&rto_fn_execle, 2, path, arg);
}
