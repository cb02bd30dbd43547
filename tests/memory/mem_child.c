/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The program test_memory.c runs, preloaded with the library and given
 * RTOFFLOAD_OPTIONS (malloc=pool...): one scenario per run (argv[1]),
 * results as key=value words on stdout.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <malloc.h>
#include <pthread.h>
#include <rtoffload.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#include "../harness/raw_seccomp.h"

static uint64_t rng = 88172645463325252ull;

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void *run_thread(void *(*fn)(void *), void *arg)
{
	pthread_t t;
	void *ret;

	if (pthread_create(&t, NULL, fn, arg) || pthread_join(t, &ret))
		exit(90);
	return ret;
}

/* ---- steady: 100k mixed operations, no system call, no fault ------------------------- */

static atomic_long traps;

static void on_sigsys(int sig, siginfo_t *si, void *uc_)
{
	ucontext_t *uc = uc_;
	(void)sig;
	(void)si;
	atomic_fetch_add(&traps, 1);
	uc->uc_mcontext.gregs[REG_RAX] = -ENOSYS;
}

/* Every system call traps but getrusage, futex (parking), rt_sigreturn and exit_group. */
static int witness(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getrusage, 4, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_futex, 3, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_rt_sigreturn, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_exit_group, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {.len = sizeof(f) / sizeof(f[0]), .filter = f};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return -1;
	return (int)raw_seccomp_filter(&prog);
}

#define SLOTS 64

struct steady {
	long ops, bad, filter_rc, minflt, majflt, traps;
	uintptr_t lo, hi;
	size_t arena_before, arena_after;
	atomic_int done;
};

static size_t rand_size(void)
{
	return 16 + (size_t)(next_rand() % (64 * 1024 - 16 + 1));
}

/* One mixed operation on a random slot; a slot's bytes are checked when it is reused. */
static void mixed_op(void **slot, size_t *size, unsigned char *tag, struct steady *s)
{
	int i = (int)(next_rand() % SLOTS);
	unsigned char *p = slot[i];

	if (p && (p[0] != tag[i] || p[size[i] - 1] != tag[i]))
		s->bad++;
	s->ops++;
	switch (next_rand() % 3) {
	case 0:
		free(p);
		slot[i] = NULL;
		return;
	case 1: {
		size_t n = rand_size();
		unsigned char *q = realloc(p, n);
		if (!q) {
			s->bad++;
			return;
		}
		if (p && q[0] != tag[i])
			s->bad++;
		slot[i] = q;
		size[i] = n;
		q[0] = q[n - 1] = tag[i];
		break;
	}
	default: {
		free(p);
		size_t n = rand_size();
		unsigned char *q = malloc(n);
		if (!q) {
			s->bad++;
			slot[i] = NULL;
			return;
		}
		tag[i] = (unsigned char)next_rand();
		slot[i] = q;
		size[i] = n;
		q[0] = q[n - 1] = tag[i];
	}
	}
	uintptr_t a = (uintptr_t)slot[i];
	if (a < s->lo)
		s->lo = a;
	if (a + size[i] > s->hi)
		s->hi = a + size[i];
}

static void *steady_thread(void *arg)
{
	struct steady *s = arg;
	static void *slot[SLOTS];
	static size_t size[SLOTS];
	static unsigned char tag[SLOTS];
	struct rusage r0, r1;
	struct sigaction sa = {.sa_sigaction = on_sigsys, .sa_flags = SA_SIGINFO};

	sigaction(SIGSYS, &sa, NULL);
	s->arena_before = mallinfo2().arena;
	if (rt_offload_mark_thread() != 0)
		exit(91);
	s->arena_after = mallinfo2().arena;
	/* Warm-up: the same work, through the same code (its pages mapped, not only the loop's). */
	for (int round = 0; round < 2; round++) {
		int n = round ? 100000 : 20000;
		if (round)
			s->filter_rc = witness();
		s->ops = 0;
		s->lo = UINTPTR_MAX;
		s->hi = 0;
		getrusage(RUSAGE_THREAD, &r0);
		long t0 = atomic_load(&traps);
		for (int i = 0; i < n; i++)
			mixed_op(slot, size, tag, s);
		s->traps = atomic_load(&traps) - t0;
		getrusage(RUSAGE_THREAD, &r1);
		s->minflt = r1.ru_minflt - r0.ru_minflt;
		s->majflt = r1.ru_majflt - r0.ru_majflt;
	}
	atomic_store(&s->done, 1);
	for (;;) /* parked: the filter would trap what ending a thread takes */
		__builtin_ia32_pause();
}

