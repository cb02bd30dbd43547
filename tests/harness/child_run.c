/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The option child (harness.h): its runs, its exit, its output and stats_file. */
#include "harness.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <linux/magic.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

/* A hung child is killed by SIGALRM after this long: it turns a hang into a failure. */
#define CHILD_ALARM_S 60

extern char **environ;

char child_dir[PATH_MAX];
const char *child_program = RTO_CHILD;
const char *const child_fortify = RTO_CHILD_FORTIFY;

/* ---- the per-test directory ---------------------------------------------------- */

void child_setup(void)
{
	child_program = RTO_CHILD;
	strcpy(child_dir, "/var/tmp/rto-child.XXXXXX");
	cr_assert_not_null(mkdtemp(child_dir), "mkdtemp: %s", strerror(errno));
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

void child_teardown(void)
{
	if (child_dir[0])
		nftw(child_dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
	child_dir[0] = '\0';
}

int child_dir_on_disk(void)
{
	struct statfs sf;

	cr_assert_eq(statfs(child_dir, &sf), 0);
	return sf.f_type != TMPFS_MAGIC && sf.f_type != RAMFS_MAGIC;
}

void child_path(char *out, const char *name)
{
	cr_assert_lt(snprintf(out, PATH_MAX, "%s/%s", child_dir, name), PATH_MAX);
}

/* ---- running rto_child ------------------------------------------------------------- */

/* Our environment without the library's variables, plus the options under test. */
static char **child_env(const char *opts)
{
	size_t n = 0;
	while (environ[n])
		n++;
	char **env = calloc(n + 2, sizeof(*env));
	size_t k = 0;
	cr_assert_not_null(env);
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "RTOFFLOAD_OPTIONS=", 18) &&
		    strncmp(environ[i], "LD_PRELOAD=", 11))
			env[k++] = environ[i];
	cr_assert_neq(asprintf(&env[k], "RTOFFLOAD_OPTIONS=%s", opts), -1);
	return env;
}

static char *read_memfd(int fd)
{
	off_t len = lseek(fd, 0, SEEK_END);
	char *buf = calloc(1, (size_t)(len > 0 ? len : 0) + 1);

	cr_assert_not_null(buf);
	if (len > 0)
		cr_assert_eq(pread(fd, buf, (size_t)len, 0), len);
	close(fd);
	return buf;
}

/* In the forked child: until exec, only async-signal-safe calls. */
static _Noreturn void exec_child(int out, int err, const char *const *argv, char **env)
{
	struct rlimit no_core = {0, 0}; /* on_strict=abort must not leave core files */

	if (dup2(out, 1) < 0 || dup2(err, 2) < 0 || chdir(child_dir) != 0)
		_exit(126);
	setrlimit(RLIMIT_CORE, &no_core);
	alarm(CHILD_ALARM_S);
	execve(argv[0], (char *const *)argv, env);
	_exit(127);
}

/* child_program, then the scenario's words: an argv for execve. */
static void child_argv(char **words, size_t max, const char *const *argv)
{
	size_t n = 0;

	words[n++] = (char *)child_program;
	for (; argv[n - 1] && n < max - 1; n++)
		words[n] = (char *)argv[n - 1];
	words[n] = NULL;
}

static void free_env(char **env)
{
	for (char **e = env; *e; e++)
		if (strncmp(*e, "RTOFFLOAD_OPTIONS=", 18) == 0)
			free(*e); /* ours, from asprintf; the rest are environ's */
	free(env);
}

/* Fork, exec words with env, wait; stdout and stderr into r. */
static void spawn_and_wait(struct run *r, char **words, char **env)
{
	int out = memfd_create("out", MFD_CLOEXEC), err = memfd_create("err", MFD_CLOEXEC);

	cr_assert(out >= 0 && err >= 0);
	pid_t pid = fork();
	cr_assert_geq(pid, 0, "fork: %s", strerror(errno));
	if (pid == 0)
		exec_child(out, err, (const char *const *)words, env);
	r->pid = pid;
	cr_assert_eq(waitpid(pid, &r->status, 0), pid);
	r->out = read_memfd(out);
	r->err = read_memfd(err);
}

void child_run(struct run *r, int with_stats, const char *opts, const char *const *argv)
{
	char stats[PATH_MAX], *full = NULL, *words[64];

	memset(r, 0, sizeof(*r));
	child_path(stats, "stats.json");
	unlink(stats);
	if (with_stats)
		cr_assert_neq(asprintf(&full, "stats_file=%s:%s", stats, opts), -1);
	char **env = child_env(full ? full : opts);
	child_argv(words, sizeof(words) / sizeof(words[0]), argv);
	spawn_and_wait(r, words, env);
	r->json = with_stats ? slurp(stats, NULL) : NULL;
	free_env(env);
	free(full);
}

void run_free(struct run *r)
{
	free(r->out);
	free(r->err);
	free(r->json);
	memset(r, 0, sizeof(*r));
}

