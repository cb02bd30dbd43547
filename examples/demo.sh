#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The README's first command: install what is missing, build, then run the
# realtime loop (examples/rt_loop) twice, plain and with its calls
# offloaded by librtoffload, and show the two runs side by side.
#
#   examples/demo.sh [--no-load] [--legacy] [SECONDS]
#
# SECONDS is the length of each run (default 20: the demo takes about a
# minute).  While the loop runs, a dd on the housekeeping CPU keeps the
# disk busy, as a real machine would; --no-load leaves the machine idle.
# --legacy runs examples/legacy_loop instead, the program that knows
# nothing of the library, plain and under `rtoffload --mark rt`.
# Library options pass through, e.g. RTOFFLOAD_OPTIONS=helper_idle_us=1500
# keeps a helper polling through the whole 1 ms period: faster round
# trips, for a housekeeping CPU busy polling.
set -euo pipefail

secs=20
load=1
legacy=0
for arg in "$@"; do
	case $arg in
	--no-load) load=0 ;;
	--legacy) legacy=1 ;;
	[0-9]*) secs=$arg ;;
	*)
		echo "usage: $0 [--no-load] [--legacy] [SECONDS]" >&2
		exit 2
		;;
	esac
done
if ! [[ $secs =~ ^[0-9]+$ ]] || ((secs < 1 || secs > 3600)); then
	echo "$0: SECONDS must be a whole number from 1 to 3600" >&2
	exit 2
fi

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$repo/build
work=
load_pid=
loop_pid=
load_before=0 # 1-minute load average at start

