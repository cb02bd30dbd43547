/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * policy=SYS_NAME:HANDLING (policy.c hands these rules over): a line of
 * the backstop's system-call table (shim-gen/syscalls.tbl) changed at
 * load, before any thread is marked.  The "fixed" lines cannot change:
 * they act on the calling thread, or the handler emulates them.  Pure (no
 * I/O): the policy fuzz target runs it.
 */
#include "rto_base.h"
#include "backstop.h"

#include <stdio.h>
#include <string.h>

/* policy=SYS_NAME:HANDLING */
int rto_backstop_policy(const char *name, size_t n, int handling, int pass, char *err, size_t len)
{
	for (unsigned nr = 0; nr < RTO_SYSENT_COUNT; nr++) {
		struct rto_sysent *e = &rto_sysent[nr];
		if (!e->name || strlen(e->name) != n || memcmp(e->name, name, n) != 0)
			continue;
		if (handling != RTO_OFFLOAD && handling != RTO_LOCAL && handling != RTO_STRICT &&
		    handling != RTO_WARN) {
			snprintf(err, len,
				 "SYS_%.*s: a system call takes offload, local, strict or warn",
				 (int)(n > 64 ? 64 : n), name);
			return -1;
		}
		if (e->flags & RTO_SYS_FIXED) {
			snprintf(err, len,
				 "SYS_%.*s acts on the calling thread or is emulated: its handling "
				 "is fixed",
				 (int)(n > 64 ? 64 : n), name);
			return -1;
		}
		if (pass == 1)
			e->handling = (unsigned char)handling;
		return 0;
	}
	snprintf(err, len, "no system call named 'SYS_%.*s'", (int)(n > 64 ? 64 : n), name);
	return -1;
}
