/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * RTOFFLOAD_OPTIONS: "key=value:key=value", the sanitizers' format.
 *
 * A typo must never silently turn offloading off, so every key is known
 * and every value is checked, and the first bad one ends the program with
 * a line naming the key and what it accepts.  The parser reads the string
 * in place (no copy, no malloc, no I/O): it runs in the constructor and it
 * is fuzzed.  A key is one line of the table below.  The library loads
 * the options from the environment in options_load.c.
 */
#include "options.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cpulist.h"
#include "rtoffload.h" /* RT_OFFLOAD_MODE_* */

#define STR_(x) #x
#define STR(x)	STR_(x)

/* The longest key or value an error message quotes, in input bytes. */
#define QUOTE_MAX 48
/* RTO_OPTIONS_ERR_MAX (options.h): 48 bytes quoted as \xNN plus the list of keys. */

/* A value: not terminated, it ends at the next ':' or the end. */
struct val {
	const char *s;
	size_t n;
};

struct word {
	const char *name;
	int value;
};

struct key {
	const char *name;
	int (*parse)(const struct key *k, struct val v, struct rto_options *o);
	size_t off;  /* the field in struct rto_options */
	size_t flag; /* CPU lists: the int that says the list was given */
	uint64_t lo, hi;
	const struct word *words; /* NULL-terminated */
	const char *accepts;	  /* the error says "expected <accepts>" */
	const char *does;	  /* rtoffload check: what the key does, one line */
};

static void *field(struct rto_options *o, size_t off)
{
	return (char *)o + off;
}

/* Decimal only: no sign, no space, no 0x; overflow is an error. */
static int decimal(struct val v, uint64_t *out)
{
	uint64_t x = 0;

	if (v.n == 0)
		return -1;
	for (size_t i = 0; i < v.n; i++) {
		unsigned d = (unsigned char)v.s[i] - '0';

		if (d > 9 || x > (UINT64_MAX - d) / 10)
			return -1;
		x = x * 10 + d;
	}
	*out = x;
	return 0;
}

static int in_range(const struct key *k, struct val v, uint64_t *x)
{
	return decimal(v, x) == 0 && *x >= k->lo && *x <= k->hi ? 0 : -1;
}

static int is(struct val v, const char *s)
{
	return strlen(s) == v.n && memcmp(v.s, s, v.n) == 0;
}

static const struct word *find_word(const struct word *w, struct val v)
{
	for (; w->name; w++) {
		if (is(v, w->name))
			return w;
	}
	return NULL;
}

/* One parser per field type; the table picks it with _Generic. */
#define NUMBER_PARSER(fname, type)                                                 \
	static int fname(const struct key *k, struct val v, struct rto_options *o) \
	{                                                                          \
		uint64_t x;                                                        \
		if (in_range(k, v, &x) < 0)                                        \
			return -1;                                                 \
		*(type *)field(o, k->off) = (type)x;                               \
		return 0;                                                          \
	}
NUMBER_PARSER(parse_u64, uint64_t)
NUMBER_PARSER(parse_uint, unsigned)
NUMBER_PARSER(parse_int, int)

static int parse_word(const struct key *k, struct val v, struct rto_options *o)
{
	const struct word *w = find_word(k->words, v);

	if (!w)
		return -1;
	*(int *)field(o, k->off) = w->value;
	return 0;
}

/* rto_cpulist_parse() wants a string; a longer list is no list. */
static int parse_cpus(const struct key *k, struct val v, struct rto_options *o)
{
	char s[4096];

	if (v.n >= sizeof(s))
		return -1;
	memcpy(s, v.s, v.n);
	s[v.n] = '\0';
	if (rto_cpulist_parse(s, field(o, k->off)) < 0)
		return -1;
	*(int *)field(o, k->flag) = 1;
	return 0;
}

/* Verbatim, "%p" and all: the user of the path expands it.  k->hi: size. */
static int parse_path(const struct key *k, struct val v, struct rto_options *o)
{
	char *dst = field(o, k->off);

	if (v.n >= k->hi)
		return -1;
	memcpy(dst, v.s, v.n);
	dst[v.n] = '\0';
	return 0;
}

