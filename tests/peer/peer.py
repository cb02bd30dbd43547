# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The differential runner behind run.sh: real programs' own tests run
# plainly and under the library, outcome against outcome, test by test.
# Only Debian's /usr/bin/python3 runs this (the standard library, nothing
# else); run.sh has the usage.
#
# A program's own tests judge themselves: stress-ng's stressors by their
# exit status, their failure and skip lines and whether they did any work
# at all (bogo ops > 0; never throughput, which the library may change
# and which a loaded machine changes more), CPython's regression tests by
# regrtest's JUnit XML (one outcome per test case) and its line per test
# file (a file whose worker crashed or timed out leaves no test cases),
# the installed test programs of GLib, D-Bus and PipeWire by their TAP
# lines and their exit status, systemd's unit tests by their exit status.
# The library must not change any of those.  A difference is rerun plainly
# once: a test whose plain outcome changes is flaky without the library.
# expected.tsv explains the others that are inherent; anything else is a
# difference nobody explained, and the runner fails.

import argparse
import fnmatch
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))

# Each mode is what the program's environment gets on top of the clean
# one; "plain" is the reference every other mode is compared with.
MODES = {
    "plain": None,
    "preload": "",  # LD_PRELOAD, no RTOFFLOAD_OPTIONS: nothing is marked
    "mark-all": "mark=all",
    "mark-all-pool": "mark=all:malloc=pool",
    # every descriptor's calls offloaded, pipes', sockets' and ttys' too
    "mark-all-fds": "mark=all:fd_local=none",
    # the stdio writes of every thread queued (docs/async.md): their order
    # against unmarked writers, flushes and exit
    "mark-all-async": "mark=all:policy=stdio:async",
}
# Modes run only when --modes names them: async changes by contract what
# another reader sees after a marked thread's fflush (README.md here).
OPT_IN = {"mark-all-async"}

# stress-ng stressors that touch the process model: processes and threads
# made and ended, exec, signals and their stacks, tracing, other address
# spaces, mappings and the allocator, per-thread attributes (prctl,
# landlock, capabilities, scheduling) and the program's own use of
# Syscall User Dispatch and seccomp (usersyscall, prctl, seccomp).
# 0.15.06 has no "sigaltstack" stressor: bad-altstack and signest set
# alternate stacks.
STRESS_PROCESS = """
clone fork vfork vforkmany exec spawn wait zombie exit-group pidfd
vm-rw vm-segv bad-altstack signest ptrace context
sigabrt sigchld sigfd sigfpe sigio signal sigpending sigpipe sigq sigrt
sigsegv sigsuspend sigtrap kill
pthread mmap mmapfork mmapfixed malloc prctl landlock cap ioprio
schedpolicy unshare seccomp usersyscall
""".split()

# The classes --full adds to STRESS_PROCESS, whole.
STRESS_CLASSES = ["filesystem", "memory", "network", "scheduler", "interrupt", "io", "os"]

# Left out of --full: the "resources" stressor (memory class) exhausts what
# the machine has, the disk included: every other process on it gets
# ENOSPC while it runs (CPython's tests beside it did).  The others act on
# the machine rather than the process: they take CPUs or memory offline,
# swap, arm the watchdog, hold realtime CPUs until the soft-lockup
# detector fires, try reboot(2), or issue ioctls to every device and PCI
# function; a plain run of them would harm the machine as much.
STRESS_EXCLUDE = {"resources", "cpu-online", "memhotplug", "swap", "watchdog",
                  "softlockup", "reboot", "dev", "bad-ioctl", "pci", "rawdev",
                  "loop", "plugin"}

# CPython's test files closest to the process model: processes, signals,
# threads, descriptors, files, terminals, sockets on loopback.
CPYTHON_PROCESS = """
test_os test_subprocess test_signal test_faulthandler test_threading
test_thread test_threadsignals test_queue test_mmap test_fcntl test_posix
test_shutil test_tempfile test_io test_fileio test_select test_selectors
test_socket test_logging test_pty test_resource test_multiprocessing_fork
test_concurrent_futures test_wait3 test_wait4 test_fork1 test_popen
test_epoll test_poll test_file test_pathlib test_glob test_stat test_pipes
test_sched test_time test_sysconfig test_sys test_gc
""".split()

# Left out of every CPython run: on a virtual machine the AF_VSOCK
# tests' accept() waits for ever, plainly (test_socket then times out
# after --timeout; vsock is no loopback either).
CPYTHON_IGNORE = ["*ThreadedVSOCKSocketStreamTest*"]