static void describe_status(int status, char *buf, size_t len)
{
	if (WIFEXITED(status))
		snprintf(buf, len, "exit %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, len, "signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
	else
		snprintf(buf, len, "status 0x%x", status);
}

void assert_child_exit0(const struct run *r)
{
	char how[64];

	describe_status(r->status, how, sizeof(how));
	cr_assert(WIFEXITED(r->status) && WEXITSTATUS(r->status) == 0,
		  "rto_child: %s\n--- stdout\n%s--- stderr\n%s", how, r->out, r->err);
}

void assert_child_config_error(const struct run *r, const char *const *needles)
{
	char how[64];

	describe_status(r->status, how, sizeof(how));
	cr_assert(WIFEXITED(r->status) && WEXITSTATUS(r->status) == 78,
		  "expected exit 78, got %s; stderr:\n%s", how, r->err);
	size_t len = strlen(r->err);
	cr_assert(len > 0 && r->err[len - 1] == '\n' && strchr(r->err, '\n') == r->err + len - 1,
		  "expected exactly one line on stderr, got:\n%s", r->err);
	cr_assert_eq(r->out[0], '\0', "main ran (stdout: %s)", r->out);
	for (; *needles; needles++)
		cr_assert_not_null(strstr(r->err, *needles), "'%s' not in: %s", *needles, r->err);
}

/* ---- reading what the child said ----------------------------------------------------- */

static long json_number(const char *from, const char *end, const char *field)
{
	char key[64];

	snprintf(key, sizeof(key), "\"%s\":", field);
	const char *p = strstr(from, key);
	cr_assert(p && p < end, "no %s in the stats row: %.*s", field, (int)(end - from), from);
	return strtol(p + strlen(key), NULL, 10);
}

long json_count(const struct run *r, const char *fn, const char *field)
{
	char row[96];

	cr_assert_not_null(r->json, "no stats_file JSON; stderr:\n%s", r->err);
	if (!fn) {
		const char *t = strstr(r->json, "\"totals\":{");
		cr_assert_not_null(t);
		return json_number(t, strchr(t, '}'), field);
	}
	snprintf(row, sizeof(row), "{\"name\":\"%s\",", fn);
	const char *p = strstr(r->json, row);
	if (!p)
		return 0; /* rows are written for functions with a nonzero counter only */
	return json_number(p, strchr(p, '}'), field);
}

long json_family(const struct run *r, const char *fn, const char *field)
{
	static const char *const families[][4] = {
		{"fprintf", "vfprintf", "__fprintf_chk", "__vfprintf_chk"},
		{"printf", "vprintf", "__printf_chk", "__vprintf_chk"},
	};

	for (size_t f = 0; f < sizeof(families) / sizeof(families[0]); f++)
		for (int i = 0; i < 4; i++)
			if (strcmp(fn, families[f][i]) == 0) {
				long sum = 0;
				for (int k = 0; k < 4; k++)
					sum += json_count(r, families[f][k], field);
				return sum;
			}
	return json_count(r, fn, field);
}

/* The object that starts with head ({"thread":"x", ...}) in the JSON; NULL if none. */
static const char *json_object(const struct run *r, const char *head)
{
	cr_assert_not_null(r->json, "no stats_file JSON; stderr:\n%s", r->err);
	return strstr(r->json, head);
}

long json_thread(const struct run *r, const char *name, const char *field)
{
	char head[96];

	snprintf(head, sizeof(head), "{\"thread\":\"%s\",", name);
	const char *p = json_object(r, head);
	return p ? json_number(p, strchr(p, '}'), field) : -1;
}

long json_other(const struct run *r, const char *field)
{
	const char *p = json_object(r, "\"other_threads\":{");
	cr_assert_not_null(p, "no other_threads in %s", r->json);
	return json_number(p, strchr(p, '}'), field);
}

int json_threads(const struct run *r)
{
	cr_assert_not_null(r->json);
	return count_of(r->json, "{\"thread\":");
}

long json_site(const struct run *r, const char *where, const char *event, const char *fn,
	       const char *field)
{
	char head[256];

	snprintf(head, sizeof(head), "{\"where\":\"%s\",\"event\":\"%s\",\"function\":\"%s\",",
		 where, event, fn);
	const char *p = json_object(r, head);
	return p ? json_number(p, strchr(p, '}'), field) : -1;
}

/* The line of out that starts with prefix, and its length; NULL if none. */
static const char *line_of(const char *out, const char *prefix, size_t *len)
{
	for (const char *s = out; *s;) {
		size_t n = strcspn(s, "\n");
		if (!prefix || strncmp(s, prefix, strlen(prefix)) == 0) {
			*len = n;
			return s;
		}
		s += n + (s[n] == '\n');
	}
	return NULL;
}

/* The value of key= in the line (a word: up to a blank), or NULL. */
static const char *value_in(const char *line, size_t len, const char *key)
{
	size_t kn = strlen(key);

	for (const char *p = line; p + kn < line + len; p++)
		if ((p == line || p[-1] == ' ') && strncmp(p, key, kn) == 0 && p[kn] == '=')
			return p + kn + 1;
	return NULL;
}

long out_long(const char *out, const char *prefix, const char *key, long def)
{
	size_t len;
	const char *line = line_of(out, prefix, &len);
	const char *v = line ? value_in(line, len, key) : NULL;
	return v ? strtol(v, NULL, 10) : def;
}

const char *out_word(const char *out, const char *prefix, const char *key, char *buf, size_t len)
{
	size_t n;
	const char *line = line_of(out, prefix, &n);
	const char *v = line ? value_in(line, n, key) : NULL;
	size_t w = v ? strcspn(v, " \n") : 0;

	if (w >= len)
		w = len - 1;
	memcpy(buf, v ? v : "", w);
	buf[w] = '\0';
	return buf;
}

int count_of(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

int lines_starting(const char *text, const char *prefix)
{
	int n = 0;
	size_t pn = strlen(prefix);

	for (const char *s = text; *s;) {
		n += strncmp(s, prefix, pn) == 0;
		s += strcspn(s, "\n");
		s += *s == '\n';
	}
	return n;
}