static int steady(void)
{
	static struct steady s;
	pthread_t t;

	if (pthread_create(&t, NULL, steady_thread, &s))
		return 90;
	while (!atomic_load(&s.done))
		usleep(1000);
	printf("filter_rc=%ld ops=%ld bad=%ld traps=%ld minflt=%ld majflt=%ld span_kb=%lu "
	       "pool_arena_kb=%ld\n",
	       s.filter_rc, s.ops, s.bad, s.traps, s.minflt, s.majflt,
	       (unsigned long)((s.hi - s.lo) / 1024),
	       (long)(s.arena_after - s.arena_before) / 1024);
	fflush(stdout);
	_exit(0);
}

/* ---- cross: blocks that change threads ------------------------------------------------ */

#define CROSS_N 150 /* 1 KiB each: most of a 256 KiB pool */

static void *blocks[CROSS_N];
static char *glibc_block, *glibc_big;

static void *alloc_round(void *arg)
{
	long *nulls = arg;

	if (rt_offload_mark_thread() != 0)
		exit(91);
	for (int i = 0; i < CROSS_N; i++) {
		blocks[i] = malloc(1024);
		*nulls += !blocks[i];
		if (blocks[i])
			memset(blocks[i], i, 1024);
	}
	return NULL;
}

static void *free_round(void *arg)
{
	(void)arg;
	for (int i = 0; i < CROSS_N; i++)
		free(blocks[i]); /* unmarked: onto the pool's return queue */
	return NULL;
}

/* An unmarked thread grows a pool block: glibc's now, bytes kept. */
static void *unmarked_realloc(void *arg)
{
	char **p = arg;
	*p = realloc(*p, 1 << 20);
	return NULL;
}

static void *marked_mixed(void *arg)
{
	long *r = arg;

	if (rt_offload_mark_thread() != 0)
		exit(91);
	/* A glibc block into the pool and back out: bytes kept. */
	char *g = realloc(glibc_block, 512);
	r[0] = g && !strcmp(g, "from glibc");
	free(glibc_big); /* a glibc block freed by a marked thread */
	char *p = malloc(64);
	strcpy(p, "from the pool");
	r[1] = (long)(intptr_t)p;
	r[2] = (long)(intptr_t)g;
	return NULL;
}

static int cross(void)
{
	long nulls1 = 0, nulls2 = 0, r[3] = {0};

	run_thread(alloc_round, &nulls1);
	run_thread(free_round, NULL);
	run_thread(alloc_round, &nulls2); /* same pool (adopted): the blocks came back */
	int bytes_ok = 1;
	for (int i = 0; i < CROSS_N; i++)
		bytes_ok &= blocks[i] && ((unsigned char *)blocks[i])[1023] == (unsigned char)i;
	run_thread(free_round, NULL);

	glibc_block = malloc(32);
	strcpy(glibc_block, "from glibc");
	glibc_big = malloc(300000);
	run_thread(marked_mixed, r);
	char *p = (char *)(intptr_t)r[1];
	run_thread(unmarked_realloc, &p);
	int moved_ok = p && !strcmp(p, "from the pool");
	free(p);
	free((char *)(intptr_t)r[2]);
	printf("nulls1=%ld nulls2=%ld bytes_ok=%d into_pool_ok=%ld out_of_pool_ok=%d\n", nulls1,
	       nulls2, bytes_ok, r[0], moved_ok);
	return 0;
}

