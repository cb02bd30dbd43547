/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The table-driven family tests: every case is one wrapped call, run once
 * directly (unmarked thread) and once offloaded (marked thread) on a fresh,
 * identical fixture at the same path.  Both runs must agree on the result,
 * errno, what the call produced and what it left on disk, and every call
 * of the marked run must have been offloaded (or run on the caller, for the
 * allow-listed ones).
 */
#ifndef RTO_TEST_FAMILIES_H
#define RTO_TEST_FAMILIES_H

#include "harness.h"

#include <dirent.h>
#include <netinet/in.h>
#include <stdio.h>

/* errno before each call: any value the calls themselves never set. */
#define ERRNO_SENTINEL EMLINK

struct fx {
	char root[PATH_MAX]; /* the test's temporary directory */
	char dir[PATH_MAX];  /* root/fx: the fixture, same path in both runs */
	char path[2][PATH_MAX];
	int capture;	 /* stdout goes to root/stdout: report what it got */
	int dirfd;	 /* the fixture directory */
	int rd;		 /* "f" read-only, holding "hello world\n" */
	int wr;		 /* "w" read-write, empty */
	int wo;		 /* "wo" write-only */
	int pr, pw;	 /* a pipe holding "pipe data" */
	int ddir;	 /* "d" as O_DIRECTORY, for fdopendir */
	int bad;	 /* a descriptor number that is not open */
	FILE *fr;	 /* "f" opened "r" */
	FILE *fw;	 /* "fw" opened "w+" */
	FILE *fwo;	 /* "fwo" opened "w" */
	FILE *fpipe;	 /* the read end of the pipe */
	DIR *dp;	 /* "d": entries a, b, c */
	char *map;	 /* one anonymous page full of 'A' */
	void *map_guard; /* the PROT_NONE page after map (fx_maps) */
	char *hole;	 /* an unmapped page between two mapped ones */
	char *fmap;	 /* "m", one page, MAP_SHARED */
	size_t page;
	int tcp, udp; /* fresh sockets */
	int lsn;      /* non-blocking, listening on 127.0.0.1 */
	struct sockaddr_in lsn_addr;
	struct sockaddr_in dead_addr; /* a loopback port nobody listens on */
};

struct res {
	long ret;	 /* the result, normalised (a descriptor or pointer becomes 0) */
	int fail;	 /* the call reported failure */
	int err;	 /* errno right after the call */
	int code;	 /* an error the call returns rather than sets (gai, posix_spawn) */
	int herr;	 /* h_errno right after the call */
	int calls;	 /* wrapped calls the case made */
	char data[1024]; /* what the call produced, described */
	char snap[4096]; /* the fixture directory afterwards */
	uint64_t offloaded, local, denied;
	/* What the case leaves for the cleanup (on the main thread). */
	int fd;
	int pair[2]; /* pipe/socketpair results, or -1 */
	FILE *fp, *pfp;
	DIR *dp;
	void *mem;
	size_t memlen;
	void *heap;
	struct addrinfo *ai;
	void *dl;
	pid_t pid;
};

struct fcase {
	const char *name;
	void (*call)(struct fx *x, struct res *r); /* on the (un)marked thread */
	int fail, err, code;			   /* expected: failure, errno, code */
	int local;				   /* on the allow-list: runs on the caller */
	int first;  /* "first" in calls.tbl: offloaded until one ran, local after */
	int either; /* success depends on the machine (root, /etc files): compare only */
	void (*prep)(struct fx *x, struct res *r); /* main thread, before */
	void (*post)(struct fx *x, struct res *r); /* main thread, after */
};

#define CASE(id) static void id(struct fx *x __attribute__((unused)), struct res *r)
#define HOOK(id) \
	static void id(struct fx *x __attribute__((unused)), struct res *r __attribute__((unused)))

/* Record a call: result, failure, errno (right away, before anything else). */
#define INT(expr)                       \
	do {                            \
		long v_ = (long)(expr); \
		r->err = errno;         \
		r->calls++;             \
		r->ret = v_;            \
		r->fail = v_ < 0;       \
	} while (0)
#define FD(expr)                          \
	do {                              \
		int v_ = (expr);          \
		r->err = errno;           \
		r->calls++;               \
		r->fd = v_;               \
		r->ret = v_ < 0 ? -1 : 0; \
		r->fail = v_ < 0;         \
	} while (0)
#define PTR(dst, expr, failval)                             \
	do {                                                \
		dst = (expr);                               \
		r->err = errno;                             \
		r->calls++;                                 \
		r->fail = (void *)dst == (void *)(failval); \
		r->ret = r->fail ? -1 : 0;                  \
	} while (0)
#define CODE(expr)                 \
	do {                       \
		int v_ = (expr);   \
		r->err = errno;    \
		r->calls++;        \
		r->code = v_;      \
		r->ret = v_;       \
		r->fail = v_ != 0; \
	} while (0)

/*
 * Table entries: ENTRY(id, field = value...) with the fields of struct
 * fcase; OK and FAIL for the common shapes.
 */
/* clang-format off */
#define ENTRY(id, ...)     {.name = #id, .call = id, __VA_ARGS__}
#define OK(id)             ENTRY(id, .fail = 0)
#define OKP(id, pre, pst)  ENTRY(id, .prep = pre, .post = pst)
#define FAIL(id, e)        ENTRY(id, .fail = 1, .err = e)
/* clang-format on */

/* The fixture path of name, in slot 0 or 1 (two paths for rename & co). */
const char *fx_path(struct fx *x, int slot, const char *name);
#define P(name)	 fx_path(x, 0, name)
#define P2(name) fx_path(x, 1, name)

/* Append to r->data (printf-like; snprintf is not a wrapped call). */
void note(struct res *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Run every case of a family, direct and marked, and compare. */
void check_family(const char *family, const struct fcase *cases, size_t n, int capture);
#define CHECK_FAMILY(family, cases, capture) \
	check_family(family, cases, sizeof(cases) / sizeof(cases[0]), capture)

#endif
