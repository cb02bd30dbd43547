#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Sum the stats_file JSONs (one per process) of one preloaded run and check them.

Prints one summary line.  Exit status 0 when every check holds, else 1 with
the reason on the last line.
"""
import argparse
import glob
import json
import os
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir", help="the directory of the %%p.json files")
    ap.add_argument("--min-offloaded", type=int, default=0,
                    help="totals.offloaded summed over processes must reach this")
    ap.add_argument("--require", action="append", default=[], metavar="NAME[|NAME...]",
                    help="one of these calls must have been offloaded (repeatable)")
    ap.add_argument("--files", type=int, default=None,
                    help="exactly this many JSON files (processes) must exist")
    ap.add_argument("--min-files", type=int, default=1)
    args = ap.parse_args()

    paths = sorted(glob.glob(os.path.join(args.dir, "*.json")))
    offloaded = local = denied = queued = 0
    per_call = {}
    for p in paths:
        try:
            with open(p, encoding="utf-8") as f:
                d = json.load(f)
            t = d["totals"]
            offloaded += int(t["offloaded"])
            local += int(t["local"])
            denied += int(t["denied"])
            queued += int(t.get("async", 0))
            for c in d["calls"]:
                per_call[c["name"]] = per_call.get(c["name"], 0) + int(c["offloaded"])
        except (OSError, ValueError, KeyError, TypeError) as e:
            print(f"bad stats file {os.path.basename(p)}: {e}")
            return 1

    used = sorted((n for n, v in per_call.items() if v > 0), key=lambda n: (-per_call[n], n))
    chk = sorted(n for n in used if n.startswith("__"))
    top = " ".join(f"{n}={per_call[n]}" for n in used[:12])
    print(f"processes={len(paths)} offloaded={offloaded} local={local} denied={denied}"
          + (f" queued={queued}" if queued else "")
          + (f" fortified={','.join(chk)}" if chk else "") + (f" top: {top}" if top else ""))

    if args.files is not None and len(paths) != args.files:
        print(f"{len(paths)} stats files, expected {args.files}")
        return 1
    if args.files is None and len(paths) < args.min_files:
        print(f"{len(paths)} stats files, expected at least {args.min_files}: library not loaded?")
        return 1
    if offloaded < args.min_offloaded:
        print(f"only {offloaded} calls offloaded, expected at least {args.min_offloaded}")
        return 1
    for req in args.require:
        alts = req.split("|")
        if not any(per_call.get(a, 0) > 0 for a in alts):
            print(f"no offloaded call among {req}")
            return 1
    if denied:
        print(f"{denied} calls denied under mode=offload")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
