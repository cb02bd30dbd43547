#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Count babeltrace2's text output of rtoffload:* events against stats_file.

Usage: check_lttng.py EVENTS_TXT STATS_JSON
"""
import collections
import json
import re
import sys

line_re = re.compile(r'rtoffload:(\w+): .*?\{ (fn|syscall) = "([^"]*)"(?:, id = (0x[0-9A-Fa-f]+))?')


def main():
    events, stats = sys.argv[1], sys.argv[2]
    count = collections.Counter()
    ids = collections.defaultdict(set)
    with open(events) as f:
        for line in f:
            m = line_re.search(line)
            if not m:
                continue
            name, fn, ident = m.group(1), m.group(3), m.group(4)
            count[(name, fn)] += 1
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
    if bad:
        print("FAIL: " + "; ".join(bad))
        sys.exit(1)


main()
