#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The offload path under Valgrind: memcheck (invalid accesses, uses of
# uninitialised values, definite and indirect leaks) and helgrind (data
# races, lock order).  Builds the library and this directory's programs
# with the valgrind preset of CMakePresets.json (build-valgrind/,
# RelWithDebInfo, warnings are errors, RTOFFLOAD_VALGRIND=ON: the
# happens-before annotations of libsrc/base/helgrind_annot.h), then runs
# offload_mt.c under each tool in four ways:
#
#   linked   rto_offload_mt_linked, RTOFFLOAD_OPTIONS=fd_local=none
#   preload  rto_offload_mt, the library in LD_PRELOAD
#   async    linked, with policy=stdio:async,write:async (rings, drains)
#   stats    linked, with stats=1 and stats_file= (the thread table, the
#            exit report); under memcheck also report_offloads=1 (a
#            libunwind backtrace per offload)
#
# The first three are ctest's sanitizers_offload_* entries.  Any report
# fails the run (--error-exitcode), and so does a wrong result of the
# program; every run goes on after one failed, and a closing line counts
# them.  valgrind.supp here holds only documented false positives in
# third-party code; README.md here says what is checked and what is not.
#
#   tests/sanitizers/run_valgrind.sh              memcheck, then helgrind
#   tests/sanitizers/run_valgrind.sh helgrind     one tool
#
# Environment: JOBS (build parallelism, default: number of CPUs);
# VG_THREADS and VG_ROUNDS, offload_mt's arguments (default 4 and 300, as
# ctest's).  Logs: build-valgrind/valgrind-logs/TOOL-CASE.{vg,out}, shown
# when a run fails.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo"
jobs=${JOBS:-$(nproc)}
threads=${VG_THREADS:-4}
rounds=${VG_ROUNDS:-300}

tools=(memcheck helgrind)
if [ $# -gt 0 ]; then
  tools=("$@")
fi
for t in "${tools[@]}"; do
  case $t in
    memcheck | helgrind) ;;
    *)
      echo "run_valgrind.sh: unknown tool '$t' (memcheck, helgrind)" >&2
      exit 2
      ;;
  esac
done

# What the programs see must come from here, not from this shell.
unset RTOFFLOAD_OPTIONS LD_PRELOAD VALGRIND_OPTS

./.ci/deps # valgrind, and libc6-dbg: valgrind.supp names glibc's functions
cmake --preset valgrind
cmake --build --preset valgrind -j "$jobs"

build=$repo/build-valgrind
bin=$build/tests/sanitizers
lib=$build/libsrc/librtoffload.so
logs=$build/valgrind-logs
rm -rf "$logs"
mkdir -p "$logs"

# --fair-sched=yes: Valgrind runs one thread at a time; with its default
# lock, a spinning caller or polling helper can hold it for a whole time
# slice while the thread it waits for cannot run (runs took 20 to 50 s
# each instead of about 20).
common=(--error-exitcode=99 --num-callers=40 --fair-sched=yes
  --suppressions="$repo/tests/sanitizers/valgrind.supp")

base=fd_local=none # files in /tmp are offloaded even on tmpfs

passed=0
failed=()

# run TOOL CASE: one program under one tool.
run() {
  local tool=$1 name=$2 opts=$base prog=$bin/rto_offload_mt_linked
  local -a env=()
  case $name in
    preload)
      prog=$bin/rto_offload_mt
      env=(LD_PRELOAD="$lib")
      ;;
    async) opts=$opts:policy=stdio:async,write:async ;;
    stats)
      opts=$opts:stats=1:stats_file=$logs/stats-$tool-%p.json
      # libunwind 1.6 synchronises its caches in ways Helgrind cannot see.
      if [ "$tool" = memcheck ]; then
        opts=$opts:report_offloads=1
      fi
      ;;
  esac
  local -a toolopts=(--tool=helgrind)
  if [ "$tool" = memcheck ]; then
    toolopts=(--tool=memcheck --leak-check=full "--errors-for-leak-kinds=definite,indirect"
      "--show-leak-kinds=definite,indirect" --track-origins=yes)
  fi
  local log=$logs/$tool-$name
  local t0=$SECONDS rc=0
  timeout -k 10 900 env RTOFFLOAD_OPTIONS="$opts" "${env[@]}" \
    valgrind "${toolopts[@]}" "${common[@]}" --log-file="$log.vg" \
    "$prog" "$threads" "$rounds" >"$log.out" 2>&1 || rc=$?
  if [ $rc -eq 0 ]; then
    echo "=== $tool $name: passed ($((SECONDS - t0)) s)" >&2
    passed=$((passed + 1))
    return
  fi
  if [ $rc -eq 99 ]; then
    echo "=== $tool $name: FAILED: valgrind reported errors" >&2
  elif [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    echo "=== $tool $name: FAILED: still running after 900 s" >&2
  else
    echo "=== $tool $name: FAILED: the program exited with $rc" >&2
  fi
  echo "--- RTOFFLOAD_OPTIONS=$opts ${env[*]} $prog $threads $rounds" >&2
  # offload_mt checks close(-1) on purpose: Valgrind warns at each.
  cat "$log.out" >&2
  grep -v 'Warning: invalid file descriptor -1 in syscall close()' "$log.vg" >&2 || true
  failed+=("$tool-$name")
}

for tool in "${tools[@]}"; do
  for name in linked preload async stats; do
    run "$tool" "$name"
  done
done

echo "run_valgrind.sh: ${passed} passed, ${#failed[@]} failed"
if [ ${#failed[@]} -gt 0 ]; then
  echo "run_valgrind.sh: failed: ${failed[*]}" >&2
  exit 1
fi
