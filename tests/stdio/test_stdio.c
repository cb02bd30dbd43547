/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A marked thread that holds flockfile(f) and calls fprintf(f): the helper
 * that runs the fprintf needs the stream's lock, which its own caller
 * holds.  The library lends the lock for the call; this checks that there
 * is no deadlock (the test's timeout), that the output is right, that the
 * calls really were offloaded, and that the lock still excludes another
 * thread for the whole flockfile..funlockfile region.
 *
 * A read that its stream's buffer already holds (calls.tbl's "buffered:")
 * is glibc's getc fast path, a copy with no kernel entry: a marked thread
 * makes it itself.  Witnessed by a seccomp filter on that thread
 * (call_witness.h: not one system call, not even a futex) and by the
 * statistics (not offloaded); the read that runs the buffer dry is
 * offloaded as before, and every byte is the file's.
 */
#include "harness.h"
#include "call_witness.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <stdarg.h>
#include <wchar.h>

#define LOCKED_LINES 10

struct locker {
	FILE *f;
	struct flag locked, go;
	int rets[LOCKED_LINES];
	int puts_ret, fflush_ret;
	int still_owner; /* ftrylockfile succeeds for the owner: the lock came back */
};

/* Marked: lines A0..A9 under one flockfile, with a pause in the middle. */
static void locker_job(void *arg)
{
	struct locker *l = arg;

	flockfile(l->f);
	for (int i = 0; i < LOCKED_LINES / 2; i++)
		l->rets[i] = fprintf(l->f, "A%d\n", i);
	flag_set(&l->locked);
	flag_wait(&l->go); /* meanwhile another thread waits for the lock */
	for (int i = LOCKED_LINES / 2; i < LOCKED_LINES; i++)
		l->rets[i] = fprintf(l->f, "A%d\n", i);
	l->puts_ret = fputs("end of A\n", l->f);
	l->fflush_ret = fflush(l->f);
	l->still_owner = ftrylockfile(l->f) == 0; /* recursive: owner only */
	if (l->still_owner)
		funlockfile(l->f);
	funlockfile(l->f);
}

struct other {
	FILE *f;
	pid_t tid;
	struct flag ready;
	int ret;
};

/* Unmarked: one line, which must wait for the whole locked region. */
static void other_job(void *arg)
{
	struct other *o = arg;

	o->tid = tid_self();
	flag_set(&o->ready);
	o->ret = fprintf(o->f, "B\n");
	fflush(o->f);
}

Test(stdio, flockfile_then_fprintf_on_marked_thread, .timeout = TEST_TIMEOUT)
{
	char dir[PATH_MAX], path[PATH_MAX];
	struct locker l = {0};
	struct other o = {0};
	struct bg tl, to;

	tmp_make(dir);
	pathf(path, "%s/out", dir);
	l.f = o.f = fopen(path, "w");
	cr_assert_not_null(l.f);
	/* Line-buffered: every line is flushed, so every call goes to a helper (no buffer room). */
	cr_assert_eq(setvbuf(l.f, NULL, _IOLBF, BUFSIZ), 0);
	start_helpers();
	struct rt_offload_stats a = stats_now();

	bg_start(&tl, locker_job, &l, BG_MARK | BG_PIN);
	cr_assert(flag_wait_timeout(&l.locked), "the first fprintf calls never returned");
	bg_start(&to, other_job, &o, 0);
	cr_assert(flag_wait_timeout(&o.ready));
	/* The other thread is asleep on the stream's lock (a futex). */
	cr_assert(wait_task_in_syscall(o.tid, SYS_futex, -1),
		  "the other thread is not waiting for the lock");
	flag_set(&l.go);
	bg_join(&tl);
	bg_join(&to);
	struct rt_offload_stats b = stats_now();

	for (int i = 0; i < LOCKED_LINES; i++)
		cr_expect_eq(l.rets[i], 3, "fprintf #%d returned %d", i, l.rets[i]);
	cr_expect_geq(l.puts_ret, 0);
	cr_expect_eq(l.fflush_ret, 0);
	cr_expect(l.still_owner, "the caller no longer owned the lock after the offloads");
	cr_expect_eq(o.ret, 2);
	/* 10 fprintf, the fputs and the fflush on a helper, the lock lent. */
	cr_expect_eq(b.offloaded - a.offloaded, LOCKED_LINES + 2, "offloaded %lu",
		     b.offloaded - a.offloaded);
	cr_expect_eq(b.local - a.local, 0, "ran locally: %lu", b.local - a.local);
	fclose(l.f);

	char *s = slurp(path, NULL);
	cr_assert_not_null(s);
	cr_expect_str_eq(s, "A0\nA1\nA2\nA3\nA4\nA5\nA6\nA7\nA8\nA9\nend of A\nB\n",
			 "the locked region was interleaved or lost lines:\n%s", s);
	free(s);
	tmp_remove(dir);
}

