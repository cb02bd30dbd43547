/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The allocator interposers: malloc, free, calloc, realloc, the aligned
 * family and malloc_usable_size, with mallinfo2 and malloc_stats.
 *
 * Routing.  A marked thread with a pool (malloc=pool) allocates from its
 * pool; every other thread, and every thread with malloc=glibc, calls the
 * next allocator (dlsym RTLD_NEXT: glibc's, or a jemalloc preloaded after
 * us) after one TLS load and a branch.  A block goes back where it came
 * from, decided by its address: a pool's range (pool.c), the bootstrap
 * arena, or else the next allocator.
 *
 * Bootstrap.  Finding the next allocator calls dlsym, which may allocate:
 * those allocations, and any made while it runs, come from a small static
 * arena and are never freed (a pointer there is known by its address).
 */
#include "options.h"
#include "rto_fast.h"
#include "fn.h"
#include "async.h"
#include "callsite.h"
#include "resolve.h"
#include "report.h"
#include "rto_malloc.h"
#include "transport.h"
#include "trace.h"

#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define RTO_ON_VALGRIND() RUNNING_ON_VALGRIND
#else
#define RTO_ON_VALGRIND() 0
#endif

/*
 * malloc=, pool_full=: copied once at load (rto_malloc_configure); malloc=
 * is turned back to glibc by rto_malloc_init where pools cannot work,
 * before any thread is marked (rto_malloc_mode).
 */
static struct {
	int malloc_mode;
	int pool_full;
} opt;

void rto_malloc_configure(const struct rto_options *o)
{
	opt.malloc_mode = o->malloc_mode;
	opt.pool_full = o->pool_full;
}

int rto_malloc_mode(void)
{
	return opt.malloc_mode;
}

static void *(*next_malloc)(size_t);
static void (*next_free)(void *);
static void *(*next_calloc)(size_t, size_t);
static void *(*next_realloc)(void *, size_t);
static void *(*next_memalign)(size_t, size_t);
static size_t (*next_usable)(void *);
static struct mallinfo2 (*next_mallinfo2)(void);
static void (*next_malloc_stats)(void);

/* ---- bootstrap ---------------------------------------------------------------- */

#define BOOT_BYTES (64 * 1024)
static char boot[BOOT_BYTES] __attribute__((aligned(64)));
static size_t boot_used;
static __thread int resolving RTO_TLS;

static int in_boot(const void *p)
{
	return (uintptr_t)p - (uintptr_t)boot < BOOT_BYTES;
}

/* 16 bytes before each block hold its size (malloc_usable_size, realloc). */
static void *boot_alloc(size_t align, size_t n)
{
	if (align < 16)
		align = 16;
	size_t want = ((n + 15) & ~(size_t)15) + align + 16;
	size_t at = uatomic_add_return(&boot_used, want) - want;
	if (n > BOOT_BYTES || at + want > BOOT_BYTES)
		return NULL;
	uintptr_t p = ((uintptr_t)boot + at + 16 + align - 1) & ~(uintptr_t)(align - 1);
	((size_t *)p)[-1] = n;
	return (void *)p; /* static memory: already zero */
}

static size_t boot_usable(const void *p)
{
	return ((const size_t *)p)[-1];
}

#define NEXT(var, name) var = (__typeof__(var))rto_resolve(name, NULL)

/* Every pointer, once.  Racing threads store the same values. */
static RTO_UNINSTRUMENTED void resolve_next(void)
{
	resolving = 1;
	NEXT(next_free, "free");
	NEXT(next_calloc, "calloc");
	NEXT(next_realloc, "realloc");
	NEXT(next_memalign, "memalign");
	NEXT(next_usable, "malloc_usable_size");
	NEXT(next_mallinfo2, "mallinfo2");
	NEXT(next_malloc_stats, "malloc_stats");
	void *m = rto_resolve("malloc", NULL);
	if (!m || !next_free || !next_calloc || !next_realloc || !next_memalign)
		rto_die(70, "no next malloc after librtoffload");
	CMM_STORE_SHARED(next_malloc, (void *(*)(size_t))m); /* last: the others are set */
	resolving = 0;
}

