#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Build the fuzz targets with clang and libFuzzer (build dir <repo>/build-fuzz)
# and fuzz the RTOFFLOAD_OPTIONS parser, the policy_file= parser and the
# decision (libsrc/core/decide.h) for SECONDS in all (default 60, the CI run;
# half to the options).
# Exits non-zero when the fuzzer finds a crash or a broken invariant; the
# input is then in build-fuzz/artifacts/ and the log says which invariant.
#
#   tests/fuzz/run_fuzz.sh              60 s (CI)
#   tests/fuzz/run_fuzz.sh 3600         the long run, before a release
#   JOBS=2 tests/fuzz/run_fuzz.sh 3600  two fuzzing processes sharing the corpus
#
# The repo's seeds (corpus/options, corpus/policy) are only read: what the
# fuzzer learns goes to build-fuzz/corpus/TARGET, which later runs start
# from.  After a long run, fold the new inputs into the seeds, minimised:
#   build-fuzz/fuzz_options -merge=1 tests/fuzz/corpus/options build-fuzz/corpus/options
#   build-fuzz/fuzz_policy -merge=1 tests/fuzz/corpus/policy build-fuzz/corpus/policy
#   build-fuzz/fuzz_decide -merge=1 tests/fuzz/corpus/decide build-fuzz/corpus/decide
#
# Environment: BUILD_DIR (default <repo>/build-fuzz), JOBS (default 1),
# MAX_LEN (default 9000: longer than PATH_MAX, so every length limit is hit).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
seconds=${1:-60}
build=${BUILD_DIR:-$repo/build-fuzz}
jobs=${JOBS:-1}
max_len=${MAX_LEN:-9000}

case $seconds in
'' | *[!0-9]*)
  echo "usage: $0 [SECONDS]" >&2
  exit 2
  ;;
esac
command -v clang >/dev/null || {
  echo "run_fuzz.sh: clang is missing (apt-get install clang libclang-rt-dev)" >&2
  exit 1
}
unset RTOFFLOAD_OPTIONS LD_PRELOAD

cmake -S "$here" -B "$build" -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DRTOFFLOAD_WERROR=ON -DRTOFFLOAD_FUZZ=ON
cmake --build "$build" -j "$(nproc)"

# fuzz TARGET SECONDS: the seeds once, then fuzz.
fuzz() {
	local target=$1 secs=$2
	local seeds=$here/corpus/$target work=$build/corpus/$target
	mkdir -p "$work" "$build/artifacts"
	# Every seed once first: a known crash fails here, quickly and clearly.
	"$build/fuzz_$target" -runs=0 "$seeds"
	local args=(-max_len="$max_len" -max_total_time="$secs"
		-timeout=10 -rss_limit_mb=2048 -print_final_stats=1
		-artifact_prefix="$build/artifacts/$target-")
	[ "$target" = options ] && args+=(-dict="$here/options.dict")
	if [ "$jobs" -gt 1 ]; then
		args+=(-fork="$jobs")
	fi
	# New inputs go to the first directory; the seeds are only read.
	"$build/fuzz_$target" "${args[@]}" "$work" "$seeds"
}

# The option parser gets half the time, the policy-file parser and the decision a quarter each.
fuzz options $((seconds - seconds / 2))
fuzz policy $((seconds / 4 > 0 ? seconds / 4 : 1))
fuzz decide $((seconds / 4 > 0 ? seconds / 4 : 1))