/* N|inherit|none: two fields, so a parser of its own. */
static int parse_prio(const struct key *k, struct val v, struct rto_options *o)
{
	const struct word *w = find_word(k->words, v);
	uint64_t x;

	if (w) {
		o->helper_prio_mode = w->value;
		return 0;
	}
	if (in_range(k, v, &x) < 0)
		return -1;
	o->helper_prio_mode = RTO_PRIO_FIXED;
	o->helper_prio = (int)x;
	return 0;
}

/* mark=main,rt,name:GLOB,...: a comma list of policies; "none" clears. */
static int parse_mark_one(struct val w, struct rto_options *o)
{
	static const struct word policies[] = {
		{"main", RTO_MARK_MAIN}, {"rt", RTO_MARK_RT}, {"cpus", RTO_MARK_CPUS},
		{"all", RTO_MARK_ALL},	 {"none", 0},	      {NULL, 0},
	};
	const struct word *p = find_word(policies, w);

	if (w.n > 5 && memcmp(w.s, "name:", 5) == 0) {
		if (w.n - 5 >= sizeof(o->mark_name))
			return -1;
		memcpy(o->mark_name, w.s + 5, w.n - 5);
		o->mark_name[w.n - 5] = '\0';
		o->mark |= RTO_MARK_NAME;
		return 0;
	}
	if (!p)
		return -1;
	if (p->value == 0) {
		o->mark = 0;
		o->mark_name[0] = '\0';
	}
	o->mark |= (unsigned)p->value;
	return 0;
}

/* Each comma-separated item of v through one(); -1 at the first bad one. */
static int each_item(struct val v, struct rto_options *o,
		     int (*one)(struct val, struct rto_options *))
{
	for (const char *s = v.s, *end = v.s + v.n; s <= end;) {
		const char *comma = memchr(s, ',', (size_t)(end - s));
		const char *stop = comma ? comma : end;
		if (one((struct val){s, (size_t)(stop - s)}, o) < 0)
			return -1;
		s = stop + 1;
	}
	return 0;
}

static int parse_mark(const struct key *k, struct val v, struct rto_options *o)
{
	(void)k;
	o->mark = 0; /* the last mark= wins, like any key */
	o->mark_name[0] = '\0';
	return each_item(v, o, parse_mark_one);
}

/* The rules are checked against the call table at load (policy.c). */
static int parse_policy(const struct key *k, struct val v, struct rto_options *o)
{
	(void)k;
	if (v.n >= sizeof(o->policy))
		return -1;
	memcpy(o->policy, v.s, v.n);
	o->policy[v.n] = '\0';
	return 0;
}

static const struct word async_full_words[] = {
	{"wait", RTO_ASYNC_FULL_WAIT},
	{"sync", RTO_ASYNC_FULL_SYNC},
	{NULL, 0},
};

static const struct word helper_wake_words[] = {
	{"predict", RTO_WAKE_PREDICT},
	{"idle", RTO_WAKE_IDLE},
	{NULL, 0},
};

static const struct word malloc_words[] = {
	{"glibc", RTO_MALLOC_GLIBC},
	{"pool", RTO_MALLOC_POOL},
	{NULL, 0},
};

static const struct word pool_full_words[] = {
	{"fallback", RTO_POOL_FULL_FALLBACK},
	{"fail", RTO_POOL_FULL_FAIL},
	{"abort", RTO_POOL_FULL_ABORT},
	{NULL, 0},
};

static const struct word pool_fork_words[] = {
	{"copy", RTO_POOL_FORK_COPY},
	{"drop", RTO_POOL_FORK_DROP},
	{NULL, 0},
};

static const struct word backstop_words[] = {
	{"on", 1},
	{"off", 0},
	{NULL, 0},
};

