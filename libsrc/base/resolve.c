/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Finding the real libc functions behind our wrappers. */
#include "resolve.h"

#include <dlfcn.h>

RTO_UNINSTRUMENTED void *rto_resolve(const char *name, void *self)
{
	/*
	 * RTLD_NEXT: the next object after us in the lookup order, which is
	 * libc whether we are preloaded or linked (-lrtoffload).  For a
	 * symbol with several versions this is the default version, the one
	 * a newly linked program gets.
	 */
	void *p = dlsym(RTLD_NEXT, name);
	return p == self ? NULL : p;
}
