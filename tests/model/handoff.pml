/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handoff.pml: a Promela model of the request hand-off between marked
 * callers and helper workers, as libsrc/core/transport.c and libsrc/core/helper.c
 * have it (README.md here: the mapping line by line, the abstractions and
 * why they are sound, the properties, the mutants).  check.sh runs it.
 *
 * C callers make R requests each, one after another, through their slot
 * (post counter, claim by compare-and-swap) or the queue (liburcu's wfcq,
 * modelled as a correct queue: a set, since the workers' priority order
 * is not what is checked here); W workers take them, run them and
 * publish.  Between them: the NEED_WAKEUP flag (awake), the sleepers and
 * wake_seq, untimed and timed futex waits, the request's futex word
 * (PENDING/WAITING/DONE/KICKING/KICKED), kick and abandon on cancellation.
 *
 * A change to the protocol in transport.c or helper.c changes this file
 * too (their header comments say so).
 *
 * Built with -D (check.sh):
 *   LIVE    the liveness runs: no worker's long timed wait ever ends (a
 *           caller must never need it), one call may block until kicked;
 *           check.sh asks for valid end states and no cycle at all (P2);
 *           otherwise the workers' long waits may end too (asserts only)
 *   NO_SIGNALS, NO_CANCEL, R, R1, ROUTES_ANY: the run's configuration (README)
 *   TAKEBACK  on_stall=local: caller 0's stall timer fires once, at any
 *           point of its wait, and it takes back a post no worker claimed
 *   GROW    workers=1, workers_max=2: worker 1 is an extra one, started by
 *           the watchdog when worker 0 is inside a call and requests wait,
 *           gone when it stays idle; caller 0's first call blocks for good
 *           (a FIFO nobody writes, never kicked) and caller 1 must still
 *           be served
 *   MUT_*   one seeded bug each (README.md, "Mutants")
 * Properties: P1 every request runs exactly once; P2 (LIVE) every caller
 * returns while a worker can run; P3 a request's memory (a slot, a stack
 * frame) is never reused while a worker holds its request; P4 a kick only
 * interrupts the call it was meant for; P5 (TAKEBACK) a taken-back
 * request never runs on a helper (and, by P1, runs exactly once).
 */

#define C 2 /* callers: marked threads */
#define W 2 /* workers: helper threads */
#ifndef R
#define R 2 /* requests per caller */
#endif
/* R1: caller 1's requests, if fewer (the take-back run: caller 0 is the one that takes back). */
#ifdef R1
#define REQS(c) (c == 1 -> R1 : R)
#else
#define REQS(c) R
#endif
#define NONE 255

/* enum rto_req_state (transport.h) */
#define PENDING 0
#define WAITING 1
#define DONE 2
#define KICKING 3
#define KICKED 4

/* Futex words: q->wake_seq, and each caller's request's state. */
#define WSEQ 0
#define STATE(c) ((c) + 1)

/* ---- shared memory ---------------------------------------------------- */

/*
 * Each caller's request: one location for its slot and its stack frame
 * alike, reused by its next request (README: more aliasing than the code
 * has, so P3 and P4 are checked against the worst case).
 */
byte state[C]; /* rto_req.state, the futex word */
byte body[C];  /* the request's contents: which of the caller's requests (1..R) */
byte post[C];  /* rto_slot: the post counter (posts so far; the priority byte left out) */
byte seen[C];  /* q->slot_seen: the last post a worker took */
bool inq[C];   /* the request is in the queue (wfcq + q->pending) */

byte awake;	   /* q->awake: workers not asleep (NEED_WAKEUP when 0) */
byte sleepers;	   /* q->sleepers */
bool bumped[W];	   /* q->wake_seq moved since worker w read it (README: wake_seq) */
bool window[W];	   /* worker w read wake_seq and has not yet made its FUTEX_WAIT */
byte running[W];   /* q->running[w].req: c + 1 while worker w runs c's request, else 0 */

