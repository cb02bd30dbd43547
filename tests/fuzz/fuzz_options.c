/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer target for the RTOFFLOAD_OPTIONS parser, rto_options_parse()
 * (libsrc/common/options.c, with rto_cpulist_parse() from cpulist.c).
 *
 * The parser runs in the constructor of every process the library is
 * preloaded into, on a string anyone can put in the environment, so:
 * it must never read or write outside what it is given, and what it
 * leaves behind must hold the invariants the rest of the library relies
 * on.  Each input is parsed as a NUL-terminated string (libFuzzer's data
 * copied into a buffer of exactly that size, so ASan sees any overread)
 * into a struct that holds the defaults, then checked:
 *
 *   success: every number inside its key's range, every enum one of its
 *            values, every string NUL-terminated inside its array, the
 *            mark bits consistent with mark_name, the error buffer empty;
 *   error:   a message that is one line, NUL-terminated, shorter than the
 *            buffer, starting with "RTOFFLOAD_OPTIONS: ", that fits the
 *            buffer the library itself uses (ERR_MAX) without being cut,
 *            and that is cut cleanly (still terminated) in a small buffer;
 *   always:  the same input gives the same result (no hidden state), and
 *            a NULL error buffer is accepted.
 *
 * Build and run: tests/fuzz/run_fuzz.sh [seconds].
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The parser and the reporter, compiled into this file: their private
 * limits are then visible here.  RTO_OPTIONS_ERR_MAX is the buffer
 * rto_options_load() gives the parser, RTO_LINE_MAX the line rto_die()
 * prints it in, after "rtoffload: ".  (The rest of rto_common is linked:
 * rto_cpulist_parse.)
 */
#include "options.c"
#include "report.c"

#include <unistd.h>

#ifndef RTO_OPTIONS_ERR_MAX
#error "options.h no longer defines RTO_OPTIONS_ERR_MAX: update the check below"
#endif
#ifndef RTO_LINE_MAX
#error "report.c no longer defines RTO_LINE_MAX: update the check below"
#endif

/* report.c reads the verbosity; the library defines this in options_load.c. */
struct rto_options rto_opt;

#define CHECK(cond)                                                                              \
	do {                                                                                     \
		if (!(cond)) {                                                                   \
			fprintf(stderr, "fuzz_options: invariant failed: %s (line %d)\n", #cond, \
				__LINE__);                                                       \
			abort();                                                                 \
		}                                                                                \
	} while (0)

/* A string field: NUL-terminated inside its array. */
#define TERMINATED(o, f) CHECK(memchr((o)->f, '\0', sizeof((o)->f)) != NULL)

