/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The library's threads take on the capability state of a program with
 * one thread of its own, when that thread changes it.
 *
 * glibc applies setuid() and its kin to every thread of the process
 * (nptl/nptl_setxid.c: SIGSETXID to each, the same system call there),
 * and aborts when their results differ.  Capabilities, keep-caps, the
 * other securebits, the bounding and ambient sets are per thread, and
 * glibc spreads none of them.  A single-threaded program that drops root
 * keeping a capability (prctl(PR_SET_KEEPCAPS), setresuid(), capset() to
 * raise it again, then setresgid(); setpriv, capsh and daemons do) would
 * find the helpers' setresgid refused where its own succeeds, and glibc
 * abort: the library's threads are threads glibc counts.  So when such a
 * program changes one of these on its thread, each library thread takes
 * the same state (RTO_SIG_INTERRUPT, in its handler) before the change
 * returns.  A program with threads of its own is left alone: its own
 * threads would differ from the changed one just as ours do.
 *
 * The helpers never get more than the thread had: each state they take is
 * one that thread holds.  Its later calls still run on it (context.c:
 * RTO_CTX_CAPS), as they did.
 *
 * Concurrency: rto_cred_mirror() runs on the program's only thread, so
 * one at a time.  It writes `want`, then publishes `gen` (release); a
 * library thread's handler reads gen (acquire), then `want`, applies it,
 * and adds one to `acks` (FUTEX_WAKE).  The mirroring thread waits for
 * the acks, in rounds that take in the threads being born meanwhile (see
 * rto_cred_mirror()), at most RTO_MIRROR_WAIT_NS in all.  Never on a realtime caller's
 * path: only after a capset() or prctl() that changed capabilities.
 */
#include "rto_base.h"
#include "backstop.h"
#include "cred_mirror.h"
#include "futex.h"
#include "own_thread.h"
#include "report.h"
#include "signals.h"

#include <linux/capability.h>
#include <linux/securebits.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <urcu/uatomic.h>

#define RTO_MIRROR_WAIT_NS  1000000000L /* a library thread that does not answer in 1 s */
#define RTO_MIRROR_BIRTH_NS 1000000L	/* a pause while a library thread is being born */
#define CAPS_MAX	    64		/* the capability bit sets are 64 bits wide */

struct cred_state {
	struct __user_cap_data_struct caps[2];
	long securebits; /* keep-caps is its SECBIT_KEEP_CAPS bit */
	uint64_t bounding, ambient;
};

static struct cred_state want;
static uint32_t gen, acks;
static __thread uint32_t have_gen RTO_TLS;

static long prctl_raw(long op, long a, long b)
{
	return rto_bs_raw(SYS_prctl, op, a, b, 0, 0, 0);
}

static int capture(struct cred_state *s)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};

	*s = (struct cred_state){0};
	if (rto_bs_raw(SYS_capget, (long)&h, (long)s->caps, 0, 0, 0, 0) != 0)
		return -1;
	s->securebits = prctl_raw(PR_GET_SECUREBITS, 0, 0);
	if (s->securebits < 0)
		return -1;
	for (int cap = 0; cap < CAPS_MAX; cap++) {
		long in = prctl_raw(PR_CAPBSET_READ, cap, 0);
		if (in < 0)
			break; /* past the kernel's last capability */
		s->bounding |= (uint64_t)(in == 1) << cap;
		if (prctl_raw(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, cap) == 1)
			s->ambient |= UINT64_C(1) << cap;
	}
	return 0;
}

/*
 * In a library thread's signal handler: raw system calls only.  The
 * order keeps each step allowed: securebits and bounding drops while
 * CAP_SETPCAP may still be there, then the sets, then ambient (a raise
 * needs the capability permitted and inheritable).
 */
static void apply(const struct cred_state *s)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct cred_state cur;

	if (capture(&cur) != 0)
		return;
	if (cur.securebits != s->securebits && prctl_raw(PR_SET_SECUREBITS, s->securebits, 0) != 0)
		prctl_raw(PR_SET_KEEPCAPS, !!(s->securebits & (1L << SECURE_KEEP_CAPS)), 0);
	for (int cap = 0; cap < CAPS_MAX; cap++)
		if ((cur.bounding >> cap & 1) && !(s->bounding >> cap & 1))
			prctl_raw(PR_CAPBSET_DROP, cap, 0);
	rto_bs_raw(SYS_capset, (long)&h, (long)s->caps, 0, 0, 0, 0);
	if (cur.ambient != s->ambient) {
		prctl_raw(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0);
		for (int cap = 0; cap < CAPS_MAX; cap++)
			if (s->ambient >> cap & 1)
				prctl_raw(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, cap);
	}
}