static inline int ready(void)
{
	if (RTO_LIKELY(CMM_LOAD_SHARED(next_malloc) != NULL))
		return 1;
	if (resolving)
		return 0;
	resolve_next();
	return 1;
}

/* ---- where a block is ---------------------------------------------------------- */

static size_t usable_any(void *p)
{
	if (rto_pool_owns(p))
		return rto_pool_usable(p);
	if (in_boot(p))
		return boot_usable(p);
	return ready() && next_usable ? next_usable(p) : 0;
}

/*
 * A marked thread with a pool never frees a next-allocator block itself
 * (its arena lock is the unmarked threads' too; it may trim or unmap):
 * helper worker 0 does (free_defer.c).  Not before the helpers run, nor
 * when they could not start: then there is nobody to do it.
 */
static inline int defers_frees(void)
{
	return RTO_UNLIKELY(!rto_direct()) && rto_self.pool && rto_q &&
	       CMM_LOAD_SHARED(rto_q->ready);
}

static void free_any(void *p)
{
	if (!p)
		return;
	if (RTO_UNLIKELY(rto_pool_owns(p))) {
		rto_pool_free(p);
		return;
	}
	if (RTO_UNLIKELY(in_boot(p)))
		return;
	if (RTO_UNLIKELY(defers_frees())) {
		rto_free_defer(p);
		return;
	}
	if (ready())
		next_free(p);
}

void *rto_next_malloc(size_t n)
{
	return ready() ? next_malloc(n) : boot_alloc(0, n);
}

void rto_next_free(void *p)
{
	free_any(p);
}

void rto_next_free_now(void *p)
{
	next_free(p); /* a block the next allocator gave: it was resolved then */
}

/* Our own malloc (defined below), not the one our GOT entry binds to (maybe a sanitizer's). */
RTO_HIDDEN void *rto_own_malloc(size_t n);
static void find_first(void);

/* ---- the pool's side ---------------------------------------------------------------- */

/* The program's call site: the interposer's return address, taken in the interposer. */
#define CALLER() __builtin_return_address(0)

/* The caller's pool, or NULL: marked, malloc=pool, and it has one. */
static inline struct rto_pool *my_pool(void)
{
	if (rto_direct())
		return NULL;
	return rto_self.pool;
}

/*
 * pool_full=: the pool had no block for this request, made at ip.  The
 * site is only noted here (pool_events.c): no stack walk, no system call.
 */
static void *pool_full(int fn, size_t align, size_t n, const void *ip)
{
	int saved = errno;

	rto_trace_pool_full(rto_pool_fn_name(fn), n, opt.pool_full); /* trace.c */
	if (opt.pool_full == RTO_POOL_FULL_ABORT) {
		rto_say(0, "malloc=pool: pool_full=abort: %s(%zu) found the pool full",
			rto_pool_fn_name(fn), n);
		rto_async_abort(); /* as the program's own abort() would */
	}
	if (opt.pool_full == RTO_POOL_FULL_FAIL)
		rto_own_add(&rto_self.st.pool_failures, 1);
	else
		rto_own_add(&rto_self.st.pool_fallbacks, 1);
	rto_pool_event(fn, ip); /* reported once per call site, by a helper or at exit */
	errno = saved;
	if (opt.pool_full == RTO_POOL_FULL_FAIL) {
		errno = ENOMEM;
		return NULL;
	}
	if (!ready())
		return boot_alloc(align, n);
	return align > 16 ? next_memalign(align, n) : next_malloc(n);
}

static void *pool_get(struct rto_pool *pool, int fn, size_t align, size_t n, const void *ip)
{
	void *p = rto_pool_alloc(pool, align, n);
	return RTO_LIKELY(p != NULL) ? p : pool_full(fn, align, n, ip);
}

/* ---- the interposers ---------------------------------------------------------------- */

RTO_EXPORT void *malloc(size_t n)
{
	struct rto_pool *pool = my_pool();

	if (RTO_UNLIKELY(pool != NULL))
		return pool_get(pool, RTO_POOL_FN_MALLOC, 0, n, CALLER());
	if (RTO_UNLIKELY(!ready()))
		return boot_alloc(0, n);
	return next_malloc(n);
}