/* The kernel: futex waiters (callers 0..C-1, workers C..C+W-1), worker signals. */
byte fw[C + W];	   /* blocked in FUTEX_WAIT on word fw - 1; 0: not waiting */
bool sig[W];	   /* RTO_SIG_INTERRUPT pending at worker w */
byte sig_for[W];   /* ghost: the request (c R + k) the sender meant it for */

/* Ghosts, for the properties. */
byte ran[C * R + 1]; /* P1: times request c R + k ran */
byte holding[C];     /* P3: workers holding c's request, from claim to DONE */
bool pub[C];	     /* a worker is inside publish() for c (LIVE's timing assumption) */
bool ret[C];	     /* P2: the caller returned from its last request, or was cancelled */
bool forever[C];     /* P2: c's call blocks until kicked, and is not kicked yet */
bool forever_used;   /* LIVE: at most one call blocks for ever */
/* Caller 0 meets one signal handler without SA_RESTART, caller 1 one pthread_cancel(). */
bool sigbudget[C];
bool cancelbudget[C];
bool stallbudget[C];	/* TAKEBACK: its stall_us passes once (transport.c stall_passed) */
bool taken[C * R + 1];	/* P5: request c R + k was taken back by its caller */
bool alive[W];		/* GROW: q->running[w].alive (worker 0 always) */
bool leave;		/* LEAVE: q->leave (alone.c): the workers are to end */

/* GROW: workers= is 1, and worker 1 comes and goes (helper.c rto_helpers_grow). */
#ifdef GROW
#define WORKERS 1
#else
#define WORKERS 2
#endif

#ifdef MUT_NO_KICKING_HOLD
#define MUT_HOLD_OFF 1 /* publish() replaces KICKING too */
#else
#define MUT_HOLD_OFF 0
#endif

#if defined(LEAVE) && !defined(MUT_LEAVE_NOT_WORK)
/* alone.c: leave makes has_work() true, so that no worker sleeps through it */
#define HAS_WORK (inq[0] || inq[1] || post[0] != seen[0] || post[1] != seen[1] || leave)
#else
#define HAS_WORK (inq[0] || inq[1] || post[0] != seen[0] || post[1] != seen[1])
#endif

#if C != 2 || W != 2
#error "futex_wake, slot_take and HAS_WORK spell out 2 callers and 2 workers"
#endif

/*
 * P2 has no formula: in LIVE, check.sh asks pan for the invalid end
 * states (a terminal state where a caller has not returned) and for the
 * non-progress cycles, with no progress label at all: every execution of
 * the LIVE model must be finite and end with every caller returned
 * (README, "Properties").
 */

/* ---- the kernel ------------------------------------------------------- */

/* FUTEX_WAKE(word, 1): one waiter on word, any one. */
inline futex_wake(word)
{
	atomic {
		if
		:: fw[0] == word + 1 -> fw[0] = 0
		:: fw[1] == word + 1 -> fw[1] = 0
		:: fw[2] == word + 1 -> fw[2] = 0
		:: fw[3] == word + 1 -> fw[3] = 0
		:: else -> skip
		fi
	}
}

/* FUTEX_WAIT(word, val), first half: sleep only if the word still holds val. */
inline futex_enter(me, word, cur, val)
{
	atomic {
		if
		:: cur == val -> fw[me] = word + 1
		:: else -> skip
		fi
	}
}

/*
 * Timed waits.  The model has no clock: a timed wait expires only when
 * nothing else in the system can move (Promela's timeout), the shortest
 * first.  So a timer never fires "early", before work that would take
 * less time than it: README, "Abstractions", says why that is what the
 * durations give (50 us, 1 ms, 1 s against a few microseconds of work).
 *   publish()'s 50-us wait for KICKING: any time all else is blocked;
 *   a caller's 1-ms wait: likewise, but not while a worker is inside
 *   publish() for its request (the 50-us one fires first);
 *   a worker's long waits (nap, lifetime watch 1 s, async retry): never
 *   in LIVE, where no caller may need them; else like the others.
 */
