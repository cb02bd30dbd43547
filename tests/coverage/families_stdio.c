/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Issue 13's stdio rows through the family harness. */
#include "more.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>

/* Every scanf entry point by its own name (<stdio.h> renames them in C99 mode). */
extern int plain_fscanf(FILE *f, const char *fmt, ...) __asm__("fscanf");
extern int plain_scanf(const char *fmt, ...) __asm__("scanf");
extern int plain_vfscanf(FILE *f, const char *fmt, va_list ap) __asm__("vfscanf");
extern int plain_vscanf(const char *fmt, va_list ap) __asm__("vscanf");
extern int iso_fscanf(FILE *f, const char *fmt, ...) __asm__("__isoc99_fscanf");
extern int iso_scanf(const char *fmt, ...) __asm__("__isoc99_scanf");
extern int iso_vfscanf(FILE *f, const char *fmt, va_list ap) __asm__("__isoc99_vfscanf");
extern int iso_vscanf(const char *fmt, va_list ap) __asm__("__isoc99_vscanf");
extern ssize_t __getdelim(char **line, size_t *n, int delim, FILE *f);
extern int __dprintf_chk(int fd, int flag, const char *fmt, ...);
extern int __vdprintf_chk(int fd, int flag, const char *fmt, va_list ap);

static int vcall(int (*fn)(FILE *, const char *, va_list), FILE *f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int ret = fn(f, fmt, ap);
	va_end(ap);
	return ret;
}
static int vcall_in(int (*fn)(const char *, va_list), const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int ret = fn(fmt, ap);
	va_end(ap);
	return ret;
}
static int vdcall(int flag, int fd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int ret = flag < 0 ? vdprintf(fd, fmt, ap) : __vdprintf_chk(fd, flag, fmt, ap);
	va_end(ap);
	return ret;
}
static int vwcall(FILE *f, const wchar_t *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int ret = f ? vfwprintf(f, fmt, ap) : vwprintf(fmt, ap);
	va_end(ap);
	return ret;
}

/* stdin reads the fixture's "f" afresh (and forgets its orientation). */
HOOK(prep_stdin)
{
	cr_assert(freopen(P("f"), "r", stdin));
}
/* stdout, stderr into the fixture's "out", "err" for one case (the snapshot compares them). */
static int saved1 = -1, saved2 = -1;
static void into(int fd, int *saved, const char *path)
{
	fflush(NULL);
	*saved = dup(fd);
	int to = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	cr_assert(*saved >= 0 && to >= 0 && dup2(to, fd) == fd);
	close(to);
}
HOOK(prep_out)
{
	into(1, &saved1, P("out"));
}
/* stderr afresh: perror takes another path once stderr has an orientation. */
HOOK(prep_err)
{
	fflush(NULL);
	saved2 = dup(2);
	cr_assert(saved2 >= 0 && freopen(P("err"), "w", stderr));
	setvbuf(stderr, NULL, _IONBF, 0); /* unbuffered, as stderr starts */
}
HOOK(post_out)
{
	fflush(stdout);
	cr_assert(freopen(P("out"), "a", stdout)); /* byte-oriented again, still descriptor 1 */
	cr_assert_eq(dup2(saved1, 1), 1);
	close(saved1);
}
HOOK(post_err)
{
	cr_assert_eq(dup2(saved2, 2), 2);
	close(saved2);
}
HOOK(post_pos)
{
	note(r, " pos=%ld", ftell(x->fr));
	note(r, " next=%d", fgetc(x->fr));
}
HOOK(prep_pos)
{
	cr_assert_eq(fseek(x->fr, 6, SEEK_SET), 0);
}
static fpos_t pos6;
static fpos64_t pos6_64;
HOOK(prep_getpos)
{
	prep_pos(x, r);
	cr_assert_eq(fgetpos(x->fr, &pos6), 0);
	cr_assert_eq(fgetpos64(x->fr, &pos6_64), 0);
	rewind(x->fr);
}
/* fputs after the buffer change, read back from the file by the snapshot. */
HOOK(post_buf)
{
	fputs("buffered", x->fw);
}
static char setbuf_buf[BUFSIZ];