/* The same with stdout (the stream printf uses), nested flockfile. */
struct nested {
	FILE *f;
	int r1, r2, r3;
};

static void nested_job(void *arg)
{
	struct nested *n = arg;

	flockfile(n->f);
	flockfile(n->f); /* the lock is recursive: count 2 */
	n->r1 = fprintf(n->f, "x=%d\n", 1);
	funlockfile(n->f);
	n->r2 = fprintf(n->f, "y=%s\n", "two");
	funlockfile(n->f);
	n->r3 = fprintf(n->f, "z\n"); /* not held any more: an ordinary offload */
}

Test(stdio, nested_flockfile, .timeout = TEST_TIMEOUT)
{
	char dir[PATH_MAX], path[PATH_MAX];
	struct nested n;

	tmp_make(dir);
	pathf(path, "%s/out", dir);
	n.f = fopen(path, "w");
	cr_assert_not_null(n.f);
	cr_assert_eq(setvbuf(n.f, NULL, _IOLBF, BUFSIZ), 0); /* no room: each line to a helper */
	uint64_t before = offloaded_now();
	run_marked(nested_job, &n);
	cr_expect_eq(offloaded_now() - before, 3);
	cr_expect(n.r1 == 4 && n.r2 == 6 && n.r3 == 2);
	/* The lock is free again: this thread can take it. */
	cr_assert_eq(ftrylockfile(n.f), 0, "the stream's lock was left held");
	funlockfile(n.f);
	fclose(n.f);
	char *s = slurp(path, NULL);
	cr_expect_str_eq(s, "x=1\ny=two\nz\n");
	free(s);
	tmp_remove(dir);
}

/* ---- calls the buffer serves ------------------------------------------------ */

#define BUF_SIZE  64 /* the stream's buffer (setvbuf): every 64 bytes, one refill or flush */
#define TEXT_SIZE 200

/* What one phase of a marked thread's calls did: the statistics, and the witness. */
struct phase {
	int calls; /* wrapped calls made (counted by the phase itself) */
	uint64_t offloaded, local, denied;
	long futex, other, last_nr; /* system calls: futex, and any other */
	int err;		    /* errno after its last call */
};

struct buffered {
	FILE *f;
	int strict, installed;
	const char *text; /* the file's bytes, for a writer */
	char got[256];	  /* what a reader read */
	size_t ngot;
	struct phase first, served, dry;
};

typedef void (*phase_fn)(struct buffered *b, struct phase *p);

static void run_phase(struct buffered *b, struct phase *p, phase_fn fn)
{
	struct rt_offload_stats s0, s1;

	rt_offload_get_stats(&s0);
	long o0 = atomic_load(&seen_other), f0 = atomic_load(&seen_wait) + atomic_load(&seen_wake);
	errno = 0;
	fn(b, p);
	p->err = errno;
	long o1 = atomic_load(&seen_other), f1 = atomic_load(&seen_wait) + atomic_load(&seen_wake);
	rt_offload_get_stats(&s1);
	p->other = o1 - o0;
	p->futex = f1 - f0;
	p->last_nr = atomic_load(&other_nr);
	p->offloaded = s1.offloaded - s0.offloaded;
	p->local = s1.local - s0.local;
	p->denied = s1.denied - s0.denied;
}

static phase_fn phase_first, phase_served, phase_dry;

/* Witnessed from the start (strict would refuse the witness's dlopen), then the three phases. */
static void buffered_job(void *arg)
{
	struct buffered *b = arg;

	b->installed = install_witness() == 0;
	if (!b->installed)
		return;
	if (b->strict)
		rt_offload_set_thread_mode(RT_OFFLOAD_MODE_STRICT);
	run_phase(b, &b->first, phase_first);
	run_phase(b, &b->served, phase_served);
	run_phase(b, &b->dry, phase_dry);
}

static void got(struct buffered *b, const void *p, size_t n)
{
	if (b->ngot + n <= sizeof(b->got)) {
		memcpy(b->got + b->ngot, p, n);
		b->ngot += n;
	}
}

