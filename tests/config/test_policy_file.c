/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * policy_file=: the rules of policy=, one a line, in a file.  Comments
 * ('#', whole line or after a rule), blank and indented lines, "name
 * handling" and "name:handling" forms; a bad line stops the program before
 * main with FILE:LINE and exit 78, and so does a file that cannot be read.
 */
#include "harness.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "rtoffload.h"

TestSuite(policy_file, .init = child_setup, .fini = child_teardown, .timeout = 60);

/* RTOFFLOAD_OPTIONS=policy_file=PATH for a file holding text; path filled in. */
static void file_opts(char *opts, size_t len, char *path, const char *text)
{
	child_path(path, "rules.policy");
	write_file(path, text);
	snprintf(opts, len, "policy_file=%s", path);
}

static void expect_line(const struct run *r, const char *fn, const char *key, long want)
{
	char prefix[64];

	snprintf(prefix, sizeof(prefix), "op=%s ", fn);
	cr_expect_eq(out_long(r->out, prefix, key, -999), want, "%s %s: %s", fn, key, r->out);
}

static void expect_refused(const struct run *r, const char *fn)
{
	expect_line(r, fn, "ret", -1);
	expect_line(r, fn, "errno", RT_OFFLOAD_STRICT_ERRNO);
	expect_line(r, fn, "effect", 0);
	cr_expect_eq(json_count(r, fn, "denied"), 1, "%s not denied", fn);
}

static void expect_local(const struct run *r, const char *fn)
{
	expect_line(r, fn, "effect", 1);
	cr_expect_eq(json_count(r, fn, "local"), 1, "%s not local", fn);
	cr_expect_eq(json_count(r, fn, "offloaded"), 0, "%s offloaded", fn);
}

Test(policy_file, comments_blank_lines_and_both_forms)
{
	char opts[PATH_MAX + 32], path[PATH_MAX];
	struct run r;

	file_opts(opts, sizeof(opts), path,
		  "# policy for the tests\n"
		  "\n"
		  "   # an indented comment\n"
		  "fsync strict\n"
		  "unlink:strict   # refuse unlink too\n"
		  "\tmkdir\twarn\n"
		  "   \t\n"
		  "creat local\r\n" /* CRLF, from an editor elsewhere */
		  "opendir:offload");
	RUN_CHILD(&r, opts, "op", "fsync,unlink,mkdir,creat,opendir", child_dir);
	assert_child_exit0(&r);
	expect_refused(&r, "fsync");
	expect_refused(&r, "unlink");
	expect_local(&r, "mkdir");
	cr_expect_eq(count_of(r.err, "rtoffload: warn 'mkdir' from"), 1, "%s", r.err);
	expect_local(&r, "creat");
	cr_expect_eq(json_count(&r, "opendir", "offloaded"), 1);
	run_free(&r);
}

/* Class lines apply first, function lines after them, wherever they stand. */
Test(policy_file, function_lines_after_class_lines)
{
	char opts[PATH_MAX + 32], path[PATH_MAX];
	struct run r;

	file_opts(opts, sizeof(opts), path, "mkdir:local\npath strict\n");
	RUN_CHILD(&r, opts, "op", "mkdir,unlink", child_dir);
	assert_child_exit0(&r);
	expect_local(&r, "mkdir");
	expect_refused(&r, "unlink");
	run_free(&r);
}

/* Both sources at once: each contributes its rules. */
Test(policy_file, with_policy_option)
{
	char opts[PATH_MAX + 64], path[PATH_MAX];
	struct run r;

	file_opts(opts, sizeof(opts), path, "unlink strict\n");
	strcat(opts, ":policy=mkdir:strict");
	RUN_CHILD(&r, opts, "op", "mkdir,unlink,creat", child_dir);
	assert_child_exit0(&r);
	expect_refused(&r, "mkdir");
	expect_refused(&r, "unlink");
	expect_line(&r, "creat", "effect", 1);
	run_free(&r);
}

/*
 * Class rules first, function rules after them, across both sources too:
 * a function rule of policy= is not undone by a class line of the file.
 */
Test(policy_file, function_rule_of_the_option_after_class_line_of_the_file)
{
	char opts[PATH_MAX + 64], path[PATH_MAX];
	struct run r;

	file_opts(opts, sizeof(opts), path, "path strict\n");
	strcat(opts, ":policy=mkdir:local");
	RUN_CHILD(&r, opts, "op", "mkdir,unlink", child_dir);
	assert_child_exit0(&r);
	expect_local(&r, "mkdir");
	expect_refused(&r, "unlink");
	run_free(&r);
}

/* A bad line at line `line` of text: exit 78, "PATH:LINE" and the culprit in the message. */
static void bad_line(const char *text, int line, const char *culprit)
{
	char opts[PATH_MAX + 32], path[PATH_MAX], where[PATH_MAX + 16];
	struct run r;

	file_opts(opts, sizeof(opts), path, text);
	snprintf(where, sizeof(where), "%s:%d", path, line);
	RUN_CHILD_RAW(&r, opts, "op", "fsync", child_dir);
	ASSERT_CONFIG_ERROR(&r, "policy_file", where, culprit);
	run_free(&r);
}

Test(policy_file, unknown_handling_names_file_and_line)
{
	bad_line("# header\n\nfsync strict\nwrite bogus\n", 4, "bogus");
}

Test(policy_file, unknown_call_names_file_and_line)
{
	bad_line("fsync strict\n\n# two\nfsink strict\nwrite offload\n", 4, "fsink");
}

Test(policy_file, missing_handling_names_file_and_line)
{
	bad_line("fsync strict\nunlink\n", 2, "unlink");
}

Test(policy_file, async_on_non_write_names_file_and_line)
{
	bad_line("write async\nfsync async\n", 2, "fsync");
}

Test(policy_file, unreadable_file)
{
	char opts[PATH_MAX + 32], path[PATH_MAX];
	struct run r;

	child_path(path, "no-such.policy");
	snprintf(opts, sizeof(opts), "policy_file=%s", path);
	RUN_CHILD_RAW(&r, opts, "op", "fsync", child_dir);
	ASSERT_CONFIG_ERROR(&r, "policy_file", path);
	run_free(&r);
	/* a directory opens but cannot be read */
	snprintf(opts, sizeof(opts), "policy_file=%s", child_dir);
	RUN_CHILD_RAW(&r, opts, "op", "fsync", child_dir);
	ASSERT_CONFIG_ERROR(&r, "policy_file", child_dir);
	run_free(&r);
}
