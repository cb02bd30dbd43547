#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The files one offloaded write crosses are the ones docs/ARCHITECTURE.md lists.

  path_files.py --program WRITE_PATH --doc ARCHITECTURE.md --source REPO
                --build BUILD [--valgrind VALGRIND] [--writes N] [--gap-us G]

Runs WRITE_PATH (write_path.c: a marked thread writes one byte N times to a
file) under callgrind, once with N and once with 2N writes, one profile
per thread.  A file of the library is on the path when its instructions
grow by at least one per write: on the caller (the program's thread) or
on the library's threads (the workers that serve the writes).  When a
measurement disagrees with the tables, two more are made and the majority
of the three decides (callgrind's scheduling can make a run's bursts
differ).  It does
so twice: with the writes one after the other (a burst), and with G us
between them (each write begins a burst, as a periodic loop's does).
The file written lies in BUILD; on tmpfs, where a file's calls run
locally by default, fd_local=none offloads them.

The tables of ARCHITECTURE.md's section "The path of one call" name each
file in backquotes with its side: caller, worker or both for the path of
every write; burst for a worker's file that only a write beginning a
burst crosses (it must cross with the gaps, and may without: under
valgrind, or on a busy machine, some writes come 30 us apart); between
for the workers' own work between two requests (their idle loop, once
per wake), which may or may not grow with the writes.  Exits 1 when a
file crosses on a side the tables do not give it, or a file the tables
put on a side does not cross there; 77 (a skip) when the build has no
debug information to tell the files apart.
"""
import argparse, collections, os, re, subprocess, sys, tempfile

SIDES = ("caller", "worker", "both", "burst", "between")


def listed(doc):
    """{file: side} from the section's tables."""
    text = open(doc, encoding="utf-8").read()
    m = re.search(r"^## The path of one call\n(.*?)(?=^## )", text, re.S | re.M)
    if not m:
        sys.exit(f"path_files: {doc} has no section '## The path of one call'")
    files = {}
    for side, name in re.findall(r"^\| (\w+) \| `([^`]+)` \|", m.group(1), re.M):
        if side not in SIDES:
            sys.exit(f"path_files: {doc}: side '{side}' of {name} is none of {', '.join(SIDES)}")
        was = files.get(name, side)
        if {was, side} == {"caller", "worker"}:
            side = "both"  # a row for each side, as shims.c's wrapper and its runner
        elif was != side:
            sys.exit(f"path_files: {doc}: {name} is listed as {was} and as {side}")
        files[name] = side
    if not files:
        sys.exit(f"path_files: {doc}: no table rows in 'The path of one call'")
    return files


def per_file(profile, source, build):
    """{file as the doc names it: instructions} for the library's own files."""
    out = subprocess.run(
        ["callgrind_annotate", "--auto=no", "--show-percs=no", "--threshold=100", profile],
        capture_output=True, text=True, check=True, cwd="/").stdout  # "/": whole paths
    counts = collections.Counter()
    for line in out.splitlines():
        m = re.match(r"\s*([\d,]+)\s+(/\S+?):\S", line)
        if not m:
            continue
        path = os.path.realpath(m.group(2))
        if path.startswith(build + os.sep):
            name = "build/" + os.path.relpath(path, build)
        elif path.startswith(source + os.sep):
            name = os.path.relpath(path, source)
        else:
            continue  # libc, liburcu's headers: not the library's files
        if name.startswith("libsrc/") or name.startswith("build/libsrc/"):
            counts[name] += int(m.group(1).replace(",", ""))
    return counts


def profile_run(args, n, gap_us, out_dir, env):
    prefix = os.path.join(out_dir, f"cg.{n}")
    target = os.path.join(args.build, "path_files.out")
    run = subprocess.run(
        [args.valgrind, "--tool=callgrind", "--separate-threads=yes",
         f"--callgrind-out-file={prefix}", args.program, target, str(n), str(gap_us)],
        env=env, capture_output=True, text=True)
    os.unlink(target)
    if run.returncode != 0:
        sys.stderr.write(run.stderr[-3000:])
        sys.exit(f"path_files: {args.program} under callgrind exited with {run.returncode}")
    threads = sorted(f for f in os.listdir(out_dir) if f.startswith(f"cg.{n}-"))
    if not threads:
        sys.exit("path_files: callgrind wrote no per-thread profile")
    # Thread 1 is the program's, the caller; the others are the library's.
    caller = per_file(os.path.join(out_dir, threads[0]), args.source, args.build)
    library = collections.Counter()
    for t in threads[1:]:
        library.update(per_file(os.path.join(out_dir, t), args.source, args.build))
    return caller, library


def on_tmpfs(path):
    best, fstype = "", ""
    with open("/proc/self/mounts") as mounts:
        for line in mounts:
            fields = line.split()
            mnt = fields[1]
            if (path == mnt or path.startswith(mnt.rstrip("/") + "/")) and len(mnt) >= len(best):
                best, fstype = mnt, fields[2]
    return fstype == "tmpfs"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--program", required=True)
    ap.add_argument("--doc", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--build", required=True)
    ap.add_argument("--valgrind", default="valgrind")
    ap.add_argument("--writes", type=int, default=1000)
    ap.add_argument("--gap-us", type=int, default=200)
    args = ap.parse_args()
    args.source = os.path.realpath(args.source)
    args.build = os.path.realpath(args.build)
    files = listed(args.doc)

    env = {k: v for k, v in os.environ.items() if k not in ("RTOFFLOAD_OPTIONS", "LD_PRELOAD")}
    if on_tmpfs(args.build):
        env["RTOFFLOAD_OPTIONS"] = "fd_local=none"
    bad = []
    for gap_us in (0, args.gap_us):
        status = measure(args, files, env, gap_us, bad)
        if status:
            return status
    for line in bad:
        print("path_files: " + line, file=sys.stderr)
    return 1 if bad else 0


def crossed_sets(args, env, gap_us):
    """One measurement: the files grown by a write on the caller, on the workers, and the counts."""
    n1, n2 = args.writes, 2 * args.writes
    with tempfile.TemporaryDirectory() as out_dir:
        c1, l1 = profile_run(args, n1, gap_us, out_dir, env)
        c2, l2 = profile_run(args, n2, gap_us, out_dir, env)
    if not c1:
        return None

    def grown(a, b):
        return {f for f in set(a) | set(b) if b[f] - a[f] >= n2 - n1}

    return grown(c1, c2), grown(l1, l2), (c1, c2, l1, l2)


def disagreements(files, caller, library, how):
    bad = []
    for f in sorted(caller):
        if files.get(f) not in ("caller", "both"):
            bad.append(f"{f}: crossed on the caller ({how}), listed as {files.get(f, 'nothing')}")
    for f in sorted(library):
        if files.get(f) not in ("worker", "both", "burst", "between"):
            bad.append(f"{f}: crossed on a worker ({how}), listed as {files.get(f, 'nothing')}")
    for f, side in sorted(files.items()):
        if side in ("caller", "both") and f not in caller:
            bad.append(f"{f}: listed as {side}, not crossed on the caller ({how})")
        if (side in ("worker", "both") or (side == "burst" and "apart" in how)) and f not in library:
            bad.append(f"{f}: listed as {side}, not crossed on a worker ({how})")
    return bad


def measure(args, files, env, gap_us, bad):
    """Measure with gap_us between the writes; what disagrees with files goes to bad.

    Under callgrind a thread may wait milliseconds for its turn, so a write
    meant to follow the last one at once may begin a burst (route.c's
    RTO_RQ_BURST) and take predict.c's long branch: thousands of
    instructions that one run has more of than the other.  When the first
    measurement disagrees with the tables, two more are made and each file
    goes by the majority of the three.
    """
    n1, n2 = args.writes, 2 * args.writes
    how = f"{gap_us} us apart" if gap_us else "one after the other"
    first = crossed_sets(args, env, gap_us)
    if first is None:  # ctest shows it as skipped (SKIP_RETURN_CODE)
        print("path_files: SKIP: no instruction on the caller is of the library's files: "
              "built without debug information (-g)?", file=sys.stderr)
        return 77
    runs = [first]
    if disagreements(files, first[0], first[1], how):
        runs += [crossed_sets(args, env, gap_us) for _ in range(2)]
        print(f"path_files: {how}: the first measurement disagreed; the majority of 3 decides")

    def majority(k):
        seen = collections.Counter(f for r in runs for f in r[k])
        return {f for f, n in seen.items() if 2 * n > len(runs)}

    caller, library = majority(0), majority(1)
    bad += disagreements(files, caller, library, how)
    c1, c2, l1, l2 = runs[-1][2]

    def per_write(a, b, f):
        return (b[f] - a[f]) / (n2 - n1)

    print(f"writes {how}; caller, instructions per write ({n1} and {n2} writes, the last run):")
    for f in sorted(caller, key=lambda f: -per_write(c1, c2, f)):
        print(f"  {per_write(c1, c2, f):8.1f}  {f}")
    print("the library's threads:")
    for f in sorted(library, key=lambda f: -per_write(l1, l2, f)):
        side = files.get(f)
        print(f"  {per_write(l1, l2, f):8.1f}  {f}" + (f"  ({side})" if side in ("burst", "between") else ""))
    between = {f for f, s in files.items() if s == "between"}
    print(f"{len(caller | (library - between))} files on the path measured")
    return 0


if __name__ == "__main__":
    sys.exit(main())