static void got_byte(struct buffered *b, int c)
{
	char ch = (char)c;

	if (c != EOF)
		got(b, &ch, 1);
}

/*
 * The unlocked calls through pointers: with optimisation <stdio.h> inlines
 * getc_unlocked and putc_unlocked as glibc's macros, which never call at
 * all; GCC makes fputs of a constant an fwrite.
 */
static int (*volatile getc_unlocked_fn)(FILE *) = getc_unlocked;
static int (*volatile fgetc_unlocked_fn)(FILE *) = fgetc_unlocked;
static char *(*volatile fgets_unlocked_fn)(char *, int, FILE *) = fgets_unlocked;
static size_t (*volatile fread_unlocked_fn)(void *, size_t, size_t, FILE *) = fread_unlocked;
static int (*volatile putc_unlocked_fn)(int, FILE *) = putc_unlocked;
static int (*volatile fputc_unlocked_fn)(int, FILE *) = fputc_unlocked;
static int (*volatile fputs_unlocked_fn)(const char *, FILE *) = fputs_unlocked;
static size_t (*volatile fwrite_unlocked_fn)(const void *, size_t, size_t,
					     FILE *) = fwrite_unlocked;

/* ---- reads: byte 0 fills the buffer, bytes 1..63 come from it ---- */

static void read_first(struct buffered *b, struct phase *p)
{
	p->calls++;
	got_byte(b, fgetc(b->f)); /* the refill (strict: the test filled the buffer) */
}

static void read_served(struct buffered *b, struct phase *p)
{
	char line[32];

#define BYTE(call)                   \
	do {                         \
		p->calls++;          \
		got_byte(b, (call)); \
	} while (0)
#define LINE(call)                                  \
	do {                                        \
		p->calls++;                         \
		if ((call) != NULL)                 \
			got(b, line, strlen(line)); \
	} while (0)
#define ITEMS(call, size)                      \
	do {                                   \
		p->calls++;                    \
		got(b, line, (size) * (call)); \
	} while (0)
	LINE(fgets(line, sizeof(line), b->f));		   /* "ine 00\n": to its newline (8) */
	BYTE(getc(b->f));				   /* 9 */
	BYTE(fgetc(b->f));				   /* 10 */
	BYTE(getc_unlocked_fn(b->f));			   /* 11 */
	BYTE(fgetc_unlocked_fn(b->f));			   /* 12 */
	ITEMS(fread(line, 1, 4, b->f), 1);		   /* " 01\n" (16) */
	LINE(fgets(line, 5, b->f));			   /* "line": its count (20) */
	LINE(fgets_unlocked_fn(line, sizeof(line), b->f)); /* " 02\n" (24) */
	ITEMS(fread_unlocked_fn(line, 8, 2, b->f), 8);	   /* "line 03\nline 04\n" (40) */
	ITEMS(fread(line, 2, 11, b->f), 2);		   /* "line 05\nline 06\nline 0" (62) */
	LINE(fgets(line, 2, b->f));			   /* "7": a byte and the NUL (63) */
	LINE(fgets(line, 1, b->f));			   /* no byte at all */
	ITEMS(fread(line, 0, 100, b->f), 0);		   /* no byte at all */
	BYTE(getc(b->f));				   /* "\n", the buffer's last (64) */
#undef BYTE
#undef LINE
#undef ITEMS
}

/* The next byte, then a read longer than the buffer: each refills it. */
static void read_dry(struct buffered *b, struct phase *p)
{
	char rest[TEXT_SIZE];

	p->calls += 2;
	got_byte(b, fgetc(b->f));
	got(b, rest, fread(rest, 1, sizeof(rest), b->f));
}

/* ---- writes: byte 0 sets the buffer up, bytes 1..63 go into it ---- */

static void write_first(struct buffered *b, struct phase *p)
{
	if (b->strict) /* the test set the buffer up, with byte 0 */
		return;
	p->calls++;
	putc(b->text[0], b->f); /* the buffer set up */
}

/* text[from, from + n) as a string, for fputs. */
static const char *piece(const struct buffered *b, char *s, size_t from, size_t n)
{
	memcpy(s, b->text + from, n);
	s[n] = '\0';
	return s;
}