static const struct word children_words[] = {
	{"caller", RTO_CHILDREN_CALLER},
	{"helpers", RTO_CHILDREN_HELPERS},
	{NULL, 0},
};

static const struct word on_strict_words[] = {
	{"errno", RTO_ON_STRICT_ERRNO},
	{"signal", RTO_ON_STRICT_SIGNAL},
	{"abort", RTO_ON_STRICT_ABORT},
	{NULL, 0},
};

static const struct word on_stall_words[] = {
	{"wait", RTO_ON_STALL_WAIT},
	{"local", RTO_ON_STALL_LOCAL},
	{NULL, 0},
};

/* fd_local=pipe,tmpfs,...: the kinds of descriptor whose calls run locally. */
static int parse_fd_kind(struct val w, struct rto_options *o)
{
	static const struct word kinds[] = {
		{"pipe", RTO_FD_PIPE},
		{"socket", RTO_FD_SOCKET},
		{"anon", RTO_FD_ANON},
		{"tmpfs", RTO_FD_TMPFS},
		{"chr", RTO_FD_CHR},
		{"none", 0},
		{NULL, 0},
	};
	const struct word *kind = find_word(kinds, w);

	if (!kind)
		return -1;
	o->fd_local |= (unsigned)kind->value;
	return 0;
}

static int parse_fd_local(const struct key *k, struct val v, struct rto_options *o)
{
	(void)k;
	o->fd_local = 0;
	return each_item(v, o, parse_fd_kind);
}

/*
 * async_path=/var/log/app,/srv/log: absolute prefixes, at most 16, comma
 * separated (a path holding ',' cannot be one; one holding ':' is quoted).
 */
#define ASYNC_PATHS_MAX 16

static int check_async_path(struct val w, struct rto_options *o)
{
	(void)o;
	if (w.n == 0 || w.s[0] != '/' || w.n >= PATH_MAX || memchr(w.s, '\n', w.n))
		return -1;
	return 0;
}

static int parse_async_path(const struct key *k, struct val v, struct rto_options *o)
{
	size_t items = 1;

	(void)k;
	for (size_t i = 0; i < v.n; i++)
		items += v.s[i] == ',';
	if (v.n >= sizeof(o->async_path) || items > ASYNC_PATHS_MAX ||
	    each_item(v, o, check_async_path) < 0)
		return -1;
	memcpy(o->async_path, v.s, v.n);
	o->async_path[v.n] = '\0';
	return 0;
}

static const struct word modes[] = {
	{"offload", RT_OFFLOAD_MODE_OFFLOAD},
	{"strict", RT_OFFLOAD_MODE_STRICT},
	{NULL, 0},
};

/* trace=: trace_file= needs no word; lttng loads the LTTng-UST provider (trace.c). */
static const struct word trace_words[] = {
	{"off", RTO_TRACE_OPT_OFF},
	{"lttng", RTO_TRACE_OPT_LTTNG},
	{NULL, 0},
};

static const struct word prio_words[] = {
	{"inherit", RTO_PRIO_INHERIT},
	{"none", RTO_PRIO_NONE},
	{NULL, 0},
};

#define OFF(f)	  offsetof(struct rto_options, f)
#define FTYPE(f)  (((struct rto_options *)0)->f)
#define SIZEOF(f) sizeof(FTYPE(f))

/* The number parser that fits the field's type. */
/* clang-format off */
#define NUMBER_FN(f) _Generic(FTYPE(f), uint64_t: parse_u64, unsigned: parse_uint, int: parse_int)
/* clang-format on */

#define NUMBER(f, min, max, what, means)                                                    \
	{                                                                                   \
		.name = #f, .parse = NUMBER_FN(f), .off = OFF(f), .lo = (min), .hi = (max), \
		.accepts = (what), .does = (means)                                          \
	}
#define WORDS(f, list, what, means)                                              \
	{                                                                        \
		.name = #f, .parse = parse_word, .off = OFF(f), .words = (list), \
		.accepts = (what), .does = (means)                               \
	}
