/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A thread's own kernel context.  Some per-thread attributes change what a
 * system call means: the file-system ids (setfsuid: file servers rely on
 * glibc not broadcasting them), capabilities dropped with capset, a
 * Landlock domain, a seccomp filter without TSYNC, a namespace joined with
 * setns, unshare(CLONE_FS/CLONE_FILES/CLONE_NEW*), the I/O priority, the
 * NUMA memory policy, LSM attributes written to /proc/thread-self/attr,
 * keyrings (a thread, process or session keyring it installed, a session
 * keyring it joined, its request_key default or authority).
 * A helper has the process's, not the thread's: offloaded, an open that
 * the thread may not make would succeed on the helper (root), and a call
 * would land in another cwd, namespace or descriptor table.  Carrying each
 * attribute per call would cost system calls on both sides; such threads
 * are rare and know what they do.  So a thread that changed one of them
 * runs its calls itself from then on (route.c, backstop_trap.c, async.c,
 * fdclass.c), and the library says so once per thread and reason.  Never
 * the other way: nothing here widens what the thread may do.
 *
 * Seen through the wrappers (setfsuid, setfsgid, capset, unshare, setns:
 * calls.tbl's "thread" rows; prctl(PR_SET_SECCOMP) in automark.c), the
 * syscall() wrapper (wrap_syscall.c) for the calls glibc has no function for,
 * the backstop's handler for the same calls made raw (syscalls.tbl "ctx"),
 * and at a thread's first mark for what it changed before (mark.c).
 * Only a change counts: setfsuid to the thread's euid is none.
 */
#include "rto_fast.h"
#include "backstop.h"
#include "context.h"
#include "alone.h"
#include "cred_mirror.h"
#include "report.h"
#include "real.h"

#include <errno.h>
#include <linux/capability.h>
#include <linux/keyctl.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_landlock_restrict_self
#define SYS_landlock_restrict_self 446
#endif
#define IOPRIO_WHO_PROCESS 1
#define MPOL_MODE_MASK	   0xff /* set_mempolicy's mode without its MPOL_F_* flags */
#define MPOL_DEFAULT	   0

/* The library's own probes: raw, from its text, so that they never trap. */
static long raw(long nr, long a0, long a1)
{
	return rto_bs_raw(nr, a0, a1, 0, 0, 0, 0);
}

static const char *why_text(unsigned why)
{
	switch (why) {
	case RTO_CTX_SECCOMP:
		return "installed a seccomp filter of its own";
	case RTO_CTX_FSIDS:
		return "changed its fs ids";
	case RTO_CTX_CAPS:
		return "changed its capabilities";
	case RTO_CTX_LANDLOCK:
		return "restricted itself with Landlock";
	case RTO_CTX_NS:
		return "joined a namespace";
	case RTO_CTX_UNSHARE:
		return "unshared its files, fs or namespaces";
	case RTO_CTX_IOPRIO:
		return "set its own I/O priority";
	case RTO_CTX_MEMPOLICY:
		return "set its own memory policy";
	case RTO_CTX_LSM:
		return "set its own LSM attributes";
	case RTO_CTX_KEYS:
		return "has keyrings of its own";
	}
	return "changed its kernel context";
}

void rto_ctx_set(unsigned why)
{
	if ((rto_self.own_ctx & why) == why)
		return;
	rto_self.own_ctx |= (unsigned short)why;
	rto_say(1, "thread %ld %s: its calls run on it from now on", raw(SYS_gettid, 0, 0),
		why_text(why));
}

/* setfsuid(-1) changes nothing and returns the current fs id. */
static int fsids_own(void)
{
	return raw(SYS_setfsuid, -1, 0) != raw(SYS_geteuid, 0, 0) ||
	       raw(SYS_setfsgid, -1, 0) != raw(SYS_getegid, 0, 0);
}

/*
 * Capabilities unlike the process's (its first thread's), or any set by
 * the first thread itself: the helpers keep the ones they were born with.
 */
static int caps_own(void)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	/* zeroed: the raw capget's writes are unseen by memcheck */
	struct __user_cap_data_struct mine[2] = {{0}}, proc[2] = {{0}};
	long tgid = raw(SYS_getpid, 0, 0);

	if (raw(SYS_gettid, 0, 0) == tgid)
		return 1;
	if (raw(SYS_capget, (long)&h, (long)mine) != 0)
		return 1;
	h.pid = (int)tgid;
	if (raw(SYS_capget, (long)&h, (long)proc) != 0)
		return 1; /* cannot tell: not as wide as the helpers, maybe */
	return memcmp(mine, proc, sizeof(mine)) != 0;
}