RTO_EXPORT void free(void *p)
{
	free_any(p);
}

RTO_EXPORT void *calloc(size_t n, size_t m)
{
	struct rto_pool *pool = my_pool();
	size_t bytes;

	if (RTO_UNLIKELY(pool != NULL)) {
		if (__builtin_mul_overflow(n, m, &bytes)) {
			errno = ENOMEM;
			return NULL;
		}
		void *p = pool_get(pool, RTO_POOL_FN_CALLOC, 0, bytes, CALLER());
		if (p)
			memset(p, 0, bytes);
		return p;
	}
	if (RTO_UNLIKELY(!ready()))
		return __builtin_mul_overflow(n, m, &bytes) ? NULL : boot_alloc(0, bytes);
	return next_calloc(n, m);
}

/* Move p (anywhere) to a fresh block of n bytes from where this thread allocates. */
static void *move(void *p, size_t n, struct rto_pool *pool, const void *ip)
{
	void *q;

	if (pool)
		q = pool_get(pool, RTO_POOL_FN_REALLOC, 0, n, ip);
	else
		q = ready() ? next_malloc(n) : boot_alloc(0, n);
	if (!q)
		return NULL; /* p is untouched, as realloc leaves it */
	size_t have = usable_any(p);
	memcpy(q, p, have < n ? have : n);
	free_any(p);
	return q;
}

RTO_EXPORT void *realloc(void *p, size_t n)
{
	struct rto_pool *pool = my_pool();

	if (!p)
		return pool ? pool_get(pool, RTO_POOL_FN_REALLOC, 0, n, CALLER())
			    : rto_own_malloc(n);
	if (n == 0) { /* glibc: frees, returns NULL */
		free_any(p);
		return NULL;
	}
	if (RTO_UNLIKELY(rto_pool_owns(p))) {
		/*
		 * In place only in the caller's own pool: a block of another
		 * thread's pool (handed over under the program's lock) is that
		 * pool's, whose lists only its owner may touch; it moves.
		 */
		if (pool && rto_pool_of(p) == pool) {
			void *q = rto_pool_resize(pool, p, n);
			if (q)
				return q;
		}
		return move(p, n, pool, CALLER());
	}
	if (RTO_UNLIKELY(pool != NULL || in_boot(p)))
		return move(p, n, pool, CALLER()); /* a glibc block into the pool keeps its bytes */
	if (RTO_UNLIKELY(!ready()))
		return move(p, n, NULL, NULL);
	return next_realloc(p, n);
}

static void *aligned(size_t align, size_t n, const void *ip)
{
	struct rto_pool *pool = my_pool();

	if (RTO_UNLIKELY(pool != NULL))
		return pool_get(pool, RTO_POOL_FN_MEMALIGN, align, n, ip);
	if (RTO_UNLIKELY(!ready()))
		return boot_alloc(align, n);
	return next_memalign(align, n);
}

static int power_of_two(size_t a)
{
	return a && !(a & (a - 1));
}

RTO_EXPORT void *memalign(size_t align, size_t n)
{
	if (!power_of_two(align)) { /* glibc rounds up; so do we */
		size_t a = 1;
		while (a < align && a)
			a <<= 1;
		align = a ? a : align;
	}
	return aligned(align, n, CALLER());
}

RTO_EXPORT void *aligned_alloc(size_t align, size_t n)
{
	if (!power_of_two(align)) {
		errno = EINVAL;
		return NULL;
	}
	return aligned(align, n, CALLER());
}

RTO_EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
	if (!power_of_two(align) || align % sizeof(void *))
		return EINVAL;
	int saved = errno;
	void *p = aligned(align, n, CALLER());
	if (!p && n) {
		int err = errno ? errno : ENOMEM;
		errno = saved;
		return err;
	}
	errno = saved;
	*out = p;
	return 0;
}

RTO_EXPORT void *valloc(size_t n)
{
	return aligned((size_t)getpagesize(), n, CALLER());
}