#define CPUS(f, means)                                                                \
	{                                                                             \
		.name = #f, .parse = parse_cpus, .off = OFF(f), .flag = OFF(f##_set), \
		.accepts = "a CPU list like 1,4-7 (CPUs below " STR(CPU_SETSIZE) ")", \
		.does = (means)                                                       \
	}
#define PATH(f, means)                                                                    \
	{                                                                                 \
		.name = #f, .parse = parse_path, .off = OFF(f), .hi = SIZEOF(f),          \
		.accepts = "a path shorter than " STR(PATH_MAX) " bytes", .does = (means) \
	}

/* A key with a parser of its own. */
#define KEY(n, fn, min, max, list, what, means)                                        \
	{                                                                              \
		.name = (n), .parse = (fn), .lo = (min), .hi = (max), .words = (list), \
		.accepts = (what), .does = (means)                                     \
	}

static const struct key keys[] = {
	CPUS(rt_cpus, "the CPUs reserved for realtime threads: helpers avoid them"),
	CPUS(helper_cpus, "the CPUs the helper threads are pinned to"),
	KEY("helper_priority", parse_prio, 1, 99, prio_words,
	    "a SCHED_FIFO priority from 1 to 99, inherit or none",
	    "helper scheduling: SCHED_FIFO N, inherit (each call at its caller's priority) "
	    "or none (SCHED_OTHER)"),
	NUMBER(workers, 1, 64, "a whole number from 1 to 64",
	       "how many helper threads serve the calls"),
	WORDS(mode, modes, "offload or strict",
	      "offload (run calls on a helper) or strict (refuse them with EPERM) for threads "
	      "that did not choose"),
	NUMBER(spin_ns, 0, UINT64_C(10000000000), "a whole number from 0 to 10000000000",
	       "how long a waiting caller spins before it sleeps on a futex"),
	NUMBER(helper_idle_us, 0, 10000000, "a whole number from 0 to 10000000",
	       "how long an idle helper polls before it sleeps (latency vs. a busy "
	       "housekeeping CPU); with helper_wake=predict, for calls it cannot foresee and "
	       "loops later than their window"),
	WORDS(helper_wake, helper_wake_words, "predict or idle",
	      "predict: helpers learn each marked thread's period and poll only around its "
	      "next calls; idle: they poll helper_idle_us after each call"),
	NUMBER(helper_nap_us, 0, 10000000, "a whole number from 0 to 10000000",
	       "helper_wake=predict: a helper sleeps until a window in steps of at most this "
	       "long, so that its CPU (or a VM's virtual CPU) is never idle long enough to "
	       "wake late; 0: one sleep"),
	NUMBER(stats, 0, 1, "0 or 1", "a table of the calls on stderr at exit"),
	PATH(stats_file, "the same as JSON into this file (%p: the pid)"),
	PATH(policy_file, "the policy= rules, read from a file"),
	PATH(report_path, "where warn/strict/fault reports go"),
	PATH(suppressions, "reports to leave out, sanitizer style"),
	KEY("policy", parse_policy, 0, 0, NULL,
	    "a comma list of NAME:HANDLING, NAME a call, a class or SYS_name, "
	    "HANDLING offload, local, strict, warn or async",
	    "per class, call or system call: offload, local, strict, warn or async"),
	WORDS(on_strict, on_strict_words, "errno, signal or abort",
	      "what a refused call also does: errno, signal (SIGXCPU) or abort"),
	NUMBER(report_max, 0, 1000000, "a whole number from 0 to 1000000",
	       "at most this many reports; later events are only counted"),
	NUMBER(report_offloads, 0, 1, "0 or 1",
	       "attribute every offload to its call site (a backtrace per call)"),
	NUMBER(mlock, 0, 1, "0 or 1",
	       "mlockall() at load: no page faults later (needs RLIMIT_MEMLOCK or "
	       "CAP_IPC_LOCK)"),
	NUMBER(async_ring_kb, 4, 1048576, "a whole number of KiB from 4 to 1048576",
	       "each marked thread's ring for async writes"),
	WORDS(async_full, async_full_words, "wait or sync",
	      "a full async ring waits for the helper, or writes synchronously"),
	KEY("async_path", parse_async_path, 0, 0, NULL,
	    "a comma list of absolute path prefixes (at most " STR(
		    ASYNC_PATHS_MAX) ", 1023 bytes in all)",
	    "files under these paths are written asynchronously"),
	NUMBER(prefault_stack_kb, 0, 65536, "a whole number of KiB from 0 to 65536",
	       "touch this much stack when a thread is marked"),
	{.name = "malloc",
	 .parse = parse_word,
	 .off = OFF(malloc_mode),
	 .words = malloc_words,
	 .accepts = "glibc or pool",
	 .does = "how a marked thread allocates: glibc (the next allocator) or pool (its own "
		 "prefaulted, locked, O(1) pool)"},
	NUMBER(pool_kb, 64, 1048576, "a whole number of KiB from 64 to 1048576",
	       "malloc=pool: each marked thread's pool"),
	WORDS(pool_full, pool_full_words, "fallback, fail or abort",
	      "malloc=pool, no block left: fall back to the next allocator, fail with ENOMEM, "
	      "or abort"),
	WORDS(pool_fork, pool_fork_words, "copy or drop",
	      "malloc=pool, fork(): the child gets a copy of every pool, or only the forking "
	      "thread's"),
	NUMBER(prefault_heap_kb, 0, 1048576, "a whole number of KiB from 0 to 1048576",
	       "malloc=glibc with mlock=1: this much of the marked thread's arena allocated, "
	       "written and freed at its mark, and never trimmed"),
	KEY("fd_local", parse_fd_local, 0, 0, NULL,
	    "a comma list of pipe, socket, anon, tmpfs, chr, or none",
	    "descriptor kinds whose read/write run on the caller"),
	NUMBER(verbosity, 0, 2, "0, 1 or 2",
	       "what the library says on stderr: where helpers run, what was dropped"),
	NUMBER(live, 0, 1, "0 or 1",
	       "the live view for rtoffload stat/top (/dev/shm/rtoffload.PID)"),
	WORDS(backstop, backstop_words, "on or off",
	      "Syscall User Dispatch: every system call a marked thread makes behind the "
	      "library's back traps and is decided by the system-call table"),
	NUMBER(report_traps, 0, 1, "0 or 1",
	       "report each new call site whose system call trapped, with a backtrace"),
	WORDS(children, children_words, "caller or helpers",
	      "where a marked thread's system, popen and posix_spawn run: caller (the child "
	      "inherits its CPUs, scheduling and signal mask) or helpers (their CPUs)"),
	/* Stalls (stall.c, transport.c, helper.c). */
	NUMBER(stall_us, 0, 60000000, "a whole number from 0 to 60000000",
	       "a call not served within this is reported, counted and shown by rtoffload top "
	       "(default 10000; 0: never); one whose helper waits for input, as its caller "
	       "would have, is counted and shown only"),
	WORDS(on_stall, on_stall_words, "wait or local",
	      "a call no helper took within stall_us: wait for one, or run it on its caller "
	      "(counted as fallback; never for strict threads)"),
	NUMBER(workers_max, 1, 64, "a whole number from 1 to 64",
	       "more workers start, up to this, while every worker is inside a call longer "
	       "than stall_us and calls wait (default 8: a few blocked readers and the "
	       "others' calls); idle ones exit"),
	/* Traces (trace.c, docs/TRACING.md). */
	PATH(trace_file, "Chrome trace-event JSON of every offload, for ui.perfetto.dev and "
			 "chrome://tracing (%p: the pid)"),
	NUMBER(trace_ring_kb, 4, 1048576, "a whole number of KiB from 4 to 1048576",
	       "trace_file=: each traced thread's ring of events (32 bytes each); a full ring "
	       "drops and counts"),
	WORDS(trace, trace_words, "off or lttng",
	      "lttng: LTTng-UST tracepoints rtoffload:* (librtoffload-lttng.so, loaded only "
	      "then); without liblttng-ust, one line and no trace"),
	KEY("mark", parse_mark, 0, 0, NULL,
	    "a comma list of none, main, all, rt, cpus, name:GLOB (quote it: mark=\"name:a*\")",
	    "marks threads without the API: none, main, all, rt (SCHED_FIFO/RR), cpus "
	    "(affinity inside rt_cpus), name:GLOB"),
};