/* ---- realloc_turns: two marked threads take turns resizing one block ----------------- */

/*
 * The block is always the other thread's pool's after a turn (a resize in
 * place keeps it there): realloc must resize it by its owner's pool, or
 * move it, never work on it with the caller's own pool's structures.
 */
#define TURNS 4000

static pthread_mutex_t turn_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t turn_cond = PTHREAD_COND_INITIALIZER;
static int turn;
static unsigned char *shared_block;
static size_t shared_len;
static long turn_bad, turn_ops;

static int pattern_ok(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != (unsigned char)(i * 7))
			return 0;
	return 1;
}

static void *turn_thread(void *arg)
{
	int me = (int)(intptr_t)arg;
	uint64_t r = 0x9e3779b97f4a7c15ull * (uint64_t)(me + 1);

	if (rt_offload_mark_thread() != 0)
		exit(91);
	void *mine[8] = {0}; /* the caller's own pool busy too: its lists change */
	for (int i = 0; i < TURNS; i++) {
		pthread_mutex_lock(&turn_lock);
		while (turn % 2 != me)
			pthread_cond_wait(&turn_cond, &turn_lock);
		r ^= r << 13, r ^= r >> 7, r ^= r << 17;
		size_t n = 16 + (size_t)(r % 6000);
		size_t keep = n < shared_len ? n : shared_len;
		if (!pattern_ok(shared_block, shared_len))
			turn_bad++;
		unsigned char *q = realloc(shared_block, n);
		if (!q || !pattern_ok(q, keep)) {
			turn_bad++;
		} else {
			for (size_t k = 0; k < n; k++)
				q[k] = (unsigned char)(k * 7);
			shared_block = q;
			shared_len = n;
		}
		free(mine[i % 8]);
		mine[i % 8] = malloc(16 + (size_t)(r >> 40) % 3000);
		turn_ops++;
		turn++;
		pthread_cond_broadcast(&turn_cond);
		pthread_mutex_unlock(&turn_lock);
	}
	for (int i = 0; i < 8; i++)
		free(mine[i]);
	return NULL;
}

static int realloc_turns(void)
{
	pthread_t t[2];

	shared_len = 64;
	shared_block = malloc(shared_len);
	for (size_t k = 0; k < shared_len; k++)
		shared_block[k] = (unsigned char)(k * 7);
	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, turn_thread, (void *)(intptr_t)i))
			return 90;
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	int ok = pattern_ok(shared_block, shared_len);
	free(shared_block);
	printf("ops=%ld bad=%ld final_ok=%d\n", turn_ops, turn_bad, ok);
	return 0;
}

/* ---- full: the pool_full= policies ---------------------------------------------------- */

static void *full_thread(void *arg)
{
	long *r = arg;

	if (rt_offload_mark_thread() != 0)
		exit(91);
	for (int i = 0; i < 3; i++) { /* one call site, three times */
		errno = 0;
		char *p = malloc(1 << 20);
		r[0] += p != NULL;
		r[1] += errno == ENOMEM;
		if (p) {
			memset(p, 1, 1 << 20);
			r[2] += malloc_usable_size(p) >= (1 << 20);
		}
		free(p);
	}
	void *q = NULL; /* another call site */
	r[3] = posix_memalign(&q, 4096, 1 << 20);
	free(q);
	char *small = malloc(100); /* the pool still serves what fits */
	r[4] = small != NULL;
	free(small);
	return NULL;
}

static int full(void)
{
	long r[5] = {0};

	run_thread(full_thread, r);
	printf("got=%ld enomem=%ld usable=%ld memalign_rc=%ld small=%ld\n", r[0], r[1], r[2], r[3],
	       r[4]);
	return 0;
}

/* ---- full_quiet: pool_full=fail events make no system call, sites still reported -------- */

static atomic_int quiet_done;
static long quiet_r[3];