# The fast subset (ctest, label "peer"): every case differential testing
# found a defect with (issue 28's, and "key" since), under the options it
# was found with, and quick stressors of the process model.  A few
# seconds each.
FAST_STRESS = ["vm-rw", "vm-segv", "prctl", "landlock", "clone", "fork",
               "vfork", "exec", "bad-altstack", "signest", "key"]
# Quick installed test programs of the process model: spawning from one
# thread and from many, descriptors and credentials passed over Unix
# sockets, a D-Bus daemon forked, thread-local data and main-loop
# contexts across threads; PipeWire's ring buffer between two threads
# and its stream's and protocol's plumbing.  About 15 s plainly.
FAST_INSTALLED = {
    "glib": ["spawn-singlethread", "spawn-multithreaded", "spawn-test", "credentials",
             "unix-fd", "unix-streams", "gdbus-server-auth", "gdbus-peer", "thread",
             "live-g-file", "contexts"],
    "dbus": ["test-fdpass", "test-dbus-daemon-fork.sh", "test-loopback", "test-sysdeps"],
    "pipewire": ["spa-stress-ringbuffer", "pw-test-stream", "pw-test-protocol-native"],
    # a user and network namespace entered (test-loopback), processes,
    # descriptors, signals and namespaces (test-process-util, test-fd-util,
    # test-signal-util, test-namespace); sd-event's signalfd with every
    # descriptor offloaded (test-event, about 10 s)
    "systemd": ["test-loopback", "test-process-util", "test-fd-util", "test-signal-util",
                "test-namespace", ("test-event", ["mark-all-fds"])],
}
FAST_CPYTHON = [
    # the child's sigaltstack() (test_stack_overflow) and the other fatal
    # signals a child reports; the *_later tests only sleep (12 s)
    ("test_faulthandler", ["--ignore", "*_later*"], ["mark-all"]),
    ("test_queue", [], ["mark-all-pool"]),
]

CLEAN_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def environment(mode, lib, tmp):
    """The same clean environment for every run, plus the mode's."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTHON", "RTOFFLOAD_", "LD_", "ASAN_",
                                "TSAN_", "UBSAN_", "LSAN_", "PYENV"))}
    env.update(PATH=CLEAN_PATH, LC_ALL="C.UTF-8", LANG="C.UTF-8", TZ="UTC",
               HOME=os.path.join(tmp, "home"), TMPDIR=tmp)
    opts = MODES[mode]
    if opts is not None:
        env["LD_PRELOAD"] = lib
        if opts:
            env["RTOFFLOAD_OPTIONS"] = opts
    return env


def run_dir(a):
    """A new directory for one run, its name as long as every other run's:
    a path built under it (GLib's abstract socket names, 108 bytes at
    most) must not fit plainly and overflow under a longer mode's name.
    With the HOME that environment() gives the run in it."""
    tmp = tempfile.mkdtemp(prefix="run-", dir=a.work)
    os.makedirs(os.path.join(tmp, "home"))
    return tmp


def run_bounded(cmd, env, cwd, timeout, logpath):
    """Runs cmd in a session of its own, output to logpath; after timeout
    seconds the whole session is killed.  Returns (status, timed_out)."""
    with open(logpath, "wb") as out:
        out.write((" ".join(cmd) + "\n").encode())
        out.flush()
        p = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=out,
                             stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                             start_new_session=True)
        try:
            return p.wait(timeout=timeout), False
        except subprocess.TimeoutExpired:
            for sig in (signal.SIGTERM, signal.SIGKILL):
                try:
                    os.killpg(p.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    p.wait(timeout=5)
                    break
                except subprocess.TimeoutExpired:
                    pass
            return p.wait(), True
        finally:
            # what a killed run may leave: its session's other processes
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass


# ---------------------------------------------------------------- stress-ng

METRIC = re.compile(r"metrc: \[\d+\] (\S+)\s+(\d+)\s+[\d.]+\s+[\d.]+")


# Stressors that refuse to run as root ("exec stressor must not run as
# root"): run as nobody.
AS_NOBODY = {"exec", "spawn"}

# A stressor that passed with a handful of bogo ops under the library
# where it did hundreds plainly did not really run (vm-segv: 1 op against
# 1,300; ptrace: 4 against 166,000).  A slower call is not that: lockofd
# does 0.6% of its plain ops, each fcntl() a round trip to a helper, and
# goes on working.
COLLAPSED_OPS, PLAIN_OPS = 10, 100

# A stressor whose bogo op takes about as long as the run (qsort, rmap,
# mmap: 1 to 5 ops in 2 s plainly) does 0 or 1 by chance: with fewer than
# this many plain ops, no work done is no different from a pass.
FEW_OPS = 10


def stress_ops(detail):
    m = re.search(r"ops=(\d+)", detail)
    return int(m.group(1)) if m else 0


def stress_outcome(name, status, timed_out, text):
    """One word for a stressor's run, and the detail behind it."""
    ops = None
    for m in METRIC.finditer(text):
        if m.group(1) == name:
            ops = int(m.group(2))
    fails = [l for l in text.splitlines() if " fail: " in l]
    early = "finished prematurely" in text
    skipped = re.search(r"skipping stress|not implemented|skipped|skipping the stressor", text) \
        or "aborted early, out of system resources" in text
    detail = f"rc={status} ops={ops}" + (f" fail-lines={len(fails)}" if fails else "") \
        + (" premature" if early else "")
    if timed_out:
        return "hang", detail
    if status < 0:
        return f"killed(SIG{signal.Signals(-status).name[3:]})", detail
    if status != 0:
        return f"fail(rc={status})", detail
    if fails:
        return "fail(log)", detail
    if early:  # "WARNING: finished prematurely": its child ended early
        return "premature", detail
    if skipped and not ops:
        return "skipped", detail
    if not ops:
        return "no-ops", detail
    return "pass", detail