cleanup() {
	if [[ -n $loop_pid ]]; then
		kill -TERM "$loop_pid" 2>/dev/null || true
		wait "$loop_pid" 2>/dev/null || true
	fi
	if [[ -n $load_pid ]]; then
		kill -TERM -- "-$load_pid" 2>/dev/null || true
		wait "$load_pid" 2>/dev/null || true
	fi
	[[ -n $work ]] && rm -rf -- "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

say() { printf '==> %s\n' "$*"; }

build_demo() {
	local log=$1
	say "dependencies (.ci/deps)"
	"$repo/.ci/deps"
	say "building in $build"
	# Only what the demo runs: the test suite has its own command.
	local targets=(rtoffload rt_loop legacy_loop)
	((legacy)) && targets+=(rtoffload-launcher)
	if ! { cmake -S "$repo" -B "$build" -DRTOFFLOAD_WERROR=ON -DRTOFFLOAD_EXAMPLES=ON &&
		cmake --build "$build" -j2 --target "${targets[@]}"; } >"$log" 2>&1; then
		tail -n 40 "$log" >&2
		echo "$0: build failed (the end of its log is above)" >&2
		exit 1
	fi
}

# The CPUs we may use: the loop takes the second (rt_loop's default), the
# disk load and the library's helper get the first.
choose_cpus() {
	local allowed
	allowed=$(taskset -cp $$ | sed 's/.*: //')
	hk_cpu=${allowed%%[,-]*}
	rt_cpu=$(awk -v l="$allowed" 'BEGIN {
		n = split(l, r, ","); c = 0
		for (i = 1; i <= n; i++) {
			split(r[i], b, "-"); hi = (b[2] == "") ? b[1] : b[2]
			for (x = b[1]; x <= hi; x++) if (++c == 2) { print x; exit }
		}
		print b[1] }')
	if [[ $rt_cpu == "$hk_cpu" ]]; then
		echo "note: one CPU only: the helper shares it with the loop, expect no gain"
	fi
}

# Other realtime threads on the loop's CPU make both runs noisy, and so
# does other work on a machine without isolated CPUs: say so.  The load
# average is the one from before our own build.
warn_noise() {
	if awk -v l="$load_before" 'BEGIN { exit !(l >= 1) }'; then
		echo "note: the machine is busy (load average $load_before) and its work also runs on" \
			"CPU $rt_cpu: the numbers will be noisy"
	fi
	local others
	others=$(ps -eLo pid=,ppid=,cls=,rtprio=,psr=,comm= |
		awk -v cpu="$rt_cpu" '($3 == "FF" || $3 == "RR") && $1 != 2 && $2 != 2 && $5 == cpu {
			printf "%s%s(pid %s, %s %s)", sep, $6, $1, $3, $4; sep = ", " }')
	if [[ -n $others ]]; then
		echo "note: other realtime threads run on CPU $rt_cpu, the numbers will be noisy: $others"
	fi
}

# Disk load on the housekeeping CPU: 32 MiB written and synced, a pause,
# over and over.  Enough to keep writeback and the disk queue busy; more
# (hundreds of MiB in flight) makes every fsync of the loop wait behind it
# for 50-150 ms, and then both runs miss most of their periods and nothing
# else shows.  In its own process group, so cleanup ends all of it; it
# also stops by itself if this script is gone.
start_load() {
	((load)) || return 0
	# shellcheck disable=SC2016 # $1 and $2 belong to the inner bash
	setsid taskset -c "$hk_cpu" bash -c '
		while kill -0 "$1" 2>/dev/null; do
			dd if=/dev/zero of="$2/load" bs=1M count=32 conv=fsync status=none
			sleep 0.2
		done' load "$$" "$work" &
	load_pid=$!
}

stop_load() {
	[[ -n $load_pid ]] || return 0
	kill -TERM -- "-$load_pid" 2>/dev/null || true
	wait "$load_pid" 2>/dev/null || true
	load_pid=
	rm -f -- "$work/load"
}

# One run; what it says on stderr (notes, the library's report) is shown
# after it, indented.  In the background with a wait, which a signal
# interrupts: bash would not run the trap until a foreground child ends.
run_loop() {
	local name=$1 status=0
	shift
	start_load
	"$@" --duration "$secs" --cpu "$rt_cpu" --dir "$work" >"$work/$name.txt" 2>"$work/$name.err" &
	loop_pid=$!
	wait "$loop_pid" || status=$?
	loop_pid=
	stop_load
	sed 's/^/    /' "$work/$name.err"
	if ((status)); then
		echo "$0: $name run failed (exit status $status)" >&2
		exit 1
	fi
}

# "label: value" lines of both runs, joined on the label.
compare() {
	awk -v w1=26 -v w2=20 '
	{ label = $0; sub(/:.*/, "", label); value = $0; sub(/^[^:]*: */, "", value) }
	FNR == NR { plain[label] = value; if (!(label in seen)) { seen[label]; order[++n] = label } next }
	{ off[label] = value; if (!(label in seen)) { seen[label]; order[++n] = label } }
	END {
		printf "%-*s  %*s  %*s\n", w1, "", w2, "plain", w2, "offloaded"
		for (i = 1; i <= n; i++) {
			l = order[i]
			printf "%-*s  %*s  %*s\n", w1, l, w2, (l in plain) ? plain[l] : "-", w2, (l in off) ? off[l] : "-"
		}
	}' "$work/plain.txt" "$work/offloaded.txt"
}

# rt_loop marks its own thread when told (--offload), with the library
# preloaded; legacy_loop is marked from outside by the launcher.
run_both() {
	local loop=$build/examples/rt_loop what="--offload, librtoffload preloaded"
	((legacy)) && loop=$build/examples/legacy_loop what="under rtoffload --mark rt"
	local load_note="idle machine"
	((load)) && load_note="dd writing to disk on CPU $hk_cpu"
	say "run 1/2: ${loop##*/} on CPU $rt_cpu, plain, ${secs} s ($load_note)"
	run_loop plain "$loop"
	say "run 2/2: ${loop##*/} on CPU $rt_cpu, $what, ${secs} s ($load_note)"
	if ((legacy)); then
		run_loop offloaded env RTOFFLOAD_OPTIONS="verbosity=1${RTOFFLOAD_OPTIONS:+:$RTOFFLOAD_OPTIONS}" \
			"$build/libsrc/launcher/rtoffload" --mark rt --stats -- "$loop"
	else
		run_loop offloaded env LD_PRELOAD="$build/libsrc/librtoffload.so${LD_PRELOAD:+:$LD_PRELOAD}" \
			RTOFFLOAD_OPTIONS="verbosity=1:stats=1${RTOFFLOAD_OPTIONS:+:$RTOFFLOAD_OPTIONS}" \
			"$loop" --offload
	fi
}

main() {
	read -r load_before _ </proc/loadavg
	mkdir -p "$build"
	work=$(mktemp -d "$build/demo.XXXXXX") # on disk: fsync on a tmpfs costs nothing
	build_demo "$work/build.log"
	choose_cpus
	warn_noise
	run_both
	echo
	compare
	cat <<-'EOF'

		wake-up latency  how late the loop got its CPU back after sleeping: what realtime is about
		cycle work       the loop's own calls; an offloaded call still waits for its result, so a
		                 slow fsync stays slow and still costs periods, but it runs elsewhere
		loop CPU time    what the loop cost the realtime CPU: its calls, or waiting for them
		round trip       an offloaded call from the loop's side, as the library measured it
	EOF
}

main