#define NKEYS (sizeof(keys) / sizeof(keys[0]))

void rto_options_defaults(struct rto_options *o)
{
	memset(o, 0, sizeof(*o)); /* no CPU lists, no stats, quiet */
	o->helper_prio_mode = RTO_PRIO_INHERIT;
	o->workers = 2;
	o->mode = RT_OFFLOAD_MODE_OFFLOAD;
	o->spin_ns = 20000;
	o->helper_idle_us = 200;
	o->helper_wake = RTO_WAKE_PREDICT;
	o->helper_nap_us = 200; /* docs/periodic.md, rule 14 */
	o->report_max = 100;
	o->live = 1; /* costs nothing per call (live.c); live=0 for no thread, no segment */
	o->async_ring_kb = 256;
	o->pool_kb = 4096;
	o->backstop = 1; /* on wherever the kernel has it (backstop.c) */
	o->fd_local = RTO_FD_PIPE | RTO_FD_SOCKET | RTO_FD_ANON | RTO_FD_TMPFS | RTO_FD_CHR;
	/*
	 * 10 ms: far above any round trip, far below a watchdog's.  A call
	 * whose worker waits for input as its caller would have (a pipe, a
	 * socket, a FIFO's open: stall_probe.c) is counted, not said: a line
	 * on stderr about the program's own wait would change what programs'
	 * own tests see (issue 28).
	 */
	o->stall_us = 10000;
	/*
	 * Each worker stuck in a call that waits for input (a pipe, a socket,
	 * a FIFO's open) holds one: 8 lets six of them wait beside the two
	 * workers= sets for the others' calls, for 1 MiB of stack each (locked
	 * under mlock=1) only while they are needed.
	 */
	o->workers_max = 8;
	o->trace_ring_kb = 1024; /* 32768 events: a second of a 10 kHz loop and its helpers */
}

