/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * shim-gen: turn calls.tbl into the C wrappers of librtoffload.
 *
 *   shim-gen calls.tbl shims.c shims.h real.c
 *
 * For each line "class handling name made fail ret (params)" it writes, under a
 * banner per class:
 *   - the real-function pointer (RTO_REAL),
 *   - an argument block and a runner that calls the real function with it,
 *   - the descriptor (RTO_FN): name, class, default handling,
 *   - the exported wrapper: direct call when the thread is unmarked,
 *     rto_call() otherwise.
 * Lines made "hand" get the pointer and a descriptor (RTO_FN_HAND, shims.h)
 * that their wrap_*.c instantiates next to its runner; lines made "thread" (calls that act on the
 * calling thread or on the process's lifetime, wrapped by hand and never routed) get only the
 * pointer, rto_real_NAME, which is how the library itself calls the real
 * function.  Errors name the table line and stop the build.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PARAMS 12
#define MAX_CALLS  512

struct param {
	char decl[256];	  /* as written: "const char *path" */
	char member[256]; /* as a struct member: arrays decayed to pointers */
	char name[64];
	int is_file; /* type is FILE * */
	int is_fd;   /* a descriptor: int fd, in, out, fromfd or tofd (calls.tbl) */
};

struct call {
	char cls[16], handling[16], name[64], made[8], fail[32], ret[64];
	char forget[128]; /* "forget:a,b": descriptors the call closes */
	char born[128];	  /* "born:a[=KIND],b": descriptors the call creates or replaces */
	char async[128];  /* "async:ADAPTER": how to queue it (async_adapt.h); "async" alone: hand
			   */
	int can_async;
	int flush;    /* "flush": queued async writes go first */
	int ordered;  /* "ordered": a write never queued; an unmarked one comes after the queue */
	int cancel;   /* "cancel": a POSIX cancellation point */
	int lock;     /* "lock": the call takes its stream's lock; the caller takes it first */
	int teardown; /* "teardown": the call frees its stream (and a lock lent with it) */
	int dlerror;  /* "dlerror": its failure is reported by dlerror(), per thread */
	int first;    /* "first": only the first use is non-deterministic: offloaded until then */
	int caller;   /* "caller": replaces the process image: runs on the calling thread */
	int spawn;    /* "spawn": starts a child, which inherits the calling thread's state */
	char stream[16];    /* "stream:S": its stream when no parameter is a FILE * (stdin) */
	char callbacks[64]; /* "callbacks:a,b": function pointer parameters it calls */
	char wake[64];	    /* "wake:...": the call sleeps until a time its arguments give */
	char timeout[64];   /* "timeout:...": it waits at most until a time they give */
	char timer[16];	    /* "timerfd:create|set", "timer:create|set|delete": see emit_timer */
	char buffered[32];  /* "buffered:...": a call its stream's buffer may serve */
	char shortarg[48];  /* "short:random=LEN,FLAGS": short with these arguments */
	struct param p[MAX_PARAMS];
	int np, variadic, line;
};

static const char *table_path;

static void fail_at(int line, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "%s:%d: ", table_path, line);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

static char *trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	char *e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = 0;
	return s;
}

/* The parameter's name: inside "(*name)" for a function pointer, else the last identifier. */
static void param_name(const char *decl, char *name, size_t len, int line)
{
	const char *star = strstr(decl, "(*");
	const char *s, *e;
	if (star) {
		s = star + 2;
		e = strchr(s, ')');
	} else {
		e = decl + strlen(decl);
		if (e > decl && e[-1] == ']')
			e = strrchr(decl, '[');
		s = e;
		while (s > decl && (isalnum((unsigned char)s[-1]) || s[-1] == '_'))
			s--;
	}
	if (!e || e <= s || (size_t)(e - s) >= len)
		fail_at(line, "cannot find the parameter name in '%s'", decl);
	memcpy(name, s, e - s);
	name[e - s] = 0;
}

static void parse_param(struct call *c, char *text)
{
	struct param *p = &c->p[c->np];
	text = trim(text);
	if (!strcmp(text, "...")) {
		c->variadic = 1;
		return;
	}
	if (!strcmp(text, "void"))
		return;
	if (c->np == MAX_PARAMS)
		fail_at(c->line, "too many parameters");
	snprintf(p->decl, sizeof(p->decl), "%s", text);
	param_name(text, p->name, sizeof(p->name), c->line);
	if (!strcmp(p->name, "ret") || !strcmp(p->name, "a"))
		fail_at(c->line, "'%s': a parameter may not be named '%s'", c->name, p->name);
	/* "char *const argv[]" is "char *const *argv" in a struct */
	char member[sizeof(p->member)];
	char *br = strrchr(text, '[');
	if (br && !strstr(text, "(*")) {
		*br = 0;
		char *nm = strstr(text, p->name);
		*nm = 0;
		snprintf(member, sizeof(member), "%s*%s", text, p->name);
	} else {
		snprintf(member, sizeof(member), "%s", text);
	}
	memcpy(p->member, member, sizeof(member));
	p->is_file = !strncmp(p->decl, "FILE *", 6);
	static const char *const fd_names[] = {"fd", "in", "out", "fromfd", "tofd"};
	for (size_t i = 0; i < sizeof(fd_names) / sizeof(fd_names[0]); i++)
		if (!strncmp(p->decl, "int ", 4) && !strcmp(p->name, fd_names[i]))
			p->is_fd = 1;
	c->np++;
}

static void parse_params(struct call *c, char *text)
{
	int depth = 0;
	char *start = text;
	for (char *s = text;; s++) {
		if (*s == '(')
			depth++;
		else if (*s == ')')
			depth--;
		else if ((*s == ',' && depth == 0) || *s == 0) {
			int end = !*s;
			*s = 0;
			parse_param(c, start);
			if (end)
				return;
			start = s + 1;
		}
	}
}

