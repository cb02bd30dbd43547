/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The census workloads (workloads.h).  Each opens, uses and closes what
 * it needs, so it can run any number of times, and keeps its buffers on
 * the stack: the point is which system calls the marked thread makes, not
 * the allocator's.
 */
#define _GNU_SOURCE
#include "workloads.h"

#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <locale.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <pwd.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysinfo.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#define TEXT "alpha 1\nbeta 2\ngamma 3\n"
#define EXPECT(cond)                     \
	do {                             \
		if (!(cond))             \
			return __LINE__; \
	} while (0)

/* dir/name into buf (PATH_MAX); the fixture's paths are short. */
static void path_in(const struct census_fx *fx, char *buf, const char *name)
{
	size_t n = strlen(fx->dir);
	if (n + 1 + strlen(name) >= PATH_MAX)
		n = 0;
	memcpy(buf, fx->dir, n);
	buf[n] = '/';
	strcpy(buf + n + 1, name);
}

static int w_getline(const struct census_fx *fx)
{
	FILE *f = fopen(fx->text, "r");
	char line[32], *p = line;
	size_t n = sizeof(line);
	EXPECT(f);
	ssize_t len = getline(&p, &n, f); /* a buffer of ours: no malloc */
	fclose(f);
	EXPECT(len == 8 && p == line && !strcmp(line, "alpha 1\n"));
	return 0;
}

static int w_getdelim(const struct census_fx *fx)
{
	FILE *f = fopen(fx->text, "r");
	char buf[32], *p = buf;
	size_t n = sizeof(buf);
	EXPECT(f);
	ssize_t len = getdelim(&p, &n, ' ', f);
	fclose(f);
	EXPECT(len == 6 && !strcmp(buf, "alpha "));
	return 0;
}

static int w_fscanf(const struct census_fx *fx)
{
	FILE *f = fopen(fx->text, "r");
	char word[16];
	int v = 0;
	EXPECT(f);
	int n = fscanf(f, "%15s %d", word, &v);
	fclose(f);
	EXPECT(n == 2 && v == 1 && !strcmp(word, "alpha"));
	return 0;
}

static int w_dprintf(const struct census_fx *fx)
{
	char path[PATH_MAX];
	path_in(fx, path, "dprintf");
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	EXPECT(fd >= 0);
	int n = dprintf(fd, "value=%d\n", 42);
	EXPECT(close(fd) == 0 && n == 9);
	return 0;
}

static int w_mkstemp(const struct census_fx *fx)
{
	char path[PATH_MAX];
	path_in(fx, path, "tmpXXXXXX");
	int fd = mkstemp(path);
	EXPECT(fd >= 0);
	EXPECT(write(fd, "x", 1) == 1 && close(fd) == 0 && unlink(path) == 0);
	return 0;
}

static int w_tmpfile(const struct census_fx *fx)
{
	(void)fx;
	FILE *f = tmpfile();
	EXPECT(f);
	EXPECT(fputs("scratch", f) >= 0 && fclose(f) == 0);
	return 0;
}

static int w_syslog(const struct census_fx *fx)
{
	(void)fx;
	openlog("rtoffload-census", LOG_NDELAY, LOG_USER);
	syslog(LOG_DEBUG, "census %d", 1);
	closelog();
	return 0;
}

static int w_getpwnam(const struct census_fx *fx)
{
	(void)fx;
	struct passwd *pw = getpwnam("root");
	EXPECT(pw && pw->pw_uid == 0);
	return 0;
}

static int w_getgrgid(const struct census_fx *fx)
{
	(void)fx;
	struct group *gr = getgrgid(0);
	EXPECT(gr && !strcmp(gr->gr_name, "root"));
	return 0;
}

static int w_localtime_r(const struct census_fx *fx)
{
	(void)fx;
	time_t t = 1700000000;
	struct tm tm;
	EXPECT(localtime_r(&t, &tm) == &tm && tm.tm_year == 123);
	return 0;
}

static int w_setlocale(const struct census_fx *fx)
{
	(void)fx;
	EXPECT(setlocale(LC_NUMERIC, "C") && setlocale(LC_ALL, NULL));
	return 0;
}

static int w_sysconf(const struct census_fx *fx)
{
	(void)fx;
	EXPECT(sysconf(_SC_NPROCESSORS_ONLN) >= 1 && sysconf(_SC_PAGESIZE) >= 4096);
	return 0;
}

