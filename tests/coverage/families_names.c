/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Issue 13's name-service, time zone, locale and system-figure rows. */
#include "more.h"

#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <grp.h>
#include <locale.h>
#include <netdb.h>
#include <pwd.h>
#include <shadow.h>
#include <string.h>
#include <sys/random.h>
#include <sys/sysinfo.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

static const time_t t0 = 1700000000;
static void note_tm(struct res *r, const struct tm *tm)
{
	if (tm)
		note(r, "%d-%d-%d %d:%d %s", tm->tm_year, tm->tm_mon, tm->tm_mday, tm->tm_hour,
		     tm->tm_min, tm->tm_zone ? tm->tm_zone : "");
}
static const struct in_addr lo = {.s_addr = 0x0100007f}; /* 127.0.0.1 in network order */
HOOK(post_closelog)
{
	closelog();
}
static locale_t made;
HOOK(post_freelocale)
{
	if (made)
		freelocale(made);
	made = 0;
}
HOOK(post_setlocale)
{
	setlocale(LC_ALL, "C");
}

/* clang-format off */
CASE(gethostbyname2_ok) { struct hostent *h; PTR(h, gethostbyname2("localhost", AF_INET), NULL); if (h) note(r, "%s", h->h_name); }
CASE(gethostbyname2_notfound) { struct hostent *h; PTR(h, gethostbyname2("no-such-host.invalid", AF_INET), NULL); r->herr = h_errno; }
CASE(gethostbyname_r_ok)
{
	struct hostent he, *res = NULL; char buf[1024]; int herr = 0;
	CODE(gethostbyname_r("localhost", &he, buf, sizeof(buf), &res, &herr));
	note(r, "%s", res ? res->h_name : "-");
}
CASE(gethostbyname_r_erange)
{
	struct hostent he, *res = NULL; char buf[4]; int herr = 0;
	CODE(gethostbyname_r("localhost", &he, buf, sizeof(buf), &res, &herr));
}
CASE(gethostbyname2_r_ok)
{
	struct hostent he, *res = NULL; char buf[1024]; int herr = 0;
	CODE(gethostbyname2_r("localhost", AF_INET, &he, buf, sizeof(buf), &res, &herr));
	note(r, "%s", res ? res->h_name : "-");
}
CASE(gethostbyaddr_ok) { struct hostent *h; PTR(h, gethostbyaddr(&lo, sizeof(lo), AF_INET), NULL); if (h) note(r, "%s", h->h_name); }
CASE(gethostbyaddr_r_ok)
{
	struct hostent he, *res = NULL; char buf[1024]; int herr = 0;
	CODE(gethostbyaddr_r(&lo, sizeof(lo), AF_INET, &he, buf, sizeof(buf), &res, &herr));
	note(r, "%s", res ? res->h_name : "-");
}
CASE(getservbyname_ok) { struct servent *s; PTR(s, getservbyname("ssh", "tcp"), NULL); if (s) note(r, "%d", ntohs((uint16_t)s->s_port)); }
CASE(getservbyname_none) { struct servent *s; PTR(s, getservbyname("no-such-service", "tcp"), NULL); }
CASE(getservbyport_ok) { struct servent *s; PTR(s, getservbyport(htons(22), "tcp"), NULL); if (s) note(r, "%s", s->s_name); }
CASE(getprotobyname_ok) { struct protoent *p; PTR(p, getprotobyname("udp"), NULL); if (p) note(r, "%d", p->p_proto); }
CASE(getprotobynumber_ok) { struct protoent *p; PTR(p, getprotobynumber(6), NULL); if (p) note(r, "%s", p->p_name); }
CASE(getpwnam_ok) { struct passwd *p; PTR(p, getpwnam("root"), NULL); if (p) note(r, "%d %s", (int)p->pw_uid, p->pw_dir); }
CASE(getpwnam_none) { struct passwd *p; PTR(p, getpwnam("no-such-user-rto"), NULL); }
CASE(getpwuid_ok) { struct passwd *p; PTR(p, getpwuid(0), NULL); if (p) note(r, "%s", p->pw_name); }
CASE(getpwnam_r_ok)
{
	struct passwd pw, *res = NULL; char buf[1024];
	CODE(getpwnam_r("root", &pw, buf, sizeof(buf), &res));
	note(r, "%s", res ? res->pw_shell : "-");
}
CASE(getpwnam_r_erange) { struct passwd pw, *res = NULL; char buf[1]; CODE(getpwnam_r("root", &pw, buf, sizeof(buf), &res)); }
CASE(getpwuid_r_ok)
{
	struct passwd pw, *res = NULL; char buf[1024];
	CODE(getpwuid_r(0, &pw, buf, sizeof(buf), &res));
	note(r, "%s", res ? res->pw_name : "-");
}
CASE(getgrnam_ok) { struct group *g; PTR(g, getgrnam("root"), NULL); if (g) note(r, "%d", (int)g->gr_gid); }
CASE(getgrgid_ok) { struct group *g; PTR(g, getgrgid(0), NULL); if (g) note(r, "%s", g->gr_name); }
CASE(getgrgid_none) { struct group *g; PTR(g, getgrgid(54321), NULL); }
CASE(getgrnam_r_ok)
{
	struct group gr, *res = NULL; char buf[1024];
	CODE(getgrnam_r("root", &gr, buf, sizeof(buf), &res));
	note(r, "%s", res ? res->gr_name : "-");
}
CASE(getgrgid_r_ok)
{
	struct group gr, *res = NULL; char buf[1024];
	CODE(getgrgid_r(0, &gr, buf, sizeof(buf), &res));
	note(r, "%s", res ? res->gr_name : "-");
}
CASE(getgrouplist_ok) { gid_t g[32]; int n = 32; INT(getgrouplist("root", 0, g, &n)); note(r, "n=%d first=%d", n, (int)g[0]); }
CASE(getgrouplist_small) { gid_t g[1]; int n = 0; INT(getgrouplist("root", 0, g, &n)); note(r, "n=%d", n); }
CASE(initgroups_same) { INT(initgroups("root", 0)); }
CASE(getspnam_ok) { struct spwd *s; PTR(s, getspnam("root"), NULL); if (s) note(r, "%s", s->sp_namp); }
CASE(localtime_ok) { struct tm *tm; PTR(tm, localtime(&t0), NULL); note_tm(r, tm); }
CASE(localtime_r_twice)
{
	struct tm tm, *p;
	PTR(p, localtime_r(&t0, &tm), NULL);
	PTR(p, localtime_r(&t0, &tm), NULL);
	note_tm(r, p);
}
CASE(gmtime_twice) { struct tm *tm; PTR(tm, gmtime(&t0), NULL); PTR(tm, gmtime(&t0), NULL); note_tm(r, tm); }
CASE(gmtime_r_twice)
{
	struct tm tm, *p;
	PTR(p, gmtime_r(&t0, &tm), NULL);
	PTR(p, gmtime_r(&t0, &tm), NULL);
	note_tm(r, p);
}
CASE(ctime_ok) { char *s; PTR(s, ctime(&t0), NULL); note(r, "%s", s); }
CASE(ctime_r_twice) { char buf[32], *s; PTR(s, ctime_r(&t0, buf), NULL); PTR(s, ctime_r(&t0, buf), NULL); note(r, "%s", buf); }
CASE(mktime_ok) { struct tm tm = {.tm_year = 120, .tm_mday = 1, .tm_isdst = -1}; INT(mktime(&tm)); note_tm(r, &tm); }
CASE(timelocal_ok) { struct tm tm = {.tm_year = 100, .tm_mon = 5, .tm_mday = 1, .tm_isdst = -1}; INT(timelocal(&tm)); }
CASE(tzset_ok) { tzset(); INT(0); }
CASE(setlocale_query) { char *s; PTR(s, setlocale(LC_ALL, NULL), NULL); note(r, "%s", s); }
CASE(setlocale_c) { char *s; PTR(s, setlocale(LC_NUMERIC, "POSIX"), NULL); note(r, "%s", s); }
/* A new name each run: glibc remembers a locale it did not find. */
CASE(setlocale_enoent)
{
	static int k;
	char name[32], *s;
	snprintf(name, sizeof(name), "xx_NO.SUCH%d", k++);
	PTR(s, setlocale(LC_ALL, name), NULL);
}
CASE(newlocale_ok) { PTR(made, newlocale(LC_ALL_MASK, "C", (locale_t)0), (locale_t)0); }
CASE(newlocale_einval) { PTR(made, newlocale(1 << 30, "C", (locale_t)0), (locale_t)0); }
CASE(sysconf_nprocs) { INT(sysconf(_SC_NPROCESSORS_ONLN)); }
CASE(sysconf_open_max) { INT(sysconf(_SC_OPEN_MAX)); }
CASE(sysconf_pagesize) { INT(sysconf(_SC_PAGESIZE)); }
CASE(sysconf_einval) { INT(sysconf(-5)); }
CASE(get_nprocs_ok) { INT(get_nprocs()); }
CASE(get_nprocs_conf_ok) { INT(get_nprocs_conf()); }
CASE(get_phys_pages_ok) { INT(get_phys_pages()); }
CASE(get_avphys_pages_ok) { INT(get_avphys_pages()); r->ret = r->ret > 0; }
/* getrandom's short form (random_short.h): up to 256 bytes, the pool ready, runs here. */
static char rnd[4096];
CASE(getrandom_short) { INT(getrandom(rnd, 16, 0)); }
CASE(getrandom_short_nonblock) { INT(getrandom(rnd, 256, GRND_NONBLOCK)); }
CASE(getrandom_long) { INT(getrandom(rnd, 257, 0)); }
CASE(getrandom_random_flag) { INT(getrandom(rnd, 16, GRND_RANDOM)); }
CASE(getrandom_efault)
{
	void *volatile bad = (void *)8; /* an address no mapping holds: the kernel's EFAULT */
	INT(getrandom(bad, 16, 0));
}
CASE(getrandom_einval) { INT(getrandom(rnd, 16, 1u << 30)); }
CASE(getentropy_ok) { INT(getentropy(rnd, 32)); }
CASE(getentropy_eio) { INT(getentropy(rnd, 257)); }
CASE(openlog_ok) { openlog("rto-test", LOG_NDELAY, LOG_USER); INT(0); }
CASE(closelog_ok) { closelog(); INT(0); }
/* clang-format on */