#define PUBLISH_TIMEOUT timeout
#define CALLER_TIMEOUT(c) (timeout && !pub[c])
#if defined(LIVE) || defined(NO_WORKER_TIMEOUT)
#define WORKER_TIMEOUT false
#else
#define WORKER_TIMEOUT (timeout && !pub[0] && !pub[1])
#endif

/* ---- the caller: transport.c ------------------------------------------ */

/*
 * Which way a request goes.  By default caller 0's by its slot and caller
 * 1's through the queue (rto_offload: a marked thread's own call, or a
 * call of the library's on its behalf / no slot free); ROUTES_ANY: each
 * request either way (README: the state counts of both).
 */
#ifdef ROUTES_ANY
#define SLOT_ROUTE(c) true
#define QUEUE_ROUTE(c) true
#else
#define SLOT_ROUTE(c) (c == 0)
#define QUEUE_ROUTE(c) (c == 1)
#endif

/* wake_worker(): bump wake_seq, FUTEX_WAKE one sleeper. */
inline wake_worker()
{
	atomic { bumped[0] = window[0]; bumped[1] = window[1] }; /* wake_seq++ */
	futex_wake(WSEQ)
}

/*
 * kick(r): WAITING/KICKED -> KICKING by compare-and-swap, tgkill the
 * worker found in q->running (transport.c's worker_running), -> KICKED.  s is the
 * state the caller just loaded (wait_loop's or abandon's look, the same
 * load as kick's own), not DONE; s is the state again afterwards.
 */
inline kick()
{
#ifdef MUT_KICK_STORE
	state[c] = KICKING; /* a plain store */
#else
	atomic {
		if
		:: state[c] == s -> state[c] = KICKING; t = 1
		:: else -> t = 0
		fi
	};
	if
	:: t ->
#endif
		/* worker_running() and rto_signal_kick(): the workers' rows, then tgkill */
		atomic {
			if
			:: running[0] == c + 1 -> t = 0
			:: running[1] == c + 1 -> t = 1
			:: else -> t = NONE
			fi;
			if
			:: t != NONE && !sig[t] -> sig[t] = 1; sig_for[t] = id
			:: else -> skip /* nobody: kick again later; one pending: they merge */
			fi;
			t = 0
		};
		atomic { state[c] = KICKED; s = KICKED }
#ifndef MUT_KICK_STORE
	:: else -> s = state[c]
	fi
#endif
}