/*
 * After (params): forget:FD,...  born:FD[=KIND],...  async[:ADAPTER]
 * flush  cancel  lock  callbacks:P,...  first  caller  spawn  stream:S  wake:...
 * timeout:...  timerfd:create|set  timer:create|set|delete  buffered:...  short:...
 */
static void parse_annotations(struct call *c, char *text)
{
	char *save = NULL;

	for (char *t = strtok_r(text, " \t\n", &save); t; t = strtok_r(NULL, " \t\n", &save)) {
		if (!strncmp(t, "forget:", 7)) {
			snprintf(c->forget, sizeof(c->forget), "%s", t + 7);
		} else if (!strncmp(t, "born:", 5)) {
			snprintf(c->born, sizeof(c->born), "%s", t + 5);
		} else if (!strcmp(t, "async") || !strncmp(t, "async:", 6)) {
			c->can_async = 1;
			snprintf(c->async, sizeof(c->async), "%s", t[5] ? t + 6 : "");
		} else if (!strcmp(t, "flush")) {
			c->flush = 1;
		} else if (!strcmp(t, "ordered")) {
			c->ordered = 1;
		} else if (!strcmp(t, "cancel")) {
			c->cancel = 1;
		} else if (!strcmp(t, "lock")) {
			c->lock = 1;
		} else if (!strcmp(t, "teardown")) {
			c->teardown = 1;
		} else if (!strcmp(t, "dlerror")) {
			c->dlerror = 1;
		} else if (!strcmp(t, "first")) {
			c->first = 1;
		} else if (!strcmp(t, "caller")) {
			c->caller = 1;
		} else if (!strcmp(t, "spawn")) {
			c->spawn = 1;
		} else if (!strncmp(t, "stream:", 7)) {
			snprintf(c->stream, sizeof(c->stream), "%s", t + 7);
		} else if (!strncmp(t, "callbacks:", 10)) {
			snprintf(c->callbacks, sizeof(c->callbacks), "%s", t + 10);
		} else if (!strncmp(t, "wake:", 5)) {
			snprintf(c->wake, sizeof(c->wake), "%s", t + 5);
		} else if (!strncmp(t, "timeout:", 8)) {
			snprintf(c->timeout, sizeof(c->timeout), "%s", t + 8);
		} else if (!strncmp(t, "timerfd:", 8) || !strncmp(t, "timer:", 6)) {
			snprintf(c->timer, sizeof(c->timer), "%s", t);
		} else if (!strncmp(t, "buffered:", 9)) {
			snprintf(c->buffered, sizeof(c->buffered), "%s", t + 9);
		} else if (!strncmp(t, "short:", 6)) {
			snprintf(c->shortarg, sizeof(c->shortarg), "%s", t + 6);
		} else {
			fail_at(c->line,
				"'%s': unknown annotation '%s' (forget:, born:, async, flush, "
				"cancel, lock, teardown, dlerror, callbacks:, first, caller, "
				"spawn, stream:, wake:, timeout:, timerfd:create|set, "
				"timer:create|set|delete, buffered:, short:)",
				c->name, t);
		}
	}
}

/*
 * "short:": the arguments that make the call short and bounded, so that a
 * marked thread makes it itself (decide.h RTO_CALL_SHORT).  random=LEN,FLAGS:
 * getrandom's (libsrc/core/random_short.h).
 */
static const char *short_arg(const struct call *c)
{
	static char buf[128];
	char a[32], b[32];

	if (sscanf(c->shortarg, "random=%31[^,],%31s", a, b) != 2)
		fail_at(c->line, "'%s': short:%s is not random=LEN,FLAGS", c->name, c->shortarg);
	snprintf(buf, sizeof(buf), "rto_random_short_arg(%s, %s)", a, b);
	return buf;
}

/* The wrapper lives in libsrc/: shim-gen writes only its real pointer (and descriptor). */
static int hand_written(const struct call *c)
{
	return !strcmp(c->made, "hand") || !strcmp(c->made, "thread");
}

static int parse_line(char *line, struct call *c)
{
	char *s = trim(line);
	if (!*s || *s == '#')
		return 0;
	int n = 0;
	if (sscanf(s, "%15s %15s %63s %7s %31s %n", c->cls, c->handling, c->name, c->made, c->fail,
		   &n) != 5)
		fail_at(c->line, "expected: class handling name made fail ret (params)");
	char *proto = s + n;
	char *open = strchr(proto, '('), *close = NULL;
	for (int depth = 0, i = 0; open && open[i]; i++) { /* the ')' that matches */
		depth += (open[i] == '(') - (open[i] == ')');
		if (depth == 0) {
			close = open + i;
			break;
		}
	}
	if (!open || !close)
		fail_at(c->line, "'%s': no (params)", c->name);
	*open = 0;
	*close = 0;
	parse_annotations(c, close + 1);
	snprintf(c->ret, sizeof(c->ret), "%s", trim(proto));
	parse_params(c, open + 1);
	if (strcmp(c->handling, "offload") && strcmp(c->handling, "local") &&
	    strcmp(c->handling, "byfd"))
		fail_at(c->line, "'%s': handling must be offload, local or byfd", c->name);
	if (strcmp(c->made, "gen") && strcmp(c->made, "hand") && strcmp(c->made, "thread"))
		fail_at(c->line, "'%s': made must be gen, hand or thread", c->name);
	if (!strcmp(c->made, "hand") && strcmp(c->handling, "offload"))
		fail_at(c->line,
			"'%s': a hand-written wrapper's descriptor says offload (policy= "
			"changes it)",
			c->name);
	if (!strcmp(c->handling, "byfd") && (c->np == 0 || strcmp(c->p[0].name, "fd")))
		fail_at(c->line, "'%s': byfd needs 'int fd' as first parameter", c->name);
	if (c->variadic && !hand_written(c))
		fail_at(c->line, "'%s' is variadic: it needs a hand-written wrapper", c->name);
	int never_routed = !strcmp(c->cls, "thread") || !strcmp(c->cls, "alloc");
	if (never_routed != !strcmp(c->made, "thread"))
		fail_at(c->line,
			"'%s': the thread and alloc classes, and only they, are made 'thread'",
			c->name);
	if (never_routed && strcmp(c->handling, "local"))
		fail_at(c->line, "'%s': a thread row stays on the thread: handling local", c->name);
	return 1;
}