def run_stressor(name, mode, a, tag=""):
    tmp = run_dir(a)
    logp = os.path.join(a.logs, f"stress-ng.{name}.{mode}{tag}.log")
    if a.replay and os.path.exists(logp):
        shutil.rmtree(tmp, ignore_errors=True)
        with open(logp, errors="replace") as f:
            text = f.read()
        timed_out = "# timed out" in text
        m = re.search(r"^# exit status (-?\d+)", text, re.M)
        if m:
            status = int(m.group(1))
        else:  # a log of before the status line: what stress-ng said
            status = 0 if "] successful run" in text else 2 \
                if "unsuccessful run" in text else -9
            timed_out = status == -9
        outcome, detail = stress_outcome(name, status, timed_out, text)
        return {name: (outcome, detail + f" log={os.path.basename(logp)}")}
    cmd = ["stress-ng", f"--{name}", "1", "-t", str(a.stress_time),
           "--temp-path", tmp, "--metrics-brief"]
    env = environment(mode, a.lib, tmp)
    if name in AS_NOBODY and os.getuid() == 0:
        # setpriv plainly, the library only in stress-ng: what is compared
        # is the stressor, not setpriv
        os.chmod(tmp, 0o777)
        cmd = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
               "/usr/bin/env"] + [f"{k}={env.pop(k)}" for k in
                                  ("LD_PRELOAD", "RTOFFLOAD_OPTIONS") if k in env] + cmd
    t0 = time.monotonic()
    status, timed_out = run_bounded(cmd, env, tmp, a.stress_time + 25, logp)
    with open(logp, "a") as f:  # for --replay
        f.write(f"# exit status {status}\n" + ("# timed out\n" if timed_out else ""))
    with open(logp, errors="replace") as f:
        text = f.read()
    outcome, detail = stress_outcome(name, status, timed_out, text)
    shutil.rmtree(tmp, ignore_errors=True)
    log(f"  stress-ng {name:14} {mode:14} {outcome:12} {detail} "
        f"({time.monotonic() - t0:.1f} s)")
    return {name: (outcome, detail + f" log={os.path.basename(logp)}")}


# ---------------------------------------------------------------- CPython

# "[ 3/40] test_x", "0:01:02 load avg: 1.2 [ 3/40/1] test_x failed (env
# changed)", "[7/9] test_y crashed (Exit code -11)", "test_z skipped -- ..."
FILE_LINE = re.compile(r"\[\s*\d+/\d+(?:/\d+)?\]\s+(test_\w+)(?:\s+(.*))?$")


def file_outcome(rest):
    rest = (rest or "").strip()
    rest = re.sub(r"\s*--.*$", "", rest)
    rest = re.sub(r"\s*\((?:\d+ hour )?(?:\d+ min)? ?(?:[\d.]+ sec)?\)", "", rest)
    rest = re.sub(r"\s*\(Exit code (-?\d+)\)", r"(\1)", rest)
    rest = re.sub(r"timed out \(.*\)", "timed out", rest)
    return rest or "passed"


