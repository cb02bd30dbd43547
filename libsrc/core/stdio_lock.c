/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A marked thread that holds flockfile(f) and calls fprintf(f): the worker
 * that runs the fprintf would wait for a lock its own caller holds.  So the
 * caller lends it: glibc's stream lock is recursive and records its owner,
 * and while the caller waits for the offload nobody else can take the lock,
 * so the worker may stand in as owner and give it back afterwards.
 *
 * The layout of glibc's _IO_lock_t ({int lock; int cnt; void *owner}, owner
 * being pthread_self()) is checked once at start; if it does not match,
 * lending is off and route.c runs such calls on the caller instead.
 *
 * A call that takes the stream's lock itself (fputs, fprintf...: "lock" in
 * calls.tbl) takes it on the caller first, as it would have without the
 * library, and lends it too.  Otherwise a worker running it would wait for
 * a lock held by a marked thread that waits, behind it in the queue, for a
 * worker: with as many such calls as workers, nobody moves.  So a worker
 * never waits for a stream lock; the caller waits where it always did.
 */
#include "rto_fast.h"
#include "stdio_lock.h"
#include "report.h"
#include "real.h"

#include <pthread.h>
#include <stdio.h>

struct rto_io_lock {
	int lock;
	int cnt;
	void *owner;
};

static int lending_ok;

static struct rto_io_lock *lock_of(FILE *f)
{
	struct rto_io_lock *l = (struct rto_io_lock *)f->_lock;

	/*
	 * glibc orders its fields by the lock word, a futex Helgrind does not
	 * see, and reads owner unlocked to find its own recursion; we use them
	 * the same way (and the lending's hand-offs are annotated requests).
	 */
	if (l)
		RTO_HG_BENIGN_RACE(l, sizeof(*l));
	return l;
}

/* Once, from the constructor: does glibc's lock look as we expect? */
void rto_stream_selftest(void)
{
	char buf[16];
	FILE *f = rto_real_fmemopen(buf, sizeof(buf), "w");
	if (!f)
		return;
	struct rto_io_lock *l = lock_of(f);
	if (l && l->owner == NULL && l->cnt == 0) {
		flockfile(f);
		lending_ok = l->owner == (void *)pthread_self() && l->cnt == 1 && l->lock != 0;
		funlockfile(f);
		lending_ok = lending_ok && l->owner == NULL && l->cnt == 0;
	}
	rto_real_fclose(f);
	if (!lending_ok)
		rto_say(1, "unknown stdio lock layout: calls on a stream held with flockfile run "
			   "locally");
}

int rto_stream_lending_ok(void)
{
	return lending_ok;
}

void *rto_stream_owner_if_self(FILE *f)
{
	struct rto_io_lock *l = f ? lock_of(f) : NULL;
	void *self = (void *)pthread_self();

	return l && CMM_LOAD_SHARED(l->owner) == self ? self : NULL;
}

int rto_stream_lock_for_call(FILE *f)
{
	/* FSETLOCKING_BYCALLER streams take no lock; one we hold is lent anyway. */
	if (f) /* _flags: read without the lock, as glibc's flockfile does */
		RTO_HG_BENIGN_RACE(&f->_flags, sizeof(f->_flags));
	if (!f || !lending_ok || (f->_flags & _IO_USER_LOCK) || rto_stream_owner_if_self(f))
		return 0;
	flockfile(f);
	return 1;
}

/*
 * Registered by a module above this one (async.c), once, in the
 * constructor (rto_async_init), before any thread is marked: the marking
 * thread ran the constructor itself or was started after it
 * (pthread_create orders the store before it).  A thread that was running
 * before the library loaded may race with the store: relaxed accesses,
 * and an unset hook means what it means before async.c is set up, that
 * nothing is queued to act on.
 */
static void (*unlock_hook)(void); /* async.c: a drain may have found this lock taken */

void rto_stream_on_unlock(void (*fn)(void))
{
	CMM_STORE_SHARED(unlock_hook, fn);
}

void rto_stream_unlock_after_call(FILE *f)
{
	void (*hook)(void) = CMM_LOAD_SHARED(unlock_hook);

	funlockfile(f);
	if (hook)
		hook();
}

/* The worker's borrowed stream and the lock's count when lent. */
static __thread FILE *borrowed RTO_TLS;
static __thread int borrowed_cnt RTO_TLS;

void *rto_stream_borrow(FILE *f)
{
	struct rto_io_lock *l = lock_of(f);
	void *owner = l->owner;

	CMM_STORE_SHARED(l->owner, (void *)pthread_self()); /* others read it: owner_if_self */
	borrowed = f;
	borrowed_cnt = l->cnt;
	return owner;
}

void rto_stream_return(FILE *f, void *owner)
{
	CMM_STORE_SHARED(lock_of(f)->owner, owner);
	borrowed = NULL;
}

void rto_stream_release_if_mine(FILE *f)
{
	struct rto_io_lock *l = f && lending_ok ? lock_of(f) : NULL;
	/* A lent lock goes back as lent: only the faulted call's own nesting is undone. */
	int keep = f == borrowed ? borrowed_cnt : 0;

	/* Bounded: glibc's count is the nesting of the call that faulted. */
	for (int i = 0; l && i < 16 && l->owner == (void *)pthread_self() && l->cnt > keep; i++)
		funlockfile(f);
}