static const char cookie_text[] = "cookie text";
static ssize_t cookie_read(void *c, char *buf, size_t n)
{
	size_t *at = c, left = sizeof(cookie_text) - 1 - *at;
	n = n < left ? n : left;
	memcpy(buf, cookie_text + *at, n);
	*at += n;
	return (ssize_t)n;
}
static size_t cookie_at;
HOOK(post_read_fp)
{
	char buf[64] = "";
	if (r->fp)
		note(r, " got=%s", fgets(buf, sizeof(buf), r->fp) ? buf : "EOF");
}
static char *ms_buf;
static size_t ms_size;
HOOK(post_memstream)
{
	if (r->fp) {
		fputs("memstream", r->fp);
		fclose(r->fp);
		r->fp = NULL;
		note(r, " ms=%s/%zu", ms_buf, ms_size);
	}
	free(ms_buf);
	ms_buf = NULL;
}
static char mem[16] = "fmemopen data";

/* clang-format off */
CASE(getline_ok) { char *l = NULL; size_t n = 0; INT(getline(&l, &n, x->fr)); note(r, "%s", l); r->heap = l; }
CASE(getline_eof) { char *l = NULL; size_t n = 0; INT(getline(&l, &n, x->fwo)); r->heap = l; }
CASE(getdelim_ok) { char *l = NULL; size_t n = 0; INT(getdelim(&l, &n, ' ', x->fr)); note(r, "%s", l); r->heap = l; }
CASE(getdelim_einval) { INT(getdelim(NULL, NULL, ' ', x->fr)); }
CASE(__getdelim_ok) { char *l = NULL; size_t n = 0; INT(__getdelim(&l, &n, 'o', x->fr)); note(r, "%s", l); r->heap = l; }
CASE(fseeko_ok) { INT(fseeko(x->fr, 3, SEEK_SET)); }
CASE(fseeko_einval) { INT(fseeko(x->fr, -3, SEEK_SET)); }
CASE(fseeko64_ok) { INT(fseeko64(x->fr, 4, SEEK_SET)); }
CASE(ftello_ok) { INT(ftello(x->fr)); }
CASE(ftello_espipe) { INT(ftello(x->fpipe)); }
CASE(ftello64_ok) { INT(ftello64(x->fr)); }
CASE(fgetpos_ok) { fpos_t p; INT(fgetpos(x->fr, &p)); note(r, "at=%lld", (long long)p.__pos); }
CASE(fgetpos_espipe) { fpos_t p; INT(fgetpos(x->fpipe, &p)); }
CASE(fgetpos64_ok) { fpos64_t p; INT(fgetpos64(x->fr, &p)); note(r, "at=%lld", (long long)p.__pos); }
CASE(fsetpos_ok) { INT(fsetpos(x->fr, &pos6)); }
CASE(fsetpos64_ok) { INT(fsetpos64(x->fr, &pos6_64)); }
CASE(rewind_ok) { rewind(x->fr); INT(0); }
CASE(ungetc_ok) { INT(ungetc('X', x->fr)); }
CASE(ungetc_eof) { INT(ungetc(EOF, x->fr)); r->fail = r->ret != EOF; }
CASE(setvbuf_ok) { INT(setvbuf(x->fw, NULL, _IOLBF, 0)); }
CASE(setvbuf_einval) { INT(setvbuf(x->fw, NULL, 12345, 0)); r->fail = r->ret != 0; }
CASE(setbuf_ok) { setbuf(x->fw, NULL); INT(0); }
CASE(setbuffer_ok) { setbuffer(x->fw, setbuf_buf, sizeof(setbuf_buf)); INT(0); }
CASE(setlinebuf_ok) { setlinebuf(x->fw); INT(0); }
CASE(fopencookie_ok)
{
	cookie_at = 0;
	PTR(r->fp, fopencookie(&cookie_at, "r", (cookie_io_functions_t){.read = cookie_read}), NULL);
}
CASE(fopencookie_einval) { PTR(r->fp, fopencookie(&cookie_at, "q", (cookie_io_functions_t){0}), NULL); }
CASE(open_memstream_ok) { PTR(r->fp, open_memstream(&ms_buf, &ms_size), NULL); }
CASE(fmemopen_ok) { PTR(r->fp, fmemopen(mem, sizeof(mem), "r"), NULL); }
CASE(fmemopen_einval) { PTR(r->fp, fmemopen(mem, sizeof(mem), "q"), NULL); }
CASE(tmpfile_ok) { PTR(r->fp, tmpfile(), NULL); }
CASE(tmpfile64_ok) { PTR(r->fp, tmpfile64(), NULL); }
CASE(perror_ok) { perror("case"); INT(0); }
CASE(getchar_ok) { INT(getchar()); }
CASE(getc_unlocked_ok) { INT(getc_unlocked(x->fr)); }
CASE(getc_unlocked_eof) { INT(getc_unlocked(x->fwo)); r->fail = r->ret != EOF; }
CASE(fgetc_unlocked_ok) { INT(fgetc_unlocked(x->fr)); }
CASE(getchar_unlocked_ok) { INT(getchar_unlocked()); }
CASE(fputws_ok) { INT(fputws(L"wide", x->fw)); }
CASE(fputws_ebadf) { INT(fputws(L"wide", x->fr)); }
CASE(fgetws_ok) { wchar_t ws[8] = L""; wchar_t *p; PTR(p, fgetws(ws, 8, x->fr), NULL); note(r, "%ls", ws); }
CASE(fputwc_ok) { INT(fputwc(L'w', x->fw)); }
CASE(putwc_ok) { INT(putwc(L'p', x->fw)); }
CASE(putwchar_ok) { INT(putwchar(L'c')); }
CASE(fgetwc_ok) { INT(fgetwc(x->fr)); }
CASE(fgetwc_eof) { INT(fgetwc(x->fwo)); r->fail = r->ret != WEOF; }
CASE(getwc_ok) { INT(getwc(x->fr)); }
CASE(getwchar_ok) { INT(getwchar()); }
CASE(ungetwc_ok) { INT(ungetwc(L'u', x->fr)); }
CASE(fputws_unlocked_ok) { INT(fputws_unlocked(L"unlocked", x->fw)); }
CASE(fgetws_unlocked_ok) { wchar_t ws[8] = L""; wchar_t *p; PTR(p, fgetws_unlocked(ws, 8, x->fr), NULL); note(r, "%ls", ws); }
CASE(fputwc_unlocked_ok) { INT(fputwc_unlocked(L'f', x->fw)); }
CASE(putwc_unlocked_ok) { INT(putwc_unlocked(L'q', x->fw)); }
CASE(fgetwc_unlocked_ok) { INT(fgetwc_unlocked(x->fr)); }
CASE(getwc_unlocked_ok) { INT(getwc_unlocked(x->fr)); }
CASE(fwprintf_ok) { INT(fwprintf(x->fw, L"%d-%ls", 42, L"w")); }
CASE(wprintf_ok) { INT(wprintf(L"%s!", "narrow")); }
CASE(vfwprintf_ok) { INT(vwcall(x->fw, L"%05d", 7)); }
CASE(vwprintf_ok) { INT(vwcall(NULL, L"%x", 255)); }
CASE(fscanf_ok) { char a[8] = "", b[8] = ""; INT(plain_fscanf(x->fr, "%7s %7s", a, b)); note(r, "%s|%s", a, b); }
CASE(fscanf_eof) { INT(plain_fscanf(x->fwo, "%d", &(int){0})); r->fail = r->ret != EOF; }
CASE(scanf_ok) { char a[8] = ""; INT(plain_scanf("%3s", a)); note(r, "%s", a); }
CASE(vfscanf_ok) { char a[8] = ""; INT(vcall(plain_vfscanf, x->fr, "%4c", a)); note(r, "%s", a); }
CASE(vscanf_ok) { char a[8] = ""; INT(vcall_in(plain_vscanf, "%2s", a)); note(r, "%s", a); }
CASE(__isoc99_fscanf_ok) { char a[8] = ""; INT(iso_fscanf(x->fr, "%7s", a)); note(r, "%s", a); }
CASE(__isoc99_scanf_ok) { char a[8] = ""; INT(iso_scanf("%5s", a)); note(r, "%s", a); }
CASE(__isoc99_vfscanf_ok) { int n = 0; INT(vcall(iso_vfscanf, x->fr, "hello%n", &n)); note(r, "n=%d", n); }
CASE(__isoc99_vscanf_ok) { char a[8] = ""; INT(vcall_in(iso_vscanf, "%1s", a)); note(r, "%s", a); }
CASE(dprintf_ok) { INT(dprintf(x->wr, "%s=%d", "dprintf", 1)); }
/* EBADF from a read-only descriptor: on one that is not open, glibc 2.36 leaks vdprintf's buffer. */
CASE(dprintf_ebadf) { INT(dprintf(x->rd, "x")); }
CASE(vdprintf_ok) { INT(vdcall(-1, x->wr, "%s", "vdprintf")); }
CASE(__dprintf_chk_ok) { INT(__dprintf_chk(x->wr, 1, "%d", 99)); }
CASE(__vdprintf_chk_ok) { INT(vdcall(1, x->wr, "chk%d", 2)); }
/* clang-format on */

