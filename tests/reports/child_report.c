/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Call sites for the reports:
 *
 *   sites DIR NA NB NC
 *
 * A marked thread named "ctl" runs control_loop(), which calls fsync from
 * save_state_a() NA times (one call site, NA events), from save_state_b()
 * NB times (a second site) and mkdir from make_dir() NC times.  The policy
 * under test (fsync:warn, fsync:strict...) comes with the options.  These
 * functions are global, never inlined, and the program is built with -g
 * -O0, so the backtraces of the reports can name them.  Prints
 *
 *   pid=N tid=N failed=N
 *
 * failed: how many of the calls returned -1 (refused calls do).
 */
#include "child.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

struct sites {
	int fd;
	char dir[PATH_MAX];
	int na, nb, nc;
	pid_t tid;
	int failed;
};

void save_state_a(struct sites *s);
void save_state_b(struct sites *s);
void make_dir(struct sites *s);
void control_loop(struct sites *s);

__attribute__((noinline)) void save_state_a(struct sites *s)
{
	s->failed += fsync(s->fd) != 0;
}

__attribute__((noinline)) void save_state_b(struct sites *s)
{
	s->failed += fsync(s->fd) != 0;
}

__attribute__((noinline)) void make_dir(struct sites *s)
{
	s->failed += mkdir(s->dir, 0755) != 0 && errno != EEXIST;
}

/* Each loop calls its function from one return address: one site per loop. */
__attribute__((noinline)) void control_loop(struct sites *s)
{
	for (int i = 0; i < s->na; i++)
		save_state_a(s);
	for (int i = 0; i < s->nb; i++)
		save_state_b(s);
	for (int i = 0; i < s->nc; i++)
		make_dir(s);
}

static void sites_thread(void *arg)
{
	struct sites *s = arg;

	s->tid = tid_now();
	control_loop(s);
}

int sc_sites(int argc, char **argv)
{
	struct sites s = {0};
	char file[PATH_MAX];

	if (argc < 4)
		fail("usage: sites DIR NA NB NC");
	path_join(file, argv[0], "sites.file");
	path_join(s.dir, argv[0], "sites.dir");
	s.na = atoi(argv[1]);
	s.nb = atoi(argv[2]);
	s.nc = atoi(argv[3]);
	s.fd = open(file, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (s.fd < 0)
		fail("open %s", file);
	on_thread("ctl", 1, sites_thread, &s);
	say("pid=%d tid=%d failed=%d", (int)getpid(), (int)s.tid, s.failed);
	close(s.fd);
	unlink(file);
	rmdir(s.dir);
	return 0;
}
