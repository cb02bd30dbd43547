/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Per-thread state that must travel with an offloaded call (issue 6):
 *  - the caller's uselocale() locale: printf's decimal point and %'d
 *    grouping, and %m's message language, come from the caller's locale
 *    object, not the helper's;
 *  - h_errno after gethostbyname(): set by a failure, and left as the caller
 *    had it by a numeric address;
 *  - the resolver state (_res): a thread that points its own at a name
 *    server of the test's has its offloaded lookups sent there;
 *  - errno: unchanged by successful calls, as a direct call leaves it.
 *
 * The locale: a machine may have only C, C.utf8 and POSIX (`locale -a`),
 * where marked and direct output agree even if the helper ignored the
 * caller's locale.  So the test builds de_DE.UTF-8 with localedef from
 * Debian's `locales` package (.ci/deps installs it) into a temporary
 * directory and points LOCPATH at it; German has a decimal comma, '.'
 * grouping and translated libc messages, all different from the helper's C
 * locale, and the output must be the German one.  Without that package the
 * test is skipped, and says why: it could not tell the two apart.
 */
#include "harness.h"

#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <resolv.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- locale --------------------------------------------------------------------- */

#define DE_SOURCE "/usr/share/i18n/locales/de_DE"
#define LOCALEDEF "/usr/bin/localedef"

/* de_DE.UTF-8 compiled under dir (LOCPATH); 1 if it exists now. */
static int build_german(const char *dir)
{
	char out[PATH_MAX];
	struct proc p;

	path_join(out, dir, "de_DE.UTF-8");
	char *argv[] = {LOCALEDEF, "-i", "de_DE", "-f", "UTF-8", out, NULL};
	cr_assert_eq(run_proc(argv, NULL, &p), 0);
	cr_assert(WIFEXITED(p.status) && WEXITSTATUS(p.status) <= 1, "localedef failed: %s", p.err);
	return 1;
}

struct printer {
	locale_t loc[3]; /* used in turn for three lines */
	const char *path;
	int rets[3];
};

/* Three lines, each under its own uselocale(), through an offloaded stream. */
static void printer_job(void *arg)
{
	struct printer *p = arg;
	FILE *f = fopen(p->path, "w");

	if (!f)
		return;
	for (int i = 0; i < 3; i++) {
		uselocale(p->loc[i]);
		errno = ENOENT; /* for %m */
		p->rets[i] = fprintf(f, "%.2f|%'d|%m\n", 1234.5, 1234567);
	}
	uselocale(LC_GLOBAL_LOCALE);
	fclose(f);
}

static char *print_three(int marked, locale_t a, locale_t b, const char *path)
{
	struct printer p = {.loc = {a, b, a}, .path = path};

	cr_assert_eq(thread_run(printer_job, &p, marked ? TH_MARK | TH_PIN_RT : 0, 0), 0);
	for (int i = 0; i < 3; i++)
		cr_expect_gt(p.rets[i], 0, "fprintf %d failed", i);
	return slurp(path, NULL);
}

Test(state, uselocale_travels_with_the_call, .timeout = TEST_TIMEOUT)
{
	char dir[PATH_MAX], pd[PATH_MAX], pm[PATH_MAX];
	/*
	 * Only a second locale shows that the helper used the caller's: in
	 * C.UTF-8 marked and direct agree even if it did not.  .ci/deps installs
	 * Debian's locales package, which has localedef and the German source.
	 */
	if (access(LOCALEDEF, X_OK) != 0 || access(DE_SOURCE, R_OK) != 0)
		cr_skip_test("no localedef or de_DE source (Debian package 'locales'): "
			     "without a second locale this cannot tell the caller's locale "
			     "from the helper's");
	tmp_make(dir);
	path_join(pd, dir, "direct");
	path_join(pm, dir, "marked");
	unsetenv("LANGUAGE"); /* it would override LC_MESSAGES for %m */
	build_german(dir);
	setenv("LOCPATH", dir, 1); /* read by newlocale() at each call */
	locale_t loc = newlocale(LC_ALL_MASK, "de_DE.UTF-8", (locale_t)0);
	cr_assert(loc, "newlocale: %s", strerror(errno));
	/* Only LC_NUMERIC from it: another locale object with another grouping. */
	locale_t num =
		newlocale(LC_NUMERIC_MASK, "de_DE.UTF-8", newlocale(LC_ALL_MASK, "C", (locale_t)0));
	cr_assert(num);

	char *d = print_three(0, loc, num, pd);
	char *m = print_three(1, loc, num, pm);
	cr_assert(d && m);
	cr_expect_str_eq(m, d, "marked and direct output differ");
	cr_expect_str_eq(m,
			 "1234,50|1.234.567|Datei oder Verzeichnis nicht gefunden\n"
			 "1234,50|1.234.567|No such file or directory\n"
			 "1234,50|1.234.567|Datei oder Verzeichnis nicht gefunden\n",
			 "the helper did not use the caller's locale");
	free(d);
	free(m);
	freelocale(loc);
	freelocale(num);
	tmp_remove(dir);
}

