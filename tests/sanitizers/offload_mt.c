/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The offload path under a sanitizer: several marked threads make many
 * offloaded calls at once, with every result checked, while signals land
 * on them.  Built with the presets' -fsanitize (asan, tsan), run by ctest
 * (tests/sanitizers/CMakeLists.txt); a sanitizer report ends it with the
 * runtime's exit status, a wrong result with 1.
 *
 * It is not a criterion test because criterion cannot run under
 * ThreadSanitizer (its sandbox arena fails to map: Snaipe/Criterion#274).
 *
 *   offload_mt [THREADS [ITERATIONS]]     default 4 x 300
 *
 * What each marked thread does, ITERATIONS times:
 *   fprintf to its own FILE; open/write/close of its own file (errno must
 *   come back unchanged on success, EBADF from close(-1)); mmap, fill,
 *   munmap; stat; fprintf to one FILE all threads share, half of them
 *   holding it with flockfile (the lock is lent to a worker) and the other
 *   half contending for it; getaddrinfo("localhost") now and then.
 * A signal thread sends SIGUSR1 (SA_RESTART) to the marked threads
 * throughout: the library's trampoline and the wait's signal path run too.
 * At the end every file must hold exactly what was written.
 *
 * Run with RTOFFLOAD_OPTIONS=fd_local=none (CMakeLists.txt does), so that
 * the calls on files in /tmp (tmpfs on many machines) are offloaded too;
 * with policy=stdio:async,write:async added, the same checks hold for the
 * asynchronous writes (close and fclose wait for them).
 * The API is reached through the header's weak declarations, so the same
 * program runs linked (-lrtoffload) and preloaded.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rtoffload.h"

#define MAX_THREADS 32
#define DNS_EVERY   100

struct job {
	pthread_t thread;
	int id;
	long own_bytes, raw_bytes, shared_bytes;
};

static int nthreads = 4, iterations = 300;
static char dir[64];
static FILE *shared;
static atomic_int failures, signals_seen, threads_done;

#define FAIL(...)                                            \
	do {                                                 \
		fprintf(stderr, "offload_mt: " __VA_ARGS__); \
		atomic_fetch_add(&failures, 1);              \
	} while (0)

/*
 * The sanitizer runtimes' symbolizer (libbacktrace, in GCC's) opens the
 * program's files on its first report.  If that report comes from a
 * marked thread, its open() is one of our wrappers, inside the runtime's
 * report lock: a nested report there deadlocks instead of printing.  One
 * symbolisation at start, on this unmarked thread, opens them beforehand.
 */
void __sanitizer_symbolize_pc(void *pc, const char *fmt, char *out, size_t len)
	__attribute__((weak));

static void warm_up_symbolizer(void)
{
	char buf[256];

	if (__sanitizer_symbolize_pc)
		__sanitizer_symbolize_pc(__builtin_return_address(0), "%p %F %L", buf, sizeof(buf));
}

static void on_usr1(int sig)
{
	(void)sig;
	atomic_fetch_add_explicit(&signals_seen, 1, memory_order_relaxed);
}

static void one_round(struct job *j, FILE *own, const char *raw, int i)
{
	char line[64];
	struct stat st;

	int n = fprintf(own, "thread %d line %d\n", j->id, i);
	if (n <= 0)
		FAIL("fprintf: %d\n", n);
	else
		j->own_bytes += n;

	int fd = open(raw, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0) {
		FAIL("open: %s\n", strerror(errno));
		return;
	}
	int len = snprintf(line, sizeof(line), "%d:%d\n", j->id, i);
	errno = 12345; /* a successful call leaves errno alone, offloaded or not */
	ssize_t w = write(fd, line, (size_t)len);
	if (w != len)
		FAIL("write: %zd (%s)\n", w, strerror(errno));
	else
		j->raw_bytes += len;
	if (errno != 12345)
		FAIL("write changed errno on success: %d\n", errno);
	if (close(fd) != 0)
		FAIL("close: %s\n", strerror(errno));
	if (close(-1) != -1 || errno != EBADF)
		FAIL("close(-1): errno %d, expected EBADF\n", errno);

	void *m = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED) {
		FAIL("mmap: %s\n", strerror(errno));
	} else {
		memset(m, j->id, 3 * 4096);
		if (munmap(m, 3 * 4096) != 0)
			FAIL("munmap: %s\n", strerror(errno));
	}
	if (stat(raw, &st) != 0 || st.st_size != j->raw_bytes)
		FAIL("stat: size %lld, expected %ld\n", (long long)st.st_size, j->raw_bytes);

	if (j->id % 2 == 0) { /* held: lent to the worker for each call */
		flockfile(shared);
		n = fprintf(shared, "held %d %d\n", j->id, i);
		int m2 = fputs("second line\n", shared) == EOF ? -1 : 12;
		funlockfile(shared);
		if (n <= 0 || m2 < 0)
			FAIL("fprintf/fputs on the held stream\n");
		else
			j->shared_bytes += n + m2;
	} else { /* contended: the lock is taken by whoever holds it */
		n = fprintf(shared, "free %d %d\n", j->id, i);
		if (n <= 0)
			FAIL("fprintf on the shared stream\n");
		else
			j->shared_bytes += n;
	}

	if (i % DNS_EVERY == 0) {
		struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
		struct addrinfo *res = NULL;
		int e = getaddrinfo("localhost", "80", &hints, &res);
		if (e)
			FAIL("getaddrinfo: %s\n", gai_strerror(e));
		else
			freeaddrinfo(res);
	}
}