#define IN(id)	   ENTRY(id, .prep = prep_stdin)
#define OUT(id)	   ENTRY(id, .prep = prep_out, .post = post_out)
#define POS(id, e) ENTRY(id, .fail = e != 0, .err = e, .post = post_pos)

const struct fcase more_stdio_cases[] = {
	OK(getline_ok),
	ENTRY(getline_eof, .fail = 1),
	OK(getdelim_ok),
	FAIL(getdelim_einval, EINVAL),
	OK(__getdelim_ok),
	POS(fseeko_ok, 0),
	POS(fseeko_einval, EINVAL),
	POS(fseeko64_ok, 0),
	ENTRY(ftello_ok, .prep = prep_pos),
	FAIL(ftello_espipe, ESPIPE),
	ENTRY(ftello64_ok, .prep = prep_pos),
	ENTRY(fgetpos_ok, .prep = prep_pos),
	FAIL(fgetpos_espipe, ESPIPE),
	ENTRY(fgetpos64_ok, .prep = prep_pos),
	ENTRY(fsetpos_ok, .prep = prep_getpos, .post = post_pos),
	ENTRY(fsetpos64_ok, .prep = prep_getpos, .post = post_pos),
	ENTRY(rewind_ok, .prep = prep_pos, .post = post_pos),
	POS(ungetc_ok, 0),
	POS(ungetc_eof, 0),
	ENTRY(setvbuf_ok, .post = post_buf),
	ENTRY(setvbuf_einval, .fail = 1),
	ENTRY(setbuf_ok, .post = post_buf),
	ENTRY(setbuffer_ok, .post = post_buf),
	ENTRY(setlinebuf_ok, .post = post_buf),
	ENTRY(fopencookie_ok, .post = post_read_fp),
	FAIL(fopencookie_einval, EINVAL),
	ENTRY(open_memstream_ok, .post = post_memstream),
	ENTRY(fmemopen_ok, .post = post_read_fp),
	FAIL(fmemopen_einval, EINVAL),
	OK(tmpfile_ok),
	OK(tmpfile64_ok),
	ENTRY(perror_ok, .prep = prep_err, .post = post_err),
	IN(getchar_ok),
	OK(getc_unlocked_ok),
	OK(getc_unlocked_eof),
	OK(fgetc_unlocked_ok),
	IN(getchar_unlocked_ok),
	OK(fputws_ok),
	FAIL(fputws_ebadf, EBADF),
	OK(fgetws_ok),
	OK(fputwc_ok),
	OK(putwc_ok),
	OUT(putwchar_ok),
	OK(fgetwc_ok),
	OK(fgetwc_eof),
	OK(getwc_ok),
	IN(getwchar_ok),
	POS(ungetwc_ok, 0),
	OK(fputws_unlocked_ok),
	OK(fgetws_unlocked_ok),
	OK(fputwc_unlocked_ok),
	OK(putwc_unlocked_ok),
	OK(fgetwc_unlocked_ok),
	OK(getwc_unlocked_ok),
	OK(fwprintf_ok),
	OUT(wprintf_ok),
	OK(vfwprintf_ok),
	OUT(vwprintf_ok),
	OK(fscanf_ok),
	OK(fscanf_eof),
	IN(scanf_ok),
	OK(vfscanf_ok),
	IN(vscanf_ok),
	OK(__isoc99_fscanf_ok),
	IN(__isoc99_scanf_ok),
	OK(__isoc99_vfscanf_ok),
	IN(__isoc99_vscanf_ok),
	OK(dprintf_ok),
	FAIL(dprintf_ebadf, EBADF),
	OK(vdprintf_ok),
	OK(__dprintf_chk_ok),
	OK(__vdprintf_chk_ok),
};
const size_t more_stdio_count = sizeof(more_stdio_cases) / sizeof(more_stdio_cases[0]);