/* ---- h_errno -------------------------------------------------------------------- */

struct resolver {
	const char *name;
	int found;
	int herr;
};

static void resolver_job(void *arg)
{
	struct resolver *r = arg;

	h_errno = -7; /* a sentinel: the call replaces it, or leaves it (a numeric address) */
	r->found = gethostbyname(r->name) != NULL;
	r->herr = h_errno;
}

static void resolve(int marked, const char *name, struct resolver *r)
{
	memset(r, 0, sizeof(*r));
	r->name = name;
	cr_assert_eq(thread_run(resolver_job, r, marked ? TH_MARK | TH_PIN_RT : 0, 0), 0);
}

Test(state, h_errno_comes_back_from_gethostbyname, .timeout = TEST_TIMEOUT)
{
	struct resolver d, m;
	struct rt_offload_stats s0, s1;

	resolve(0, "nonexistent.invalid", &d);
	rt_offload_get_stats(&s0);
	resolve(1, "nonexistent.invalid", &m);
	rt_offload_get_stats(&s1);
	cr_expect_geq(s1.offloaded - s0.offloaded, 1, "gethostbyname was not offloaded");
	cr_expect_not(d.found);
	cr_expect_not(m.found, "a .invalid name resolved");
	cr_expect_neq(d.herr, -7, "the direct call left h_errno alone: no baseline");
	cr_expect_eq(m.herr, d.herr, "h_errno %d, direct %d", m.herr, d.herr);

	resolve(0, "localhost", &d);
	resolve(1, "localhost", &m);
	cr_expect(d.found && m.found, "localhost: direct %d marked %d", d.found, m.found);
	cr_expect_eq(m.herr, d.herr, "after a success: h_errno %d, direct %d", m.herr, d.herr);

	/* A numeric address never reaches NSS: glibc leaves h_errno as the caller had it,
	 * not as the helper thread last had it. */
	resolve(0, "127.0.0.1", &d);
	resolve(1, "127.0.0.1", &m);
	cr_expect(d.found && m.found, "127.0.0.1: direct %d marked %d", d.found, m.found);
	cr_expect_eq(d.herr, -7, "the direct call set h_errno (%d): no baseline", d.herr);
	cr_expect_eq(m.herr, d.herr, "a numeric address: h_errno %d, direct %d", m.herr, d.herr);
}

/* ---- the resolver state ------------------------------------------------------------- */

/*
 * A name server on a loopback UDP port that answers every query with
 * NXDOMAIN and counts the queries that name `expect`.  A thread that points
 * its own _res at it (res_init(), then nsaddr_list) must see its lookups
 * go there, offloaded or not; the machine's resolv.conf names another.
 */
struct fake_ns {
	int fd;
	in_port_t port;
	atomic_int stop;
	atomic_int queries; /* for the name being looked up */
	const char *label;  /* its first label */
};

static void fake_ns_job(void *arg)
{
	struct fake_ns *ns = arg;
	unsigned char q[512];

	while (!atomic_load(&ns->stop)) {
		struct sockaddr_in from;
		socklen_t len = sizeof(from);
		struct pollfd p = {.fd = ns->fd, .events = POLLIN};
		if (poll(&p, 1, 50) <= 0)
			continue;
		ssize_t n = recvfrom(ns->fd, q, sizeof(q), 0, (struct sockaddr *)&from, &len);
		if (n < 12)
			continue;
		/* The question's first label follows the 12-byte header. */
		size_t l = strlen(ns->label);
		if ((size_t)n > 13 + l && q[12] == l && !memcmp(q + 13, ns->label, l))
			atomic_fetch_add(&ns->queries, 1);
		q[2] |= 0x80;			 /* QR: a response */
		q[3] = (q[3] & 0xf0) | 3 | 0x80; /* RA, RCODE NXDOMAIN */
		sendto(ns->fd, q, (size_t)n, 0, (struct sockaddr *)&from, len);
	}
}

struct own_resolver {
	in_port_t port;
	const char *name;
	int found;
	int herr;
};

