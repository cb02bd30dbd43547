#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The README's test command: install what is missing, build with warnings as
# errors, run the whole test suite.  Exits non-zero when anything fails.
#
#   tests/run.sh                 from anywhere; the build goes to <repo>/build
#   tests/run.sh -R families     extra arguments go to ctest
#
# Environment: BUILD_DIR (default <repo>/build), JOBS (default 2).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
build=${BUILD_DIR:-$repo/build}
jobs=${JOBS:-2}

# The options of the environment would change what the tests see.
unset RTOFFLOAD_OPTIONS LD_PRELOAD

./.ci/deps
cmake -S "$repo" -B "$build" -DRTOFFLOAD_WERROR=ON -DRTOFFLOAD_TESTS=ON
cmake --build "$build" -j "$jobs"
# One test program at a time: several watch the helper threads or count
# the threads of their process, and the machine may have only two CPUs.
ctest --test-dir "$build" --output-on-failure --timeout 300 "$@"