static const struct {
	const char *cls, *macro, *banner;
} classes[] = {
	{"desc", "RTO_CLASS_DESC", "descriptors"},
	{"path", "RTO_CLASS_PATH", "paths"},
	{"dir", "RTO_CLASS_DIR", "directories"},
	{"stdio", "RTO_CLASS_STDIO", "stdio"},
	{"dns", "RTO_CLASS_DNS", "name resolution"},
	{"net", "RTO_CLASS_NET", "sockets"},
	{"memory", "RTO_CLASS_MEMORY", "memory"},
	{"process", "RTO_CLASS_PROCESS", "process-wide"},
	{"names", "RTO_CLASS_NAMES", "users, groups, time zone, locale"},
	{"rtsafe", "RTO_CLASS_RTSAFE", "realtime-safe waits and locks"},
	{"thread", NULL, "the calling thread: identity, signals, lifetime (never routed)"},
	{"alloc", NULL, "the allocator: served on the calling thread (never routed)"},
};

static int class_index(const struct call *c)
{
	for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++)
		if (!strcmp(classes[i].cls, c->cls))
			return (int)i;
	fail_at(c->line, "'%s': unknown class '%s'", c->name, c->cls);
	return -1;
}

static void list(FILE *o, const struct call *c, int decls)
{
	for (int i = 0; i < c->np; i++)
		fprintf(o, "%s%s", i ? ", " : "", decls ? c->p[i].decl : c->p[i].name);
	if (decls && c->variadic)
		fprintf(o, ", ...");
	if (decls && !c->np && !c->variadic)
		fprintf(o, "void");
}

static const char *stream_of(const struct call *c)
{
	if (strcmp(c->cls, "stdio") && !c->ordered) /* "ordered": what it is ordered after */
		return "NULL";
	if (c->stream[0])
		return c->stream;
	for (int i = 0; i < c->np; i++)
		if (c->p[i].is_file)
			return c->p[i].name;
	return strncmp(c->ret, "FILE", 4) ? "stdout" : "NULL";
}

/*
 * async:NAME: queue the call's bytes when the decision says so
 * (rto_async_wanted(), route.c: an async handling, or a file under
 * async_path=), through the adapter rto_async_NAME() of
 * libsrc/async/async_adapt.h, given the call's parameters in order (the
 * compiler checks them against its prototype).
 */
static const char *const adapters[] = {"bytes",	    "items",	    "cstring", "line",
				       "putc_byte", "putchar_byte", "flush"};

static void emit_async(FILE *o, const struct call *c)
{
	size_t i, n = sizeof(adapters) / sizeof(adapters[0]);

	if (!c->async[0])
		return;
	for (i = 0; i < n && strcmp(adapters[i], c->async); i++)
		;
	if (i == n)
		fail_at(c->line, "'%s': async:%s: no such adapter (libsrc/async/async_adapt.h)",
			c->name, c->async);
	/* The queue question: write's descriptor, a stream call's stream. */
	int bytes = !strcmp(c->async, "bytes");
	fprintf(o, "\tif (RTO_UNLIKELY(rto_async_wanted(&rto_fn_%s, %s, %s))) {\n", c->name,
		bytes ? c->p[0].name : "-1", bytes ? "NULL" : stream_of(c));
	fprintf(o, "\t\t%s r;\n\t\tint q = rto_async_%s(&rto_fn_%s, ", c->ret, c->async, c->name);
	list(o, c, 0);
	fprintf(o, ", &r);\n\t\tif (q <= 0)\n\t\t\treturn q ? %s : r;\n\t}\n", c->fail);
}

static void emit_args(FILE *o, const struct call *c, const char *indent)
{
	fprintf(o, "%sstruct rto_args_%s a = {", indent, c->name);
	for (int i = 0; i < c->np; i++)
		fprintf(o, "%s.%s = %s", i ? ", " : "", c->p[i].name, c->p[i].name);
	fprintf(o, "};\n");
}

/*
 * What makes a call special to the routing core (route.c), as RTO_F_* flags:
 * from its handling, its annotations and its class.
 */
static const char *flags_of(const struct call *c)
{
	static char buf[256];
	const struct {
		int on;
		const char *flag;
	} f[] = {
		{!strcmp(c->handling, "byfd"), "RTO_F_BYFD"},
		{c->lock, "RTO_F_LOCK"},
		{c->callbacks[0] != 0, "RTO_F_CALLBACKS"},
		{c->teardown, "RTO_F_TEARDOWN"},
		{!strcmp(c->cls, "dns"), "RTO_F_RESOLVER"},    /* _res travels with it */
		{!strcmp(c->cls, "process"), "RTO_F_SIGMASK"}, /* children inherit the mask */
		{c->dlerror, "RTO_F_DLERROR"},
		{c->cancel, "RTO_F_CANCEL"},
		{c->can_async, "RTO_F_CAN_ASYNC"},
		{c->first, "RTO_F_FIRST"},
		{c->caller, "RTO_F_CALLER"},
		{c->spawn, "RTO_F_SPAWN"},
	};
	buf[0] = 0;
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		if (f[i].on)
			snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s%s",
				 buf[0] ? " | " : "", f[i].flag);
	return buf[0] ? buf : "0";
}

