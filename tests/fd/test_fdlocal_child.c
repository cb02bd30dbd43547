/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fd_local=: read, write and fsync decided by descriptor.  On a pipe, an
 * eventfd, a memfd, a tmpfs file, /dev/null or a socket the kernel path is
 * short and bounded (or a wait for an outside event): the marked thread
 * makes the call itself.  On a disk file it is offloaded.  The decision is
 * cached per descriptor number and must never outlive the descriptor.
 */
#include "harness.h"

#include <criterion/criterion.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/statfs.h>

TestSuite(fdlocal, .init = child_setup, .fini = child_teardown, .timeout = 60);

static const char *const local_kinds[] = {"pipe",  "eventfd", "memfd",
					  "tmpfs", "null",    "socketpair"};
#define NLOCAL (sizeof(local_kinds) / sizeof(local_kinds[0]))

static void need_shm_tmpfs(void)
{
	struct statfs sf;

	if (statfs("/dev/shm", &sf) != 0 || sf.f_type != TMPFS_MAGIC)
		CHILD_SKIP("/dev/shm is not a tmpfs here");
}

/*
 * One write, read and fsync on kind by a marked thread: where each ran.
 * local: 1 when they must have run on the caller, 0 when offloaded.
 */
static void kind_runs(const char *opts, const char *kind, int local)
{
	static const char *const calls[] = {"write", "read", "fsync"};
	struct run r;

	RUN_CHILD(&r, opts, "fdkind", kind, child_dir);
	assert_child_exit0(&r);
	cr_expect_eq(out_long(r.out, NULL, "write", 0), 8, "%s: %s", kind, r.out);
	cr_expect_eq(out_long(r.out, NULL, "read", 0), strcmp(kind, "null") ? 8 : 0, "%s: %s", kind,
		     r.out);
	for (int i = 0; i < 3; i++) {
		cr_expect_eq(json_count(&r, calls[i], "local"), local, "[%s] %s on %s: local %ld",
			     opts, calls[i], kind, json_count(&r, calls[i], "local"));
		cr_expect_eq(json_count(&r, calls[i], "offloaded"), !local,
			     "[%s] %s on %s: offloaded %ld", opts, calls[i], kind,
			     json_count(&r, calls[i], "offloaded"));
	}
	run_free(&r);
}

Test(fdlocal, short_kernel_paths_run_locally)
{
	need_shm_tmpfs();
	for (size_t i = 0; i < NLOCAL; i++)
		kind_runs("", local_kinds[i], 1);
}

Test(fdlocal, disk_file_is_offloaded)
{
	NEED_DISK();
	kind_runs("", "disk", 0);
	struct run r;
	RUN_CHILD(&r, "", "fdkind", "disk", child_dir);
	cr_expect_eq(out_long(r.out, NULL, "fsync", -1), 0, "fsync of a disk file: %s", r.out);
	run_free(&r);
}

Test(fdlocal, none_offloads_every_kind)
{
	need_shm_tmpfs();
	for (size_t i = 0; i < NLOCAL; i++)
		kind_runs("fd_local=none", local_kinds[i], 0);
}

Test(fdlocal, only_the_kinds_listed)
{
	need_shm_tmpfs();
	kind_runs("fd_local=pipe,chr", "pipe", 1);
	kind_runs("fd_local=pipe,chr", "null", 1);
	kind_runs("fd_local=pipe,chr", "socketpair", 0);
	kind_runs("fd_local=pipe,chr", "eventfd", 0);
	kind_runs("fd_local=pipe,chr", "tmpfs", 0);
	kind_runs("fd_local=tmpfs", "memfd", 1);
}

/* ---- a descriptor number reborn as another kind -------------------------------------- */

/* The write to the reborn number ran where its new kind says, and its bytes landed. */
static void reborn(const char *how, int local)
{
	char content[64];
	struct run r;

	RUN_CHILD(&r, "", "fdreuse", how, child_dir);
	assert_child_exit0(&r);
	cr_assert_eq(out_long(r.out, NULL, "same", 0), 1, "%s: the number was not reused: %s", how,
		     r.out);
	cr_expect_eq(out_long(r.out, NULL, "ret", 0), 8, "%s: %s", how, r.out);
	cr_expect_eq(out_long(r.out, NULL, "local", -1), local,
		     "%s: the old descriptor's answer was used: %s", how, r.out);
	cr_expect_geq(out_long(r.out, NULL, "offloaded", -1), !local, "%s: %s", how, r.out);
	if (!local)
		cr_expect_str_eq(out_word(r.out, NULL, "content", content, sizeof(content)),
				 "payload!", "%s: %s", how, r.out);
	run_free(&r);
}

Test(fdlocal, close_then_open_gets_the_new_answer)
{
	NEED_DISK();
	reborn("close", 0);
}

Test(fdlocal, closed_and_reopened_by_an_unmarked_thread)
{
	NEED_DISK();
	reborn("cross", 0);
}

Test(fdlocal, dup2_of_a_disk_file_over_a_pipe)
{
	NEED_DISK();
	reborn("dup2", 0);
}

Test(fdlocal, fclose_of_tmpfs_stream_then_fopen_of_disk_file)
{
	NEED_DISK();
	need_shm_tmpfs();
	reborn("fclose", 0);
}

Test(fdlocal, disk_number_reborn_as_eventfd_runs_locally)
{
	NEED_DISK();
	reborn("reverse", 1);
}