/* RTO_SIG_INTERRUPT's look (signals.c), on every library thread that takes it. */
static void adopt(void)
{
	uint32_t g = __atomic_load_n(&gen, __ATOMIC_ACQUIRE);

	if (g == have_gen)
		return;
	/*
	 * Claimed before it is applied: the look of rto_signal_take_kick()
	 * may be interrupted by the handler's on the same thread, and one
	 * thread must answer once (the mirror counts answers).
	 */
	have_gen = g;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	apply(&want);
	uatomic_inc(&acks);
	rto_futex_wake(&acks, 1);
}

/* lifetime.c's count of the program's threads, from init.c (it is above us). */
static int (*app_threads)(void);

void rto_cred_mirror_init(int (*program_threads)(void))
{
	app_threads = program_threads;
	rto_signal_on_interrupt(adopt);
}

static int changes_caps(long nr, const long *a)
{
	if (nr == SYS_capset)
		return 1;
	if (nr != SYS_prctl)
		return 0;
	return a[0] == PR_SET_KEEPCAPS || a[0] == PR_SET_SECUREBITS || a[0] == PR_CAPBSET_DROP ||
	       (a[0] == PR_CAP_AMBIENT && a[1] != PR_CAP_AMBIENT_IS_SET);
}

/* Sent to already: tid is in sent[0..n). */
static int among(const int32_t *sent, int n, int32_t tid)
{
	for (int i = 0; i < n; i++)
		if (sent[i] == tid)
			return 1;
	return 0;
}

/*
 * A library thread between pthread_create() and its start routine has no
 * tid in own_thread.c's table yet (its row is -1), but it may already be
 * a thread, cloned with its creator's state of before (the watchdog
 * starts the stall probe whenever a call is late).  So the mirror goes in
 * rounds: it waits for the births to end, signals every listed thread it
 * has not signaled yet, and waits for their answers; it is done when a
 * round finds no thread it has not signaled.  By then each thread that
 * was running has answered, and a thread created afterwards is created
 * by one of them, or by this one, and begins with the state mirrored.
 */
void rto_cred_mirror(long nr, const long *a)
{
	int32_t tids[64], sent[64];
	long tgid = rto_bs_raw(SYS_getpid, 0, 0, 0, 0, 0, 0);
	static int said;

	if (!changes_caps(nr, a) || app_threads() != 1 ||
	    rto_own_thread_is((int32_t)rto_bs_raw(SYS_gettid, 0, 0, 0, 0, 0, 0)))
		return;
	if ((rto_own_threads(tids, 64) == 0 && rto_own_threads_being_born() == 0) ||
	    capture(&want) != 0)
		return;
	uatomic_set(&acks, 0);
	uint32_t g = __atomic_add_fetch(&gen, 1, __ATOMIC_RELEASE);
	have_gen = g; /* this thread has it already */
	int nsent = 0, asked = 0, fresh = 1;
	uint64_t waited = 0;
	while (fresh && waited < RTO_MIRROR_WAIT_NS) {
		/* A timed wait on acks, which no birth changes: a pause. */
		while (rto_own_threads_being_born() > 0 && waited < RTO_MIRROR_WAIT_NS) {
			rto_futex_wait_ns(&acks, uatomic_read(&acks), RTO_MIRROR_BIRTH_NS);
			waited += RTO_MIRROR_BIRTH_NS;
		}
		int n = rto_own_threads(tids, 64);
		fresh = 0;
		for (int i = 0; i < n && nsent < 64; i++) {
			if (among(sent, nsent, tids[i]))
				continue;
			fresh = 1;
			sent[nsent++] = tids[i]; /* a failed tgkill: gone, its row free again */
			asked += rto_bs_raw(SYS_tgkill, tgid, tids[i], RTO_SIG_INTERRUPT, 0, 0,
					    0) == 0;
		}
		for (uint32_t got;
		     (got = uatomic_read(&acks)) < (uint32_t)asked && waited < RTO_MIRROR_WAIT_NS;
		     waited += RTO_MIRROR_WAIT_NS / 20)
			rto_futex_wait_ns(&acks, got, RTO_MIRROR_WAIT_NS / 20);
	}
	uint32_t got = uatomic_read(&acks);
	if ((fresh || got < (uint32_t)asked) && !uatomic_xchg(&said, 1))
		rto_say(0,
			"%u of the library's %d threads signaled did not take this thread's "
			"capabilities in 1 s%s: a later setuid() may make glibc abort",
			(unsigned)asked - got, asked, fresh ? ", and more were starting" : "");
}