static void *quiet_thread(void *arg)
{
	struct sigaction sa = {.sa_sigaction = on_sigsys, .sa_flags = SA_SIGINFO};
	(void)arg;

	sigaction(SIGSYS, &sa, NULL);
	if (rt_offload_mark_thread() != 0)
		exit(91);
	quiet_r[0] = witness();
	long t0 = atomic_load(&traps);
	volatile int five = 5, two = 2; /* loops, not copies of the call: one site each */
	for (int i = 0; i < five; i++)	/* site 1: five events */
		quiet_r[1] += malloc(1 << 20) == NULL;
	for (int i = 0; i < two; i++) /* site 2: two */
		quiet_r[1] += calloc(1, 1 << 20) == NULL;
	void *q = NULL; /* site 3: one */
	quiet_r[1] += posix_memalign(&q, 64, 1 << 20) == ENOMEM;
	quiet_r[2] = atomic_load(&traps) - t0;
	atomic_store(&quiet_done, 1);
	for (;;) /* parked: the filter would trap what ending a thread takes */
		__builtin_ia32_pause();
}

static int full_quiet(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, quiet_thread, NULL))
		return 90;
	while (!atomic_load(&quiet_done))
		usleep(1000);
	printf("filter_rc=%ld failed=%ld traps=%ld\n", quiet_r[0], quiet_r[1], quiet_r[2]);
	fflush(stdout);
	exit(0); /* the library's destructor reports the sites */
}

/* ---- fork: the child's pools ---------------------------------------------------------- */

static char *other_block;
static atomic_int other_ready, other_release;

/* Still alive, with a pool of its own, when the other thread forks. */
static void *other_owner(void *arg)
{
	(void)arg;
	if (rt_offload_mark_thread() != 0)
		exit(91);
	other_block = malloc(100);
	strcpy(other_block, "other thread's");
	atomic_store(&other_ready, 1);
	while (!atomic_load(&other_release))
		usleep(1000);
	return NULL;
}

static void *forker(void *arg)
{
	long *r = arg;

	if (rt_offload_mark_thread() != 0)
		exit(91);
	char *mine = malloc(200);
	strcpy(mine, "forker's");
	pid_t pid = fork();
	if (pid == 0) {
		/* The child: both pools' blocks readable and freeable, the forker's pool serves. */
		int ok = !strcmp(mine, "forker's") && !strcmp(other_block, "other thread's");
		free(other_block);
		free(mine);
		char *again = malloc(200);
		ok &= again == mine; /* the freed block, from the same pool */
		char *big = malloc(1 << 16);
		ok &= big != NULL;
		free(big);
		free(again);
		_exit(ok ? 0 : 1);
	}
	int st = -1;
	waitpid(pid, &st, 0);
	r[0] = WIFEXITED(st) ? WEXITSTATUS(st) : 100 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
	r[1] = !strcmp(mine, "forker's");
	free(mine);
	return NULL;
}

static int forks(void)
{
	long r[2] = {-1, 0};
	pthread_t other;

	if (pthread_create(&other, NULL, other_owner, NULL))
		return 90;
	while (!atomic_load(&other_ready))
		usleep(1000);
	run_thread(forker, r);
	atomic_store(&other_release, 1);
	pthread_join(other, NULL);
	printf("child=%ld parent_ok=%ld\n", r[0], r[1]);
	return 0;
}

/* ---- fork_cow: a marked thread's faults in the parent after another thread forks ------- */

#define COW_BYTES (2 << 20)

static atomic_int cow_ready, cow_forked, cow_done;
static long cow_minflt = -1;

static void *cow_thread(void *arg)
{
	struct rusage r0, r1;
	(void)arg;

	if (rt_offload_mark_thread() != 0)
		exit(91);
	char *b = malloc(COW_BYTES);
	if (!b)
		exit(92);
	memset(b, 1, COW_BYTES); /* the pool is prefaulted: this is only to compare with */
	atomic_store(&cow_ready, 1);
	while (!atomic_load(&cow_forked))
		__builtin_ia32_pause();
	getrusage(RUSAGE_THREAD, &r0);
	memset(b, 2, COW_BYTES); /* the child still lives: shared pages would be copied now */
	getrusage(RUSAGE_THREAD, &r1);
	cow_minflt = r1.ru_minflt - r0.ru_minflt;
	free(b);
	atomic_store(&cow_done, 1);
	return NULL;
}