/*
 * "buffered:": how many bytes the call reads from its stream's buffer or
 * writes into it (route.h rto_buffered_arg).  Reads: byte, one (getc);
 * items=S,N, S * N (fread); line=N, N - 1 or fewer up to a newline (fgets,
 * N counting the NUL).  Writes: putbyte (putc), putitems=S,N (fwrite),
 * putstr=S, strlen(S) (fputs), putline=S, strlen(S) + 1 (puts).
 */
static const char *buffered_arg(const struct call *c)
{
	static char buf[160];
	char a[32] = "", b[32] = "";

	if (!strcmp(stream_of(c), "NULL"))
		fail_at(c->line, "'%s': buffered:, but no stream", c->name);
	if (!strcmp(c->buffered, "format"))
		fail_at(c->line,
			"'%s': buffered:format is a hand-written wrapper's (wrap_printf.c)",
			c->name);
	if (!strcmp(c->buffered, "byte"))
		snprintf(buf, sizeof(buf), "rto_buffered_arg(1, 0)");
	else if (sscanf(c->buffered, "items=%31[^,],%31s", a, b) == 2)
		snprintf(buf, sizeof(buf), "rto_buffered_arg(rto_items_bytes(%s, %s), 0)", a, b);
	else if (sscanf(c->buffered, "line=%31s", a) == 1)
		snprintf(buf, sizeof(buf), "rto_buffered_arg(%s > 0 ? (size_t)%s - 1 : 0, 1)", a,
			 a);
	else if (!strcmp(c->buffered, "putbyte"))
		snprintf(buf, sizeof(buf), "rto_buffered_put_arg(1)");
	else if (sscanf(c->buffered, "putitems=%31[^,],%31s", a, b) == 2)
		snprintf(buf, sizeof(buf), "rto_buffered_put_arg(rto_items_bytes(%s, %s))", a, b);
	else if (sscanf(c->buffered, "putstr=%31s", a) == 1)
		snprintf(buf, sizeof(buf), "rto_buffered_put_arg(strlen(%s))", a);
	else if (sscanf(c->buffered, "putline=%31s", a) == 1)
		snprintf(buf, sizeof(buf), "rto_buffered_put_arg(strlen(%s) + 1)", a);
	else
		fail_at(c->line,
			"'%s': buffered:%s is none of byte, items=S,N, line=N, putbyte, "
			"putitems=S,N, putstr=S, putline=S",
			c->name, c->buffered);
	return buf;
}

/*
 * The one entry of the routing core: rto_call(fn, args, fd, stream,
 * callbacks), with the call's descriptor (byfd), its stream, and whether a
 * callback was given.
 */
/*
 * The descriptor rto_call() is given: a by-descriptor call's "fd", which
 * decides; else the one the call reads or works on ("fd", else "in", else
 * the first descriptor parameter), which its trace events carry and before
 * which the thread's own queued writes to it go (async.c); else -1.
 */
static const char *descriptor_of(const struct call *c)
{
	const char *first = NULL;

	for (int i = 0; i < c->np; i++) {
		if (!c->p[i].is_fd)
			continue;
		if (!strcmp(c->p[i].name, "fd") || !strcmp(c->p[i].name, "in"))
			return c->p[i].name;
		if (!first)
			first = c->p[i].name;
	}
	return first ? first : "-1";
}

static const char *route_call(const struct call *c)
{
	static char buf[320];
	char any[128] = "0";

	if (c->lock && !strcmp(stream_of(c), "NULL"))
		fail_at(c->line, "'%s': lock, but no stream", c->name);
	if (c->callbacks[0]) { /* "a,b" -> "a || b": any callback given */
		char items[64], *save = NULL;
		any[0] = 0;
		snprintf(items, sizeof(items), "%s", c->callbacks);
		for (char *it = strtok_r(items, ",", &save); it; it = strtok_r(NULL, ",", &save))
			snprintf(any + strlen(any), sizeof(any) - strlen(any), "%s%s",
				 any[0] ? " || " : "", it);
	}
	char how[200] = "0";
	if (strcmp(any, "0"))
		snprintf(how, sizeof(how), "((%s) ? RTO_CALL_CALLBACKS : 0)", any);
	/* A path parameter may name the caller's own /proc entry: then it runs there. */
	for (int i = 0; i < c->np; i++)
		if (!strcmp(c->p[i].name, "path") && strstr(c->p[i].decl, "char *"))
			snprintf(how + strlen(how), sizeof(how) - strlen(how),
				 " | rto_path_arg(path)");
	/* A memory call's range may hold what a helper runs on: then it runs there too. */
	int addr = -1, len = -1;
	for (int i = 0; i < c->np; i++) {
		if (!strcmp(c->p[i].name, "addr") && strchr(c->p[i].decl, '*'))
			addr = i;
		if (!strcmp(c->p[i].name, "len"))
			len = i;
	}
	if (addr >= 0 && len >= 0 && !strcmp(c->cls, "memory"))
		snprintf(how + strlen(how), sizeof(how) - strlen(how),
			 " | rto_range_arg(addr, len)");
	if (c->buffered[0])
		snprintf(how + strlen(how), sizeof(how) - strlen(how), " | %s", buffered_arg(c));
	if (c->shortarg[0])
		snprintf(how + strlen(how), sizeof(how) - strlen(how), " | %s", short_arg(c));
	snprintf(buf, sizeof(buf), "rto_call(&rto_fn_%s, &a, %s, %s, %s)", c->name,
		 descriptor_of(c), stream_of(c), how);
	return buf;
}