/*
 * The keyrings are the thread's credentials (struct cred): a thread
 * keyring is its own, and a process or session keyring that a thread
 * installs, the session keyring it joins, its request_key default and an
 * authority it assumes are in its credentials only, not in those of the
 * helpers (threads share credentials only when started after a change).
 * A key found, read or changed through them, or a file system's key
 * (fscrypt, NFS, CIFS) looked up for a call, would differ on a helper.
 * So: a call that names the thread's, the process's or the session's
 * keyring where the kernel creates it when missing, or that replaces one.
 */
static int own_keyring(long arg)
{
	int id = (int)arg; /* a key_serial_t: the kernel reads 32 bits (syscall()'s varargs) */

	return id == KEY_SPEC_THREAD_KEYRING || id == KEY_SPEC_PROCESS_KEYRING ||
	       id == KEY_SPEC_SESSION_KEYRING;
}

static int keyrings_changed(long nr, const long *a)
{
	if (nr == SYS_add_key)
		return own_keyring(a[4]); /* add_key(type, description, payload, plen, keyring) */
	if (nr == SYS_request_key)
		return own_keyring(a[3]); /* request_key(type, description, info, dest_keyring) */
	switch ((int)a[0]) {		  /* keyctl(operation, ...) */
	case KEYCTL_JOIN_SESSION_KEYRING:
	case KEYCTL_SET_REQKEY_KEYRING:
	case KEYCTL_ASSUME_AUTHORITY:
		return 1;
	case KEYCTL_GET_KEYRING_ID: /* (id, create) */
		return (int)a[2] && own_keyring(a[1]);
	case KEYCTL_LINK:	    /* (key, keyring) */
	case KEYCTL_GET_PERSISTENT: /* (uid, keyring) */
		return own_keyring(a[2]);
	case KEYCTL_NEGATE: /* (key, timeout, keyring) */
	case KEYCTL_MOVE:   /* (key, from, to, flags) */
		return own_keyring(a[3]);
	case KEYCTL_SEARCH:	     /* (keyring, type, description, dest_keyring) */
	case KEYCTL_INSTANTIATE:     /* (key, payload, plen, keyring) */
	case KEYCTL_INSTANTIATE_IOV: /* (key, iov, ioc, keyring) */
	case KEYCTL_REJECT:	     /* (key, timeout, error, keyring) */
		return own_keyring(a[4]);
	}
	return 0;
}

void rto_ctx_after_syscall(long nr, const long *a, long ret)
{
	if (ret < 0 && nr != SYS_setfsuid && nr != SYS_setfsgid)
		return;
	rto_cred_mirror(nr, a);
	switch (nr) {
	case SYS_seccomp: /* without TSYNC the filter is the thread's */
		if (a[0] == SECCOMP_SET_MODE_STRICT ||
		    (a[0] == SECCOMP_SET_MODE_FILTER && !(a[1] & SECCOMP_FILTER_FLAG_TSYNC)))
			rto_ctx_set(RTO_CTX_SECCOMP);
		break;
	case SYS_prctl:
		if (a[0] == PR_SET_SECCOMP)
			rto_ctx_set(RTO_CTX_SECCOMP);
		break;
	case SYS_setfsuid:
	case SYS_setfsgid:
		if (fsids_own())
			rto_ctx_set(RTO_CTX_FSIDS);
		break;
	case SYS_capset:
		if (caps_own())
			rto_ctx_set(RTO_CTX_CAPS);
		break;
	case SYS_landlock_restrict_self:
		rto_ctx_set(RTO_CTX_LANDLOCK);
		break;
	case SYS_setns:
		rto_ctx_set(RTO_CTX_NS);
		break;
	case SYS_unshare:
		if (a[0] & (CLONE_FILES | CLONE_FS | CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC |
			    CLONE_NEWNET | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWCGROUP |
			    CLONE_SYSVSEM | CLONE_NEWTIME))
			rto_ctx_set(RTO_CTX_UNSHARE);
		break;
	case SYS_ioprio_set: /* one task, this one: the group and user forms reach the helpers */
		if (a[0] == IOPRIO_WHO_PROCESS && (a[1] == 0 || a[1] == raw(SYS_gettid, 0, 0)))
			rto_ctx_set(RTO_CTX_IOPRIO);
		break;
	case SYS_set_mempolicy:
		if ((a[0] & MPOL_MODE_MASK) != MPOL_DEFAULT)
			rto_ctx_set(RTO_CTX_MEMPOLICY);
		break;
	case SYS_add_key:
	case SYS_request_key:
	case SYS_keyctl:
		if (keyrings_changed(nr, a))
			rto_ctx_set(RTO_CTX_KEYS);
		break;
	}
}