static void own_resolver_job(void *arg)
{
	struct own_resolver *o = arg;

	res_init();
	_res.nscount = 1;
	_res.nsaddr_list[0] = (struct sockaddr_in){.sin_family = AF_INET,
						   .sin_port = o->port,
						   .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	_res.retry = 1;
	_res.retrans = 2;
	h_errno = -7;
	o->found = gethostbyname(o->name) != NULL;
	o->herr = h_errno;
}

Test(state, the_callers_resolver_state_travels_with_dns_calls, .timeout = TEST_TIMEOUT)
{
	struct fake_ns ns = {.label = "rto-resolver-probe"};
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	struct test_thread server;

	ns.fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	cr_assert_geq(ns.fd, 0);
	cr_assert_eq(bind(ns.fd, (struct sockaddr *)&a, sizeof(a)), 0);
	cr_assert_eq(getsockname(ns.fd, (struct sockaddr *)&a, &len), 0);
	ns.port = a.sin_port;
	cr_assert_eq(thread_start(&server, fake_ns_job, &ns, 0, 0), 0);

	for (int marked = 0; marked <= 1; marked++) {
		struct own_resolver o = {.port = ns.port, .name = "rto-resolver-probe.example"};
		struct rt_offload_stats s0, s1;
		int before = atomic_load(&ns.queries);
		rt_offload_get_stats(&s0);
		cr_assert_eq(thread_run(own_resolver_job, &o, marked ? TH_MARK | TH_PIN_RT : 0, 0),
			     0);
		rt_offload_get_stats(&s1);
		const char *how = marked ? "offloaded" : "direct";
		if (marked)
			cr_expect_geq(s1.offloaded - s0.offloaded, 1,
				      "gethostbyname not offloaded");
		cr_expect_gt(atomic_load(&ns.queries), before,
			     "%s: the lookup did not go to the thread's own name server", how);
		cr_expect_not(o.found, "%s: NXDOMAIN, yet found", how);
		cr_expect_eq(o.herr, HOST_NOT_FOUND, "%s: h_errno %d", how, o.herr);
	}
	atomic_store(&ns.stop, 1);
	thread_join(&server);
	close(ns.fd);
}

/* ---- errno after successful calls --------------------------------------------------- */

#define SENTINEL EDOM
#define NOPS	 18

struct errnos {
	const char *dir;
	int ok[NOPS];  /* the call succeeded */
	int err[NOPS]; /* errno after it */
};

#define STEP(i, expr)              \
	do {                       \
		errno = SENTINEL;  \
		e->ok[i] = (expr); \
		e->err[i] = errno; \
	} while (0)

static void errno_job(void *arg)
{
	struct errnos *e = arg;
	char path[PATH_MAX], sub[PATH_MAX], real[PATH_MAX];
	struct stat st;
	int fd = -1;
	FILE *f = NULL;
	DIR *d = NULL;

	path_join(path, e->dir, "file");
	path_join(sub, e->dir, "sub");
	STEP(0, (fd = open(path, O_CREAT | O_RDWR | O_TRUNC | O_CLOEXEC, 0600)) >= 0);
	STEP(1, write(fd, "abc", 3) == 3);
	STEP(2, pwrite(fd, "d", 1, 3) == 1);
	STEP(3, lseek(fd, 0, SEEK_SET) == 0);
	STEP(4, read(fd, real, 4) == 4);
	STEP(5, fsync(fd) == 0);
	STEP(6, fstat(fd, &st) == 0 && st.st_size == 4);
	STEP(7, close(fd) == 0);
	STEP(8, stat(path, &st) == 0);
	STEP(9, access(path, R_OK) == 0);
	STEP(10, (f = fopen(path, "a")) != NULL);
	STEP(11, fprintf(f, "%d", 5) == 1);
	STEP(12, fclose(f) == 0);
	STEP(13, mkdir(sub, 0700) == 0);
	STEP(14, (d = opendir(sub)) != NULL);
	STEP(15, readdir(d) != NULL);
	STEP(16, closedir(d) == 0 && rmdir(sub) == 0);
	STEP(17, realpath(path, real) != NULL && unlink(path) == 0);
}

Test(state, errno_is_unchanged_by_successful_calls, .timeout = TEST_TIMEOUT)
{
	char dir[PATH_MAX];
	struct errnos d = {0}, m = {0};
	struct rt_offload_stats s0, s1;

	tmp_make(dir);
	d.dir = m.dir = dir;
	cr_assert_eq(thread_run(errno_job, &d, 0, 0), 0);
	rt_offload_get_stats(&s0);
	cr_assert_eq(thread_run(errno_job, &m, TH_MARK | TH_PIN_RT, 0), 0);
	rt_offload_get_stats(&s1);
	cr_expect_geq(s1.offloaded - s0.offloaded, NOPS, "the calls were not offloaded");
	for (int i = 0; i < NOPS; i++) {
		cr_expect(d.ok[i] && m.ok[i], "step %d failed: direct %d marked %d", i, d.ok[i],
			  m.ok[i]);
		cr_expect_eq(m.err[i], d.err[i], "step %d: errno %d, direct %d", i, m.err[i],
			     d.err[i]);
		/* glibc's realpath() itself leaves EINVAL behind on success (step 17). */
		if (i != 17)
			cr_expect_eq(m.err[i], SENTINEL, "step %d changed errno to %d", i,
				     m.err[i]);
	}
	tmp_remove(dir);
}