def junit_cases(path):
    cases = {}
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return cases
    for tc in root.iter("testcase"):
        if not tc.get("name"):
            continue  # regrtest writes an empty <testcase/> for some files
        kinds = [c.tag for c in tc]
        if "error" in kinds:
            outcome = "error"
        elif "failure" in kinds:
            outcome = "fail"
        elif "skipped" in kinds:
            outcome = "skip"
        else:
            outcome = "pass"
        cases[tc.get("name")] = (outcome, "")
    return cases


def run_cpython(files, extra, mode, a, tag=""):
    """One regrtest run of these test files; per test case outcomes, and
    one per file ("test_x [file]")."""
    tmp = run_dir(a)
    label = files[0] if len(files) == 1 else f"{files[0]}..{files[-1]}"
    logp = os.path.join(a.logs, f"cpython.{label}.{mode}{tag}.log")
    xml = os.path.join(a.logs, f"cpython.{label}.{mode}{tag}.xml")
    # No -u: regrtest's default denies every optional resource, the
    # network among them (only loopback is used).
    cmd = ["/usr/bin/python3.11", "-m", "test", "-j", str(a.jobs),
           "--timeout", str(a.py_timeout), "--junit-xml", xml,
           "--tempdir", os.path.join(tmp, "regrtest")] + extra + files
    for pattern in CPYTHON_IGNORE:
        cmd[-len(files):-len(files)] = ["--ignore", pattern]
    t0 = time.monotonic()
    budget = a.py_timeout * (len(files) + 2) + 60
    status, timed_out = run_bounded(cmd, environment(mode, a.lib, tmp), tmp,
                                    budget, logp)
    results = junit_cases(xml)
    seen = set()
    with open(logp, errors="replace") as f:
        for line in f:
            m = FILE_LINE.search(line.rstrip())
            if m and m.group(1) in files:
                seen.add(m.group(1))
                results[f"{m.group(1)} [file]"] = (file_outcome(m.group(2)), "")
    for t in files:
        if t not in seen:
            results[f"{t} [file]"] = ("hang" if timed_out else "no-result",
                                      f"rc={status}")
    shutil.rmtree(tmp, ignore_errors=True)
    bad = sum(1 for k, v in results.items() if v[0] not in ("pass", "skip", "passed"))
    log(f"  cpython {label:24} {mode:14} rc={status}{' TIMEOUT' if timed_out else ''} "
        f"{len(results)} results, {bad} not passed ({time.monotonic() - t0:.0f} s)")
    return results


def case_file(key):
    """The test file of a CPython result key."""
    if key.endswith(" [file]"):
        return key[:-7]
    return key.split(".")[1]


# ---------------------------------------------------------------- installed tests

# Test suites that Debian installs the GNOME way ("installed tests"): a
# .test file a test program, its Exec= line the command.  Most print TAP
# (a line a test case); every program's exit status is its own outcome.
# systemd's unit tests are the executables test-* of their directory, run
# without arguments as its run-unit-tests.py runs them (as root: they
# make namespaces, cgroups and mounts of their own); their outcome is the
# exit status (77: skipped).
INSTALLED = {
    # suite: (directory, the Debian package that installs it)
    "glib": ("/usr/share/installed-tests/glib", "libglib2.0-tests"),
    "dbus": ("/usr/share/installed-tests/dbus", "dbus-tests"),
    "pipewire": ("/usr/share/installed-tests/pipewire-0.3", "pipewire-tests"),
    "systemd": ("/usr/lib/systemd/tests", "systemd-tests"),
}
# Programs not run, and why.
INSTALLED_EXCLUDE = {
    # It passed on its first run on this machine and failed (SIGABRT, a
    # service's mount namespace not set up) on each later one, plainly
    # as under the library: its outcome says what the machine holds.
    "systemd": {"test-execute"},
}

# "ok 3 /gio/file/copy", "not ok 7 /thread/x # TODO", "ok 2 # SKIP why"
TAP_LINE = re.compile(r"^(not ok|ok)\s+\d+\s*(?:-\s*)?(.*?)(?:\s+#\s*(SKIP|TODO)\b.*)?$",
                      re.I)


def by_exec_line(suite):
    """1: the suite's programs are .test files (the GNOME way)."""
    return suite != "systemd"