void rto_ctx_check_at_mark(void)
{
	long mode = raw(SYS_prctl, PR_GET_SECCOMP, 0);

	if (mode == SECCOMP_MODE_FILTER || mode == SECCOMP_MODE_STRICT)
		rto_ctx_set(RTO_CTX_SECCOMP);
	if (fsids_own())
		rto_ctx_set(RTO_CTX_FSIDS);
	if (raw(SYS_gettid, 0, 0) != raw(SYS_getpid, 0, 0) && caps_own())
		rto_ctx_set(RTO_CTX_CAPS);
	if (raw(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_THREAD_KEYRING) >= 0) /* no create */
		rto_ctx_set(RTO_CTX_KEYS);
}

/* ---- the wrappers: libc's call, then what it changed ----------------------------- */

RTO_EXPORT int setfsuid(uid_t uid)
{
	int old = rto_real_setfsuid(uid);
	long a[6] = {(long)uid};
	rto_ctx_after_syscall(SYS_setfsuid, a, old);
	return old;
}

RTO_EXPORT int setfsgid(gid_t gid)
{
	int old = rto_real_setfsgid(gid);
	long a[6] = {(long)gid};
	rto_ctx_after_syscall(SYS_setfsgid, a, old);
	return old;
}

RTO_EXPORT int capset(void *hdr, void *data)
{
	int ret = rto_real_capset(hdr, data);
	long a[6] = {(long)hdr, (long)data};
	rto_ctx_after_syscall(SYS_capset, a, ret);
	return ret;
}

/*
 * The kernel refused a call it refuses a task that shares its memory or fs
 * with another (EINVAL: a user namespace, a mount namespace; EUSERS: setns
 * into a time namespace; alone.c): if the library's threads were the
 * reason, they end and it is made again.  A call that then succeeds
 * changed nothing the helpers will lack: the next ones start from this
 * thread, in its new context.
 */
int rto_ctx_needs_alone(long nr, const long *a, long ret)
{
	if (ret != -1 || (errno != EINVAL && !(errno == EUSERS && nr == SYS_setns)))
		return 0;
	if (nr == SYS_unshare &&
	    !(a[0] & (CLONE_NEWUSER | CLONE_THREAD | CLONE_SIGHAND | CLONE_VM)))
		return 0;
	return (nr == SYS_unshare || nr == SYS_setns) && rto_alone();
}

/*
 * unshare and setns, made with the backstop's selector allowing: not
 * trapped, so that what the call changed is noted here only (a call made
 * again after alone.c must not be noted at all).
 */
static int ns_call(long nr, const long *a)
{
	unsigned char sel = rto_backstop_enter();
	int ret = nr == SYS_unshare ? rto_real_unshare((int)a[0])
				    : rto_real_setns((int)a[0], (int)a[1]);
	int err = errno;

	rto_backstop_leave(sel);
	errno = err;
	return ret;
}

RTO_EXPORT int unshare(int flags)
{
	long a[6] = {flags};
	int ret = ns_call(SYS_unshare, a);
	if (RTO_UNLIKELY(rto_ctx_needs_alone(SYS_unshare, a, ret)))
		return ns_call(SYS_unshare, a);
	rto_ctx_after_syscall(SYS_unshare, a, ret);
	return ret;
}

RTO_EXPORT int setns(int fd, int nstype)
{
	long a[6] = {fd, nstype};
	int ret = ns_call(SYS_setns, a);
	if (RTO_UNLIKELY(rto_ctx_needs_alone(SYS_setns, a, ret)))
		return ns_call(SYS_setns, a);
	rto_ctx_after_syscall(SYS_setns, a, ret);
	return ret;
}