/*
 * Descriptors a call closes ("forget:") or creates ("born:"), in the run
 * function: it runs wherever the call does (on a helper when offloaded, on
 * the caller otherwise, and for unmarked threads too), right after the
 * call, so a helper can learn a new descriptor's class at once.
 *
 * An item names a descriptor: "ret", a parameter ("fd2", "fds[0]"), or
 * "file:X" / "dir:X" for a stream's.  In the run function the arguments
 * are a->X.
 */
static const char *fd_expr(const char *item)
{
	static char buf[160];
	const char *colon = strchr(item, ':');
	if (colon)
		snprintf(buf, sizeof(buf), "rto_fd_of_%.*s(a->%s)", (int)(colon - item), item,
			 colon + 1);
	else
		snprintf(buf, sizeof(buf), "a->%s", item);
	return buf;
}

/* A stream's or directory's descriptor is read before the call, which may free it. */
static int read_before(const char *item)
{
	return strchr(item, ':') && strcmp(strchr(item, ':') + 1, "ret");
}

static int annotated(const struct call *c)
{
	return c->forget[0] || c->born[0] || c->timer[0];
}

static void emit_forgets_before(FILE *o, const struct call *c)
{
	char items[128], *save = NULL;
	int k = 0;

	snprintf(items, sizeof(items), "%s", c->forget);
	for (char *it = strtok_r(items, ",", &save); it; it = strtok_r(NULL, ",", &save), k++) {
		if (read_before(it))
			fprintf(o, "\tint rto_fd%d = %s;\n", k, fd_expr(it));
		if (!strncmp(it, "file:", 5)) /* the stream goes: abort() must not flush it */
			fprintf(o, "\trto_async_forget_stream(a->%s);\n", it + 5);
	}
}

static void emit_forgets_after(FILE *o, const struct call *c)
{
	char items[128], *save = NULL;
	int k = 0;

	snprintf(items, sizeof(items), "%s", c->forget);
	for (char *it = strtok_r(items, ",", &save); it; it = strtok_r(NULL, ",", &save), k++) {
		if (!strcmp(it, "*"))
			fprintf(o, "\trto_fd_forget_all();\n");
		else if (read_before(it))
			fprintf(o, "\trto_fd_forget(rto_fd%d);\n", k);
		else
			fprintf(o, "\trto_fd_forget(%s);\n", fd_expr(it));
	}
}

/* born:ITEM[=pipe|socket|anon|signalfd|like:PARAM],... */
static void emit_births(FILE *o, const struct call *c)
{
	static const struct {
		const char *word, *kind;
	} kinds[] = {{"pipe", "RTO_FD_PIPE"},
		     {"socket", "RTO_FD_SOCKET"},
		     {"anon", "RTO_FD_ANON"},
		     {"signalfd", "RTO_FD_THREAD"}};
	char items[128], *save = NULL;

	if (!c->born[0])
		return;
	fprintf(o, "\tif (a->ret != %s) {\n", c->fail);
	snprintf(items, sizeof(items), "%s", c->born);
	for (char *it = strtok_r(items, ",", &save); it; it = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(it, '=');
		const char *kind = "-1";
		if (eq)
			*eq++ = '\0';
		if (eq && !strncmp(eq, "like:", 5)) {
			fprintf(o, "\t\trto_fd_born_like(%s, a->%s);\n", fd_expr(it), eq + 5);
			continue;
		}
		for (size_t i = 0; eq && i < sizeof(kinds) / sizeof(kinds[0]); i++)
			if (!strcmp(eq, kinds[i].word))
				kind = kinds[i].kind;
		if (eq && !strcmp(kind, "-1"))
			fail_at(c->line,
				"'%s': born:%s=%s: pipe, socket, anon, signalfd or like:PARAM",
				c->name, it, eq);
		fprintf(o, "\t\trto_fd_born(%s, %s);\n", fd_expr(it), kind);
	}
	fprintf(o, "\t}\n");
}

static int has_param(const struct call *c, const char *name);

/*
 * "timerfd:create" (timerfd_create(clockid, flags)), "timerfd:set"
 * (timerfd_settime(fd, flags, nv, ...)): the run function tells
 * libsrc/predict/timerfd_track.c what the timerfd will do, wherever the
 * call ran, so that a marked thread's read of it can say when it ends.
 * "timer:create" (timer_create(clk, sevp, timerid)), "timer:set"
 * (timer_settime(t, flags, nv, ...)), "timer:delete" (timer_delete(t)):
 * the same for the POSIX timers that signal the program
 * (libsrc/predict/timer_track.c), for its waits for signals.
 */
static void emit_timer(FILE *o, const struct call *c)
{
	static const struct {
		const char *annotation, *call, *params[4];
	} timers[] = {
		{"timerfd:create",
		 "rto_timerfd_created(a->ret, a->clockid, a->flags)",
		 {"clockid", "flags"}},
		{"timerfd:set",
		 "rto_timerfd_set(a->ret, a->fd, a->flags, a->nv)",
		 {"fd", "flags", "nv"}},
		{"timer:create",
		 "rto_timer_created(a->ret, a->clk, a->sevp, a->timerid)",
		 {"clk", "sevp", "timerid"}},
		{"timer:set", "rto_timer_set(a->ret, a->t, a->flags, a->nv)", {"t", "flags", "nv"}},
		{"timer:delete", "rto_timer_deleted(a->ret, a->t)", {"t"}},
	};

	if (!c->timer[0])
		return;
	for (size_t i = 0; i < sizeof(timers) / sizeof(timers[0]); i++) {
		if (strcmp(c->timer, timers[i].annotation))
			continue;
		for (int k = 0; k < 4 && timers[i].params[k]; k++)
			if (!has_param(c, timers[i].params[k]))
				fail_at(c->line, "'%s': %s needs a parameter %s", c->name, c->timer,
					timers[i].params[k]);
		fprintf(o, "\t%s;\n", timers[i].call);
		return;
	}
	fail_at(c->line,
		"'%s': unknown annotation '%s' (timerfd:create|set, timer:create|set|delete)",
		c->name, c->timer);
}