def every_program(suite):
    """The suite's test programs: their .test files' paths less ".test",
    or the executables test-* of its directory."""
    top = INSTALLED[suite][0]
    names = []
    if by_exec_line(suite):
        for d, _, files in os.walk(top):
            names += [os.path.relpath(os.path.join(d, f), top)[:-5]
                      for f in files if f.endswith(".test")]
    else:
        names = [f for f in os.listdir(top) if f.startswith("test-")
                 and os.path.isfile(os.path.join(top, f))
                 and os.access(os.path.join(top, f), os.X_OK)]
    return sorted(n for n in names if n not in INSTALLED_EXCLUDE.get(suite, ()))


def has_program(suite, name):
    top = INSTALLED[suite][0]
    return os.path.exists(os.path.join(top, name + ".test")) if by_exec_line(suite) \
        else os.access(os.path.join(top, name), os.X_OK)


def program_command(suite, name):
    """The program and its arguments, from its .test file's Exec= line."""
    if not by_exec_line(suite):
        return [os.path.join(INSTALLED[suite][0], name)]
    with open(os.path.join(INSTALLED[suite][0], name + ".test")) as f:
        for line in f:
            if line.startswith("Exec="):
                return shlex.split(line[5:].strip())
    sys.exit(f"run.sh: {suite}'s {name}.test has no Exec= line")


# The library's own line on stderr ("==PID==rtoffload: ..."), which may
# land inside a line the program writes in pieces to the same file.
OWN_LINE = re.compile(r"==\d+==rtoffload: .*")


def tap_cases(name, text):
    """{"name /test/path": (outcome, "")}: pass, fail, skip or todo.  A
    number of six digits or more in a case's name (GLib's random tests'
    seeds: "/queue/random/seed:80654855") is "N"; names that are then
    the same are told apart by their order."""
    cases = {}
    for line in text.splitlines():
        m = TAP_LINE.match(OWN_LINE.sub("", line).strip())
        if not m:
            continue
        key = f"{name} " + re.sub(r"\d{6,}", "N", m.group(2).strip() or "?")
        if m.group(3):
            outcome = m.group(3).lower()
        else:
            outcome = "pass" if m.group(1).lower() == "ok" else "fail"
        n, base = 1, key
        while key in cases:  # a name printed twice (unnamed, or a Python test's)
            n += 1
            key = f"{base} #{n}"
        cases[key] = (outcome, "")
    return cases


def run_program(suite, name, mode, a, tag=""):
    """One installed test program: its TAP cases, and its own outcome
    ("name [file]")."""
    tmp = run_dir(a)
    logp = os.path.join(a.logs, f"{suite}.{name.replace('/', '_')}.{mode}{tag}.log")
    t0 = time.monotonic()
    status, timed_out = run_bounded(program_command(suite, name),
                                    environment(mode, a.lib, tmp), tmp,
                                    a.program_timeout, logp)
    with open(logp, errors="replace") as f:
        results = tap_cases(name, f.read())
    if timed_out:
        outcome = "hang"
    elif status < 0:
        outcome = f"killed(SIG{signal.Signals(-status).name[3:]})"
    else:
        outcome = "passed" if status == 0 else f"rc={status}"
    results[f"{name} [file]"] = (outcome, "")
    shutil.rmtree(tmp, ignore_errors=True)
    bad = sum(1 for v in results.values() if v[0] not in ("pass", "skip", "passed"))
    log(f"  {suite} {name:28} {mode:14} {outcome:14} {len(results)} results, "
        f"{bad} not passed ({time.monotonic() - t0:.1f} s)")
    return results


# ---------------------------------------------------------------- expected

def load_expected(path):
    rows = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if not line.strip() or line.startswith("#"):
                continue
            cols = line.rstrip("\n").split("\t")
            if len(cols) != 5 or cols[3] not in ("inherent", "cost", "flaky", "pending"):
                sys.exit(f"{path}:{n}: want suite, case, mode, "
                         f"inherent|cost|flaky|pending, explanation (tab-separated)")
            rows.append(dict(suite=cols[0], case=cols[1], mode=cols[2],
                             kind=cols[3], why=cols[4], used=0))
    return rows


def explain(rows, suite, case, mode):
    for r in rows:
        # exactly, or as a glob ("test_x [file]" is no character class)
        if r["suite"] == suite and (case == r["case"] or fnmatch.fnmatchcase(case, r["case"])) \
                and fnmatch.fnmatchcase(mode, r["mode"]):
            r["used"] += 1
            return r
    return None


# ---------------------------------------------------------------- main

