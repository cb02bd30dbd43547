/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The library's options: RTOFFLOAD_OPTIONS parsed at load (options.c),
 * trimmed for a set-user-ID program, and checked against this machine
 * (validate.c).  A bad option ends the program before main: exit 78 and
 * one line naming the key.  rto_common gets its raw system call here,
 * before its first use.
 */
#include "options_load.h"
#include "cpulist.h"
#include "real.h"
#include "report.h"

#include <stdlib.h>
#include <sys/auxv.h>

#include "validate.h"

struct rto_options rto_opt;

/*
 * In a set-user-ID, set-group-ID or file-capability program (AT_SECURE) the
 * caller chose the environment, not the program's owner: options that name
 * a file to write or read would let any user write any file, or read one
 * back through an error message, with the program's rights.  They are
 * dropped; the others (marks, CPUs, policy, stats to stderr) still apply.
 */
static void drop_file_options(struct rto_options *o)
{
	struct {
		const char *key;
		char *value;
	} files[] = {
		/* clang-format off */
		{"stats_file", o->stats_file},
		{"report_path", o->report_path},
		{"policy_file", o->policy_file},
		{"suppressions", o->suppressions},
		{"trace_file", o->trace_file},
		/* clang-format on */
	};

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		if (!files[i].value[0])
			continue;
		files[i].value[0] = '\0';
		rto_say(1, "RTOFFLOAD_OPTIONS: %s= ignored in a set-user-ID or capability program",
			files[i].key);
	}
}

void rto_options_load(void)
{
	char err[RTO_OPTIONS_ERR_MAX];

	rto_common_syscall = RTO_HAND_REAL(syscall);
	rto_options_defaults(&rto_opt);
	if (rto_options_parse(getenv("RTOFFLOAD_OPTIONS"), &rto_opt, err, sizeof(err)) < 0)
		rto_die(RTO_EXIT_CONFIG, "%s", err);
	rto_report_level = rto_opt.verbosity; /* report.c is below us: it reads no option */
	if (getauxval(AT_SECURE))
		drop_file_options(&rto_opt);
	if (rto_opt.children == RTO_CHILDREN_HELPERS)
		rto_say(1, "children=helpers: what a marked thread starts with system, popen or "
			   "posix_spawn runs on the helpers' CPUs and scheduling, not its own");
	if ((rto_opt.mark & RTO_MARK_CPUS) && !rto_opt.rt_cpus_set)
		rto_die(RTO_EXIT_CONFIG, "RTOFFLOAD_OPTIONS: mark=cpus needs rt_cpus=LIST");
	/* What the machine refuses is refused now, not on the first offload. */
	cpu_set_t online;
	rto_cpus_online(&online);
	if (rto_validate_cpus(&rto_opt, &online, err, sizeof(err)) < 0)
		rto_die(RTO_EXIT_CONFIG, "%s", err);
	if (rto_opt.mlock) {
		struct rto_memlock m;
		rto_memlock_self(&m);
		if (rto_validate_mlock(&m, err, sizeof(err)) < 0)
			rto_die(RTO_EXIT_CONFIG, "%s", err);
	}
}
