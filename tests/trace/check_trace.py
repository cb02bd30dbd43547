#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Check a trace_file= trace (Chrome trace-event JSON) for test_trace.c.

Usage: check_trace.py TRACE [--stats STATS_JSON] [--writes N] [--loop NAME] [--drops]
                      [--min-stalls N] [--min-pool N] [--parse-only]

The file must parse as JSON as written (no repair), every slice ("X") must
have its duration, every begin ("B") its end on its thread, every flow
start ("s") its finish ("f") and the other way round, the process and
each track must be named, and nothing may have been dropped.  The counts
must match: the loop thread's "write" slices (offloads), the helpers'
"write" slices and the flows all equal the statistics' offloaded writes
(or --writes N), and the loop's "clock_nanosleep" instants (local
decisions) equal the statistics' local ones.  Prints what it counted;
exits 1 saying what is wrong.

With --stats, the other events must match the statistics too: the
caller's pool_full instants their threads' pool_fallbacks and
pool_failures; its stall instants (noted for the watchdog) and
taken_back slices (on_stall=local) the calls that waited over stall_us; the watchdog's
stall_verdict instants its unclaimed and running verdicts; the
taken_back slices and fallback instants the calls' fallback count.  The
loop's offloaded writes carry their descriptor (args.fd, one for all),
and the helpers' predicted polling windows are slices, each caught or
not.  --min-stalls N and --min-pool N say how many of those the run must
have made at least (the test's own scenario, not a timing): fewer, and
it exits 2 (the scenario did not happen), not 1 (the trace is wrong).
"""
import argparse
import collections
import json
import sys


def fail(msg, code=1):
    print("check_trace: " + msg)
    sys.exit(code)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--stats")
    ap.add_argument("--writes", type=int)
    ap.add_argument("--loop", default="control_loop")
    ap.add_argument("--drops", action="store_true",
                    help="a ring too small: events dropped, counted, the file whole")
    ap.add_argument("--min-stalls", type=int, default=0)
    ap.add_argument("--min-pool", type=int, default=0)
    ap.add_argument("--skip-stalls", action="store_true",
                    help="a forked child: its statistics keep its parent's stall counts")
    ap.add_argument("--parse-only", action="store_true",
                    help="only whole: parses, the process named, nothing dropped")
    a = ap.parse_args()

    try:
        with open(a.trace) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        fail("%s does not parse: %s" % (a.trace, e))
    evs = doc.get("traceEvents")
    if not isinstance(evs, list) or not evs:
        fail("no traceEvents")
    dropped = int(doc.get("otherData", {}).get("dropped", "-1"))
    if a.drops and dropped <= 0:
        fail("dropped=%d: the small ring dropped nothing" % dropped)
    if not a.drops and dropped != 0:
        fail("dropped=%d (the otherData of a complete trace says 0)" % dropped)

    names = {}
    process = None
    for e in evs:
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            names[e["tid"]] = e["args"]["name"]
        if e.get("ph") == "M" and e.get("name") == "process_name":
            process = e["args"]["name"]
    if not process:
        fail("no process_name")
    if a.parse_only:
        print("events=%d tracks=%d (parsed only)" % (len(evs), len(names)))
        return
    loop = [t for t, n in names.items() if n == a.loop]
    helpers = [t for t, n in names.items() if n.startswith("rtoffload/")]
    if len(loop) != 1 or not helpers:
        fail("tracks: loop %s helpers %s (names %s)" % (loop, helpers, names))
    loop = loop[0]

    open_b = collections.defaultdict(list)
    flows_s, flows_f = collections.Counter(), collections.Counter()
    caller_writes = helper_writes = local_sleeps = naps = 0
    queued = collections.Counter()
    traps = collections.Counter()
    pool_full = stalls = taken_slices = fallbacks = windows = caught = 0
    verdicts = collections.Counter()
    write_fds = set()
    for e in evs:
        ph = e.get("ph")
        if ph != "M" and not isinstance(e.get("ts"), (int, float)):
            fail("an event without ts: %s" % e)
        if ph != "M" and e.get("tid") not in names:
            fail("an event on an unnamed track: %s" % e)
        if ph == "X":
            if not isinstance(e.get("dur"), (int, float)) or e["dur"] < 0:
                fail("a slice without its duration: %s" % e)
            if e["name"] == "write" and e["tid"] == loop and e["cat"] == "offload":
                caller_writes += 1
                write_fds.add(e.get("args", {}).get("fd"))
            if e["cat"] == "offload" and e["name"] == "open" and "fd" in e.get("args", {}):
                fail("an open has no descriptor yet: %s" % e)
            if e["cat"] == "taken_back":
                taken_slices += 1
            if e["name"] == "write" and e["tid"] in helpers and e["cat"] == "helper":
                helper_writes += 1
            if e["name"] == "nap" and e["tid"] in helpers and e["cat"] == "predict":
                naps += 1
            if e["name"] == "window" and e["cat"] == "predict":
                if e["tid"] not in helpers or e["args"].get("caught") not in (0, 1):
                    fail("a window not a helper's, or neither caught nor empty: %s" % e)
                windows += 1
                caught += e["args"]["caught"]
            if e["tid"] == loop and e["cat"] == "trap":
                traps[e["name"]] += 1
        elif ph == "B":
            open_b[e["tid"]].append(e)
        elif ph == "E":
            if not open_b[e["tid"]]:
                fail("an end without its begin: %s" % e)
            open_b[e["tid"]].pop()
        elif ph == "s":
            flows_s[e["id"]] += 1
        elif ph == "f":
            flows_f[e["id"]] += 1
        elif ph == "i" and e["tid"] == loop and e["cat"] == "local":
            local_sleeps += e["name"] == "clock_nanosleep"
        elif ph == "i" and e["tid"] == loop and e["cat"] == "async":
            queued[e["name"]] += 1
        elif ph == "i" and e["cat"] == "pool_full":
            pool_full += 1
        elif ph == "i" and e["cat"] == "stall":
            stalls += 1
        elif ph == "i" and e["cat"] == "stall_verdict":
            if names.get(e["tid"]) != "rtoffload-stall":
                fail("a verdict not on the watchdog's track: %s" % e)
            verdicts[e["args"]["verdict"]] += 1
        elif ph == "i" and e["cat"] == "fallback":
            fallbacks += 1
    for tid, stack in open_b.items():
        if stack:
            fail("a begin without its end on %s: %s" % (tid, stack[-1]))
    if a.drops:
        # Each side drops on its own: what is left is whole, and fewer.
        marks = sum(e["args"]["events"] for e in evs
                    if e.get("ph") == "i" and e.get("cat") == "trace")
        print("caller_writes=%d dropped=%d dropped_marks=%d stats_writes=%s"
              % (caller_writes, dropped, marks, a.writes))
        if marks != dropped:
            fail("drops not counted as written: %d marks, %d dropped" % (marks, dropped))
        return
    if flows_s != flows_f:
        fail("flows unmatched: %d starts, %d finishes, %d ids differ"
             % (sum(flows_s.values()), sum(flows_f.values()),
                len(set(flows_s.items()) ^ set(flows_f.items()))))

    want_w, want_l, want_async, want_naps, want_traps = a.writes, None, {}, None, {}
    if a.stats:
        with open(a.stats) as f:
            st = json.load(f)
        calls = {c["name"]: c for c in st["calls"]}
        want_w = calls.get("write", {}).get("offloaded", 0)
        want_l = calls.get("clock_nanosleep", {}).get("local", 0)
        want_async = {n: c["async"] for n, c in calls.items() if c.get("async")}
        want_naps = st.get("predict", {}).get("naps")
        want_traps = {s["name"]: s["trapped"] for s in st.get("syscalls", []) if s["trapped"]}
    print("events=%d tracks=%d caller_writes=%d helper_writes=%d flows=%d local_sleeps=%d "
          "stats_writes=%s stats_local_sleeps=%s"
          % (len(evs), len(names), caller_writes, helper_writes, sum(flows_s.values()),
             local_sleeps, want_w, want_l))
    if want_w is None or want_w <= 0:
        fail("nothing to compare with")
    if caller_writes != want_w or helper_writes != want_w:
        fail("write slices: caller %d helper %d, statistics %d"
             % (caller_writes, helper_writes, want_w))
    if sum(flows_s.values()) < want_w:
        fail("fewer flows (%d) than offloads (%d)" % (sum(flows_s.values()), want_w))
    if want_l is not None and local_sleeps != want_l:
        fail("clock_nanosleep instants %d, statistics' local %d" % (local_sleeps, want_l))
    print("async=%s stats_async=%s naps=%d stats_naps=%s"
          % (dict(queued), want_async, naps, want_naps))
    print("traps=%s stats_traps=%s" % (dict(traps), want_traps))
    if a.stats and dict(traps) != want_traps:
        fail("trap slices %s, statistics' trapped %s" % (dict(traps), want_traps))
    if a.stats and dict(queued) != want_async:
        fail("async instants %s, statistics' async %s" % (dict(queued), want_async))
    if write_fds != {write_fds and next(iter(write_fds))} or not all(
            isinstance(f, int) and f >= 0 for f in write_fds):
        fail("the loop's writes' descriptors: %s (one, the same for all)" % write_fds)
    print("windows=%d caught=%d" % (windows, caught))
    if want_naps and want_naps >= 10 and not windows:
        fail("%d naps and no polling window" % want_naps)
    if caught > want_w:
        fail("%d windows caught a call, more than the %d offloads" % (caught, want_w))
    if a.stats:
        threads = st.get("threads", [])
        want_pool = sum(t.get("pool_fallbacks", 0) + t.get("pool_failures", 0) for t in threads)
        sc = st.get("stalls", {})
        want_stalls = sc.get("calls", 0) + sc.get("input", 0)
        want_fb = sum(c.get("fallback", 0) for c in st["calls"])
        print("pool_full=%d stats_pool_full=%d stalls=%d stats_stalls=%d verdicts=%s "
              "stats_stalls_detail=%s taken_back=%d fallbacks=%d stats_fallback=%d"
              % (pool_full, want_pool, stalls, want_stalls, dict(verdicts), sc,
                 taken_slices, fallbacks, want_fb))
        if pool_full != want_pool:
            fail("pool_full instants %d, statistics %d" % (pool_full, want_pool))
        if pool_full < a.min_pool:
            fail("pool_full %d: the scenario makes at least %d" % (pool_full, a.min_pool), 2)
        if a.skip_stalls:
            want_stalls = stalls + taken_slices
            sc = dict(sc, unclaimed=verdicts["unclaimed"], running=verdicts["running"])
        if stalls + taken_slices != want_stalls:
            fail("stall instants %d and taken_back slices %d, statistics' calls and input %d"
                 % (stalls, taken_slices, want_stalls))
        if stalls + taken_slices < a.min_stalls:
            fail("stalls %d: the scenario makes at least %d" % (stalls, a.min_stalls), 2)
        for v in ("unclaimed", "running"):
            if verdicts[v] != sc.get(v, 0):
                fail("%s verdicts %d, statistics %d" % (v, verdicts[v], sc.get(v, 0)))
        if taken_slices != sc.get("taken_back", 0):
            fail("taken_back slices %d, statistics %d" % (taken_slices, sc.get("taken_back", 0)))
        if taken_slices + fallbacks != want_fb:
            fail("taken_back slices %d and fallback instants %d, statistics' fallback %d"
                 % (taken_slices, fallbacks, want_fb))
    # A nap is counted when it begins and traced when it ends: the one in
    # progress at exit, and one begun after the statistics were written.
    if want_naps is not None and abs(naps - want_naps) > 2:
        fail("nap slices %d, statistics' naps %d" % (naps, want_naps))


main()
