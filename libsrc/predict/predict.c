/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * helper_wake=predict: learn each marked thread's call pattern from the
 * requests the helpers take, and tell the polling helper when to sleep
 * and when to poll.  Helper side only (never a caller's path): it locks.
 *
 * A periodic loop makes a burst of calls each cycle.  A call that comes
 * within RTO_PRED_BURST_NS of the caller's previous return belongs to the
 * same burst (the caller says which, request.h); the gaps between the
 * first calls of bursts are the period.
 * With a few gaps in hand (the last 32), all but a quarter within [2/3, 3/2] of their median
 * (a loop with up to +-20% jitter, a late wake-up now and then), the
 * thread is periodic and its next burst is expected between last start +
 * the shortest of those gaps and last start + the longest.
 *
 * The plan (after the cpuidle-haltpoll governor and io_uring's hybrid
 * poll): sleep until `window + lateness` before the earliest expected
 * arrival, poll until as long after the latest, and while a burst is on
 * (fewer calls so far than in the burst before) poll RTO_PRED_BURST_NS
 * after each result for the next call.  `overshoot` is how late the
 * kernel ends our timed sleeps: the 95th percentile of the last 128 (a
 * VM's or a busy CPU's lateness has a long tail that a mean and deviation
 * miss); `window` covers the rest, the loop's own jitter and the naps'
 * tail, and adapts: a quarter larger when a burst started while the
 * polling helper slept (that call paid a FUTEX_WAKE and a wake-up; not
 * doubled: on a VM most such bursts are the naps' millisecond tail, which
 * no window catches, and doubling kept the window at its maximum for
 * nothing), a little smaller after each burst caught, an eighth smaller
 * when a planned window ended empty (the loop was late, or stopped).  A
 * loop later than the window allowed gets helper_idle_us of polling more
 * (helper.c) before the helper sleeps.  `counts` says where bursts fell
 * against their windows (stats=1, and stats_file's "predict").
 *
 * A thread that says when its sleep ends (clock_nanosleep, nanosleep,
 * usleep, a timerfd read; or a timed wait whose timeout paces it, poll or
 * a condition variable: wake_hint.h) gets better: its next burst cannot come before
 * that, so the window opens `window + lateness` before the announced wake
 * and stays open `arrive_ns` (the 99th percentile of how late its last
 * hinted bursts came after their wakes: its own vCPU's or CPU's wake-up;
 * at most an eighth of its period, but not less than `overshoot`, the
 * machine's own lateness) plus `window` after it, whatever the
 * period's jitter.  A sleep that ends less than 3/4 of the shortest
 * period after the last burst began (a sleep of a cycle it makes no call
 * in) is not used.  Between its burst's last result and its next sleep,
 * the helper polls (up to RTO_PRED_BURST_NS) for the word instead of
 * planning from the gaps, unless the word came later than that twice in
 * a row (a loop that computes before it sleeps).
 *
 * Several periodic threads: the plan is the window of the one due first.
 * A thread later than its window is still polled for as long as it would
 * be alone (helper_idle_us, rto_predict_configure) before the helper naps
 * until another's window.  Each thread's bursts are counted against its
 * own last window.
 *
 * Anything else gets today's behaviour (helper.c polls helper_idle_us):
 * a thread without a regular pattern yet, or any recently active thread
 * whose gaps are irregular.
 *
 * predict is never worse than idle (issue 30): helper_idle_us is the
 * user's promise of polling after a call.  A thread whose bursts came,
 * within its last RTO_PRED_GAPS, sooner than that after its previous call
 * (gaps idle would have polled through) is polled for helper_idle_us
 * after each call before any nap (rto_predict_promised, helper.c).  A
 * loop whose gaps are all longer still naps between its windows.
 */
#include "predict.h"
#include "real.h"

#include <string.h>

#define RTO_PRED_MIN_GAPS      4
#define RTO_PRED_FORGET_NS     2000000000ull /* idle this long: not a loop any more */
#define RTO_PRED_MAX_GAP_NS    1000000000ull /* a longer pause starts the history again */
#define RTO_PRED_WINDOW_MIN    5000ull	     /* ns */
#define RTO_PRED_WINDOW_INIT   10000ull	     /* ns */
#define RTO_PRED_WINDOW_MAX    200000ull     /* haltpoll's guest_halt_poll_ns */
#define RTO_PRED_OVERSHOOT_0   50000ull	     /* until a timed sleep was measured */
#define RTO_PRED_OVERSHOOT_MAX 1000000ull
#define RTO_PRED_LATE_PCT      95 /* of the naps' lateness: wake this much early */
#define RTO_PRED_ARRIVE_PCT    99 /* of hinted bursts' lateness: poll this long past a wake */

/*
 * helper_idle_us in ns, as helper.c converted it (rto_predict_configure):
 * not in struct rto_predict, whose page is wiped in a forked child.
 */
static uint64_t helper_idle_ns;

static void defaults(struct rto_predict *s)
{
	if (!s->window_ns) {
		s->window_ns = RTO_PRED_WINDOW_INIT;
		s->overshoot_ns = RTO_PRED_OVERSHOOT_0;
		s->arrive_ns = RTO_PRED_OVERSHOOT_0;
	}
}

static struct rto_pattern *find(struct rto_predict *s, uint16_t key)
{
	for (int i = 0; i < RTO_PRED_SLOTS; i++)
		if (s->p[i].key == key)
			return &s->p[i];
	return NULL;
}

/* key's slot, or a free one, or the least recently used one, cleared. */
static struct rto_pattern *slot(struct rto_predict *s, uint16_t key)
{
	struct rto_pattern *e = find(s, key), *old = &s->p[0];

	if (e)
		return e;
	for (int i = 0; i < RTO_PRED_SLOTS; i++) {
		if (!s->p[i].key) {
			old = &s->p[i];
			break;
		}
		if (s->p[i].last_t0 < old->last_t0)
			old = &s->p[i];
	}
	memset(old, 0, sizeof(*old));
	old->key = key;
	return old;
}

/* Gap g within [2/3, 3/2] of the median m. */
static int near(uint64_t g, uint64_t m)
{
	return 3 * g >= 2 * m && 2 * g <= 3 * m;
}

/*
 * A long gap and the short one after it that add up to two periods
 * (within half of one): a loop on an absolute clock whose burst came late
 * (it woke late, or a call took longer than its period) and caught up.
 * Such pairs in the ring, in time order, as a count of gaps.
 */
static unsigned caught_up(const struct rto_pattern *e, unsigned n, uint64_t m)
{
	unsigned start = n < RTO_PRED_GAPS ? 0 : e->pos, pairs = 0;

	for (unsigned j = 0; j + 1 < n; j++) {
		uint64_t a = e->gap[(start + j) % RTO_PRED_GAPS];
		uint64_t b = e->gap[(start + j + 1) % RTO_PRED_GAPS];
		if (!near(a, m) && a > m && !near(b, m) && b < m && 2 * (a + b) >= 3 * m &&
		    2 * (a + b) <= 5 * m) {
			pairs++;
			j++;
		}
	}
	return 2 * pairs;
}

/*
 * Periodic: enough gaps, and all but a quarter of them (or 2) within
 * [2/3, 3/2] of their median (a loop with up to +-33% jitter), or in a
 * pair that caught up (a burst that came late, then one on time).  A pair
 * is no irregularity: without that, a loop whose calls found the helper
 * asleep now and then (each such call slow, its next burst back on
 * phase) looked irregular, got no plan, and so found it asleep every
 * cycle.  lo and hi: the shortest and longest of the gaps near the median.
 */
static int periodic(const struct rto_pattern *e, uint64_t *lo, uint64_t *hi)
{
	unsigned n = e->ngaps < RTO_PRED_GAPS ? e->ngaps : RTO_PRED_GAPS, in = 0;
	uint32_t g[RTO_PRED_GAPS];

	if (n < RTO_PRED_MIN_GAPS)
		return 0;
	memcpy(g, e->gap, sizeof(g));
	for (unsigned i = 1; i < n; i++) /* insertion sort of at most 32 */
		for (unsigned k = i; k > 0 && g[k - 1] > g[k]; k--) {
			uint32_t t = g[k];
			g[k] = g[k - 1];
			g[k - 1] = t;
		}
	uint64_t m = g[n / 2], min = UINT64_MAX, max = 0;
	for (unsigned i = 0; i < n; i++) {
		if (!near(g[i], m))
			continue;
		in++;
		if (g[i] < min)
			min = g[i];
		if (g[i] > max)
			max = g[i];
	}
	*lo = min;
	*hi = max;
	in += caught_up(e, n, m);
	return in + (n / 4 > 2 ? n / 4 : 2) >= n; /* a quarter may be off, or 2 */
}

/*
 * The pct-th percentile of the last samples of a ring of cap (n ever
 * written), or dflt until a quarter of it is filled.  Insertion sort of
 * at most 128: a few microseconds, on the helper.
 */
static uint64_t percentile(const uint32_t *ring, unsigned written, unsigned cap, unsigned pct,
			   uint64_t dflt)
{
	unsigned n = written < cap ? written : cap;
	uint32_t v[RTO_PRED_LATES];

	if (n < cap / 4)
		return dflt;
	memcpy(v, ring, n * sizeof(v[0]));
	for (unsigned i = 1; i < n; i++)
		for (unsigned k = i; k > 0 && v[k - 1] > v[k]; k--) {
			uint32_t t = v[k];
			v[k] = v[k - 1];
			v[k - 1] = t;
		}
	return v[(n - 1) * pct / 100];
}

/*
 * When key's announced sleep ends (may be past), or 0: no word of key's.
 * *bound (when not NULL): 1 if the word says "at the latest".
 */
uint64_t rto_wake_hinted_bound(const struct rto_predict *s, uint16_t key, uint64_t now, int *bound)
{
	uint64_t w = __atomic_load_n(&s->hint[key % RTO_PRED_HINTS], __ATOMIC_RELAXED);

	if (bound)
		*bound = !!(w & RTO_WAKE_BOUND);
	if (!w || (uint16_t)(w >> RTO_WAKE_KEY_SHIFT) != key)
		return 0;
	/* The 48-bit difference, sign-extended: how far from now it ends. */
	uint64_t d = (w - now) & RTO_WAKE_MASK;
	int64_t delta = (int64_t)(d << (64 - RTO_WAKE_BITS)) >> (64 - RTO_WAKE_BITS);
	uint64_t at = now + (uint64_t)delta;
	return at ? at : 1;
}

uint64_t rto_wake_hinted(const struct rto_predict *s, uint16_t key, uint64_t now)
{
	return rto_wake_hinted_bound(s, key, now, NULL);
}

/* A lateness's histogram bucket: < 5, 10, 20, 40, 80, 160 us, more. */
static unsigned late_bucket(uint64_t ns)
{
	unsigned b = 0;

	for (uint64_t top = 5000; b + 1 < RTO_PRED_LATE_BUCKETS && ns >= top; top *= 2)
		b++;
	return b;
}

/* Where a periodic thread's burst began, against the window planned for it. */
static void count_arrival(struct rto_predict *s, const struct rto_pattern *e, uint64_t t0)
{
	struct rto_predict_counts *c = &s->counts;

	if (!e->win_from)
		return;
	if (e->win_hinted)
		c->hinted++;
	if (t0 < e->win_from)
		c->before_window++;
	else if (t0 > e->win_until)
		c->after_window++;
	else if (t0 >= s->slept_at && t0 < s->woke_at) {
		c->nap_late++;
		c->overrun_hist[late_bucket(t0 - e->win_from)]++;
	} else
		c->in_window++;
}

void rto_predict_served(struct rto_predict *s, uint16_t key, uint64_t t0, int burst, uint64_t now,
			int prio)
{
	if (!key || !t0) /* the library's own notices: not a thread's pattern */
		return;
	rto_mutex_lock(&s->lock);
	defaults(s);
	struct rto_pattern *e = slot(s, key);
	int first = e->last_t0 == 0;
	if (first || burst) {
		uint64_t lo, hi;
		int regular = !first && periodic(e, &lo, &hi);
		if (regular)
			count_arrival(s, e, t0);
		/*
		 * It came while the polling helper slept: before the window
		 * opened (the loop's own jitter) or in it, the nap not ended
		 * yet (the naps' tail beyond the percentile).  Either way the
		 * window was too short for this loop on this machine: a quarter
		 * more, which about 230 caught bursts take back (1/1024 each).
		 */
		if (regular && t0 >= s->slept_at && t0 < s->woke_at) {
			s->window_ns += s->window_ns / 4;
			if (s->window_ns > RTO_PRED_WINDOW_MAX)
				s->window_ns = RTO_PRED_WINDOW_MAX;
			s->grows++;
		}
		/*
		 * After a sleep it announced: how late past its end the burst
		 * came.  Its word may already be the next sleep's (it slept
		 * again before this helper learnt): it announces its sleeps,
		 * but this burst's lateness is not known.
		 */
		uint64_t w = rto_wake_hinted(s, key, t0);
		e->hinted = w && w > e->last_start;
		/*
		 * A loop that says its next wake as soon as it woke (it drains
		 * its timerfd when epoll says it fired, then calls): the word
		 * is the next one already, and the wake this burst followed is
		 * the one its last burst saw.
		 */
		uint64_t ended = w;
		if (e->hinted && w > t0 && e->word_seen > e->last_start && e->word_seen <= t0)
			ended = e->word_seen;
		e->word_seen = w;
		if (e->hinted && ended <= t0) {
			uint64_t late = t0 - ended < RTO_PRED_OVERSHOOT_MAX
						? t0 - ended
						: RTO_PRED_OVERSHOOT_MAX;
			s->arrive[s->narrive++ % RTO_PRED_ARRIVES] = (uint32_t)late;
			s->arrive_ns = percentile(s->arrive, s->narrive, RTO_PRED_ARRIVES,
						  RTO_PRED_ARRIVE_PCT, RTO_PRED_OVERSHOOT_0);
		}
		/*
		 * Sooner after its last call than helper_idle_us: idle would
		 * have polled through this gap, so predict must not nap
		 * through the next ones (rto_predict_promised).
		 */
		if (!first && t0 > e->last_done && t0 - e->last_done < helper_idle_ns)
			e->short_quiet = RTO_PRED_GAPS;
		else if (e->short_quiet)
			e->short_quiet--;
		if (!first && t0 - e->last_start < RTO_PRED_MAX_GAP_NS && t0 > e->last_start) {
			e->gap[e->pos] = (uint32_t)(t0 - e->last_start);
			e->pos = (e->pos + 1) % RTO_PRED_GAPS;
			e->ngaps++;
		} else {
			e->ngaps = e->pos = 0;
		}
		e->calls_prev = e->calls_cur;
		e->calls_cur = 1;
		e->prev_start = e->last_start;
		e->last_start = t0;
	} else {
		e->calls_cur++;
	}
	e->prio = prio;
	if (t0 > e->last_t0)
		e->last_t0 = t0;
	if (now > e->last_done)
		e->last_done = now;
	rto_mutex_unlock(&s->lock);
}

void rto_predict_configure(uint64_t ns)
{
	helper_idle_ns = ns;
}

uint64_t rto_predict_promised(struct rto_predict *s)
{
	uint64_t until = 0;

	if (!helper_idle_ns)
		return 0;
	rto_mutex_lock(&s->lock);
	for (int i = 0; i < RTO_PRED_SLOTS; i++) {
		const struct rto_pattern *e = &s->p[i];
		if (e->key && e->short_quiet && e->last_done + helper_idle_ns > until)
			until = e->last_done + helper_idle_ns;
	}
	rto_mutex_unlock(&s->lock);
	return until;
}

int rto_predict_plan(struct rto_predict *s, uint64_t now, struct rto_plan *p)
{
	int kind = RTO_PLAN_NONE, overdue = 0, irregular = 0;
	uint64_t best = UINT64_MAX, grace_until = 0;
	int grace_prio = 0;

	*p = (struct rto_plan){0}; /* no watch unless a plan sets one */
	rto_mutex_lock(&s->lock);
	defaults(s);
	for (int i = 0; i < RTO_PRED_SLOTS; i++) {
		struct rto_pattern *e = &s->p[i];
		if (!e->key || now > e->last_t0 + RTO_PRED_FORGET_NS)
			continue;
		/*
		 * Its calls come sooner than helper_idle_us after each other:
		 * idle serves it (poll helper_idle_us, then sleep), and so do
		 * we, also once that poll ran out: a plan would poll where idle
		 * sleeps (docs/periodic.md rule 12).
		 */
		if (e->short_quiet)
			continue;
		/* A burst still going on: its next call is due right after the last result. */
		if (e->last_done >= e->last_t0 && now < e->last_done + RTO_PRED_BURST_NS &&
		    (e->calls_prev == 0 || e->calls_cur < e->calls_prev)) {
			p->sleep_until = 0;
			p->poll_until = e->last_done + RTO_PRED_BURST_NS;
			p->linger = 1;
			p->prio = e->prio;
			rto_mutex_unlock(&s->lock);
			return RTO_PLAN_POLL;
		}
		/*
		 * Its last burst followed a sleep it announced, and it has not
		 * announced the next one yet: it is on its way from its last
		 * result to its sleep.  Poll until its word comes (or a call).
		 * Not for a loop that computes a while before it sleeps (its
		 * word came too late twice in a row): that would poll
		 * RTO_PRED_BURST_NS a cycle for nothing; every 64th burst it is
		 * tried again.
		 */
		int bound;
		uint64_t w = rto_wake_hinted_bound(s, e->key, now, &bound);
		int waiting = now < e->last_done + RTO_PRED_BURST_NS;
		if (e->hinted && e->word_judged != e->last_start && (w > e->last_t0 || !waiting)) {
			e->word_judged = e->last_start; /* its word came in time, or not */
			e->word_slow = w > e->last_t0 && waiting ? 0 : e->word_slow + 1;
		}
		if (e->hinted && w <= e->last_t0 && waiting &&
		    (e->word_slow < 2 || e->ngaps % 64 == 0)) {
			p->sleep_until = 0;
			p->poll_until = e->last_done + RTO_PRED_BURST_NS;
			p->linger = 1;
			p->prio = e->prio;
			p->hint = &s->hint[e->key % RTO_PRED_HINTS];
			p->hint_was = __atomic_load_n(p->hint, __ATOMIC_RELAXED);
			rto_mutex_unlock(&s->lock);
			return RTO_PLAN_POLL;
		}
		/*
		 * Gaps without a period, but its bursts follow the sleeps it
		 * announces, and it announced the next: plan from its word
		 * alone (a loop whose wake-ups a busy host delays by a
		 * millisecond now and then has such gaps; without its word
		 * every call of it would find the helper asleep).
		 */
		uint64_t lo = 0, hi = 0;
		int regular = periodic(e, &lo, &hi);
		if (!regular && !(e->hinted && w > e->last_t0 && !bound)) {
			irregular = 1;
			continue;
		}
		/* The same margin after the latest expected call: its own wake-up is late too. */
		/*
		 * No cap: when the lead eats the whole period the helper just
		 * polls (a 10 kHz loop on a VM), which is what a nap that ends
		 * after the call would cost anyway, plus a FUTEX_WAKE.
		 */
		uint64_t lead = s->window_ns + s->overshoot_ns;
		uint64_t until = e->last_start + hi + lead;
		/*
		 * A last gap longer than the period: the loop woke late, and one
		 * on an absolute clock comes back to its phase, so the next
		 * call may come as early as a period after the one it missed.
		 */
		uint64_t next = e->last_start + lo;
		if (e->prev_start && e->last_start - e->prev_start > hi &&
		    e->prev_start + 2 * lo < next)
			next = e->prev_start + 2 * lo;
		/*
		 * It said when its sleep ends, and that fits its rhythm: at
		 * least 3/4 of its shortest period after its last burst began
		 * (not the sleep of a cycle it makes no call in, as a loop
		 * calling every other cycle sleeps half its period; but a loop
		 * whose last burst came late, whose sleep is shorter by that
		 * much).  No call comes before then, and its own wake-up makes
		 * it late by about arrive_ns.
		 */
		int hinted = w > e->last_t0 && (!regular || w >= e->last_start + lo - lo / 4);
		/*
		 * A wait's timeout (poll, a condition variable...) is when it
		 * ends at the latest: an event may end it sooner.  Only when
		 * it falls within the loop's own period (it is what paces the
		 * loop) does it place the window; a longer one, a safety
		 * timeout of an event-driven loop, would nap through the
		 * event.
		 */
		if (hinted && bound && (!regular || w > e->last_start + hi))
			hinted = 0;
		if (hinted) {
			/*
			 * At most an eighth of its period: a VM's stall is no
			 * rhythm.  But never less than how late this machine
			 * ends our own naps: a 10 kHz loop's wake-ups are that
			 * late too, and an eighth of 100 us had left nearly all
			 * its bursts after the window (the poller fell back to
			 * helper_idle_us polling, up to all of a CPU).
			 */
			uint64_t cap = regular ? lo / 8 : RTO_PRED_WINDOW_MAX;
			if (cap < s->overshoot_ns)
				cap = s->overshoot_ns;
			uint64_t after = s->arrive_ns < cap ? s->arrive_ns : cap;
			next = w;
			until = w + after + s->window_ns;
		}
		if (now > until) {
			overdue = 1;
			if (until + helper_idle_ns > grace_until)
				grace_until = until + helper_idle_ns;
			if (until + helper_idle_ns > now && e->prio > grace_prio)
				grace_prio = e->prio;
			continue;
		}
		uint64_t from = next > lead ? next - lead : 0;
		e->win_from = from;
		e->win_until = until;
		e->win_hinted = hinted;
		if (from < best) {
			best = from;
			s->plan_hinted = hinted;
			p->sleep_until = from;
			p->poll_until = until;
			p->linger = 0;
			p->prio = e->prio;
			kind = RTO_PLAN_POLL;
		}
	}
	rto_mutex_unlock(&s->lock);
	if (irregular)
		return RTO_PLAN_NONE;
	if (kind == RTO_PLAN_NONE && overdue)
		return RTO_PLAN_SLEEP; /* helper.c polls helper_idle_us, then sleeps */
	/*
	 * A loop later than its window, and another thread's window next:
	 * poll on for the late one as long as it would get alone, not nap
	 * through its burst until the other's window (two loops on a VM,
	 * one woke 250 us late: its call paid a FUTEX_WAKE and a wake-up).
	 * Through the other's window too if the grace reaches it.
	 */
	if (kind == RTO_PLAN_POLL && grace_until > now && p->sleep_until > now) {
		if (grace_until < p->sleep_until) {
			p->poll_until = grace_until;
			p->linger = 1; /* not the window's: it neither hits nor misses */
		}
		p->sleep_until = 0;
		if (grace_prio > p->prio)
			p->prio = grace_prio;
	}
	return kind;
}

void rto_predict_sleeps(struct rto_predict *s, uint64_t now)
{
	rto_mutex_lock(&s->lock);
	s->slept_at = now;
	s->woke_at = UINT64_MAX;
	s->naps++;
	rto_mutex_unlock(&s->lock);
}

/*
 * How early to wake: the RTO_PRED_LATE_PCT-th percentile of how late the
 * last naps ended.  Lateness on a VM or a busy housekeeping CPU has a
 * long tail (20-80 us typical, 150 us and more now and then) that a mean
 * plus a few deviations, with outliers cut, underestimates: each nap
 * that ends after the call came costs that call a FUTEX_WAKE and a
 * wake-up.  A percentile pays for the tail with polling only as long as
 * the tail's own length.
 */
static uint64_t late_percentile(const struct rto_predict *s)
{
	return percentile(s->late, s->nlate, RTO_PRED_LATES, RTO_PRED_LATE_PCT,
			  RTO_PRED_OVERSHOOT_0);
}

void rto_predict_woke(struct rto_predict *s, uint64_t wanted, uint64_t now, int timed_out,
		      unsigned sleeps)
{
	rto_mutex_lock(&s->lock);
	s->woke_at = now;
	s->counts.nap_sleeps += sleeps;
	if (timed_out && now >= wanted) {
		uint64_t late = now - wanted;
		s->counts.late_hist[late_bucket(late)]++;
		if (late > RTO_PRED_OVERSHOOT_MAX)
			late = RTO_PRED_OVERSHOOT_MAX;
		s->late[s->nlate++ % RTO_PRED_LATES] = (uint32_t)late;
		s->overshoot_ns = late_percentile(s);
	}
	rto_mutex_unlock(&s->lock);
}

void rto_predict_hit(struct rto_predict *s)
{
	rto_mutex_lock(&s->lock);
	/*
	 * Slowly: at equilibrium about one burst in 230 comes while we
	 * sleep (1024 * ln 1.25), if the window can catch them at all;
	 * under 1%, so that they stay out of a loop's p99.  At 1/256 it was
	 * one in 57, and a one-call loop's p99 was a nap's.
	 */
	s->window_ns -= s->window_ns / 1024;
	if (s->window_ns < RTO_PRED_WINDOW_MIN)
		s->window_ns = RTO_PRED_WINDOW_MIN;
	rto_mutex_unlock(&s->lock);
}

void rto_predict_missed(struct rto_predict *s)
{
	rto_mutex_lock(&s->lock);
	/* Not halved: a loop that woke late once would make the next window too short. */
	s->window_ns -= s->window_ns / 8;
	if (s->window_ns < RTO_PRED_WINDOW_MIN)
		s->window_ns = RTO_PRED_WINDOW_MIN;
	s->shrinks++;
	rto_mutex_unlock(&s->lock);
}