#define EITHER(id) ENTRY(id, .either = 1)
#define FIRST(id)  ENTRY(id, .first = 1)
#define LOCAL(id)  ENTRY(id, .local = 1)

const struct fcase more_names_cases[] = {
	OK(gethostbyname2_ok),
	ENTRY(gethostbyname2_notfound, .fail = 1),
	OK(gethostbyname_r_ok),
	ENTRY(gethostbyname_r_erange, .fail = 1, .code = ERANGE),
	OK(gethostbyname2_r_ok),
	OK(gethostbyaddr_ok),
	OK(gethostbyaddr_r_ok),
	EITHER(getservbyname_ok),
	ENTRY(getservbyname_none, .fail = 1),
	EITHER(getservbyport_ok),
	EITHER(getprotobyname_ok),
	EITHER(getprotobynumber_ok),
	OK(getpwnam_ok),
	ENTRY(getpwnam_none, .fail = 1),
	OK(getpwuid_ok),
	OK(getpwnam_r_ok),
	ENTRY(getpwnam_r_erange, .fail = 1, .code = ERANGE),
	OK(getpwuid_r_ok),
	OK(getgrnam_ok),
	OK(getgrgid_ok),
	ENTRY(getgrgid_none, .fail = 1),
	OK(getgrnam_r_ok),
	OK(getgrgid_r_ok),
	OK(getgrouplist_ok),
	ENTRY(getgrouplist_small, .fail = 1),
	EITHER(initgroups_same),
	EITHER(getspnam_ok),
	OK(localtime_ok),
	FIRST(localtime_r_twice),
	FIRST(gmtime_twice),
	FIRST(gmtime_r_twice),
	OK(ctime_ok),
	FIRST(ctime_r_twice),
	OK(mktime_ok),
	OK(timelocal_ok),
	OK(tzset_ok),
	ENTRY(setlocale_query, .post = post_setlocale),
	ENTRY(setlocale_c, .post = post_setlocale),
	ENTRY(setlocale_enoent, .fail = 1, .post = post_setlocale),
	ENTRY(newlocale_ok, .post = post_freelocale),
	ENTRY(newlocale_einval, .fail = 1, .err = EINVAL, .post = post_freelocale),
	OK(sysconf_nprocs),
	OK(sysconf_open_max),
	LOCAL(sysconf_pagesize),
	ENTRY(sysconf_einval, .fail = 1, .err = EINVAL, .local = 1),
	OK(get_nprocs_ok),
	OK(get_nprocs_conf_ok),
	OK(get_phys_pages_ok),
	OK(get_avphys_pages_ok),
	LOCAL(getrandom_short),
	LOCAL(getrandom_short_nonblock),
	OK(getrandom_long),
	OK(getrandom_random_flag),
	ENTRY(getrandom_efault, .fail = 1, .err = EFAULT, .local = 1),
	ENTRY(getrandom_einval, .fail = 1, .err = EINVAL, .local = 1),
	LOCAL(getentropy_ok),
	FAIL(getentropy_eio, EIO),
	ENTRY(openlog_ok, .post = post_closelog),
	OK(closelog_ok),
};
const size_t more_names_count = sizeof(more_names_cases) / sizeof(more_names_cases[0]);