static int fork_cow(void)
{
	pthread_t t;
	int fds[2];

	if (pipe(fds) || pthread_create(&t, NULL, cow_thread, NULL))
		return 90;
	while (!atomic_load(&cow_ready))
		usleep(1000);
	pid_t pid = fork();
	if (pid == 0) { /* lives until the parent's thread has written its pool again */
		char c;
		close(fds[1]);
		char *own = malloc(100); /* unmarked: the next malloc, as ever */
		_exit(read(fds[0], &c, 1) == 0 && own ? 0 : 1);
	}
	close(fds[0]);
	atomic_store(&cow_forked, 1);
	while (!atomic_load(&cow_done))
		usleep(1000);
	close(fds[1]);
	int st = -1;
	waitpid(pid, &st, 0);
	pthread_join(t, NULL);
	printf("child=%d minflt=%ld\n", WIFEXITED(st) ? WEXITSTATUS(st) : 100, cow_minflt);
	return 0;
}

/* ---- exit: a pool outlives its thread --------------------------------------------- */

static char *left;
static uintptr_t first_pool_block, adopted_block;

static void *leaver(void *arg)
{
	(void)arg;
	if (rt_offload_mark_thread() != 0)
		exit(91);
	left = malloc(64);
	strcpy(left, "still here");
	first_pool_block = (uintptr_t)left;
	return NULL;
}

static void *adopter(void *arg)
{
	(void)arg;
	if (rt_offload_mark_thread() != 0)
		exit(91);
	char *p = malloc(64);
	adopted_block = (uintptr_t)p;
	return NULL;
}

static int exits(void)
{
	run_thread(leaver, NULL);
	int kept = !strcmp(left, "still here");
	free(left); /* after its owner exited: onto the orphan's queue */
	run_thread(adopter, NULL);
	printf("kept=%d adopted=%d\n", kept, adopted_block == first_pool_block);
	return 0;
}

/* ---- remote: marked from another thread (mark=name:rtpool) ------------------------- */

static atomic_int renamed;
static uintptr_t remote_block;

static void *named_later(void *arg)
{
	long *r = arg;

	while (!atomic_load(&renamed)) /* the main thread names it: marked from outside */
		usleep(1000);
	r[0] = rt_offload_thread_is_marked();
	errno = 0;
	void *big = malloc(1 << 20); /* more than the 64 KiB pool: NULL with pool_full=fail */
	r[1] = big == NULL && errno == ENOMEM;
	free(big);
	char *p = malloc(64);
	remote_block = (uintptr_t)p;
	free(p);
	return NULL; /* exits: the pool it was given is orphaned */
}

static int remote(void)
{
	long r[2] = {0};
	pthread_t t;

	if (pthread_create(&t, NULL, named_later, r))
		return 90;
	pthread_setname_np(t, "rtpool");
	atomic_store(&renamed, 1);
	pthread_join(t, NULL);
	run_thread(adopter, NULL);
	printf("marked=%ld pool_used=%ld adopted=%d\n", r[0], r[1], adopted_block == remote_block);
	return 0;
}

/* ---- info: mallinfo2, malloc_trim, malloc_stats ----------------------------------- */

