#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The python3 case of the legacy suite: one section per invocation.

usage: workload.py files|walk|subprocess|threads|alarm|signal TREE SCRATCH

Every section prints only what is deterministic for a given TREE, so a
plain run and a run under librtoffload (mark=all) must print the same bytes.
"""
import concurrent.futures
import hashlib
import mmap
import os
import signal
import subprocess
import sys
import threading
import time


def digest(data):
    return hashlib.sha256(data).hexdigest()[:16]


def files(tree, work):
    d = os.path.join(work, "py")
    os.makedirs(d, exist_ok=True)
    for i in range(40):
        p = os.path.join(d, f"f{i:02d}.txt")
        with open(p, "w", encoding="ascii") as f:
            for j in range(i * 25):
                f.write(f"line {i} {j}\n")
        with open(p, "a", encoding="ascii") as f:
            f.write("tail\n")
            f.flush()
            os.fsync(f.fileno())
    h = hashlib.sha256()
    total = 0
    for i in range(40):
        p = os.path.join(d, f"f{i:02d}.txt")
        with open(p, "rb") as f:
            data = f.read()
            f.seek(0)
            first = f.readline()
            f.seek(-5, os.SEEK_END)
            last = f.read()
        total += len(data)
        h.update(data)
        if i % 13 == 0:
            print(i, len(data), first, last)
    print("bytes", total, h.hexdigest()[:16])

    # Descriptor-level I/O: pwrite/pread, lseek, ftruncate, fstat.
    p = os.path.join(d, "raw.bin")
    fd = os.open(p, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o640)
    for k in range(64):
        os.pwrite(fd, bytes([k]) * 512, k * 1024)
    os.ftruncate(fd, 48 * 1024)
    print("size", os.fstat(fd).st_size, "lseek", os.lseek(fd, 0, os.SEEK_END))
    print("pread", digest(os.pread(fd, 4096, 10 * 1024)))
    os.fdatasync(fd)
    os.close(fd)
    try:
        os.close(fd)
    except OSError as e:
        print("double close:", e.errno == 9)
    try:
        open(os.path.join(d, "missing", "x"), encoding="ascii")
    except FileNotFoundError as e:
        print("missing:", e.errno, e.strerror)

    # mmap a file, change it, flush it, read it back through the file.
    with open(p, "r+b") as f:
        with mmap.mmap(f.fileno(), 0) as m:
            m[0:5] = b"HELLO"
            m.flush()
    with open(p, "rb") as f:
        print("mmap", f.read(8))

    # Rename, link, symlink, unlink, mkdir/rmdir, listdir, stat.
    os.replace(os.path.join(d, "f00.txt"), os.path.join(d, "renamed.txt"))
    os.link(os.path.join(d, "f01.txt"), os.path.join(d, "hard.txt"))
    os.symlink("f02.txt", os.path.join(d, "sym.txt"))
    print("readlink", os.readlink(os.path.join(d, "sym.txt")))
    print("nlink", os.stat(os.path.join(d, "hard.txt")).st_nlink)
    os.mkdir(os.path.join(d, "sub"))
    os.rmdir(os.path.join(d, "sub"))
    os.unlink(os.path.join(d, "f03.txt"))
    print("listdir", len(os.listdir(d)), sorted(os.listdir(d))[:5])
    print("access", os.access(p, os.R_OK | os.W_OK), os.access(os.path.join(d, "nope"), os.F_OK))


def walk(tree, work):
    n = 0
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(tree):
        dirnames.sort()
        rel = os.path.relpath(dirpath, tree)
        print("dir", rel, len(dirnames), len(filenames))
        for fn in sorted(filenames):
            p = os.path.join(dirpath, fn)
            st = os.lstat(p)
            if os.path.islink(p):
                print(" link", fn, os.readlink(p))
                continue
            with open(p, "rb") as f:
                data = f.read()
            h.update(data)
            n += 1
            print(" file", fn, oct(st.st_mode), st.st_size, digest(data))
    print("walked", n, h.hexdigest()[:16])
    with os.scandir(tree) as it:
        print("scandir", sorted((e.name, e.is_dir(), e.is_symlink()) for e in it))


def subprocesses(tree, work):
    r = subprocess.run(["sort", "-r"], input=b"b\na\nc\n", capture_output=True, check=False)
    print("sort", r.returncode, r.stdout)
    r = subprocess.run(["sh", "-c", "echo out; echo err >&2; exit 3"], capture_output=True, check=False)
    print("sh", r.returncode, r.stdout, r.stderr)
    out = subprocess.check_output(["md5sum", "--", "big.dat"], cwd=tree)
    print("md5sum", out)
    p = subprocess.Popen(["cat"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    out, _ = p.communicate(b"0123456789" * 50000)
    print("cat", p.returncode, len(out), digest(out))
    with open(os.path.join(work, "redirected.txt"), "wb") as f:
        rc = subprocess.call(["ls", "-1", tree], stdout=f)
    with open(os.path.join(work, "redirected.txt"), "rb") as f:
        print("ls", rc, f.read().count(b"\n"))
    try:
        subprocess.run(["/nonexistent/program"], check=False)
    except FileNotFoundError as e:
        print("exec error:", e.errno)
    print("system", os.system("exit 5") >> 8)
    with os.popen("echo popen; echo two") as f:
        print("popen", f.read().split())


def threads(tree, work):
    d = os.path.join(work, "thr")
    os.makedirs(d, exist_ok=True)
    lock = threading.Lock()
    results = {}

    def worker(n):
        p = os.path.join(d, f"t{n}.dat")
        blob = (f"thread {n} ".encode() * 2000)
        for _ in range(20):
            with open(p, "wb") as f:
                f.write(blob)
                f.flush()
                os.fsync(f.fileno())
            with open(p, "rb") as f:
                got = f.read()
        with lock:
            results[n] = (len(got), digest(got))

    ts = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for n in sorted(results):
        print("thread", n, *results[n])

    names = []
    for dirpath, _dirs, filenames in os.walk(tree):
        names += [os.path.join(dirpath, f) for f in filenames
                  if not os.path.islink(os.path.join(dirpath, f))]
    names.sort()

    def hash_file(p):
        with open(p, "rb") as f:
            return os.path.relpath(p, tree), digest(f.read())

    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as ex:
        for rel, h in ex.map(hash_file, names):
            print("pool", rel, h)


class Alarm(Exception):
    pass


def alarm(tree, work):
    # alarm() breaks a read that would block forever: the handler raises.
    def on_alarm(signo, frame):
        raise Alarm()

    signal.signal(signal.SIGALRM, on_alarm)
    r, w = os.pipe()
    signal.alarm(1)
    try:
        os.read(r, 10)
        print("read returned")
    except Alarm:
        print("blocking read interrupted by alarm")
    signal.alarm(0)
    os.close(r)
    os.close(w)

    # The same for an open() that waits for the other end of a FIFO.
    fifo = os.path.join(work, "fifo")
    os.mkfifo(fifo)
    signal.alarm(1)
    try:
        with open(fifo, "rb"):
            print("open returned")
    except Alarm:
        print("blocking open of a FIFO interrupted by alarm")
    signal.alarm(0)
    os.unlink(fifo)


def signals(tree, work):
    # A handler that only counts, while the main thread does I/O.
    hits = []
    signal.signal(signal.SIGALRM, lambda s, f: hits.append(s))
    signal.setitimer(signal.ITIMER_REAL, 0.01, 0.01)
    p = os.path.join(work, "sig.dat")
    deadline = time.monotonic() + 5
    rounds = 0
    while len(hits) < 20 and time.monotonic() < deadline:
        with open(p, "wb") as f:
            f.write(b"x" * 65536)
        with open(p, "rb") as f:
            assert len(f.read()) == 65536
        rounds += 1
    signal.setitimer(signal.ITIMER_REAL, 0, 0)
    print("timer signals during I/O:", len(hits) >= 20, "data intact:", rounds > 0)

    # A signal sent to ourselves, and one to a child.
    got = []
    signal.signal(signal.SIGUSR1, lambda s, f: got.append(s))
    os.kill(os.getpid(), signal.SIGUSR1)
    print("SIGUSR1 handled:", got == [signal.SIGUSR1])
    p = subprocess.Popen(["sleep", "30"])
    p.send_signal(signal.SIGTERM)
    print("child", p.wait())


SECTIONS = {"files": files, "walk": walk, "subprocess": subprocesses,
            "threads": threads, "alarm": alarm, "signal": signals}

if __name__ == "__main__":
    SECTIONS[sys.argv[1]](sys.argv[2], sys.argv[3])