def plan(a):
    """[(suite, unit, extra args, modes)]; unit is a stressor or a list of
    CPython test files run together."""
    units = []
    lib_modes = [m for m in a.modes if m != "plain"]
    if a.only in (None, "stress-ng"):
        if a.stressors:
            names = a.stressors
        elif a.full:
            names = list(STRESS_PROCESS)
            for cls in STRESS_CLASSES:
                r = subprocess.run(["stress-ng", "--class", cls + "?"],
                                   capture_output=True, text=True)
                out = r.stdout + r.stderr  # the list is on one or the other
                m = re.search(r"stressors: (.*)", out)
                names += [n for n in m.group(1).split()
                          if n not in names and n not in STRESS_EXCLUDE]
        else:
            names = FAST_STRESS
        for n in names:
            units.append(("stress-ng", n, [], lib_modes if (a.full or a.stressors or a.modes_given)
                          else ["mark-all"]))
    for suite in INSTALLED:
        if a.only not in (None, suite):
            continue
        if a.programs:
            names = every_program(suite) if a.programs == ["all"] else a.programs
        else:
            names = every_program(suite) if a.full else FAST_INSTALLED[suite]
        for n in names:
            n, modes = n if isinstance(n, tuple) else (n, ["mark-all"])
            units.append((suite, n, [], lib_modes if (a.full or a.programs or a.modes_given)
                          else modes))
    if a.only in (None, "cpython"):
        if a.cpython_tests:
            files = a.cpython_tests
            if files == ["process"]:
                files = CPYTHON_PROCESS
            elif files == ["all"]:
                files = []  # regrtest's own list: every test file
            # a few test files a regrtest run: -j has work, --deadline a grain
            for i in range(0, max(len(files), 1), a.chunk):
                units.append(("cpython", files[i:i + a.chunk], [], lib_modes))
        elif a.full:
            units.append(("cpython", [], [], lib_modes))  # chunked when run
        else:
            for f, extra, modes in FAST_CPYTHON:
                units.append(("cpython", [f], extra,
                              lib_modes if a.modes_given else modes))
    return units


def every_cpython_file():
    out = subprocess.run(["/usr/bin/python3.11", "-m", "test", "--list-tests"],
                         capture_output=True, text=True,
                         env={"PATH": CLEAN_PATH, "LC_ALL": "C.UTF-8"}).stdout
    return [l.strip() for l in out.splitlines() if l.strip().startswith("test_")]