static void *info_thread(void *arg)
{
	long *r = arg;
	struct mallinfo2 a = mallinfo2();

	if (rt_offload_mark_thread() != 0)
		exit(91);
	/*
	 * An offloaded call first: the helpers (and the stall watchdog) start
	 * now, and what their start allocates from glibc's heap is not counted
	 * between b and d below.
	 */
	if (access("/", F_OK) != 0)
		exit(92);
	struct mallinfo2 b = mallinfo2();
	char *p = malloc(100000);
	memset(p, 7, 100000);
	struct mallinfo2 c = mallinfo2();
	r[0] = (long)(b.arena - a.arena) / 1024;
	r[1] = (long)(c.uordblks - b.uordblks);
	r[2] = malloc_trim(0) >= 0;
	r[3] = p[99999] == 7; /* the pool is not trimmed */
	free(p);
	struct mallinfo2 d = mallinfo2();
	r[4] = (long)(c.uordblks - d.uordblks);
	malloc_stats();
	return NULL;
}

static int info(void)
{
	long r[5] = {0};

	run_thread(info_thread, r);
	printf("pool_arena_kb=%ld in_use_grew=%ld trim=%ld kept=%ld in_use_fell=%ld\n", r[0], r[1],
	       r[2], r[3], r[4]);
	return 0;
}

/* ---- recipe: malloc=glibc, mlock=1, prefault_heap_kb= --------------------------------- */

#define RECIPE_BLOCKS 1024 /* 4 MiB in 4 KiB blocks, the first time, right after the mark */

static void *recipe_thread(void *arg)
{
	struct steady *s = arg;
	static char *b[RECIPE_BLOCKS];
	struct rusage r0, r1;
	struct sigaction sa = {.sa_sigaction = on_sigsys, .sa_flags = SA_SIGINFO};

	sigaction(SIGSYS, &sa, NULL);
	if (rt_offload_mark_thread() != 0)
		exit(91);
	/* The control (no recipe) runs unfiltered: glibc cannot grow an arena without syscalls. */
	s->filter_rc = s->ops ? witness() : 0;
	getrusage(RUSAGE_THREAD, &r0);
	long t0 = atomic_load(&traps);
	for (int i = 0; i < RECIPE_BLOCKS; i++) {
		b[i] = malloc(4096);
		if (!b[i])
			s->bad++;
		else
			memset(b[i], i, 4096);
	}
	for (int i = 0; i < RECIPE_BLOCKS; i++)
		free(b[i]);
	s->traps = atomic_load(&traps) - t0;
	getrusage(RUSAGE_THREAD, &r1);
	s->minflt = r1.ru_minflt - r0.ru_minflt;
	s->majflt = r1.ru_majflt - r0.ru_majflt;
	atomic_store(&s->done, 1);
	for (;;)
		__builtin_ia32_pause();
}

static int recipe(int filtered)
{
	static struct steady s;
	pthread_t t;

	s.ops = filtered;
	if (pthread_create(&t, NULL, recipe_thread, &s))
		return 90;
	while (!atomic_load(&s.done))
		usleep(1000);
	printf("filter_rc=%ld bad=%ld traps=%ld minflt=%ld majflt=%ld\n", s.filter_rc, s.bad,
	       s.traps, s.minflt, s.majflt);
	fflush(stdout);
	_exit(0);
}

/* ---- defer: glibc blocks freed by a marked thread ------------------------------------ */

#define DEFER_SMALL 10000 /* 1 KiB: the main arena (trimmed when freed) */
#define DEFER_BIG   64	  /* 256 KiB: mmapped (unmapped when freed) */
#define DEFER_MOVED 32	  /* 200 KiB, realloc'ed into the pool */

static void *dsmall[DEFER_SMALL], *dbig[DEFER_BIG];
static unsigned char *dmoved[DEFER_MOVED];

struct defer {
	atomic_int marked, go, done;
	long filter_rc, traps, bad;
};

/* A block's pattern: its index in the first and last byte. */
static void *patterned(size_t n, int i)
{
	unsigned char *p = malloc(n);
	if (!p)
		exit(92);
	memset(p, 0x5a, n);
	p[0] = p[n - 1] = (unsigned char)i;
	return p;
}

