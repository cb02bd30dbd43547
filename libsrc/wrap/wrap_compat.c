/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Old symbol versions.  glibc keeps a few calls in two versions with
 * different behaviour: realpath@GLIBC_2.2.5 (no malloc for a NULL buffer:
 * EINVAL) and posix_spawn{,p}@GLIBC_2.2.5 (exec failures reported by the
 * child's exit status, not the return value).  A binary linked against the
 * old version must get the old behaviour, offloaded like the new one, so
 * these are exported under the old version (rtoffload.map makes ours of
 * the new versions the defaults) and call glibc's old version, found with
 * dlvsym.  Calls whose old versions have the same ABI (dlopen,
 * pthread_create...) need nothing: our unversioned definition serves both.
 */
#include "shims_prelude.h"

#include "rtoffload.h"
#include "callsite.h"

static void *old_version(const char *name)
{
	void *p = dlvsym(RTLD_NEXT, name, "GLIBC_2.2.5");
	if (!p)
		rto_die(70, "libc has no '%s@GLIBC_2.2.5'", name);
	return p;
}

#define RTO_OLD(ret, fname, params)                        \
	static ret(*old_##fname) params;                   \
	static ret(*old_##fname##_fn(void)) params         \
	{                                                  \
		if (!old_##fname)                          \
			old_##fname = old_version(#fname); \
		return old_##fname;                        \
	}

RTO_OLD(char *, realpath, (const char *, char *))
RTO_OLD(int, posix_spawn,
	(pid_t *, const char *, const posix_spawn_file_actions_t *, const posix_spawnattr_t *,
	 char *const[], char *const[]))
RTO_OLD(int, posix_spawnp,
	(pid_t *, const char *, const posix_spawn_file_actions_t *, const posix_spawnattr_t *,
	 char *const[], char *const[]))

/* ---- realpath@GLIBC_2.2.5 ------------------------------------------------------ */

struct args_realpath {
	char *ret;
	const char *path;
	char *resolved;
};

static void run_realpath_old(void *p)
{
	struct args_realpath *a = p;
	a->ret = old_realpath_fn()(a->path, a->resolved);
}
RTO_FN(realpath_GLIBC_2_2_5, RTO_CLASS_PATH, RTO_OFFLOAD, run_realpath_old);

__asm__(".symver rto_realpath_old,realpath@GLIBC_2.2.5");
RTO_EXPORT char *rto_realpath_old(const char *path, char *resolved)
{
	if (rto_direct())
		return old_realpath_fn()(path, resolved);
	struct args_realpath a = {.path = path, .resolved = resolved};
	char *ret;
	RTO_WATCHED(&rto_fn_realpath_GLIBC_2_2_5,
		    ret = rto_call(&rto_fn_realpath_GLIBC_2_2_5, &a, -1, NULL, 0) ? NULL : a.ret);
	return ret;
}

/* ---- posix_spawn{,p}@GLIBC_2.2.5 ------------------------------------------------- */

struct args_spawn {
	int ret;
	pid_t *pid;
	const char *path;
	const posix_spawn_file_actions_t *fa;
	const posix_spawnattr_t *attr;
	char *const *argv, *const *envp;
};

static void run_spawn_old(void *p)
{
	struct args_spawn *a = p;
	a->ret = old_posix_spawn_fn()(a->pid, a->path, a->fa, a->attr, a->argv, a->envp);
}
RTO_FN_FULL(posix_spawn_GLIBC_2_2_5, RTO_CLASS_PROCESS, RTO_OFFLOAD, run_spawn_old,
	    RTO_F_SIGMASK | RTO_F_SPAWN);

static void run_spawnp_old(void *p)
{
	struct args_spawn *a = p;
	a->ret = old_posix_spawnp_fn()(a->pid, a->path, a->fa, a->attr, a->argv, a->envp);
}
RTO_FN_FULL(posix_spawnp_GLIBC_2_2_5, RTO_CLASS_PROCESS, RTO_OFFLOAD, run_spawnp_old,
	    RTO_F_SIGMASK | RTO_F_SPAWN);

static int spawn_old(struct rto_fn *fn, struct args_spawn *a)
{
	int ret;
	RTO_WATCHED(fn, ret = rto_call(fn, a, -1, NULL, 0) ? RT_OFFLOAD_STRICT_ERRNO : a->ret);
	return ret;
}

__asm__(".symver rto_posix_spawn_old,posix_spawn@GLIBC_2.2.5");
RTO_EXPORT int rto_posix_spawn_old(pid_t *pid, const char *path,
				   const posix_spawn_file_actions_t *fa,
				   const posix_spawnattr_t *attr, char *const argv[],
				   char *const envp[])
{
	if (rto_direct())
		return old_posix_spawn_fn()(pid, path, fa, attr, argv, envp);
	struct args_spawn a = {0, pid, path, fa, attr, argv, envp};
	return spawn_old(&rto_fn_posix_spawn_GLIBC_2_2_5, &a);
}

__asm__(".symver rto_posix_spawnp_old,posix_spawnp@GLIBC_2.2.5");
RTO_EXPORT int rto_posix_spawnp_old(pid_t *pid, const char *file,
				    const posix_spawn_file_actions_t *fa,
				    const posix_spawnattr_t *attr, char *const argv[],
				    char *const envp[])
{
	if (rto_direct())
		return old_posix_spawnp_fn()(pid, file, fa, attr, argv, envp);
	struct args_spawn a = {0, pid, file, fa, attr, argv, envp};
	return spawn_old(&rto_fn_posix_spawnp_GLIBC_2_2_5, &a);
}