static void emit_run(FILE *o, const struct call *c, int is_void)
{
	fprintf(o, "static void rto_run_%s(void *p)\n{\n", c->name);
	fprintf(o, "\tstruct rto_args_%s *a = p;\n", c->name);
	if (is_void && !c->np) /* sync(), tzset(): nothing in or out */
		fprintf(o, "\t(void)a;\n");
	emit_forgets_before(o, c);
	fprintf(o, "\t%srto_real_%s(", is_void ? "" : "a->ret = ", c->name);
	for (int i = 0; i < c->np; i++)
		fprintf(o, "%sa->%s", i ? ", " : "", c->p[i].name);
	fprintf(o, ");\n");
	emit_forgets_after(o, c);
	emit_births(o, c);
	emit_timer(o, c);
	fprintf(o, "}\n");
}

/*
 * A marked thread's part of the wrapper, inlined twice: as it is, and
 * between the fault readings of faults:warn (RTO_WATCHED).  Not
 * instrumented either, like the wrapper it is inlined into: GCC marks an
 * instrumented function's locals in and out of scope before inlining, and
 * the uninstrumented frame would never clear those marks (ASan then sees a
 * later call's arguments as used after their scope).
 */
static int has_param(const struct call *c, const char *name)
{
	for (int i = 0; i < c->np; i++)
		if (!strcmp(c->p[i].name, name))
			return 1;
	return 0;
}

/*
 * "timeout:ms=P" (poll's int milliseconds), "timeout:tv=P" (a relative
 * struct timeval *), "timeout:ts=P" (a relative struct timespec *),
 * "timeout:CLK,P" (an absolute timespec on CLK, a parameter or a
 * CLOCK_ constant), "timeout:cond=C,P" (an absolute timespec on the clock
 * of condition variable C): before a marked thread waits, it says until
 * when at the latest (libsrc/core/wake_hint.h).
 */
static void emit_timeout(FILE *o, const struct call *c)
{
	char items[64], *save = NULL, *v[2];
	int n = 0;

	if (!c->timeout[0])
		return;
	snprintf(items, sizeof(items), "%s", c->timeout);
	for (char *it = strtok_r(items, ",", &save); it && n < 2; it = strtok_r(NULL, ",", &save))
		v[n++] = it;
	static const struct {
		const char *key, *fn;
	} rel[] = {{"ms=", "rto_wake_by_ms"}, {"tv=", "rto_wake_by_tv"}, {"ts=", "rto_wake_by_ts"}};
	for (size_t i = 0; n == 1 && i < sizeof(rel) / sizeof(rel[0]); i++)
		if (!strncmp(v[0], rel[i].key, 3)) {
			if (!has_param(c, v[0] + 3))
				break;
			fprintf(o, "\t%s(%s);\n", rel[i].fn, v[0] + 3);
			return;
		}
	if (n == 2 && has_param(c, v[1])) {
		if (!strncmp(v[0], "cond=", 5) && has_param(c, v[0] + 5)) {
			fprintf(o, "\trto_wake_by_cond(%s, %s);\n", v[0] + 5, v[1]);
			return;
		}
		if (has_param(c, v[0]) || !strncmp(v[0], "CLOCK_", 6)) {
			fprintf(o, "\trto_wake_by_clock(%s, %s);\n", v[0], v[1]);
			return;
		}
	}
	fail_at(c->line, "'%s': timeout:%s: ms=P, tv=P, ts=P, CLK,P or cond=C,P of its parameters",
		c->name, c->timeout);
}

/*
 * "wake:sigset=SET[,ts=TS]" (sigwait, sigwaitinfo, sigtimedwait: a wait
 * for the signals in SET, at most a relative timeout TS), "wake:sigmask=M"
 * (sigsuspend: for the signals not in M): the next expiry of a POSIX
 * timer that sends one (libsrc/predict/timer_track.c), or TS at the latest.
 */
static void emit_wake_signals(FILE *o, const struct call *c)
{
	char items[64], *ts;
	int members = !strncmp(c->wake, "sigset=", 7);

	snprintf(items, sizeof(items), "%s", c->wake + (members ? 7 : 8));
	if ((ts = strchr(items, ',')) != NULL) {
		*ts++ = '\0';
		if (strncmp(ts, "ts=", 3) || !members || !has_param(c, ts + 3))
			fail_at(c->line, "'%s': wake:%s: sigset=SET[,ts=TS] or sigmask=M", c->name,
				c->wake);
		ts += 3;
	}
	if (!has_param(c, items))
		fail_at(c->line, "'%s': wake:%s names no parameter", c->name, c->wake);
	fprintf(o, "\trto_wake_on_signals(%s, %d, %s);\n", items, members, ts ? ts : "NULL");
}

/*
 * "wake:CLK,FLAGS,TS" (clock_nanosleep), "wake:TS" (a relative timespec),
 * "wake:us=US" (microseconds), "wake:fd=FD" (a read: of a timerfd the
 * program armed, its next expiry): before a marked thread sleeps, it says
 * until when (libsrc/core/wake_hint.h), for the helpers' plan.
 */