static void check_success(const struct rto_options *o, const char *err)
{
	CHECK(err[0] == '\0');
	CHECK(o->workers >= 1 && o->workers <= 64);
	CHECK(o->verbosity >= 0 && o->verbosity <= 2);
	CHECK(o->mode == RT_OFFLOAD_MODE_OFFLOAD || o->mode == RT_OFFLOAD_MODE_STRICT);
	CHECK(o->helper_wake == RTO_WAKE_PREDICT || o->helper_wake == RTO_WAKE_IDLE);
	CHECK(o->helper_prio_mode == RTO_PRIO_NONE || o->helper_prio_mode == RTO_PRIO_FIXED ||
	      o->helper_prio_mode == RTO_PRIO_INHERIT);
	if (o->helper_prio_mode == RTO_PRIO_FIXED)
		CHECK(o->helper_prio >= 1 && o->helper_prio <= 99);
	CHECK(o->spin_ns <= UINT64_C(10000000000));
	CHECK(o->helper_idle_us <= 10000000);
	CHECK(o->helper_nap_us <= 10000000);
	CHECK(o->stats == 0 || o->stats == 1);
	CHECK(o->rt_cpus_set == 0 || o->rt_cpus_set == 1);
	CHECK(o->helper_cpus_set == 0 || o->helper_cpus_set == 1);
	/* A given list names at least one CPU; an absent one is empty. */
	CHECK(o->rt_cpus_set == (CPU_COUNT(&o->rt_cpus) > 0));
	CHECK(o->helper_cpus_set == (CPU_COUNT(&o->helper_cpus) > 0));
	CHECK((o->mark & ~(unsigned)(RTO_MARK_MAIN | RTO_MARK_RT | RTO_MARK_CPUS | RTO_MARK_NAME |
				     RTO_MARK_ALL)) == 0);
	TERMINATED(o, mark_name);
	/* mark=name:GLOB needs a glob; mark=none forgets it. */
	CHECK(!!(o->mark & RTO_MARK_NAME) == (o->mark_name[0] != '\0'));
	TERMINATED(o, stats_file);
	TERMINATED(o, policy);
	TERMINATED(o, policy_file);
	TERMINATED(o, report_path);
	TERMINATED(o, suppressions);
	CHECK(o->on_strict == RTO_ON_STRICT_ERRNO || o->on_strict == RTO_ON_STRICT_SIGNAL ||
	      o->on_strict == RTO_ON_STRICT_ABORT);
	CHECK(o->report_max <= 1000000);
	CHECK(o->report_offloads == 0 || o->report_offloads == 1);
	CHECK(o->backstop == 0 || o->backstop == 1);
	CHECK(o->report_traps == 0 || o->report_traps == 1);
	CHECK(o->children == RTO_CHILDREN_CALLER || o->children == RTO_CHILDREN_HELPERS);
	CHECK((o->fd_local & ~(unsigned)(RTO_FD_PIPE | RTO_FD_SOCKET | RTO_FD_ANON | RTO_FD_TMPFS |
					 RTO_FD_CHR)) == 0);
	CHECK(o->async_ring_kb >= 4 && o->async_ring_kb <= 1048576);
	CHECK(o->async_full == RTO_ASYNC_FULL_WAIT || o->async_full == RTO_ASYNC_FULL_SYNC);
	CHECK(o->mlock == 0 || o->mlock == 1);
	CHECK(o->prefault_stack_kb <= 65536);
	TERMINATED(o, async_path);
	/* Empty, or absolute prefixes only: each item starts with '/'. */
	for (const char *p = o->async_path; *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ','))
		CHECK(*p == '/');
}

/* One line, terminated inside len, made of printable ASCII only. */
static void check_message(const char *err, size_t len)
{
	const char *nul = memchr(err, '\0', len);

	CHECK(nul != NULL);
	for (const char *p = err; p < nul; p++)
		CHECK(*p >= 0x20 && *p < 0x7f);
}

static void check_error(const char *err, size_t len)
{
	static const char key_prefix[] = "RTOFFLOAD_OPTIONS: ";

	check_message(err, len);
	CHECK(strncmp(err, key_prefix, sizeof(key_prefix) - 1) == 0);
	/*
	 * rto_options_load() gets it in a char[RTO_OPTIONS_ERR_MAX] and rto_die() prints
	 * it in a line of RTO_LINE_MAX with its prefix and '\n': it must fit
	 * both whole, or the user sees a message cut short.
	 */
	CHECK(strlen(err) < RTO_OPTIONS_ERR_MAX);
	CHECK(sizeof(prefix) - 1 + strlen(err) + 1 <= RTO_LINE_MAX);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct rto_options o, again;
	char err[4096], err2[4096], small[24];
	char *text = malloc(size + 1);

	rto_common_syscall = syscall; /* as rto_common.h asks; the parser itself makes no call */
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';

	rto_options_defaults(&o);
	memset(err, 0x55, sizeof(err)); /* no '\0' in it unless the parser writes one */
	int ret = rto_options_parse(text, &o, err, sizeof(err));
	CHECK(ret == 0 || ret == -1);
	if (ret == 0)
		check_success(&o, err);
	else
		check_error(err, sizeof(err));

	/* The same again: same result, same struct, same message. */
	rto_options_defaults(&again);
	memset(err2, 0x55, sizeof(err2));
	CHECK(rto_options_parse(text, &again, err2, sizeof(err2)) == ret);
	CHECK(memcmp(&o, &again, sizeof(o)) == 0);
	CHECK(strcmp(err, err2) == 0);

	/* A small buffer cuts the message, a NULL one takes none; neither changes the result. */
	size_t cut = 1 + size % sizeof(small);
	rto_options_defaults(&again);
	memset(small, 0x55, sizeof(small));
	CHECK(rto_options_parse(text, &again, small, cut) == ret);
	check_message(small, cut);
	CHECK(strncmp(small, err, cut - 1) == 0);
	rto_options_defaults(&again);
	CHECK(rto_options_parse(text, &again, NULL, 0) == ret);
	CHECK(memcmp(&o, &again, sizeof(o)) == 0);

	free(text);
	return 0;
}