static void *defer_thread(void *arg)
{
	struct defer *d = arg;
	struct sigaction sa = {.sa_sigaction = on_sigsys, .sa_flags = SA_SIGINFO};

	sigaction(SIGSYS, &sa, NULL);
	if (rt_offload_mark_thread() != 0)
		exit(91);
	atomic_store(&d->marked, 1);
	while (!atomic_load(&d->go))
		__builtin_ia32_pause();
	d->filter_rc = witness();
	long t0 = atomic_load(&traps);
	for (int i = 0; i < DEFER_SMALL; i++)
		free(dsmall[i]);
	for (int i = 0; i < DEFER_BIG; i++)
		free(dbig[i]);
	/* glibc -> pool: the bytes move, the glibc block is freed by the helper. */
	for (int i = 0; i < DEFER_MOVED; i++) {
		size_t n = 200 * 1024;
		unsigned char *q = realloc(dmoved[i], n + 4096);
		if (!q || q[0] != (unsigned char)i || q[n - 1] != (unsigned char)i ||
		    q[n / 2] != 0x5a)
			d->bad++;
		free(q); /* back to the pool: its use is as before */
	}
	d->traps = atomic_load(&traps) - t0;
	atomic_store(&d->done, 1);
	for (;;) /* parked: the filter would trap what ending a thread takes */
		__builtin_ia32_pause();
}

/* glibc's in-use and mmapped bytes back where they were: the helper freed them. */
static int released(const struct mallinfo2 *base)
{
	struct mallinfo2 mi = mallinfo2();
	return mi.hblkhd <= base->hblkhd && mi.uordblks <= base->uordblks + 64 * 1024;
}

static int wait_released(const struct mallinfo2 *base)
{
	for (int i = 0; i < 10000; i++) { /* a helper wakes at least once a second */
		if (released(base))
			return 1;
		usleep(1000);
	}
	return 0;
}

/* how: 0 wait for the helper, 1 fork at once, 2 exit at once. */
static int defer(int how)
{
	static struct defer d;
	pthread_t t;

	if (pthread_create(&t, NULL, defer_thread, &d))
		return 90;
	while (!atomic_load(&d.marked))
		usleep(1000);
	struct mallinfo2 base = mallinfo2();
	for (int i = 0; i < DEFER_SMALL; i++)
		dsmall[i] = patterned(1024, i);
	for (int i = 0; i < DEFER_BIG; i++)
		dbig[i] = patterned(256 * 1024, i);
	for (int i = 0; i < DEFER_MOVED; i++)
		dmoved[i] = patterned(200 * 1024, i);
	struct mallinfo2 full = mallinfo2();
	long grew = (long)(full.uordblks - base.uordblks) / 1024;
	long mapped = (long)(full.hblkhd - base.hblkhd) / 1024;
	atomic_store(&d.go, 1);
	while (!atomic_load(&d.done))
		usleep(1000);
	printf("filter_rc=%ld traps=%ld bad=%ld grew_kb=%ld mapped_kb=%ld ", d.filter_rc, d.traps,
	       d.bad, grew, mapped);
	if (how == 2) { /* the library's destructor frees what is queued */
		printf("exiting=1\n");
		fflush(stdout);
		exit(0);
	}
	if (how == 1) {
		fflush(stdout);
		pid_t pid = fork();
		if (pid == 0) /* the child's copy of the queue was freed in fork() */
			_exit(released(&base) ? 0 : 1);
		int st = -1;
		waitpid(pid, &st, 0);
		printf("child=%d ", WIFEXITED(st) ? WEXITSTATUS(st) : 100);
	}
	printf("released=%d\n", wait_released(&base));
	fflush(stdout);
	_exit(0);
}

/* ---- defer_stress: forks while a marked thread keeps freeing glibc blocks ------------- */

#define RING	     4096
#define STRESS_FORKS 12

static void *ring[RING];
static atomic_ulong ring_head, ring_tail;
static atomic_int stress_stop, consumer_marked;