static void marked_work(struct job *j)
{
	char own_path[128], raw[128];

	snprintf(own_path, sizeof(own_path), "%s/t%d", dir, j->id);
	snprintf(raw, sizeof(raw), "%s/t%d.raw", dir, j->id);
	if (rt_offload_try_mark_thread() != 0 || !rt_offload_thread_is_marked()) {
		FAIL("thread %d: not marked\n", j->id);
		return;
	}
	FILE *own = fopen(own_path, "w");
	if (!own) {
		FAIL("fopen: %s\n", strerror(errno));
		return;
	}
	for (int i = 0; i < iterations; i++)
		one_round(j, own, raw, i);
	if (fclose(own) != 0)
		FAIL("fclose: %s\n", strerror(errno));
	rt_offload_try_unmark_thread();
}

static void *marked_main(void *arg)
{
	marked_work(arg);
	atomic_fetch_add(&threads_done, 1);
	return NULL;
}

static void *signal_main(void *arg)
{
	struct job *jobs = arg;
	struct timespec ts = {0, 2000000}; /* 2 ms */

	/*
	 * Until every marked thread is done: none of them is joined before,
	 * so each pthread_t stays valid (signalling a joined thread is a
	 * use after free).
	 */
	while (atomic_load(&threads_done) < nthreads) {
		for (int i = 0; i < nthreads; i++)
			pthread_kill(jobs[i].thread, SIGUSR1);
		nanosleep(&ts, NULL);
	}
	return NULL;
}

static long file_size(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

int main(int argc, char **argv)
{
	static struct job jobs[MAX_THREADS];
	struct rt_offload_stats before = {0}, after = {0};
	struct sigaction sa = {.sa_handler = on_usr1, .sa_flags = SA_RESTART};
	char path[128];
	pthread_t sigthread;

	if (argc > 1)
		nthreads = atoi(argv[1]);
	if (argc > 2)
		iterations = atoi(argv[2]);
	if (nthreads < 1 || nthreads > MAX_THREADS || iterations < 1) {
		fprintf(stderr, "usage: offload_mt [THREADS (1-%d) [ITERATIONS]]\n", MAX_THREADS);
		return 2;
	}
	warm_up_symbolizer();
	if (!RT_OFFLOAD_AVAILABLE()) {
		fprintf(stderr, "offload_mt: the library is not loaded\n");
		return 2;
	}
	snprintf(dir, sizeof(dir), "/tmp/rto-offload-mt-XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 2;
	}
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	snprintf(path, sizeof(path), "%s/shared", dir);
	shared = fopen(path, "w");
	if (!shared) {
		perror("fopen");
		return 2;
	}

	rt_offload_get_stats(&before);
	for (int i = 0; i < nthreads; i++) {
		jobs[i].id = i;
		if (pthread_create(&jobs[i].thread, NULL, marked_main, &jobs[i]) != 0) {
			perror("pthread_create");
			return 2;
		}
	}
	pthread_create(&sigthread, NULL, signal_main, jobs);
	pthread_join(sigthread, NULL); /* first: it signals the others until they are done */
	for (int i = 0; i < nthreads; i++)
		pthread_join(jobs[i].thread, NULL);
	rt_offload_get_stats(&after);
	fclose(shared);

	long shared_bytes = 0;
	for (int i = 0; i < nthreads; i++) {
		snprintf(path, sizeof(path), "%s/t%d", dir, i);
		if (file_size(path) != jobs[i].own_bytes)
			FAIL("%s: %ld bytes, expected %ld\n", path, file_size(path),
			     jobs[i].own_bytes);
		unlink(path);
		snprintf(path, sizeof(path), "%s/t%d.raw", dir, i);
		if (file_size(path) != jobs[i].raw_bytes)
			FAIL("%s: %ld bytes, expected %ld\n", path, file_size(path),
			     jobs[i].raw_bytes);
		unlink(path);
		shared_bytes += jobs[i].shared_bytes;
	}
	snprintf(path, sizeof(path), "%s/shared", dir);
	if (file_size(path) != shared_bytes)
		FAIL("shared: %ld bytes, expected %ld\n", file_size(path), shared_bytes);
	unlink(path);
	rmdir(dir);

	/* At least the write, open, close, mmap and munmap of every round. */
	uint64_t offloaded = after.offloaded - before.offloaded;
	if (offloaded < (uint64_t)nthreads * (uint64_t)iterations * 5)
		FAIL("offloaded %llu calls, expected at least %llu\n",
		     (unsigned long long)offloaded,
		     (unsigned long long)nthreads * (unsigned long long)iterations * 5);
	printf("offload_mt: %d threads x %d rounds: offloaded %llu, local %llu, signals %d, "
	       "round trip p50 %llu ns p99 %llu ns, failures %d\n",
	       nthreads, iterations, (unsigned long long)offloaded,
	       (unsigned long long)(after.local - before.local), atomic_load(&signals_seen),
	       (unsigned long long)after.rtt_p50_ns, (unsigned long long)after.rtt_p99_ns,
	       atomic_load(&failures));
	return atomic_load(&failures) ? 1 : 0;
}
