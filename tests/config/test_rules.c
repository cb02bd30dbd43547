/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * policy=: each handling per class and per function.
 *
 * One representative call per class (desc creat, path mkdir, dir opendir,
 * stdio fopen, dns getaddrinfo, net socket, memory mmap, process system) is
 * made once by a marked thread of rto_child, under a class rule and then
 * under a function rule, and the stats_file row of that function says what
 * happened to it: offloaded, local (run on the caller), denied (refused).
 * What the call does (a file, a directory, a descriptor) is checked
 * afterwards, so a refused call is seen to have had no effect.
 */
#include "harness.h"

#include <criterion/criterion.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>

#include "rtoffload.h"

#define FILTER_ERRNO ENOTRECOVERABLE /* child.h: only the seccomp filter gives it */

TestSuite(rules, .init = child_setup, .fini = child_teardown, .timeout = 120);

struct rep {
	const char *cls, *fn;
	long fail;	  /* what a refused call returns */
	const char *also; /* options the call needs to be offloaded at all */
};

static const struct rep reps[] = {
	{"desc", "creat", -1, NULL},
	{"path", "mkdir", -1, NULL},
	{"dir", "opendir", -1, NULL},
	{"stdio", "fopen", -1, NULL},
	{"dns", "getaddrinfo", EAI_SYSTEM, NULL},
	{"net", "socket", -1, NULL},
	{"memory", "mmap", -1, NULL},
	/* A child starts on the caller unless children=helpers (test_children). */
	{"process", "system", -1, ":children=helpers"},
};

#define NREPS (sizeof(reps) / sizeof(reps[0]))

/* ---- what the child reports about one call ------------------------------------------- */

struct seen {
	long ret, err, effect;
	long offloaded, local, denied;
};

static struct seen seen_of(const struct run *r, const char *fn)
{
	char prefix[64];

	snprintf(prefix, sizeof(prefix), "op=%s ", fn);
	cr_assert_not_null(strstr(r->out, prefix), "no line for %s in:\n%s", fn, r->out);
	return (struct seen){
		.ret = out_long(r->out, prefix, "ret", -999),
		.err = out_long(r->out, prefix, "errno", -999),
		.effect = out_long(r->out, prefix, "effect", -999),
		.offloaded = json_count(r, fn, "offloaded"),
		.local = json_count(r, fn, "local"),
		.denied = json_count(r, fn, "denied"),
	};
}

/* Run op fn (one call by a marked thread) with RTOFFLOAD_OPTIONS=opts. */
static struct seen run_op(struct run *r, const char *opts, const char *fn)
{
	RUN_CHILD(r, opts, "op", fn, child_dir);
	assert_child_exit0(r);
	return seen_of(r, fn);
}

static void expect_ran(struct seen s, const char *opts, const char *fn, int offloaded)
{
	cr_expect_eq(s.effect, 1, "%s: %s had no effect (ret %ld errno %ld)", opts, fn, s.ret,
		     s.err);
	cr_expect_eq(s.offloaded, offloaded, "%s: %s offloaded %ld", opts, fn, s.offloaded);
	cr_expect_eq(s.local, !offloaded, "%s: %s local %ld", opts, fn, s.local);
	cr_expect_eq(s.denied, 0, "%s: %s denied %ld", opts, fn, s.denied);
}

static void expect_refused(struct seen s, const char *opts, const struct rep *p)
{
	cr_expect_eq(s.ret, p->fail, "%s: %s returned %ld", opts, p->fn, s.ret);
	cr_expect_eq(s.err, RT_OFFLOAD_STRICT_ERRNO, "%s: %s errno %ld", opts, p->fn, s.err);
	cr_expect_eq(s.effect, 0, "%s: refused %s had an effect", opts, p->fn);
	cr_expect_eq(s.denied, 1, "%s: %s denied %ld", opts, p->fn, s.denied);
	cr_expect_eq(s.offloaded + s.local, 0, "%s: refused %s ran", opts, p->fn);
}

/* "policy=NAME:HANDLING" where NAME is the class (by_class) or the function. */
static void policy_for(char *opts, size_t len, const struct rep *p, int by_class,
		       const char *handling)
{
	snprintf(opts, len, "policy=%s:%s%s", by_class ? p->cls : p->fn, handling,
		 p->also ? p->also : "");
}

/* ---- offload ------------------------------------------------------------------------- */

static void each_offload(int by_class)
{
	char opts[128];
	struct run r;

	for (size_t i = 0; i < NREPS; i++) {
		policy_for(opts, sizeof(opts), &reps[i], by_class, "offload");
		expect_ran(run_op(&r, opts, reps[i].fn), opts, reps[i].fn, 1);
		run_free(&r);
	}
}

Test(rules, class_offload)
{
	each_offload(1);
}

Test(rules, function_offload)
{
	each_offload(0);
}