/*
 * The error line.  It goes to a terminal and into logs, so what comes
 * from the user is quoted with control and non-ASCII bytes escaped, and
 * cut: one line, whatever the environment holds.
 */
struct msg {
	char *buf;
	size_t len, pos;
};

static void put(struct msg *m, const char *s, size_t n)
{
	if (m->len == 0)
		return;
	for (size_t i = 0; i < n && m->pos + 1 < m->len; i++)
		m->buf[m->pos++] = s[i];
	m->buf[m->pos] = '\0';
}

static void puts0(struct msg *m, const char *s)
{
	put(m, s, strlen(s));
}

static void put_quoted(struct msg *m, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";

	for (size_t i = 0; i < n && i < QUOTE_MAX; i++) {
		unsigned char c = (unsigned char)s[i];
		char esc[4] = {'\\', 'x', hex[c >> 4], hex[c & 15]};

		if (c >= 0x20 && c < 0x7f && c != '\\')
			put(m, s + i, 1);
		else
			put(m, esc, sizeof(esc));
	}
	if (n > QUOTE_MAX)
		puts0(m, "...");
}

static int unknown_key(struct msg *m, const char *s, size_t n)
{
	puts0(m, "RTOFFLOAD_OPTIONS: unknown key '");
	put_quoted(m, s, n);
	puts0(m, "' (keys: ");
	for (size_t i = 0; i < NKEYS; i++) {
		puts0(m, keys[i].name);
		puts0(m, i + 1 < NKEYS ? ", " : ")");
	}
	return -1;
}

