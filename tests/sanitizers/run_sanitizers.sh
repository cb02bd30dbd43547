#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The library and the whole test suite under AddressSanitizer+UBSan and
# under ThreadSanitizer: for each preset of CMakePresets.json, configure,
# build and ctest.  Exits non-zero when any build or test fails; every
# preset runs even after one failed, and a summary says which.
#
#   tests/sanitizers/run_sanitizers.sh              asan, then tsan
#   tests/sanitizers/run_sanitizers.sh tsan         one preset
#   tests/sanitizers/run_sanitizers.sh asan -R fork extra arguments go to ctest
#
# Build dirs: build-asan/, build-tsan/ (the presets').  GCC: its -fsanitize
# links the sanitizer runtime into the library and into every test program,
# first in their load order, as the runtimes require.  The sanitizer
# options are the test presets' environment (halt on the first report);
# suppressions.txt files here hold only documented false positives in
# third-party code.
#
# Environment: JOBS (build parallelism, default: number of CPUs).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo"
jobs=${JOBS:-$(nproc)}

presets=(asan tsan)
if [ $# -gt 0 ] && [[ $1 != -* ]]; then
  presets=("$1")
  shift
fi

# What the tests see must come from the presets, not from this shell.
unset RTOFFLOAD_OPTIONS LD_PRELOAD ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS TSAN_OPTIONS

failed=()
for p in "${presets[@]}"; do
  echo "=== $p: configure, build, test" >&2
  if cmake --preset "$p" &&
    cmake --build --preset "$p" -j "$jobs" &&
    ctest --preset "$p" "$@"; then
    echo "=== $p: passed" >&2
  else
    echo "=== $p: FAILED" >&2
    failed+=("$p")
  fi
done

if [ ${#failed[@]} -gt 0 ]; then
  echo "run_sanitizers.sh: failed: ${failed[*]}" >&2
  exit 1
fi
echo "run_sanitizers.sh: ${presets[*]}: all passed" >&2