/* accept is on the allow-list by default: offload is then a change a test can see. */
Test(rules, offload_overrides_a_local_default)
{
	const char *opts[] = {"", "policy=net:offload", "policy=accept:offload"};
	struct run r;

	for (int i = 0; i < 3; i++) {
		expect_ran(run_op(&r, opts[i], "accept"), opts[i], "accept", i > 0);
		run_free(&r);
	}
}

/* ---- local ----------------------------------------------------------------------------- */

static void each_local(int by_class)
{
	char opts[128];
	struct run r;

	for (size_t i = 0; i < NREPS; i++) {
		policy_for(opts, sizeof(opts), &reps[i], by_class, "local");
		expect_ran(run_op(&r, opts, reps[i].fn), opts, reps[i].fn, 0);
		cr_expect_eq(count_of(r.err, "rtoffload: warn"), 0, "%s reported: %s", opts, r.err);
		run_free(&r);
	}
}

Test(rules, class_local)
{
	each_local(1);
}

Test(rules, function_local)
{
	each_local(0);
}

/*
 * Where a call runs, seen by the kernel: the marked thread installs a
 * seccomp filter on itself only that fails the call's syscall with
 * FILTER_ERRNO.  Offloaded, the call runs on a helper and succeeds; local,
 * it runs on the filtered thread and fails with that errno.
 */
static void filtered(const char *opts, const char *fn, int expect_local)
{
	char prefix[64];
	struct run r;

	snprintf(prefix, sizeof(prefix), "op=%s ", fn);
	RUN_CHILD(&r, opts, "op", fn, child_dir, "filter");
	assert_child_exit0(&r);
	long ret = out_long(r.out, prefix, "ret", -999), err = out_long(r.out, prefix, "errno", 0);
	if (expect_local) {
		cr_expect(ret == -1 && err == FILTER_ERRNO,
			  "%s: local %s should hit the thread's filter: ret %ld errno %ld", opts,
			  fn, ret, err);
		cr_expect_eq(json_count(&r, fn, "local"), 1, "%s: %s not counted local", opts, fn);
	} else {
		cr_expect_eq(ret, 0, "%s: offloaded %s failed: errno %ld", opts, fn, err);
		cr_expect_eq(json_count(&r, fn, "offloaded"), 1, "%s: %s not offloaded", opts, fn);
	}
	cr_expect_eq(json_count(&r, fn, "denied"), 0);
	run_free(&r);
}

Test(rules, local_runs_on_the_calling_thread)
{
	NEED_DISK(); /* fsync on a disk file is offloaded by default */
	filtered("", "fsync", 0);
	filtered("policy=fsync:local", "fsync", 1);
	filtered("policy=desc:local", "fsync", 1);
	filtered("", "mkdir", 0);
	filtered("policy=mkdir:local", "mkdir", 1);
	filtered("policy=path:local", "mkdir", 1);
}

/* ---- strict ------------------------------------------------------------------------------ */

static void each_strict(int by_class)
{
	char opts[128];
	struct run r;

	for (size_t i = 0; i < NREPS; i++) {
		policy_for(opts, sizeof(opts), &reps[i], by_class, "strict");
		expect_refused(run_op(&r, opts, reps[i].fn), opts, &reps[i]);
		run_free(&r);
	}
}

Test(rules, class_strict)
{
	each_strict(1);
}

Test(rules, function_strict)
{
	each_strict(0);
}

/* Calls with a visible effect: a refused one leaves the file alone. */
Test(rules, strict_call_has_no_effect)
{
	static const struct rep more[] = {{"desc", "write", -1, NULL},
					  {"path", "unlink", -1, NULL}};
	char opts[128];
	struct run r;

	for (int i = 0; i < 2; i++) {
		snprintf(opts, sizeof(opts), "policy=%s:strict", more[i].fn);
		expect_refused(run_op(&r, opts, more[i].fn), opts, &more[i]);
		run_free(&r);
	}
}

/* ---- class rules, then function rules ------------------------------------------------------ */

static void desc_strict_but_write(const char *opts)
{
	struct run r;

	RUN_CHILD(&r, opts, "op", "write,fsync", child_dir);
	assert_child_exit0(&r);
	expect_ran(seen_of(&r, "write"), opts, "write", 1);
	expect_refused(seen_of(&r, "fsync"), opts, &(struct rep){"desc", "fsync", -1, NULL});
	run_free(&r);
}

Test(rules, function_rules_apply_after_class_rules)
{
	NEED_DISK(); /* the write goes to a disk file: offloaded */
	desc_strict_but_write("policy=desc:strict,write:offload");
	desc_strict_but_write("policy=write:offload,desc:strict"); /* whatever the order */
}

Test(rules, function_strict_inside_a_local_class)
{
	struct run r;

	RUN_CHILD(&r, "policy=mkdir:strict,path:local", "op", "mkdir,unlink", child_dir);
	assert_child_exit0(&r);
	expect_refused(seen_of(&r, "mkdir"), "mkdir:strict,path:local",
		       &(struct rep){"path", "mkdir", -1, NULL});
	expect_ran(seen_of(&r, "unlink"), "mkdir:strict,path:local", "unlink", 0);
	run_free(&r);
}