static void write_served(struct buffered *b, struct phase *p)
{
	const char *t = b->text;
	char s[32];

	p->calls += 10;
	fputs(piece(b, s, 1, 7), b->f);		      /* 1..7 */
	putc(t[8], b->f);			      /* 8 */
	fputc(t[9], b->f);			      /* 9 */
	putc_unlocked_fn(t[10], b->f);		      /* 10 */
	fputc_unlocked_fn(t[11], b->f);		      /* 11 */
	fwrite(t + 12, 1, 4, b->f);		      /* 12..15 */
	fwrite_unlocked_fn(t + 16, 8, 2, b->f);	      /* 16..31 */
	fwrite(t + 32, 3, 7, b->f);		      /* 32..52 */
	fputs_unlocked_fn(piece(b, s, 53, 10), b->f); /* 53..62 */
	fwrite(t, 0, 5, b->f);			      /* no byte at all */
	p->calls++;
	putc(t[63], b->f); /* the buffer's last room (64) */
}

/* The next byte, then a write longer than the room left: each flushes. */
static void write_dry(struct buffered *b, struct phase *p)
{
	p->calls += 2;
	putc(b->text[64], b->f);
	fwrite(b->text + 65, 1, strlen(b->text) - 65, b->f);
}

/* ---- the printf family: the same bytes, formatted ---- */

/* Through pointers: the compiler would make fprintf(f, "%c", c) an fputc, and drop an empty one. */
static int (*volatile fprintf_fn)(FILE *, const char *, ...) = fprintf;
static int (*volatile vfprintf_fn)(FILE *, const char *, va_list) = vfprintf;
int __fprintf_chk(FILE *, int, const char *, ...);
static int (*volatile fprintf_chk_fn)(FILE *, int, const char *, ...) = __fprintf_chk;

static int vfprintf_of(FILE *f, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	int n = vfprintf_fn(f, fmt, ap);
	va_end(ap);
	return n;
}

static void printf_served(struct buffered *b, struct phase *p)
{
	const char *t = b->text;

	p->calls += 8;
	fprintf_fn(b->f, "%.7s", t + 1);	  /* 1..7 */
	fprintf_fn(b->f, "%c", t[8]);		  /* 8 */
	fprintf_fn(b->f, "%c%c", t[9], t[10]);	  /* 9..10 */
	vfprintf_of(b->f, "%.5s", t + 11);	  /* 11..15 */
	fprintf_chk_fn(b->f, 1, "%.16s", t + 16); /* 16..31 */
	fprintf_fn(b->f, "%.*s", 21, t + 32);	  /* 32..52 */
	fprintf_fn(b->f, "%.10s%s", t + 53, "");  /* 53..62 */
	fprintf_fn(b->f, "%s", "");		  /* no byte at all */
	p->calls++;
	fprintf_fn(b->f, "%c", t[63]); /* the buffer's last room (64) */
}

static void printf_dry(struct buffered *b, struct phase *p)
{
	p->calls += 2;
	fprintf_fn(b->f, "%c", b->text[64]);
	fprintf_fn(b->f, "%s", b->text + 65);
}

/* ---- the tests ---- */

static void make_text(char *text)
{
	size_t n = 0;

	for (int i = 0; n + 9 <= TEXT_SIZE + 1; i++)
		n += (size_t)snprintf(text + n, TEXT_SIZE + 1 - n, "line %02d\n", i);
}

/* A marked thread's calls on f, in its three phases; f's buffer is BUF_SIZE bytes. */
static void run_buffered(struct buffered *b, phase_fn first, phase_fn served, phase_fn dry)
{
	phase_first = first;
	phase_served = served;
	phase_dry = dry;
	start_helpers();
	run_marked(buffered_job, b);
	cr_assert(b->installed, "no witness: %s", strerror(errno));
	cr_expect_eq(b->served.other, 0, "%ld system calls in the calls the buffer served (%ld)",
		     b->served.other, b->served.last_nr);
#ifndef __SANITIZE_THREAD__ /* its runtime's own locks wait on futexes, in its interceptors */
	cr_expect_eq(b->served.futex, 0, "%ld futex calls in the calls the buffer served",
		     b->served.futex);
#endif
	cr_expect(b->served.offloaded == 0 && b->served.denied == 0,
		  "of the calls the buffer served, %llu offloaded, %llu refused",
		  (unsigned long long)b->served.offloaded, (unsigned long long)b->served.denied);
	cr_expect_eq(b->served.local, (uint64_t)b->served.calls, "ran here: %llu of %d",
		     (unsigned long long)b->served.local, b->served.calls);
	if (b->strict) { /* the test set the buffer up: a first call was served too */
		cr_expect_eq(b->first.local, (uint64_t)b->first.calls);
		cr_expect_eq(b->dry.denied, 2, "refused once the buffer was dry or full: %llu",
			     (unsigned long long)b->dry.denied);
		cr_expect_eq(b->dry.err, RT_OFFLOAD_STRICT_ERRNO);
	} else {
		cr_expect(b->first.offloaded == 1 && b->first.local == 0,
			  "the first call: %llu offloaded", (unsigned long long)b->first.offloaded);
		cr_expect_eq(b->dry.offloaded, 2, "offloaded once the buffer was dry or full: %llu",
			     (unsigned long long)b->dry.offloaded);
	}
}