static int w_fgets(const struct census_fx *fx)
{
	FILE *f = fopen(fx->text, "r");
	char line[32];
	EXPECT(f);
	char *p = fgets(line, sizeof(line), f);
	p = p ? fgets(line, sizeof(line), f) : NULL;
	fclose(f);
	EXPECT(p && !strcmp(line, "beta 2\n"));
	return 0;
}

static int w_fprintf(const struct census_fx *fx)
{
	char path[PATH_MAX];
	path_in(fx, path, "log");
	FILE *f = fopen(path, "a");
	EXPECT(f);
	int n = fprintf(f, "%s %d\n", "line", 7);
	EXPECT(fflush(f) == 0 && fclose(f) == 0 && n == 7);
	return 0;
}

static int w_seek(const struct census_fx *fx)
{
	FILE *f = fopen(fx->text, "r");
	fpos_t pos;
	EXPECT(f);
	int ok = fseeko(f, 8, SEEK_SET) == 0 && ftello(f) == 8 && fgetpos(f, &pos) == 0 &&
		 fgetc(f) == 'b';
	rewind(f);
	ok = ok && fgetc(f) == 'a' && fsetpos(f, &pos) == 0 && fgetc(f) == 'b';
	fclose(f);
	EXPECT(ok);
	return 0;
}

static int w_stat(const struct census_fx *fx)
{
	struct stat st;
	struct statvfs sv;
	EXPECT(stat(fx->text, &st) == 0 && st.st_size == (off_t)strlen(TEXT));
	EXPECT(access(fx->text, R_OK) == 0 && statvfs(fx->dir, &sv) == 0);
	return 0;
}

static int w_readdir(const struct census_fx *fx)
{
	DIR *d = opendir(fx->dir);
	int n = 0;
	EXPECT(d);
	while (readdir(d))
		n++;
	closedir(d);
	EXPECT(n >= 3);
	return 0;
}

static int w_getaddrinfo(const struct census_fx *fx)
{
	(void)fx;
	struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *ai = NULL;
	EXPECT(getaddrinfo("localhost", "80", &hints, &ai) == 0 && ai);
	freeaddrinfo(ai);
	return 0;
}

static int w_getpwuid_r(const struct census_fx *fx)
{
	(void)fx;
	struct passwd pw, *res = NULL;
	char buf[512];
	EXPECT(getpwuid_r(0, &pw, buf, sizeof(buf), &res) == 0 && res == &pw);
	return 0;
}

static int w_getgrnam_r(const struct census_fx *fx)
{
	(void)fx;
	struct group gr, *res = NULL;
	char buf[512];
	EXPECT(getgrnam_r("root", &gr, buf, sizeof(buf), &res) == 0 && res == &gr);
	return 0;
}

static int w_time_text(const struct census_fx *fx)
{
	(void)fx;
	time_t t = 1700000000;
	struct tm tm;
	char buf[64];
	EXPECT(gmtime_r(&t, &tm) && ctime_r(&t, buf));
	EXPECT(strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M", &tm) == 16);
	return 0;
}

static int w_mktime(const struct census_fx *fx)
{
	(void)fx;
	struct tm tm = {.tm_year = 124, .tm_mday = 1, .tm_isdst = -1};
	EXPECT(mktime(&tm) != (time_t)-1);
	return 0;
}

static int w_pipe(const struct census_fx *fx)
{
	(void)fx;
	int p[2];
	char c = 0;
	EXPECT(pipe2(p, O_CLOEXEC) == 0);
	int ok = write(p[1], "p", 1) == 1 && read(p[0], &c, 1) == 1 && c == 'p';
	close(p[0]);
	close(p[1]);
	EXPECT(ok);
	return 0;
}

static int w_socketpair(const struct census_fx *fx)
{
	(void)fx;
	int s[2];
	char buf[8] = "";
	EXPECT(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, s) == 0);
	int ok = send(s[0], "ping", 4, 0) == 4 && recv(s[1], buf, sizeof(buf), 0) == 4;
	close(s[0]);
	close(s[1]);
	EXPECT(ok && !memcmp(buf, "ping", 4));
	return 0;
}

static int w_poll(const struct census_fx *fx)
{
	(void)fx;
	int p[2];
	EXPECT(pipe2(p, O_CLOEXEC) == 0);
	struct pollfd pf = {.fd = p[1], .events = POLLOUT};
	int n = poll(&pf, 1, 0);
	close(p[0]);
	close(p[1]);
	EXPECT(n == 1);
	return 0;
}

static int w_sleep(const struct census_fx *fx)
{
	(void)fx;
	struct timespec ts = {0, 10000};
	EXPECT(clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL) == 0 && nanosleep(&ts, NULL) == 0);
	return 0;
}

