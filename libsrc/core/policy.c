/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * policy= and policy_file=: the handling of each wrapped call, per class or
 * per function, over the defaults of shim-gen/calls.tbl.
 *
 *   policy=stdio:local,fsync:strict,dns:offload
 *   policy_file=PATH      one rule a line ("fsync strict" or "fsync:strict"),
 *                         '#' starts a comment
 *
 * Class rules apply first and function rules after them, whatever their
 * order, so "desc:strict,write:offload" refuses every descriptor call but
 * write.  Applied once at load, before any thread can be marked.
 *
 * One more name: "faults:warn" reports the page faults a marked thread
 * takes inside a wrapped call (callsite.c); warn is its only handling.
 */
#include "backstop.h"
#include "options.h"
#include "fn.h"
#include "async_path.h"
#include "policy.h"
#include "callsite.h"
#include "resolve.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static const char *const class_names[RTO_CLASS_COUNT] = {
	"desc", "path", "dir", "stdio", "dns", "net", "memory", "process", "names", "rtsafe",
};

static const char *const handling_names[] = {"offload", "local", "strict", "warn", "async"};
#define NHANDLINGS (sizeof(handling_names) / sizeof(handling_names[0]))

static int lookup(const char *const *names, size_t count, const char *s, size_t n)
{
	for (size_t i = 0; i < count; i++)
		if (strlen(names[i]) == n && memcmp(names[i], s, n) == 0)
			return (int)i;
	return -1;
}

static int fn_named(const struct rto_fn *fn, const char *s, size_t n)
{
	return strlen(fn->name) == n && memcmp(fn->name, s, n) == 0;
}

static int fail(char *err, size_t len, const char *what, const char *s, size_t n)
{
	snprintf(err, len, "%s '%.*s'", what, (int)(n > 64 ? 64 : n), s);
	return -1;
}

/* The ':' or the blank between name and handling. */
static const char *separator(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] == ':' || s[i] == ' ' || s[i] == '\t')
			return s + i;
	return NULL;
}

/* pass 0 applies class rules, pass 1 function rules; both check syntax. */
static int apply(const char *rule, size_t n, int pass, char *err, size_t len)
{
	const char *sep = separator(rule, n);
	if (!sep)
		return fail(err, len, "expected NAME:HANDLING, not", rule, n);
	size_t nn = (size_t)(sep - rule);
	const char *h = sep + 1;
	size_t hn = n - nn - 1;
	while (hn && (*h == ' ' || *h == '\t'))
		h++, hn--;
	int handling = lookup(handling_names, NHANDLINGS, h, hn);
	if (handling < 0)
		return fail(err, len, "handling must be offload, local, strict, warn or async, not",
			    h, hn);

	if (nn == 6 && memcmp(rule, "faults", 6) == 0) {
		if (handling != RTO_WARN)
			return fail(err, len, "faults takes warn only (faults:warn), not", h, hn);
		if (pass == 0)
			rto_fault_watch = 1;
		return 0;
	}
	if (nn > 4 && memcmp(rule, "SYS_", 4) == 0) /* a system call: the backstop's table */
		return rto_backstop_policy(rule + 4, nn - 4, handling, pass, err, len);
	int cls = lookup(class_names, RTO_CLASS_COUNT, rule, nn);
	int found = cls >= 0;
	for (struct rto_fn *const *f = __start_rto_fns; f < __stop_rto_fns; f++) {
		int named = cls < 0 && fn_named(*f, rule, nn);
		/* async fits writes only: a class rule skips the rest, a named call must fit */
		if (named && handling == RTO_ASYNC && !((*f)->flags & RTO_F_CAN_ASYNC))
			return fail(err, len,
				    "async is for writes (write, fwrite, fputs, puts, "
				    "fputc, putc, putchar, printf...), not",
				    rule, nn);
		int fits = handling != RTO_ASYNC || ((*f)->flags & RTO_F_CAN_ASYNC);
		if (fits && (cls >= 0 ? (*f)->cls == cls && pass == 0 : named && pass == 1))
			(*f)->handling = (unsigned char)handling;
		found |= named;
	}
	return found ? 0 : fail(err, len, "no wrapped call or class named", rule, nn);
}

int rto_policy_rule(const char *rule, size_t n, char *err, size_t len)
{
	if (apply(rule, n, 0, err, len) < 0)
		return -1;
	return apply(rule, n, 1, err, len);
}

/* Each comma-separated rule of list through both passes; -1 at the first bad one. */
static int apply_list(const char *list, int pass, char *err, size_t len)
{
	for (const char *s = list; *s;) {
		size_t n = strcspn(s, ",");
		if (n && apply(s, n, pass, err, len) < 0)
			return -1;
		s += n + (s[n] == ',');
	}
	return 0;
}

/* policy_file: read with raw syscalls (the constructor runs before main). */
static long read_file(const char *path, char *buf, size_t size)
{
	int fd = (int)rto_syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	long total = 0, n = 0;

	if (fd < 0)
		return -1;
	while ((size_t)total < size - 1 &&
	       (n = rto_syscall(SYS_read, fd, buf + total, size - 1 - (size_t)total)) > 0)
		total += n;
	rto_syscall(SYS_close, fd);
	if (n < 0 || (size_t)total >= size - 1)
		return -1;
	buf[total] = '\0';
	return total;
}

static int apply_file(const char *text, int pass, char *err, size_t len, int *line)
{
	*line = 0;
	for (const char *s = text; *s;) {
		size_t n = strcspn(s, "\n");
		size_t used = strcspn(s, "#\n");
		(*line)++;
		while (used && (s[used - 1] == ' ' || s[used - 1] == '\t' || s[used - 1] == '\r'))
			used--;
		size_t lead = strspn(s, " \t");
		if (used > lead && apply(s + lead, used - lead, pass, err, len) < 0)
			return -1;
		s += n + (s[n] == '\n');
	}
	return 0;
}

void rto_policy_load(const struct rto_options *o)
{
	static char text[65536];
	char err[160];
	int line;

	if (o->policy_file[0] && read_file(o->policy_file, text, sizeof(text)) < 0)
		rto_die(RTO_EXIT_CONFIG,
			"RTOFFLOAD_OPTIONS: policy_file=%s: cannot read it (or over 64 KiB)",
			o->policy_file);
	/* Class rules of both sources first, then function rules of both. */
	for (int pass = 0; pass < 2; pass++) {
		if (apply_list(o->policy, pass, err, sizeof(err)) < 0)
			rto_die(RTO_EXIT_CONFIG, "RTOFFLOAD_OPTIONS: policy=%s: %s", o->policy,
				err);
		if (o->policy_file[0] && apply_file(text, pass, err, sizeof(err), &line) < 0)
			rto_die(RTO_EXIT_CONFIG, "policy_file %s:%d: %s", o->policy_file, line,
				err);
	}
}

int rto_policy_has_async(void)
{
	if (rto_async_paths)
		return 1;
	for (struct rto_fn *const *f = __start_rto_fns; f < __stop_rto_fns; f++)
		if ((*f)->handling == RTO_ASYNC)
			return 1;
	return 0;
}