static FILE *open_buffered(const char *path, const char *mode)
{
	static char vbuf[BUF_SIZE];
	FILE *f = fopen(path, mode);

	cr_assert_not_null(f);
	cr_assert_eq(setvbuf(f, vbuf, _IOFBF, sizeof(vbuf)), 0);
	return f;
}

static void a_reader(int strict)
{
	char dir[PATH_MAX], path[PATH_MAX], text[TEXT_SIZE + 1];
	static struct buffered b;

	memset(&b, 0, sizeof(b));
	make_text(text);
	tmp_make(dir);
	pathf(path, "%s/in", dir);
	write_file(path, text);
	b.f = open_buffered(path, "r");
	b.strict = strict;
	if (strict) /* the buffer filled on this unmarked thread, its first byte put back */
		cr_assert_eq(ungetc(fgetc(b.f), b.f), 'l');
	run_buffered(&b, read_first, read_served, read_dry);
	size_t want = strict ? BUF_SIZE : strlen(text);
	cr_expect_eq(b.ngot, want, "read %zu of %zu bytes", b.ngot, want);
	cr_expect(b.ngot == want && memcmp(b.got, text, want) == 0,
		  "the bytes read are not the file's");
	fclose(b.f);
	tmp_remove(dir);
}

static void a_writer_of(int strict, phase_fn served, phase_fn dry)
{
	char dir[PATH_MAX], path[PATH_MAX], text[TEXT_SIZE + 1];
	static struct buffered b;

	memset(&b, 0, sizeof(b));
	make_text(text);
	tmp_make(dir);
	pathf(path, "%s/out", dir);
	b.f = open_buffered(path, "w");
	b.text = text;
	b.strict = strict;
	if (strict) /* the buffer set up on this unmarked thread, with the first byte */
		cr_assert_eq(putc(text[0], b.f), text[0]);
	run_buffered(&b, write_first, served, dry);
	cr_assert_eq(fclose(b.f), 0);
	size_t want = strict ? BUF_SIZE : strlen(text), len = 0;
	char *s = slurp(path, &len);
	cr_assert_not_null(s);
	cr_expect(len == want && memcmp(s, text, want) == 0,
		  "the file holds %zu bytes, not the %zu written:\n%.*s", len, want, (int)len, s);
	free(s);
	tmp_remove(dir);
}

static void a_writer(int strict)
{
	a_writer_of(strict, write_served, write_dry);
}

Test(stdio, a_read_its_buffer_holds_runs_on_its_caller_with_no_system_call, .timeout = TEST_TIMEOUT)
{
#ifndef __x86_64__
	cr_skip_test("the witness is x86-64 only");
#endif
	a_reader(0);
}

Test(stdio, a_write_its_buffer_has_room_for_runs_on_its_caller_with_no_system_call,
     .timeout = TEST_TIMEOUT)
{
#ifndef __x86_64__
	cr_skip_test("the witness is x86-64 only");
#endif
	a_writer(0);
}

/* Strict: a call the buffer serves is short and runs; one that needs the kernel is refused. */
Test(stdio, strict_makes_the_reads_its_buffer_holds_and_refuses_the_rest, .timeout = TEST_TIMEOUT)
{
#ifndef __x86_64__
	cr_skip_test("the witness is x86-64 only");
#endif
	a_reader(1);
}

Test(stdio, strict_makes_the_writes_its_buffer_has_room_for_and_refuses_the_rest,
     .timeout = TEST_TIMEOUT)
{
#ifndef __x86_64__
	cr_skip_test("the witness is x86-64 only");
#endif
	a_writer(1);
}

/* The printf family, formatted on the caller: the same rule, the same bytes. */
Test(stdio, a_printf_its_buffer_has_room_for_runs_on_its_caller_with_no_system_call,
     .timeout = TEST_TIMEOUT)
{
#ifndef __x86_64__
	cr_skip_test("the witness is x86-64 only");
#endif
	a_writer_of(0, printf_served, printf_dry);
}