proctype caller(byte c)
{
	byte k = 1, s, t, id;
	bool interrupting, fin, took;

	do
	:: k > REQS(c) -> break
	:: else ->
		/* rto_offload(): the request, written into its location, then handed over */
		atomic {
			id = c * R + k;
			assert(holding[c] == 0); /* P3 */
#ifdef MUT_POST_BEFORE_BODY
			post[c]++
		};
		atomic {
#endif
			state[c] = PENDING;
			body[c] = k;
			if
			:: SLOT_ROUTE(c) -> /* rto_slot_post(): the request, then uatomic_xchg of the counter */
#ifndef MUT_POST_BEFORE_BODY
				post[c]++
#else
				skip
#endif
			:: QUEUE_ROUTE(c) -> inq[c] = 1 /* enqueue(): cds_wfcq_enqueue */
			fi
		};
		/* wake_worker_if_all_asleep(): awake == 0 is NEED_WAKEUP */
#ifndef MUT_NO_NEED_WAKEUP
		if
		:: awake == 0 -> wake_worker()
		:: else -> skip
		fi;
#endif
		/*
		 * spin_until_done(): its last look.  A caller on one of the
		 * workers' CPUs (RTO_RQ_HERE) does not spin: sleep_until_done()'s
		 * own PENDING->WAITING compare-and-swap sees a DONE just as well.
		 */
		if
		:: state[c] == DONE -> goto collect
		:: else -> skip
		fi;
		/* sleep_until_done(): wake a sleeper, the awake workers may all be in long calls */
#ifndef MUT_NO_SLEEPER_WAKE
		if
		:: sleepers > 0 -> wake_worker()
		:: else -> skip
		fi;
#endif
		/* PENDING -> WAITING by compare-and-swap; if it finished meanwhile, do not sleep */
		atomic {
#ifdef MUT_WAITING_STORE
			s = WAITING;
			state[c] = WAITING;
#else
			s = state[c];
			if
			:: s == PENDING -> state[c] = WAITING
			:: else -> skip
			fi;
#endif
			fin = (s == DONE)
		};
		if
		:: fin -> goto collect
		:: else -> skip
		fi;
		/* wait_loop(): until DONE; its two looks at the state word are one when it does not kick */
		do
		:: atomic {
			s = state[c];
			fin = (s == DONE)
		   };
		   if
		   :: fin -> break
		   :: else -> skip
		   fi;
		   if
		   :: interrupting -> kick()
		   :: else -> skip
		   fi;
#ifdef TAKEBACK
		   /*
		    * stall_passed(): stall_us passed; with on_stall=local, a slot's
		    * post no worker claimed is taken back (rto_slot_take_back: a
		    * load of seen, then the compare-and-swap a worker claims with).
		    */
		   if
		   :: stallbudget[c] ->
			atomic { stallbudget[c] = 0; t = seen[c] };
			atomic {
#ifdef MUT_TAKE_NO_CAS
				took = (t != post[c]);
#else
				took = (t != post[c] && seen[c] == t);
#endif
				if
				:: took -> seen[c] = post[c]
				:: else -> skip
				fi;
				t = 0
			};
			if
			:: took -> goto takenback
			:: else -> skip
			fi
		   :: else -> skip
		   fi;
#endif
		   if
		   :: s == WAITING || s == KICKED ->
			/* wait_state(): FUTEX_WAIT, timed (1 ms) while interrupting */
			futex_enter(c, STATE(c), state[c], s);
			if
			:: !fw[c] -> skip /* woken, or the word had moved on */
			:: interrupting && CALLER_TIMEOUT(c) -> fw[c] = 0 /* 1 ms passed */
			:: sigbudget[c] -> /* a handler without SA_RESTART ran: EINTR */
				atomic { fw[c] = 0; sigbudget[c] = 0; interrupting = 1 }
			:: cancelbudget[c] -> /* asynchronous cancellation, around the wait */
				atomic { fw[c] = 0; cancelbudget[c] = 0 };
				goto abandon
#ifdef GROW
			:: forever[c] -> /* its call blocks for good: so does it, and nothing else */
				fw[c] = 0;
				goto finish_blocked
#endif
			fi
		   :: else -> skip
		   fi
		od;
#ifdef TAKEBACK
		goto collect;
takenback:	/* run_taken_back(): DONE first, then the call, on the caller */
		atomic {
			state[c] = DONE;
			ran[id]++;
			taken[id] = 1;
			assert(ran[id] == 1) /* P1 */
		};
#endif
collect:	/* DONE: rto_slot_collect(), the result is the caller's */
		atomic {
			assert(ran[id] == 1);	 /* P1 */
			assert(holding[c] == 0); /* P3 */
			k++;
			s = 0; fin = 0; interrupting = 0
		}
	od;
	goto finish;

abandon: /* abandon(): kick until DONE, waiting 1 ms between kicks */
	do
	:: atomic {
		s = state[c];
		fin = (s == DONE)
	   };
	   if
	   :: fin -> break
	   :: else -> skip
	   fi;
	   kick();
	   if
	   :: s == WAITING || s == KICKED ->
		futex_enter(c, STATE(c), state[c], s);
		if
		:: !fw[c] -> skip
		:: CALLER_TIMEOUT(c) -> fw[c] = 0
		fi
	   :: else -> skip
	   fi
	od;
	assert(ran[id] == 1);	 /* P1 */
	assert(holding[c] == 0); /* P3: the unwinding may free it, its slot is released */
finish:
	ret[c] = 1
#ifdef GROW
	;
	goto end_caller;
finish_blocked:
	skip;
end_caller:
	skip
#endif
}