static int w_locks(const struct census_fx *fx)
{
	(void)fx;
	static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
	sem_t s;
	EXPECT(sem_init(&s, 0, 0) == 0);
	int ok = pthread_mutex_lock(&m) == 0 && pthread_mutex_unlock(&m) == 0 &&
		 pthread_rwlock_rdlock(&rw) == 0 && pthread_rwlock_unlock(&rw) == 0 &&
		 sem_post(&s) == 0 && sem_wait(&s) == 0;
	sem_destroy(&s);
	EXPECT(ok);
	return 0;
}

static int w_limits(const struct census_fx *fx)
{
	(void)fx;
	struct rlimit rl;
	EXPECT(getrlimit(RLIMIT_NOFILE, &rl) == 0 && get_nprocs() >= 1 && get_nprocs_conf() >= 1);
	return 0;
}

static int w_mkdtemp(const struct census_fx *fx)
{
	char path[PATH_MAX];
	path_in(fx, path, "dirXXXXXX");
	EXPECT(mkdtemp(path) && rmdir(path) == 0);
	return 0;
}

static int w_fdattrs(const struct census_fx *fx)
{
	char path[PATH_MAX];
	path_in(fx, path, "attrs");
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	EXPECT(fd >= 0);
	int ok = fchmod(fd, 0640) == 0 && fcntl(fd, F_GETFL) >= 0 && fsync(fd) == 0;
	EXPECT(close(fd) == 0 && ok);
	return 0;
}

/* clang-format off */
const struct census_work census_works[] = {
	{"read a line", "fopen getline fclose", w_getline, NULL},
	{"read a field", "fopen getdelim fclose", w_getdelim, NULL},
	{"parse a line", "fopen fscanf fclose", w_fscanf, NULL},
	{"format to a descriptor", "open dprintf close", w_dprintf, NULL},
	{"make a temporary file", "mkstemp write close unlink", w_mkstemp, NULL},
	{"an anonymous temporary stream", "tmpfile fputs fclose", w_tmpfile, NULL},
	{"log to syslog", "openlog syslog closelog", w_syslog, NULL},
	{"look up a user", "getpwnam", w_getpwnam, NULL},
	{"look up a group", "getgrgid", w_getgrgid, NULL},
	{"local time", "localtime_r", w_localtime_r, NULL},
	{"set the numeric locale", "setlocale", w_setlocale, NULL},
	{"count the CPUs", "sysconf(_SC_NPROCESSORS_ONLN) sysconf(_SC_PAGESIZE)", w_sysconf, NULL},
	{"read lines", "fopen fgets fclose", w_fgets, NULL},
	{"append to a log file", "fopen fprintf fflush fclose", w_fprintf, NULL},
	{"move in a stream", "fseeko ftello fgetpos fgetc rewind fsetpos", w_seek, NULL},
	{"file attributes", "stat access statvfs", w_stat, NULL},
	{"list a directory", "opendir readdir closedir", w_readdir, NULL},
	{"resolve a name", "getaddrinfo freeaddrinfo", w_getaddrinfo, NULL},
	{"look up a user, reentrant", "getpwuid_r", w_getpwuid_r, NULL},
	{"look up a group, reentrant", "getgrnam_r", w_getgrnam_r, NULL},
	{"format a time", "gmtime_r ctime_r strftime", w_time_text, NULL},
	{"make a time", "mktime", w_mktime, NULL},
	{"a pipe", "pipe2 write read close", w_pipe, NULL},
	{"a socket pair", "socketpair send recv close", w_socketpair, NULL},
	{"poll a descriptor", "poll", w_poll, NULL},
	{"sleep", "clock_nanosleep nanosleep", w_sleep, NULL},
	{"locks and semaphores", "pthread_mutex_lock/unlock pthread_rwlock_rdlock/unlock sem_post sem_wait", w_locks, NULL},
	{"limits and CPUs", "getrlimit get_nprocs get_nprocs_conf", w_limits, NULL},
	{"a temporary directory", "mkdtemp rmdir", w_mkdtemp, NULL},
	{"descriptor attributes", "open fchmod fcntl(F_GETFL) fsync close", w_fdattrs, NULL},
};
/* clang-format on */
const unsigned census_nworks = sizeof(census_works) / sizeof(census_works[0]);

int census_setup(struct census_fx *fx, const char *dir)
{
	snprintf(fx->dir, sizeof(fx->dir), "%s", dir);
	snprintf(fx->text, sizeof(fx->text), "%s/text", dir);
	FILE *f = fopen(fx->text, "w");
	if (!f)
		return -1;
	fputs(TEXT, f);
	return fclose(f);
}