RTO_EXPORT void *pvalloc(size_t n)
{
	size_t page = (size_t)getpagesize();
	if (n > SIZE_MAX - page) {
		errno = ENOMEM;
		return NULL;
	}
	return aligned(page, n ? (n + page - 1) & ~(page - 1) : page, CALLER());
}

RTO_EXPORT size_t malloc_usable_size(void *p)
{
	return p ? usable_any(p) : 0;
}

/* glibc's figures with the pools added: their memory is the program's too. */
RTO_EXPORT struct mallinfo2 mallinfo2(void)
{
	struct mallinfo2 mi = {0};
	size_t pools, total, used, high;

	if (ready() && next_mallinfo2)
		mi = next_mallinfo2();
	rto_pool_totals(&pools, &total, &used, &high);
	mi.arena += total;
	mi.uordblks += used;
	mi.fordblks += total - used;
	return mi;
}

RTO_EXPORT void malloc_stats(void)
{
	size_t pools, total, used, high;

	if (ready() && next_malloc_stats)
		next_malloc_stats();
	if (!rto_pool_on())
		return;
	rto_pool_totals(&pools, &total, &used, &high);
	rto_say(0,
		"malloc=pool: %zu pools, system bytes = %zu, in use bytes = %zu, high-water bytes "
		"= %zu",
		pools, total, used, high);
}

/* ---- load --------------------------------------------------------------------------- */

/* Our own malloc, not the one our GOT entry binds to (which may be a sanitizer's). */
extern void *rto_own_malloc(size_t) __attribute__((alias("malloc"), visibility("hidden"), malloc,
						   alloc_size(1), leaf, nothrow));

static int under_valgrind(void)
{
	const char *pre = getenv("LD_PRELOAD"); /* its core preload, whatever the build saw */
	return RTO_ON_VALGRIND() || (pre && strstr(pre, "vgpreload"));
}

/*
 * Whose malloc does the program get?  Under a sanitizer, valgrind, or a
 * malloc preloaded before us, theirs: it must win (it checks every block),
 * so the pools stay off.
 */
void rto_malloc_init(void)
{
	Dl_info info;

	find_first();
	rto_free_defer_init(rto_next_free_now);
	if (opt.malloc_mode != RTO_MALLOC_POOL)
		return;
	void *first = dlsym(RTLD_DEFAULT, "malloc");
	const char *who = NULL;
	if (under_valgrind())
		who = "valgrind";
	else if (first && first != (void *)rto_own_malloc)
		who = dladdr(first, &info) && info.dli_fname ? info.dli_fname : "another library";
	if (who) {
		opt.malloc_mode = RTO_MALLOC_GLIBC;
		rto_say(1, "malloc=pool: off: the program's malloc is %s's, which must win", who);
		return;
	}
	rto_pool_init();
}

/*
 * The library's own allocations (rto_malloc.h) use the program's allocator,
 * the first malloc in the lookup order: ours (a marked thread's pool, the
 * next allocator elsewhere) without the PLT, or the one of a sanitizer or
 * of a library preloaded before us, which then owns every block, the ones
 * glibc and the helpers allocate for us too (strdup of a dlerror message).
 */
extern void rto_own_free(void *)
	__attribute__((alias("free"), visibility("hidden"), leaf, nothrow));
static void *(*first_malloc)(size_t);
static void (*first_free)(void *);

static void find_first(void)
{
	void *m = dlsym(RTLD_DEFAULT, "malloc"), *f = dlsym(RTLD_DEFAULT, "free");
	int ours = !m || m == (void *)rto_own_malloc;

	CMM_STORE_SHARED(first_free, ours || !f ? rto_own_free : (void (*)(void *))f);
	CMM_STORE_SHARED(first_malloc, ours ? rto_own_malloc : (void *(*)(size_t))m);
}

void *rto_malloc(size_t n)
{
	if (RTO_UNLIKELY(!CMM_LOAD_SHARED(first_malloc)))
		find_first();
	return CMM_LOAD_SHARED(first_malloc)(n);
}

void rto_free(void *p)
{
	if (RTO_UNLIKELY(!CMM_LOAD_SHARED(first_free)))
		find_first();
	CMM_LOAD_SHARED(first_free)(p);
}