/* ---- the worker: helper.c ----------------------------------------------- */

/*
 * rto_slot_take(q, above), the scan: each slot's seen and post; with the
 * queue not empty a slot may lose on priority (may_decline).
 */
inline slot_scan(may_decline)
{
	if
	:: post[0] != seen[0] -> i = 0
	:: post[1] != seen[1] -> i = 1
	:: may_decline && (inq[0] || inq[1]) -> i = NONE /* prio <= the queue's first */
	:: else -> i = NONE
	fi;
	if
	:: i != NONE -> ss = seen[i]; sp = post[i]
	:: else -> skip
	fi
}

/* The claim: the compare-and-swap of seen for post that succeeds owns the request. */
inline slot_claim(res)
{
#ifdef MUT_CLAIM_NO_CAS
	seen[i] = sp; res = i; holding[i]++; /* a plain store after the load */
#else
	if
	:: seen[i] == ss -> seen[i] = sp; res = i; holding[i]++
	:: else -> res = NONE
	fi;
#endif
	i = 0; ss = 0; sp = 0
}

/*
 * The sleep of idle() and nap(): read wake_seq, sleepers++, awake-- (full
 * barriers), re-check the queue and the slots (has_work), FUTEX_WAIT on
 * wake_seq.  The read and sleepers++ are one step, and awake-- and the
 * re-check another (README, "Abstractions": what a caller does in between
 * commutes with them).
 */
#if defined(MUT_LATE_DEC)
#define SLEEP_PREPARE \
	atomic { bumped[w] = 0; window[w] = 1; nowork = !HAS_WORK }; /* the re-check first */ \
	atomic { sleepers++ }; \
	atomic { awake-- }
#define SLEEP_SEQ
#elif defined(MUT_LATE_SEQ)
#define SLEEP_PREPARE \
	atomic { sleepers++ }; \
	atomic { awake--; nowork = !HAS_WORK }
#define SLEEP_SEQ atomic { bumped[w] = 0; window[w] = 1 }; /* seq = wake_seq, after the re-check */
#elif defined(MUT_NO_RECHECK)
#define SLEEP_PREPARE \
	atomic { bumped[w] = 0; window[w] = 1; sleepers++ }; /* seq = wake_seq */ \
	atomic { awake--; nowork = 1 } /* no re-check: sleep */
#define SLEEP_SEQ
#else
#define SLEEP_PREPARE \
	atomic { bumped[w] = 0; window[w] = 1; sleepers++ }; /* seq = wake_seq; sleepers++: transport.c */ \
	atomic { awake--; nowork = !HAS_WORK }
#define SLEEP_SEQ
#endif