static void *producer(void *arg)
{
	(void)arg;
	for (unsigned long h = 0; !atomic_load(&stress_stop);) {
		if (h - atomic_load(&ring_tail) >= RING) {
			__builtin_ia32_pause();
			continue;
		}
		ring[h % RING] = malloc(64 + (h % 8) * 100);
		atomic_store(&ring_head, ++h);
		if (h % 64 == 0) /* about 64k blocks a second: what worker 0 frees stays small */
			usleep(1000);
	}
	return NULL;
}

static void *consumer(void *arg)
{
	(void)arg;
	if (rt_offload_mark_thread() != 0)
		exit(91);
	atomic_store(&consumer_marked, 1);
	for (unsigned long t = 0;;) {
		if (t == atomic_load(&ring_head)) {
			if (atomic_load(&stress_stop) && t == atomic_load(&ring_head))
				return NULL;
			usleep(200); /* the machine's other CPU is the forker's */
			continue;
		}
		free(ring[t % RING]); /* queued for worker 0 */
		atomic_store(&ring_tail, ++t);
		if (t % 32 == 0) /* an offloaded call: worker 0 then drains, as forks happen */
			access(".", F_OK);
	}
}

static int defer_stress(void)
{
	pthread_t p, c;
	int bad = 0;

	if (pthread_create(&c, NULL, consumer, NULL))
		return 90;
	while (!atomic_load(&consumer_marked))
		usleep(1000);
	if (pthread_create(&p, NULL, producer, NULL))
		return 90;
	for (int i = 0; i < STRESS_FORKS; i++) {
		usleep(10000);
		pid_t pid = fork();
		if (pid == 0) { /* the queue's copy was mended and freed in fork() */
			void *q = malloc(1000);
			free(q);
			_exit(q ? 0 : 1);
		}
		int st = -1;
		waitpid(pid, &st, 0);
		bad += !(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	atomic_store(&stress_stop, 1);
	pthread_join(p, NULL);
	pthread_join(c, NULL);
	printf("forks=%d bad_children=%d\n", STRESS_FORKS, bad);
	return 0;
}

/* ---- preinit: allocations before any constructor, the library's included ------------ */

static long preinit_ok = -1;

static void before_everything(int argc, char **argv, char **envp)
{
	(void)argc;
	(void)argv;
	(void)envp;
	char *a = malloc(40), *b = calloc(4, 10), *c = strdup("early");
	a = realloc(a, 4000);
	void *d = NULL;
	int rc = posix_memalign(&d, 64, 100);
	preinit_ok =
		a && b && !b[39] && c && !strcmp(c, "early") && rc == 0 && !((uintptr_t)d & 63);
	free(a);
	free(b);
	free(c);
	free(d);
}
__attribute__((section(".preinit_array"),
	       used)) static void (*preinit)(int, char **, char **) = before_everything;

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	if (!strcmp(argv[1], "preinit")) {
		printf("preinit_ok=%ld\n", preinit_ok);
		return 0;
	}
	if (!strcmp(argv[1], "steady"))
		return steady();
	if (!strcmp(argv[1], "cross"))
		return cross();
	if (!strcmp(argv[1], "full"))
		return full();
	if (!strcmp(argv[1], "realloc_turns"))
		return realloc_turns();
	if (!strcmp(argv[1], "full_quiet"))
		return full_quiet();
	if (!strcmp(argv[1], "fork"))
		return forks();
	if (!strcmp(argv[1], "fork_cow"))
		return fork_cow();
	if (!strcmp(argv[1], "exit"))
		return exits();
	if (!strcmp(argv[1], "info"))
		return info();
	if (!strcmp(argv[1], "remote"))
		return remote();
	if (!strcmp(argv[1], "defer"))
		return defer(0);
	if (!strcmp(argv[1], "defer_fork"))
		return defer(1);
	if (!strcmp(argv[1], "defer_exit"))
		return defer(2);
	if (!strcmp(argv[1], "defer_stress"))
		return defer_stress();
	if (!strcmp(argv[1], "recipe"))
		return recipe(1);
	if (!strcmp(argv[1], "recipe_control"))
		return recipe(0);
	return 2;
}
