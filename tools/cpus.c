/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The helpers' CPUs for a given set of realtime CPUs, by the library's
 * own rule (rto_cpus_for_helpers(), rto_common), without the CPUs of
 * marked threads: the launcher cannot know those.
 */
#include "launcher.h"

int cpus_helpers(const cpu_set_t *rt, cpu_set_t *out)
{
	struct rto_options o;

	rto_options_defaults(&o);
	if (rt) {
		o.rt_cpus = *rt;
		o.rt_cpus_set = 1;
	}
	return rto_cpus_for_helpers(&o, NULL, out);
}