proctype worker(byte w)
{
	byte c, g, s, i, ss, sp, id, claimed = NONE;
	bool nowork, blockf, done;

	atomic { awake++ }; /* worker_main() */
top:
	/*
	 * take(): the request the polling loop claimed; else, under
	 * q->dispatch, a posted slot's (the scan, then the claim) or the
	 * queue's first; else idle().
	 */
	atomic {
		c = claimed;
		claimed = NONE;
		if
		:: c == NONE -> slot_scan(1)
		:: else -> i = NONE
		fi
	};
	atomic {
		if
		:: c == NONE && i != NONE -> slot_claim(c)
		:: else -> i = 0
		fi;
		if
		:: c == NONE ->
			if
			:: inq[0] -> inq[0] = 0; c = 0; holding[0]++
			:: inq[1] -> inq[1] = 0; c = 1; holding[1]++
			:: else -> skip
			fi
		:: else -> skip
		fi;
		done = (c == NONE)
	};
	if
	:: done -> done = 0; goto poll
	:: else -> skip
	fi;

	/* execute(): me->req = r, then the call */
	atomic {
		running[w] = c + 1;
		g = body[c];
		id = c * R + g;
		assert(state[c] != DONE); /* P1, P3: the request it claimed, still live */
		assert(!taken[id]);	  /* P5 */
		ran[id]++;
		assert(ran[id] == 1); /* P1 */
		blockf = 0;
#ifdef GROW
		/* Caller 0's first call blocks for good: never kicked (issue 29: a FIFO's open). */
		if
		:: !forever_used && c == 0 -> forever_used = 1; forever[c] = 1; blockf = 1
		:: else -> skip
		fi
#elif defined(LIVE)
		/* One call in the whole run blocks until kicked (issue 29: a FIFO nobody writes). */
		if
		:: !forever_used && (sigbudget[c] || cancelbudget[c]) -> /* it will be kicked */
			forever_used = 1; forever[c] = 1; blockf = 1
		:: true -> skip
		fi
#endif
	};
end_call: /* a call that blocks for good (GROW) ends here; its caller's state says if it may */
	if
	:: !blockf -> /* the call returns by itself */
#ifndef MUT_REQ_CLEAR_LATE
		running[w] = 0 /* before DONE: a kick must not find us for the caller's next request */
#else
		skip
#endif
	:: sig[w] -> /* RTO_SIG_INTERRUPT lands: the handler runs, the call ends with EINTR */
		atomic {
			assert(sig_for[w] == id); /* P4 */
			sig[w] = 0;
			sig_for[w] = 0;
			forever[c] = 0
		};
#ifndef MUT_REQ_CLEAR_LATE
		running[w] = 0
#else
		skip
#endif
	fi;

	/* publish(): any state but KICKING -> DONE */
	do
	:: atomic { s = state[c]; pub[c] = 1 };
	   if
#ifndef MUT_NO_KICKING_HOLD
	   :: s == KICKING -> /* the caller is in tgkill: a 50-us sleep, then look again */
		futex_enter(C + w, STATE(c), state[c], s);
		if
		:: !fw[C + w] -> skip
		:: PUBLISH_TIMEOUT -> fw[C + w] = 0 /* 50 us */
		fi
#endif
	   :: s != KICKING || MUT_HOLD_OFF ->
		atomic {
			if
			:: state[c] == s -> state[c] = DONE; holding[c]--; pub[c] = 0; done = 1
			:: else -> skip
			fi
		};
		if
		:: done -> break
		:: else -> skip
		fi
	   fi
	od;
	/* FUTEX_WAKE if the caller may sleep; KICKED: rto_signal_take_kick() (sigtimedwait, zero timeout) */
	atomic {
		if
		:: s != PENDING -> futex_wake(STATE(c))
		:: else -> skip
		fi;
#ifndef MUT_NO_TAKE_KICK
		if
		:: s == KICKED -> sig[w] = 0; sig_for[w] = 0
		:: else -> skip
		fi;
#endif
#ifdef MUT_REQ_CLEAR_LATE
		running[w] = 0;
#endif
		s = 0; g = 0; id = 0; done = 0; c = 0
	};
	goto top;

	/*
	 * idle(): only the first idle worker polls (q->pollers); any may here.
	 * helper_wake=idle: it polls (poll_for_work); helper_idle_us=0 or not
	 * the poller, or its last call's caller waits on its CPU (RTO_RQ_HERE):
	 * it sleeps at once.  helper_wake=predict: wait_predicted()
	 * naps, then polls: nap() is this same sleep, timed, then the poll
	 * (README: the sleep below followed by take() and the poll).  nap()
	 * sleeps in steps (helper_nap_us), each a timed FUTEX_WAIT on the
	 * same seq until wake_seq moved: one wait whose timer is re-armed,
	 * which the model, without a clock, does not tell apart.
	 */
poll:
#ifdef LEAVE
	/* idle()'s first look: the workers are to end (alone.c) */
	if
	:: atomic { leave -> alive[w] = 0 }; goto end_gone
	:: else -> skip
	fi;
#endif
	/*
	 * poll_until(): head.next or q->pending; a slot's post, claimed here
	 * (rto_helper_claimed); else, at the deadline, the sleep (whose re-check
	 * is has_work()).  A poll that saw nothing is the sleep at once.
	 */
	atomic {
		c = 0;
		if
		:: inq[0] || inq[1] -> done = 1; i = NONE
		:: else -> slot_scan(0); done = 0
		fi
	};
	if
	:: done -> done = 0; i = 0; goto top
	:: i != NONE ->
		atomic {
			slot_claim(claimed);
			done = (claimed != NONE)
		};
		if
		:: done -> done = 0; goto top
		:: else -> goto poll
		fi
	:: else -> i = 0
	fi;
	/* idle(): the sleep, untimed (timed for worker 0's lifetime watch and async retries) */
	SLEEP_PREPARE;
	if
	:: nowork ->
		SLEEP_SEQ
		atomic { futex_enter(C + w, WSEQ, bumped[w], 0); bumped[w] = 0; window[w] = 0 };
end_sleep:	if
		:: atomic { !fw[C + w] -> awake++; sleepers--; nowork = 0 }
		:: atomic { WORKER_TIMEOUT -> fw[C + w] = 0; awake++; sleepers--; nowork = 0 }
#ifdef GROW
		/*
		 * An extra worker's idle wait (2 s) ran out unwoken: sleepers--
		 * (a full barrier), then the last look; no work: it goes, still
		 * counted not awake.  Its timer may run out at any time, but
		 * never while a request waits: no caller may depend on a
		 * worker's long wait (a request posted right after it ran out
		 * is the race the last look is for).
		 */
		:: atomic { w >= WORKERS && !HAS_WORK -> fw[C + w] = 0; sleepers-- };
			atomic {
				if
#ifndef MUT_EXIT_NO_RECHECK
				:: !HAS_WORK -> alive[w] = 0; goto end_gone
				:: else -> sleepers++
#else
				:: alive[w] = 0; goto end_gone
#endif
				fi
			};
			atomic { awake++; sleepers--; nowork = 0 }
#endif
		fi
	:: else ->
		atomic { bumped[w] = 0; window[w] = 0; awake++; sleepers--; nowork = 0 }
	fi;
	goto top;
end_gone:
	skip
}

