/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sysconf(): most names are constants that glibc knows without asking
 * anyone, and run here.  The names below make glibc ask the kernel (a file
 * under /sys or /proc, getrlimit, sysinfo, the time zone, a clock): those
 * go to a helper.  A name not listed is a constant in glibc 2.36's
 * sysdeps/unix/sysv/linux/sysconf.c and posix/sysconf.c.
 */
#include "shims_prelude.h"
#include "callsite.h"

/* Uninstrumented: a sanitizer runtime calls sysconf() while it starts (RTO_UNINSTRUMENTED,
 * rto_base.h). */

struct rto_args_sysconf {
	long ret;
	int name;
};

RTO_UNINSTRUMENTED void rto_run_sysconf(void *p)
{
	struct rto_args_sysconf *a = p;
	a->ret = rto_real_sysconf(a->name);
}
RTO_FN_HAND(sysconf);

RTO_UNINSTRUMENTED static int asks_kernel(int name)
{
	switch (name) {
	case _SC_NPROCESSORS_ONLN: /* /sys/devices/system/cpu/online */
	case _SC_NPROCESSORS_CONF: /* /sys/devices/system/cpu */
	case _SC_PHYS_PAGES:	   /* sysinfo */
	case _SC_AVPHYS_PAGES:
	case _SC_OPEN_MAX: /* getrlimit */
	case _SC_CHILD_MAX:
	case _SC_ARG_MAX:
	case _SC_SIGQUEUE_MAX:
	case _SC_NGROUPS_MAX: /* /proc/sys/kernel/ngroups_max */
	case _SC_TZNAME_MAX:  /* tzset: the zone file */
	case _SC_CPUTIME:     /* clock_getres */
	case _SC_THREAD_CPUTIME:
		return 1;
	default:
		return 0;
	}
}

RTO_UNINSTRUMENTED static long route_sysconf(int name)
{
	struct rto_args_sysconf a = {.name = name};
	long ret;
	RTO_WATCHED(&rto_fn_sysconf,
		    ret = (asks_kernel(name)
				   ? rto_call(&rto_fn_sysconf, &a, -1, NULL, 0)
				   : rto_call(&rto_fn_sysconf, &a, -1, NULL, RTO_CALL_SHORT))
				  ? -1
				  : a.ret);
	return ret;
}

/* ---- the call --------------------------------------------------------------- */

RTO_EXPORT RTO_UNINSTRUMENTED long sysconf(int name)
{
	return rto_direct() ? rto_real_sysconf(name) : route_sysconf(name);
}
