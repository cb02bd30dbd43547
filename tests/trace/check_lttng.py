#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Count babeltrace2's text output of rtoffload:* events against stats_file.

Usage: check_lttng.py EVENTS_TXT STATS_JSON
       check_lttng.py --more EVENTS_TXT STATS_JSON [POOL_MIN]

Without --more: the offloads and local sleeps of trace_child's loop, and
the descriptor of its writes.  With --more (trace_child's pool and hog
run): pool_full equals the threads' pool_fallbacks and pool_failures
(at least POOL_MIN, default 1: 0 under a sanitizer, which has no pool),
stall and the offload_returns taken back equal the statistics' stalled
calls, stall_verdict's unclaimed and running equal theirs (at least one
stall), window_open pairs with window_close and helper_nap_begin with
helper_nap.
"""
import collections
import json
import re
import sys

line_re = re.compile(r'rtoffload:(\w+): .*?\{ (fn|syscall) = "([^"]*)"(?:, id = (0x[0-9A-Fa-f]+))?')


field_re = re.compile(r'(\w+) = ("[^"]*"|[-\w]+)')


def fields(line):
    """The event's name and its payload's fields (the last braces of the line)."""
    m = re.search(r'rtoffload:(\w+):', line)
    if not m:
        return None, {}
    payload = line[line.rfind("{"):]
    return m.group(1), {k: v.strip('"') for k, v in field_re.findall(payload)}


def more(events, stats, pool_min):
    count = collections.Counter()
    verdicts = collections.Counter()
    with open(events) as f:
        for line in f:
            name, fl = fields(line)
            if not name:
                continue
            count[name] += 1
            if name == "stall_verdict":
                verdicts[fl.get("verdict")] += 1
            if name == "offload_return" and fl.get("taken_back") == "1":
                count["taken_back"] += 1
    with open(stats) as f:
        st = json.load(f)
    want_pool = sum(t.get("pool_fallbacks", 0) + t.get("pool_failures", 0)
                    for t in st.get("threads", []))
    sc = st.get("stalls", {})
    want_stalls = sc.get("calls", 0) + sc.get("input", 0)
    print("lttng more: %s verdicts=%s stats_pool=%d stats_stalls=%s"
          % (dict(count), dict(verdicts), want_pool, sc))
    bad = []
    if count["pool_full"] != want_pool or want_pool < pool_min:
        bad.append("pool_full %d, statistics %d" % (count["pool_full"], want_pool))
    if count["stall"] + count["taken_back"] != want_stalls or want_stalls <= 0:
        bad.append("stall %d + taken back %d, statistics %d"
                   % (count["stall"], count["taken_back"], want_stalls))
    for v in ("unclaimed", "running"):
        if verdicts[v] != sc.get(v, 0):
            bad.append("%s verdicts %d, statistics %d" % (v, verdicts[v], sc.get(v, 0)))
    # A window or a nap still open at exit: its begin without its end.
    if not 0 <= count["window_open"] - count["window_close"] <= 1 or not count["window_close"]:
        bad.append("window_open %d, window_close %d"
                   % (count["window_open"], count["window_close"]))
    if not 0 <= count["helper_nap_begin"] - count["helper_nap"] <= 1:
        bad.append("helper_nap_begin %d, helper_nap %d"
                   % (count["helper_nap_begin"], count["helper_nap"]))
    if bad:
        print("FAIL: " + "; ".join(bad))
        sys.exit(1)


def main():
    if sys.argv[1] == "--more":
        more(sys.argv[2], sys.argv[3], int(sys.argv[4]) if len(sys.argv) > 4 else 1)
        return
    events, stats = sys.argv[1], sys.argv[2]
    count = collections.Counter()
    ids = collections.defaultdict(set)
    write_fds = set()
    with open(events) as f:
        for line in f:
            m = line_re.search(line)
            if not m:
                continue
            name, fn, ident = m.group(1), m.group(3), m.group(4)
            count[(name, fn)] += 1
            if name == "offload_request" and fn == "write":
                write_fds.add(fields(line)[1].get("fd"))
            if ident and fn == "write":
                ids[name].add(ident)
    with open(stats) as f:
        calls = {c["name"]: c for c in json.load(f)["calls"]}
    want_w = calls.get("write", {}).get("offloaded", 0)
    want_l = calls.get("clock_nanosleep", {}).get("local", 0)
    got = {k: count[(k, "write")] for k in
           ("offload_request", "offload_return", "helper_begin", "helper_end")}
    print("lttng: %s local_clock_nanosleep=%d stats_writes=%d stats_local=%d"
          % (" ".join("%s=%d" % kv for kv in got.items()),
             count[("local", "clock_nanosleep")], want_w, want_l))
    bad = []
    if want_w <= 0:
        bad.append("no offloaded write in the statistics")
    bad += ["%s %d != %d" % (k, v, want_w) for k, v in got.items() if v != want_w]
    if count[("local", "clock_nanosleep")] != want_l:
        bad.append("local clock_nanosleep %d != %d" % (count[("local", "clock_nanosleep")], want_l))
    sides = [ids[k] for k in got]
    if any(s != sides[0] for s in sides):
        bad.append("the ids of the caller's and the helper's events differ")
    if len(write_fds) != 1 or not all(f and f.isdigit() for f in write_fds):
        bad.append("the writes' descriptors %s: one, the same for all" % write_fds)
    if bad:
        print("FAIL: " + "; ".join(bad))
        sys.exit(1)


main()