#ifdef GROW
/*
 * stall.c's watchdog: calls wait (a caller noted its call past stall_us)
 * and every worker alive has been inside a call for longer than that:
 * rto_helpers_grow() starts one more, in a free row.  stall_us is long
 * against the work: it fires only when nothing else can move.
 */
proctype watchdog()
{
end_watch:
	do
	:: atomic { timeout && HAS_WORK && !alive[1] && running[0] != 0 -> alive[1] = 1; run worker(1) }
	od
}
#endif

#ifdef LEAVE
/*
 * alone.c, once the program's only thread is in its unshare(): no caller
 * has a request left.  leave, then wake_seq moved and every sleeper woken;
 * each worker must end (an invalid end state here if one sleeps on).
 */
proctype leaver()
{
	(ret[0] && ret[1]);
	atomic { leave = 1 };
	atomic { bumped[0] = window[0]; bumped[1] = window[1] }; /* wake_seq++ */
	futex_wake(WSEQ);
	futex_wake(WSEQ); /* FUTEX_WAKE(INT32_MAX): one each */
	(!alive[0] && !alive[1])
}
#endif

init
{
	atomic {
#ifndef NO_SIGNALS
		sigbudget[0] = 1;
#endif
#ifndef NO_CANCEL
		cancelbudget[1] = 1;
#endif
#ifdef TAKEBACK
		stallbudget[0] = 1; /* by its slot: the take-back's route */
#endif
		alive[0] = 1;
		run caller(0);
		run caller(1);
		run worker(0);
#ifdef GROW
		run watchdog()
#else
		alive[1] = 1;
		run worker(1)
#endif
#ifdef LEAVE
		;
		run leaver()
#endif
	}
}