static void emit_wake(FILE *o, const struct call *c)
{
	char items[64], *save = NULL, *v[3];
	int n = 0;

	emit_timeout(o, c);
	if (!c->wake[0])
		return;
	if (!strncmp(c->wake, "sigset=", 7) || !strncmp(c->wake, "sigmask=", 8)) {
		emit_wake_signals(o, c);
		return;
	}
	if (!strncmp(c->wake, "fd=", 3)) {
		if (!has_param(c, c->wake + 3))
			fail_at(c->line, "'%s': wake:%s names no parameter", c->name, c->wake);
		fprintf(o, "\trto_wake_on_read(%s);\n", c->wake + 3);
		return;
	}
	snprintf(items, sizeof(items), "%s", c->wake);
	for (char *it = strtok_r(items, ",", &save); it && n < 3; it = strtok_r(NULL, ",", &save))
		v[n++] = it;
	const char *us = n == 1 && !strncmp(v[0], "us=", 3) ? v[0] + 3 : NULL;
	for (int i = 0; i < n; i++)
		if (!has_param(c, us && i == 0 ? us : v[i]))
			fail_at(c->line, "'%s': wake:%s names no parameter", c->name, c->wake);
	if (us)
		fprintf(o, "\trto_wake_after_ns((uint64_t)%s * 1000);\n", us);
	else if (n == 1)
		fprintf(o, "\trto_wake_at_clock(CLOCK_MONOTONIC, 0, %s);\n", v[0]);
	else if (n == 3)
		fprintf(o, "\trto_wake_at_clock(%s, %s, %s);\n", v[0], v[1], v[2]);
	else
		fail_at(c->line, "'%s': wake:CLK,FLAGS,TS, wake:TS or wake:us=US", c->name);
}

static void emit_routed(FILE *o, const struct call *c, int is_void)
{
	fprintf(o,
		"static inline __attribute__((always_inline)) RTO_UNINSTRUMENTED %s rto_routed_%s(",
		c->ret, c->name);
	list(o, c, 1);
	fprintf(o, ")\n{\n");
	emit_async(o, c);
	if (c->flush && c->async[0]) /* not queued: what is queued goes first, as unmarked */
		fprintf(o, "\trto_async_flush_point();\n");
	emit_wake(o, c);
	emit_args(o, c, "\t");
	if (is_void)
		fprintf(o, "\t%s;\n}\n", route_call(c));
	else
		fprintf(o, "\treturn %s ? %s : a.ret;\n}\n", route_call(c), c->fail);
}

static void emit_call(FILE *o, const struct call *c, const char *class_macro)
{
	int is_void = !strcmp(c->ret, "void");
	fprintf(o, "/* %s */\n", c->name);
	if ((c->wake[0] || c->timeout[0]) && hand_written(c))
		fail_at(c->line, "'%s': wake: and timeout: are for generated wrappers", c->name);
	if (!strcmp(c->made, "thread")) {
		if (annotated(c))
			fail_at(c->line, "'%s': a thread call is never routed: no annotations",
				c->name);
		fprintf(o, "\n");
		return;
	}
	if (!strcmp(c->made, "hand")) {
		if (annotated(c))
			fail_at(c->line, "'%s': a hand-written wrapper does its own forget/born",
				c->name);
		(void)class_macro; /* shims.h: its wrap_*.c holds the descriptor */
		fprintf(o, "\n");
		return;
	}
	if (c->born[0] && is_void)
		fail_at(c->line, "'%s': born: needs a return value to tell success", c->name);

	fprintf(o, "struct rto_args_%s {\n", c->name);
	if (!is_void)
		fprintf(o, "\t%s ret;\n", c->ret);
	for (int i = 0; i < c->np; i++)
		fprintf(o, "\t%s;\n", c->p[i].member);
	fprintf(o, "};\n");
	emit_run(o, c, is_void);
	/* Arguments that fit travel inside the request's first line (request.h). */
	fprintf(o,
		"RTO_FN_ARGS(%s, %s, %s, rto_run_%s, %s, RTO_ARGS_INLINE_SIZE(struct "
		"rto_args_%s));\n",
		c->name, class_macro, strcmp(c->handling, "local") ? "RTO_OFFLOAD" : "RTO_LOCAL",
		c->name, flags_of(c), c->name);
	emit_routed(o, c, is_void);

	fprintf(o, "RTO_EXPORT RTO_UNINSTRUMENTED %s %s(", c->ret, c->name);
	list(o, c, 1);
	fprintf(o, ")\n{\n");
	/*
	 * A flush that can be queued (async:flush): a marked thread's only
	 * queues a mark behind its writes, never waits (rto_routed_NAME).
	 */
	if (c->flush && c->async[0])
		fprintf(o, "\tif (rto_direct())\n\t\trto_async_flush_point();\n");
	else if (c->flush)
		fprintf(o, "\trto_async_flush_point();\n");
	if (annotated(c)) { /* the run function forgets and learns descriptors */
		fprintf(o, "\tif (rto_direct()) {\n");
		emit_args(o, c, "\t\t");
		fprintf(o, "\t\trto_run_%s(&a);\n\t\treturn%s;\n\t}\n", c->name,
			is_void ? "" : " a.ret");
	} else if ((c->async[0] || c->ordered) && !c->flush) {
		/* Unmarked: after what marked threads queued (async.h rto_async_order). */
		fprintf(o, "\tif (rto_direct()) {\n\t\trto_async_order();\n");
		fprintf(o, "\t\treturn rto_real_%s(", c->name);
		list(o, c, 0);
		fprintf(o, ");\n\t}\n");
	} else {
		fprintf(o, "\tif (rto_direct())\n\t\treturn rto_real_%s(", c->name);
		list(o, c, 0);
		fprintf(o, ");\n");
	}
	/*
	 * faults:warn (callsite.h): the routed part between two fault
	 * readings, written out here as RTO_WATCHED() is for the hand-made
	 * wrappers, so that the generated path needs no header's logic.
	 */
	if (!is_void)
		fprintf(o, "\t%s ret;\n", c->ret);
	fprintf(o,
		"\tif (RTO_UNLIKELY(rto_fault_watch)) {\n\t\tstruct rto_fault_mark fm;\n"
		"\t\trto_fault_begin(&fm);\n\t\t%srto_routed_%s(",
		is_void ? "" : "ret = ", c->name);
	list(o, c, 0);
	fprintf(o, ");\n\t\trto_fault_end(&fm, &rto_fn_%s);\n\t} else {\n\t\t%srto_routed_%s(",
		c->name, is_void ? "" : "ret = ", c->name);
	list(o, c, 0);
	fprintf(o, ");\n\t}\n%s}\n\n", is_void ? "" : "\treturn ret;\n");
}