Test(stdio, strict_makes_the_printfs_its_buffer_has_room_for_and_refuses_the_rest,
     .timeout = TEST_TIMEOUT)
{
#ifndef __x86_64__
	cr_skip_test("the witness is x86-64 only");
#endif
	a_writer_of(1, printf_served, printf_dry);
}

/*
 * A format that may leave memory (%m: strerror's catalogue; %ls: a
 * character set's module), and any printf to a line-buffered stream, go
 * to a helper, room or not.
 */
struct leaves {
	FILE *full, *line;
	uint64_t offloaded, local;
	int rets[4];
};

static void leaves_job(void *arg)
{
	struct leaves *l = arg;
	struct rt_offload_stats s0, s1;

	rt_offload_get_stats(&s0);
	errno = ENOENT;
	l->rets[0] = fprintf_fn(l->full, "%m|");
	l->rets[1] = fprintf_fn(l->full, "%ls|", L"wide");
	l->rets[2] = fprintf_fn(l->full, "%5lc|", L'w');
	l->rets[3] = fprintf_fn(l->line, "%s", "no newline");
	rt_offload_get_stats(&s1);
	l->offloaded = s1.offloaded - s0.offloaded;
	l->local = s1.local - s0.local;
}

Test(stdio, a_printf_whose_format_may_leave_memory_or_whose_stream_is_line_buffered_is_offloaded,
     .timeout = TEST_TIMEOUT)
{
	char dir[PATH_MAX], full[PATH_MAX], line[PATH_MAX];
	static char vbuf[BUFSIZ];
	struct leaves l = {0};

	tmp_make(dir);
	pathf(full, "%s/full", dir);
	pathf(line, "%s/line", dir);
	l.full = fopen(full, "w");
	l.line = fopen(line, "w");
	cr_assert(l.full && l.line);
	cr_assert_eq(setvbuf(l.line, vbuf, _IOLBF, sizeof(vbuf)), 0);
	cr_assert_geq(fputs("set up|", l.full), 0); /* the buffer exists, with room */
	start_helpers();
	run_marked(leaves_job, &l);
	cr_expect_eq(l.offloaded, 4, "offloaded: %llu of 4 (local %llu)",
		     (unsigned long long)l.offloaded, (unsigned long long)l.local);
	cr_expect_eq(l.local, 0);
	cr_assert_eq(fclose(l.full), 0);
	cr_assert_eq(fclose(l.line), 0);
	size_t len = 0;
	char *s = slurp(full, &len);
	char want[256];
	snprintf(want, sizeof(want), "set up|%s|wide|%5lc|", strerror(ENOENT), (wint_t)L'w');
	cr_expect(s && strcmp(s, want) == 0, "the file holds '%s', not '%s'", s ? s : "", want);
	cr_expect_eq(l.rets[0], (int)strlen(strerror(ENOENT)) + 1);
	free(s);
	s = slurp(line, &len);
	cr_expect(s && strcmp(s, "no newline") == 0);
	free(s);
	tmp_remove(dir);
}

/* Holding the stream's lock (flockfile), a printf its buffer has room for runs here, under it. */
struct held {
	FILE *f;
	int ret;
	uint64_t offloaded;
};

static void held_job(void *arg)
{
	struct held *h = arg;
	uint64_t before = offloaded_now();

	flockfile(h->f);
	h->ret = fprintf_fn(h->f, "held %d|", 7);
	funlockfile(h->f);
	h->offloaded = offloaded_now() - before;
}

Test(stdio, a_printf_under_flockfile_its_buffer_has_room_for_runs_here, .timeout = TEST_TIMEOUT)
{
	char dir[PATH_MAX], path[PATH_MAX];
	struct held h = {0};

	tmp_make(dir);
	pathf(path, "%s/out", dir);
	h.f = fopen(path, "w");
	cr_assert_not_null(h.f);
	cr_assert_geq(fputs("set up|", h.f), 0); /* the buffer exists, with room */
	start_helpers();
	run_marked(held_job, &h);
	cr_expect_eq(h.ret, 7);
	cr_expect_eq(h.offloaded, 0, "offloaded %llu", (unsigned long long)h.offloaded);
	cr_assert_eq(ftrylockfile(h.f), 0, "the stream's lock was left held");
	funlockfile(h.f);
	cr_assert_eq(fclose(h.f), 0);
	char *s = slurp(path, NULL);
	cr_expect(s && strcmp(s, "set up|held 7|") == 0, "the file holds '%s'", s ? s : "");
	free(s);
	tmp_remove(dir);
}
