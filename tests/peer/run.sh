#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Differential testing against real programs: their own tests run plainly
# and under the library, and the outcomes compared test by test
# (README.md here: modes, cases, the last full table).
#
#   tests/peer/run.sh [--fast | --full]
#                     [--only stress-ng|cpython|glib|dbus|pipewire]
#                     [--lib PATH] [--out DIR] [more, below]
#
#   --fast       the CI subset (default; ctest -L peer): every case that
#                found a defect in issue 28, under the options it was found
#                with, and quick stressors and test programs of the process
#                model; about 65 s
#   --full       every mode; stress-ng's process-model stressors and its
#                filesystem, memory, network, scheduler, interrupt, io and
#                os classes (3 s each), CPython's whole regression suite
#                (hours on 2 CPUs), the installed tests of GLib, D-Bus and
#                PipeWire (about 40 minutes)
#   --only S     one suite: stress-ng, cpython, glib, dbus or pipewire
#   --lib PATH   the library (default: <repo>/build/libsrc/librtoffload.so)
#   --out DIR    results.tsv, summary.md and every run's log (default: a
#                new directory under $TMPDIR, kept)
#   --modes preload,mark-all,...  the modes to compare with plain (default:
#                every mode: preload, mark-all, mark-all-pool, mark-all-fds;
#                mark-all-async only when named)
#   --stressors a,b,c            these stressors instead
#   --cpython-tests a,b|process|all   these test files, the process-model
#                selection, or all of them
#   --programs a,b|all           with --only glib|dbus|pipewire: these test
#                                programs (.test files' names), or all
#   --program-timeout S          seconds per installed test program (180)
#   --stress-time S              seconds per stressor (1 fast, 3 full)
#   --py-timeout S               regrtest's --timeout per test file
#   --jobs N                     regrtest -j (default 2)
#
# Prints the markdown table (tests, same, differ, explained per suite and
# mode) and every difference; exits 1 on a difference that neither a plain
# rerun (flaky without the library) nor expected.tsv explains.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)

args=()
lib=$repo/build/libsrc/librtoffload.so
out=
while [ $# -gt 0 ]; do
	case $1 in
	--lib) lib=$2; shift 2 ;;
	--lib=*) lib=${1#--lib=}; shift ;;
	--out) out=$2; shift 2 ;;
	--out=*) out=${1#--out=}; shift ;;
	*) args+=("$1"); shift ;;
	esac
done
[ -n "$out" ] || out=$(mktemp -d "${TMPDIR:-/tmp}/rto-peer-out.XXXXXX")

# Debian's interpreter, whatever python3 comes first in PATH: the runner
# uses its standard library only, and CPython's tests are Debian's 3.11's.
exec /usr/bin/python3 "$here/peer.py" --lib "$lib" --out "$out" ${args[@]+"${args[@]}"}
