#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Which compilation units of the library lie on call cycles.

  call_cycles.py OBJDIR... [--max N] [--allow A:B ...]

Reads the library's object files under each OBJDIR (nm), draws an edge from a unit to every
unit that defines a symbol it uses, and prints the strongly connected
components of more than one unit.  --allow A:B drops the edges between
units A and B (a documented hand-off, such as helper <-> transport).
--external S: the unit's use of S binds elsewhere at run time (under
ThreadSanitizer rto_mutex_lock() calls pthread_mutex_lock through the PLT,
where TSan's interceptor comes first: not our wrapper of that name).  Exits
1 when more than N units lie on cycles.
"""
import argparse, collections, os, subprocess, sys


def symbols(obj):
    out = subprocess.run(["nm", obj], capture_output=True, text=True, check=True).stdout
    defined, used = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "U":
            used.add(parts[1])
        elif len(parts) == 3 and parts[1] in "TtDdBbRrVvWw" and parts[1].isupper():
            defined.add(parts[2])
    return defined, used


def unit(obj):
    name = os.path.basename(obj)
    return name.split(".")[0]


def sccs(graph):
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]

    def visit(v):  # Tarjan; the graph is small, recursion is fine
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("objdir", nargs="+")
    ap.add_argument("--max", type=int, default=None)
    ap.add_argument("--allow", action="append", default=[])
    ap.add_argument("--external", action="append", default=[],
                    help="a symbol that binds outside the library at run time")
    a = ap.parse_args()
    objs = [os.path.join(r, f) for d in a.objdir for r, _, fs in os.walk(d) for f in fs
            if f.endswith(".c.o")]
    if not objs:
        sys.exit(f"call_cycles: no objects under {' '.join(a.objdir)}")
    info = {unit(o): symbols(o) for o in objs}
    owner = {s: u for u, (d, _) in info.items() for s in d}
    allowed = {tuple(sorted(p.split(":"))) for p in a.allow}
    graph = collections.defaultdict(set)
    for u, (_, used) in info.items():
        graph[u]
        for s in used:
            v = None if s in a.external else owner.get(s)
            if v and v != u and tuple(sorted((u, v))) not in allowed:
                graph[u].add(v)
    cycles = [c for c in sccs(graph) if len(c) > 1]
    on_cycles = sum(len(c) for c in cycles)
    print(f"{len(info)} units, {on_cycles} on call cycles")
    for c in cycles:
        print("  cycle: " + " ".join(c))
    if a.max is not None and on_cycles > a.max:
        print(f"call_cycles: {on_cycles} units on cycles, at most {a.max} allowed")
        sys.exit(1)


main()