/* A generated file, opened with its first lines: NULL (said) when it cannot be. */
static FILE *open_generated(const char *path, const char *first_lines)
{
	FILE *o = fopen(path, "w");
	if (!o) {
		perror(path);
		return NULL;
	}
	fprintf(o,
		"/* Generated by shim-gen from shim-gen/calls.tbl: edit the table, not this. "
		"*/\n%s",
		first_lines);
	return o;
}

/* 0, or 1 when the file could not be written out (said). */
static int close_generated(FILE *o, const char *path)
{
	if (fclose(o)) {
		perror(path);
		return 1;
	}
	return 0;
}

/* shims.h: the real pointers and descriptors, for the hand-written wrappers. */
/*
 * real.c: the real-function pointers and rto_resolve_all(), a unit of their
 * own that needs only resolve.c, so that the library's leaf units can call
 * libc without depending on the wrappers.
 */
static int write_reals(const char *path, const struct call *calls, int n)
{
	FILE *o = open_generated(path, "#include \"shims_prelude.h\"\n\n");
	if (!o)
		return 1;
	for (int i = 0; i < n; i++) {
		const struct call *c = &calls[i];
		if (c->variadic) { /* a lazy stub cannot forward "...": RTO_HAND_REAL checks */
			fprintf(o, "RTO_HIDDEN %s (*rto_real_%s)(", c->ret, c->name);
			list(o, c, 1);
			fprintf(o, ");\n");
			continue;
		}
		fprintf(o, "RTO_REAL(%s, %s, (", c->ret, c->name);
		list(o, c, 1);
		fprintf(o, "), (");
		list(o, c, 0);
		fprintf(o, "))\n");
	}
	fprintf(o, "\nvoid rto_resolve_all(void)\n{\n");
	for (int i = 0; i < n; i++)
		fprintf(o, "\tRTO_RESOLVE(rto_real_%s, \"%s\", %s%s);\n", calls[i].name,
			calls[i].name, calls[i].variadic ? "NULL" : "(void *)rto_lazy_",
			calls[i].variadic ? "" : calls[i].name);
	fprintf(o, "}\n");
	return close_generated(o, path);
}

static int write_header(const char *path, const struct call *calls, int n)
{
	FILE *o = open_generated(path, "#ifndef RTO_SHIMS_H\n#define RTO_SHIMS_H\n\n");
	if (!o)
		return 1;
	for (int i = 0; i < n; i++) {
		fprintf(o, "RTO_HIDDEN extern %s (*rto_real_%s)(", calls[i].ret, calls[i].name);
		list(o, &calls[i], 1);
		fprintf(o, ");\n");
		if (strcmp(calls[i].made, "thread"))
			fprintf(o, "RTO_HIDDEN extern struct rto_fn rto_fn_%s;\n", calls[i].name);
		/*
		 * A hand-written wrapper's descriptor lives in its wrap_*.c
		 * (RTO_FN_HAND(name) there), next to its runner: the wrappers
		 * and shims.c do not call each other.
		 */
		if (!strcmp(calls[i].made, "hand")) {
			const struct call *c = &calls[i];
			fprintf(o, "RTO_HIDDEN void rto_run_%s(void *args);\n", c->name);
			fprintf(o,
				"#define RTO_FN_HAND_%s RTO_FN_FULL(%s, %s, RTO_OFFLOAD, "
				"rto_run_%s, "
				"%s)\n",
				c->name, c->name, classes[class_index(c)].macro, c->name,
				flags_of(c));
		}
	}
	fprintf(o, "\n#endif\n");
	return close_generated(o, path);
}

int main(int argc, char **argv)
{
	static struct call calls[MAX_CALLS];
	int n = 0, lineno = 0;
	char line[1024];

	if (argc != 5) {
		fprintf(stderr, "usage: shim-gen calls.tbl shims.c shims.h real.c\n");
		return 2;
	}
	table_path = argv[1];
	FILE *in = fopen(argv[1], "r");
	if (!in) {
		perror(argv[1]);
		return 1;
	}
	while (fgets(line, sizeof(line), in)) {
		lineno++;
		if (n == MAX_CALLS)
			fail_at(lineno, "more than %d calls", MAX_CALLS);
		calls[n].line = lineno;
		n += parse_line(line, &calls[n]);
	}
	fclose(in);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < i; j++)
			if (!strcmp(calls[i].name, calls[j].name))
				fail_at(calls[i].line, "'%s' listed twice", calls[i].name);

	if (write_header(argv[3], calls, n) || write_reals(argv[4], calls, n))
		return 1;
	FILE *o = open_generated(argv[2], "#include \"shims_prelude.h\"\n\n");
	if (!o)
		return 1;
	for (size_t k = 0; k < sizeof(classes) / sizeof(classes[0]); k++) {
		fprintf(o, "/* ==== %s: %s %.*s */\n\n", classes[k].cls, classes[k].banner,
			(int)(66 - strlen(classes[k].cls) - strlen(classes[k].banner)),
			"====================================================================");
		for (int i = 0; i < n; i++)
			if (class_index(&calls[i]) == (int)k)
				emit_call(o, &calls[i], classes[k].macro);
	}
	return close_generated(o, argv[2]);
}