static int no_value(struct msg *m, const struct key *k)
{
	puts0(m, "RTOFFLOAD_OPTIONS: '");
	puts0(m, k->name);
	puts0(m, "' has no '=value': expected ");
	puts0(m, k->accepts);
	return -1;
}

static int bad_value(struct msg *m, const struct key *k, struct val v)
{
	puts0(m, "RTOFFLOAD_OPTIONS: ");
	puts0(m, k->name);
	puts0(m, "=");
	put_quoted(m, v.s, v.n);
	puts0(m, ": expected ");
	puts0(m, k->accepts);
	return -1;
}

static const struct key *find_key(const char *s, size_t n)
{
	for (size_t i = 0; i < NKEYS; i++) {
		if (is((struct val){s, n}, keys[i].name))
			return &keys[i];
	}
	return NULL;
}

/* One "key=value" of n bytes, not terminated. */
static int parse_one(const char *s, size_t n, struct rto_options *o, struct msg *m)
{
	const char *eq = memchr(s, '=', n);
	size_t kn = eq ? (size_t)(eq - s) : n;
	const struct key *k = find_key(s, kn);
	struct val v;

	if (!k)
		return unknown_key(m, s, kn);
	if (!eq)
		return no_value(m, k);
	v = (struct val){eq + 1, n - kn - 1};
	if (v.n >= 2 && v.s[0] == '"' && v.s[v.n - 1] == '"')
		v = (struct val){v.s + 1, v.n - 2}; /* key="a:b": the quotes hide ':' */
	if (k->parse(k, v, o) < 0)
		return bad_value(m, k, v);
	return 0;
}

const char *rto_options_does(const char *key, size_t n)
{
	const struct key *k = find_key(key, n);

	return k ? k->does : NULL;
}

/*
 * The ':' that ends the segment at s.  A value may itself hold ':'
 * (mark=name:ctl*, policy=fsync:strict,dns:offload), so a ':' ends a
 * segment only when what follows it up to the next ':' has an '=', i.e.
 * looks like the next key; a quoted value (key="a:b") hides its ':' too.
 */
const char *rto_options_segment_end(const char *s)
{
	const char *eq = s + strcspn(s, ":=");
	const char *p = eq;

	if (*eq == '=' && eq[1] == '"' && strchr(eq + 2, '"'))
		p = strchr(eq + 2, '"');
	for (p += strcspn(p, ":"); *p; p += 1 + strcspn(p + 1, ":")) {
		const char *next = p + 1 + strcspn(p + 1, ":=");
		if (*next == '=' || p == eq || next == p + 1) /* key=, bare key, or empty */
			return p;
	}
	return p;
}

/*
 * Empty segments ("a=1::b=2", a trailing ':') are skipped; a repeated key
 * overrides the earlier one.  On error *o may hold the keys before the
 * bad one: the caller ends the program anyway.
 */
int rto_options_parse(const char *text, struct rto_options *o, char *err, size_t len)
{
	struct msg m = {err, err ? len : 0, 0};
	const char *s = text, *end;

	if (m.len)
		err[0] = '\0';
	if (!s)
		return 0;
	for (; *s; s = *end ? end + 1 : end) {
		end = rto_options_segment_end(s);
		if (end > s && parse_one(s, (size_t)(end - s), o, &m) < 0)
			return -1;
	}
	return 0;
}

int rto_options_path(const char *pattern, int pid, char *out, size_t len)
{
	char digits[12];
	size_t n = 0, d = 0;
	unsigned v = pid < 0 ? 0u : (unsigned)pid;

	do
		digits[d++] = (char)('0' + v % 10);
	while ((v /= 10) && d < sizeof(digits));
	for (const char *p = pattern; *p; p++) {
		int is_pid = p[0] == '%' && p[1] == 'p';
		size_t need = is_pid ? d : 1;
		if (n + need >= len)
			return -1;
		for (size_t i = 0; i < need; i++)
			out[n++] = is_pid ? digits[d - 1 - i] : *p;
		p += is_pid;
	}
	if (!len)
		return -1;
	out[n] = '\0';
	return 0;
}