/* ---- warn --------------------------------------------------------------------------------- */

static void each_warn(int by_class)
{
	char opts[128], report[128];
	struct run r;

	for (size_t i = 0; i < NREPS; i++) {
		policy_for(opts, sizeof(opts), &reps[i], by_class, "warn");
		expect_ran(run_op(&r, opts, reps[i].fn), opts, reps[i].fn, 0);
		snprintf(report, sizeof(report), "rtoffload: warn '%s' from realtime thread 'ctl'",
			 reps[i].fn);
		cr_expect_eq(count_of(r.err, report), 1, "%s: no report '%s' in:\n%s", opts, report,
			     r.err);
		run_free(&r);
	}
}

Test(rules, class_warn)
{
	each_warn(1);
}

Test(rules, function_warn)
{
	each_warn(0);
}

/* ---- async ---------------------------------------------------------------------------------- */

/* Which of async_calls' functions were queued (async row) rather than made. */
static void expect_async(const char *opts, const char *const *async, const char *const *sync)
{
	struct run r;

	RUN_CHILD(&r, opts, "async_calls", child_dir);
	assert_child_exit0(&r);
	for (; *async; async++)
		cr_expect_eq(json_family(&r, *async, "async"), 1, "%s: %s not queued", opts,
			     *async);
	for (; *sync; sync++) {
		cr_expect_eq(json_family(&r, *sync, "async"), 0, "%s: %s queued", opts, *sync);
		cr_expect_eq(json_family(&r, *sync, "offloaded") + json_family(&r, *sync, "local"),
			     1, "%s: %s did not run", opts, *sync);
	}
	run_free(&r);
}

#define NAMES(...) ((const char *const[]){__VA_ARGS__, NULL})

Test(rules, class_async)
{
	expect_async(
		"policy=stdio:async",
		NAMES("fwrite", "fputs", "fputc", "putc", "fprintf", "puts", "putchar", "printf"),
		NAMES("write"));
	expect_async("policy=desc:async", NAMES("write"), NAMES("fputs", "fprintf"));
}

Test(rules, function_async)
{
	expect_async("policy=write:async", NAMES("write"), NAMES("fwrite", "fputs", "fprintf"));
	/* not fprintf by name: under a sanitizer its interceptor makes it vfprintf */
	expect_async("policy=fputs:async,fwrite:async", NAMES("fputs", "fwrite"),
		     NAMES("fputc", "write", "puts", "fprintf"));
	expect_async("policy=stdio:async,fputc:offload", NAMES("fputs", "putc"), NAMES("fputc"));
}

/* ---- the thread's own mode still applies ---------------------------------------------------- */

static void strict_mode(const char *opts, const char *extra)
{
	struct run r;

	RUN_CHILD(&r, opts, "op", "fsync,mkdir,creat", child_dir, extra);
	assert_child_exit0(&r);
	expect_ran(seen_of(&r, "fsync"), opts, "fsync", 0);
	expect_ran(seen_of(&r, "mkdir"), opts, "mkdir", 0);
	expect_refused(seen_of(&r, "creat"), opts, &(struct rep){"desc", "creat", -1, NULL});
	cr_expect_eq(count_of(r.err, "rtoffload: warn 'mkdir' from"), 1, "%s", r.err);
	run_free(&r);
}

/* Strict means no offloading: offloaded calls are refused, local and warn ones still run. */
Test(rules, strict_mode_refuses_offloads_only)
{
	strict_mode("mode=strict:policy=fsync:local,mkdir:warn", "-");
	strict_mode("policy=fsync:local,mkdir:warn", "apistrict");
}

/* ---- bad policies: exit 78 before main, one line naming the key ------------------------------ */

Test(rules, unknown_call)
{
	struct run r;

	RUN_CHILD_RAW(&r, "policy=fsync:strict,fsyncc:strict", "op", "fsync", child_dir);
	ASSERT_CONFIG_ERROR(&r, "policy", "fsyncc");
	run_free(&r);
}

Test(rules, unknown_handling)
{
	struct run r;

	RUN_CHILD_RAW(&r, "policy=fsync:refuse", "op", "fsync", child_dir);
	ASSERT_CONFIG_ERROR(&r, "policy", "refuse");
	run_free(&r);
}

Test(rules, async_on_a_call_that_does_not_write)
{
	struct run r;

	RUN_CHILD_RAW(&r, "policy=fsync:async", "op", "fsync", child_dir);
	ASSERT_CONFIG_ERROR(&r, "policy", "async", "fsync");
	run_free(&r);
}

Test(rules, missing_separator)
{
	struct run r;

	RUN_CHILD_RAW(&r, "policy=fsync", "op", "fsync", child_dir);
	ASSERT_CONFIG_ERROR(&r, "policy", "fsync");
	run_free(&r);
	RUN_CHILD_RAW(&r, "policy=mkdir:local,fsync", "op", "fsync", child_dir);
	ASSERT_CONFIG_ERROR(&r, "policy", "fsync");
	run_free(&r);
}
