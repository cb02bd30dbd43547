#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Which compilation units of the library lie on call cycles.

  call_cycles.py OBJDIR... [--max N] [--external S ...] [--layers LIBSRC]

Reads the library's object files under each OBJDIR (nm), draws an edge from a unit to every
unit that defines a symbol it uses, and prints the strongly connected
components of more than one unit.  --external S: the unit's use of S binds elsewhere at run time (under
ThreadSanitizer rto_mutex_lock() calls pthread_mutex_lock through the PLT,
where TSan's interceptor comes first: not our wrapper of that name).  Exits
1 when more than N units lie on cycles.

--layers LIBSRC: the folders' layering too.  Each folder of LIBSRC with a
README is a subsystem: its units are its *.c files and the generated ones
its "Generated:" line names; its "May call:" line names the folders its
units may call ("-": none), and each "Except: A -> B" line one call of
unit A to unit B outside them, kept for a reason said beside it.  Exits 1
when a unit is in no folder, when folders allow each other in a circle,
or when a unit calls into a folder its own does not allow: a lower folder
never calls a higher one.  A call of a static inline function leaves no
symbol for nm: those are found in the sources, each .c and .h file of a
folder against the inline functions of the other folders' headers.
"""
import argparse, collections, os, re, subprocess, sys


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


def layers(libsrc):
    folder, may, excepts = {}, {}, set()
    for f in sorted(os.listdir(libsrc)):
        readme = os.path.join(libsrc, f, "README")
        if not os.path.isfile(readme):
            continue
        may[f] = set()
        for name in os.listdir(os.path.join(libsrc, f)):
            if name.endswith(".c"):
                folder[name[:-2]] = f
        with open(readme) as r:
            for line in r:
                key, _, val = line.partition(":")
                if key == "May call":
                    may[f] = set(val.split()) - {"-"}
                elif key == "Generated":
                    folder.update((u, f) for u in val.split())
                elif key == "Except":
                    a, _, b = val.partition("->")
                    excepts.add((a.strip(), b.strip()))
    return folder, may, excepts


def layer_order(may):
    """The folders lowest first, or None when some allow each other in a circle."""
    order, state = [], {}

    def visit(f):
        if state.get(f) == 1:
            return False
        if state.get(f) == 2:
            return True
        state[f] = 1
        if not all(visit(g) for g in sorted(may[f])):
            return False
        state[f] = 2
        order.append(f)
        return True

    return order if all(visit(f) for f in sorted(may)) else None


def check_layers(libsrc, info, owner):
    folder, may, excepts = layers(libsrc)
    bad = []
    for f, ok in sorted(may.items()):
        bad += [f"{f}/README: May call {g}: no such folder" for g in sorted(ok - set(may))]
    bad += [f"unit {u}: in no folder of {libsrc} (a new file: give it one; an object left "
            f"by a renamed file: build afresh)" for u in sorted(info) if u not in folder]
    if bad:
        return bad
    order = layer_order(may)
    if order is None:
        return ["the folders' May call lines go round in a circle"]
    print("layers, lowest first: " + " < ".join(order))
    used = set()
    for u, (_, syms) in sorted(info.items()):
        up = collections.defaultdict(list)
        for s in syms:
            v = owner.get(s)
            if not v or folder[v] == folder[u] or folder[v] in may[folder[u]]:
                continue
            if (u, v) in excepts:
                used.add((u, v))
                continue
            up[v].append(s)
        bad += [f"{folder[u]}/{u} calls {folder[v]}/{v} ({' '.join(sorted(s))}): "
                f"{folder[u]}/README does not allow {folder[v]}" for v, s in sorted(up.items())]
    bad += inline_calls(libsrc, may)
    for a, b in sorted(excepts - used):
        print(f"  note: Except: {a} -> {b}: no such call now (the line can go)")
    return bad


def code_of(path):
    """The C text of path without its comments and string literals."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    return re.sub(r'"(\\.|[^"\\\n])*"', '""', text)


def inline_calls(libsrc, may):
    """Calls of another folder's static inline functions that its May call does not allow."""
    files = {f: sorted(os.path.join(libsrc, f, n) for n in os.listdir(os.path.join(libsrc, f))
                       if n.endswith((".c", ".h"))) for f in may}
    inline = {}  # name -> (folder, header)
    attr = re.compile(r"__attribute__\s*\(\((?:[^()]|\([^()]*\))*\)\)")
    for f, paths in files.items():
        for p in paths:
            if p.endswith(".h"):
                code = attr.sub(" ", code_of(p))
                for name in re.findall(r"static\s+inline\b[^;{(]*?\b(\w+)\s*\(", code):
                    inline[name] = (f, os.path.basename(p))
    if not inline:
        return []
    call = re.compile(r"\b(" + "|".join(sorted(inline)) + r")\s*\(")
    bad = []
    for f, paths in files.items():
        for p in paths:
            up = sorted({n for n in call.findall(code_of(p))
                         if inline[n][0] != f and inline[n][0] not in may[f]})
            bad += [f"{f}/{os.path.basename(p)} calls {inline[n][0]}/{inline[n][1]}'s inline "
                    f"{n}(): {f}/README does not allow {inline[n][0]}" for n in up]
    return bad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("objdir", nargs="+")
    ap.add_argument("--max", type=int, default=None)
    ap.add_argument("--external", action="append", default=[],
                    help="a symbol that binds outside the library at run time")
    ap.add_argument("--layers", metavar="LIBSRC",
                    help="check the folders' layering (their README files)")
    a = ap.parse_args()
    objs = [os.path.join(r, f) for d in a.objdir for r, _, fs in os.walk(d) for f in fs
            if f.endswith(".c.o")]
    if not objs:
        sys.exit(f"call_cycles: no objects under {' '.join(a.objdir)}")
    info = {unit(o): symbols(o) for o in objs}
    owner = {s: u for u, (d, _) in info.items() for s in d}
    graph = collections.defaultdict(set)
    for u, (_, used) in info.items():
        graph[u]
        for s in used:
            v = None if s in a.external else owner.get(s)
            if v and v != u:
                graph[u].add(v)
    cycles = [c for c in sccs(graph) if len(c) > 1]
    on_cycles = sum(len(c) for c in cycles)
    print(f"{len(info)} units, {on_cycles} on call cycles")
    for c in cycles:
        print("  cycle: " + " ".join(c))
    failed = False
    if a.max is not None and on_cycles > a.max:
        print(f"call_cycles: {on_cycles} units on cycles, at most {a.max} allowed")
        failed = True
    if a.layers:
        external = set(a.external)
        for line in check_layers(a.layers, info, {s: u for s, u in owner.items() if s not in external}):
            print("call_cycles: " + line)
            failed = True
    if failed:
        sys.exit(1)


main()