def main():
    p = argparse.ArgumentParser(prog="run.sh")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--fast", action="store_true")
    g.add_argument("--full", action="store_true")
    p.add_argument("--only", choices=["stress-ng", "cpython"] + list(INSTALLED))
    p.add_argument("--lib", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--modes", help="comma-separated, of " + ",".join(MODES))
    p.add_argument("--stressors", help="comma-separated stress-ng stressors")
    p.add_argument("--cpython-tests", help="comma-separated test files, "
                   "'process' (the process-model selection) or 'all'")
    p.add_argument("--programs", help="with --only " + "|".join(INSTALLED) +
                   ": comma-separated test programs (their .test files' "
                   "names, systemd's test-* executables) or 'all'")
    p.add_argument("--stress-time", type=int)
    p.add_argument("--py-timeout", type=int)
    p.add_argument("--program-timeout", type=int, default=180,
                   help="seconds an installed test program may run")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--chunk", type=int, default=6,
                   help="CPython test files per regrtest run")
    p.add_argument("--deadline", type=int, default=10 ** 9,
                   help="seconds after which no further unit starts")
    p.add_argument("--replay", action="store_true",
                   help="stress-ng: judge the logs already in --out/logs "
                   "again instead of running (a run missing there runs)")
    p.add_argument("--expected", default=os.path.join(HERE, "expected.tsv"))
    a = p.parse_args()

    # A program's tests expect SIGINT and SIGQUIT at their defaults; a
    # runner started in the background by a shell has them ignored, and
    # exec passes that on (test_signal's KeyboardInterrupt tests).
    for sig in (signal.SIGINT, signal.SIGQUIT):
        signal.signal(sig, signal.SIG_DFL)
    a.lib = os.path.realpath(a.lib)
    if not os.path.isfile(a.lib):
        sys.exit(f"run.sh: no library at {a.lib}")
    a.modes_given = a.modes is not None
    a.modes = a.modes.split(",") if a.modes else [m for m in MODES if m not in OPT_IN]
    if "plain" not in a.modes:
        a.modes.insert(0, "plain")
    for m in a.modes:
        if m not in MODES:
            sys.exit(f"run.sh: unknown mode {m}")
    a.stressors = a.stressors.split(",") if a.stressors else None
    a.cpython_tests = a.cpython_tests.split(",") if a.cpython_tests else None
    a.programs = a.programs.split(",") if a.programs else None
    if a.stress_time is None:
        a.stress_time = 3 if a.full else 1
    if a.py_timeout is None:
        a.py_timeout = 600 if a.full else 120
    for tool in ("stress-ng", "/usr/bin/python3.11"):
        if not shutil.which(tool):
            sys.exit(f"run.sh: {tool} missing (.ci/deps installs it)")
    if not os.path.exists("/usr/lib/python3.11/test/test_queue.py"):
        sys.exit("run.sh: CPython's tests missing: libpython3.11-testsuite (.ci/deps)")
    if a.programs and a.only not in INSTALLED:
        sys.exit(f"run.sh: --programs needs --only {'|'.join(INSTALLED)}")
    for suite, (top, package) in INSTALLED.items():
        if a.only in (None, suite) and not os.path.isdir(top):
            sys.exit(f"run.sh: {suite}'s tests missing: {package} (.ci/deps)")
    for n in a.programs or []:
        if n != "all" and not has_program(a.only, n):
            sys.exit(f"run.sh: --programs: {a.only} has no test program {n}")

    os.makedirs(a.out, exist_ok=True)
    a.logs = os.path.join(a.out, "logs")
    os.makedirs(a.logs, exist_ok=True)
    a.work = tempfile.mkdtemp(prefix="rto-peer.")
    os.chmod(a.work, 0o755)
    expected = load_expected(a.expected)
    t_start = time.monotonic()
    units = plan(a)

    # (suite, case, mode, plain outcome, library outcome, verdict, note)
    rows = []
    timings = {}
    skipped = []
    try:
        for suite, unit, extra, modes in units:
            t0 = time.monotonic()
            if time.monotonic() - t_start > a.deadline:
                skipped.append(unit if isinstance(unit, str) else " ".join(unit))
                continue
            if suite == "cpython" and not unit:
                unit = every_cpython_file()
                units.extend(("cpython", unit[i:i + a.chunk], extra, modes)
                             for i in range(0, len(unit), a.chunk))
                continue
            label = unit if isinstance(unit, str) else \
                (unit[0] if len(unit) == 1 else f"{unit[0]}..{unit[-1]}")
            log(f"{suite} {label}: plain and {', '.join(modes)}")

            def run(mode, tag=""):
                if suite == "stress-ng":
                    return run_stressor(unit, mode, a, tag)
                if suite in INSTALLED:
                    return run_program(suite, unit, mode, a, tag)
                return run_cpython(unit, extra, mode, a, tag)

            try:
                compare(suite, unit, modes, run, extra, expected, rows, a)
            except OSError as e:  # the machine's, not the program's: say so
                log(f"{suite} {label}: runner error: {e}")
                rows.append((suite, label, "*", "-", "-", "differ", f"runner error: {e}"))
            timings[f"{suite} {label}"] = time.monotonic() - t0
            save_rows(a, rows)  # what a long run has so far
    finally:
        shutil.rmtree(a.work, ignore_errors=True)

    if skipped:
        log(f"--deadline: not run: {' '.join(skipped)}")
    report(a, rows, timings, expected, time.monotonic() - t_start, skipped)
    return 1 if any(r[5] == "differ" for r in rows) else 0


