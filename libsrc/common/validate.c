/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A configuration that cannot work is refused at start, like a typo
 * (exit 78, one line naming the key), instead of failing on the first
 * offload inside the realtime loop: CPU lists that name CPUs this machine
 * does not have online, helpers placed on the realtime CPUs, and mlock=1
 * where the kernel would refuse mlockall().  Raw system calls only: this
 * runs in the constructor, before our wrappers are usable.
 */
#include "options.h"
#include "cpulist.h"
#include "validate.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#define CAPBIT_IPC_LOCK 14 /* <linux/capability.h> */

/* The CPUs of `set` that are not in `online`: 0 if none. */
static int missing(const cpu_set_t *set, const cpu_set_t *online, cpu_set_t *out)
{
	cpu_set_t both;

	CPU_AND(&both, set, online);
	CPU_XOR(out, set, &both);
	return CPU_COUNT(out);
}

static int not_online(const char *key, const cpu_set_t *set, const cpu_set_t *online, char *err,
		      size_t len)
{
	char given[256], gone[256], on[256];
	cpu_set_t off;

	if (!missing(set, online, &off))
		return 0;
	rto_cpulist_format(set, given, sizeof(given));
	rto_cpulist_format(&off, gone, sizeof(gone));
	rto_cpulist_format(online, on, sizeof(on));
	snprintf(err, len, "RTOFFLOAD_OPTIONS: %s=%s: CPU %s not online (online CPUs: %s)", key,
		 given, gone, on);
	return -1;
}

int rto_validate_cpus(const struct rto_options *o, const cpu_set_t *online, char *err, size_t len)
{
	if (o->rt_cpus_set && not_online("rt_cpus", &o->rt_cpus, online, err, len) < 0)
		return -1;
	if (o->helper_cpus_set && not_online("helper_cpus", &o->helper_cpus, online, err, len) < 0)
		return -1;
	if (o->rt_cpus_set && o->helper_cpus_set) {
		cpu_set_t both;
		char h[256], r[256], b[256];

		CPU_AND(&both, &o->helper_cpus, &o->rt_cpus);
		if (CPU_COUNT(&both)) {
			rto_cpulist_format(&o->helper_cpus, h, sizeof(h));
			rto_cpulist_format(&o->rt_cpus, r, sizeof(r));
			rto_cpulist_format(&both, b, sizeof(b));
			snprintf(err, len,
				 "RTOFFLOAD_OPTIONS: helper_cpus=%s overlaps rt_cpus=%s (CPU %s): "
				 "helpers would run on the realtime CPUs",
				 h, r, b);
			return -1;
		}
	}
	return 0;
}

/* The number after "key:" in /proc/self/status, in base 10 or 16. */
static int status_field(const char *buf, const char *key, int base, uint64_t *out)
{
	const char *p = strstr(buf, key);
	uint64_t v = 0;
	int digits = 0;

	if (!p)
		return -1;
	for (p += strlen(key); *p == ' ' || *p == '\t'; p++)
		;
	for (;; p++, digits++) {
		unsigned d;
		if (*p >= '0' && *p <= '9')
			d = (unsigned)(*p - '0');
		else if (base == 16 && *p >= 'a' && *p <= 'f')
			d = (unsigned)(*p - 'a' + 10);
		else
			break;
		v = v * (unsigned)base + d;
	}
	*out = v;
	return digits ? 0 : -1;
}

void rto_memlock_self(struct rto_memlock *m)
{
	char buf[4096];
	long n = 0, r;
	struct rlimit rl;
	uint64_t kb = 0, caps = 0;
	int fd = (int)rto_common_syscall(SYS_openat, AT_FDCWD, "/proc/self/status",
					 O_RDONLY | O_CLOEXEC);

	while (fd >= 0 && n < (long)sizeof(buf) - 1 &&
	       ((r = rto_common_syscall(SYS_read, fd, buf + n, sizeof(buf) - 1 - (size_t)n)) > 0 ||
		(r < 0 && errno == EINTR)))
		n += r > 0 ? r : 0;
	if (fd >= 0)
		rto_common_syscall(SYS_close, fd);
	buf[n] = '\0';
	/* Unknown (no /proc): assume it fits; mlockall() itself has the last word. */
	m->vm_bytes = status_field(buf, "\nVmSize:", 10, &kb) == 0 ? kb * 1024 : 0;
	m->cap_ipc_lock = status_field(buf, "\nCapEff:", 16, &caps) == 0
				  ? (int)((caps >> CAPBIT_IPC_LOCK) & 1)
				  : 0;
	m->limit_bytes = UINT64_MAX;
	if (rto_common_syscall(SYS_prlimit64, 0, RLIMIT_MEMLOCK, NULL, &rl) == 0 &&
	    rl.rlim_cur != RLIM_INFINITY)
		m->limit_bytes = rl.rlim_cur;
}

/*
 * mlockall(MCL_CURRENT) fails with ENOMEM when the address space is larger
 * than RLIMIT_MEMLOCK and the caller lacks CAP_IPC_LOCK (mm/mlock.c).  A
 * process that locks itself only partly would take the page faults mlock=1
 * promised to remove, so this is a configuration error, not a warning.
 */
int rto_validate_mlock(const struct rto_memlock *m, char *err, size_t len)
{
	if (m->cap_ipc_lock || m->limit_bytes == UINT64_MAX || m->vm_bytes <= m->limit_bytes)
		return 0;
	snprintf(err, len,
		 "RTOFFLOAD_OPTIONS: mlock=1: the address space (%llu KiB) is beyond "
		 "RLIMIT_MEMLOCK (%llu KiB) and the process lacks CAP_IPC_LOCK (raise the "
		 "limit: ulimit -l, LimitMEMLOCK=; or run with the capability)",
		 (unsigned long long)(m->vm_bytes / 1024),
		 (unsigned long long)(m->limit_bytes / 1024));
	return -1;
}