def compare(suite, unit, modes, run, extra, expected, rows, a):
    """Runs one unit plainly and in each mode; appends its comparisons."""
    plain = run("plain")
    reruns = {}
    for mode in modes:
        res = run(mode)
        if suite == "stress-ng":
            p_ops, m_ops = stress_ops(plain[unit][1]), stress_ops(res[unit][1])
            if plain[unit][0] == res[unit][0] == "pass" and m_ops < COLLAPSED_OPS \
                    and p_ops >= PLAIN_OPS:
                res[unit] = (f"collapsed({m_ops}/{p_ops} ops)", res[unit][1])
            pair = {plain[unit][0], res[unit][0]}
            if pair == {"pass", "no-ops"} and p_ops < FEW_OPS:
                res[unit] = (plain[unit][0], res[unit][1] + " few-ops")
        keys = sorted(set(plain) | set(res))
        differing = [k for k in keys
                     if plain.get(k, ("absent",))[0] != res.get(k, ("absent",))[0]]
        # Rerun plainly once what differs (per stressor; per CPython
        # test file, the differing cases only).
        again = {}
        if differing and suite != "cpython":
            if unit not in reruns:
                reruns[unit] = run("plain", ".rerun")
            again = reruns[unit]
        elif differing:
            need = [k for k in differing if k not in reruns]
            if need:
                todo = sorted({case_file(k) for k in need})
                reruns.update(run_cpython_rerun(
                    todo, [k for k in differing if case_file(k) in todo],
                    extra, mode, a))
            again = reruns
        for k in keys:
            p0 = plain.get(k, ("absent", ""))
            m0 = res.get(k, ("absent", ""))
            if p0[0] == m0[0]:
                rows.append((suite, k, mode, p0[0], m0[0], "same", ""))
                continue
            p1 = again.get(k, ("absent", ""))[0]
            if p1 != p0[0]:
                rows.append((suite, k, mode, p0[0], m0[0], "explained",
                             f"flaky plainly: a plain rerun gave {p1}"))
                continue
            e = explain(expected, suite, k, mode)
            if e and e["kind"] != "pending":
                rows.append((suite, k, mode, p0[0], m0[0], "explained",
                             f"{e['kind']}: {e['why']}"))
            else:
                why = f"pending: {e['why']}" if e else ""
                detail = m0[1] if suite == "stress-ng" else ""
                rows.append((suite, k, mode, p0[0], m0[0], "differ",
                             "; ".join(x for x in (why, detail) if x)))


def run_cpython_rerun(files, differing, extra, mode, a):
    """The plain rerun of differing CPython cases: only those cases
    (regrtest's --matchfile) when no file's own outcome differed, else the
    whole files (a file's outcome depends on all of its cases)."""
    if not any(k.endswith(" [file]") for k in differing):
        mf = os.path.join(a.logs, f"rerun-{mode}." + "-".join(files)[:80] + ".match")
        with open(mf, "w") as f:
            f.write("\n".join(differing) + "\n")
        r = run_cpython(files, extra + ["--matchfile", mf], "plain", a,
                        f".rerun-{mode}")
        # a file's outcome from a part of it says nothing
        return {k: v for k, v in r.items() if not k.endswith(" [file]")}
    return run_cpython(files, extra, "plain", a, f".rerun-{mode}")


def save_rows(a, rows):
    with open(os.path.join(a.out, "results.tsv"), "w") as f:
        f.write("suite\tcase\tmode\tplain\tlibrary\tverdict\tnote\n")
        for r in rows:
            f.write("\t".join(r) + "\n")


def report(a, rows, timings, expected, total, skipped):
    save_rows(a, rows)
    md = []
    md.append("| suite | mode | tests | same | differ | explained |")
    md.append("|---|---|---:|---:|---:|---:|")
    groups = {}
    for r in rows:
        g = groups.setdefault((r[0], r[2]), [0, 0, 0, 0])
        g[0] += 1
        g[{"same": 1, "differ": 2, "explained": 3}[r[5]]] += 1
    for (suite, mode), (n, same, differ, expl) in sorted(groups.items()):
        md.append(f"| {suite} | {mode} | {n} | {same} | {differ} | {expl} |")
    diffs = [r for r in rows if r[5] != "same"]
    if diffs:
        md.append("")
        md.append("| suite | case | mode | plain | library | verdict | note |")
        md.append("|---|---|---|---|---|---|---|")
        for r in diffs:
            md.append("| " + " | ".join(x.replace("|", "/") for x in r) + " |")
    unused = [e for e in expected if not e["used"]]
    md.append("")
    md.append(f"Total {total:.0f} s: " + ", ".join(f"{k} {v:.0f} s" for k, v in timings.items()))
    if skipped:
        md.append(f"Not run (--deadline): {' '.join(skipped)}")
    text = "\n".join(md) + "\n"
    with open(os.path.join(a.out, "summary.md"), "w") as f:
        f.write(text)
    print(text)
    n_bad = sum(1 for r in rows if r[5] == "differ")
    if unused and (a.full or a.modes_given):
        log(f"expected.tsv: {len(unused)} rows matched no difference in this run")
    log(f"peer: {len(rows)} comparisons, {n_bad} unexplained differences; "
        f"results in {a.out}/results.tsv, logs in {a.logs}")


if __name__ == "__main__":
    sys.exit(main())
