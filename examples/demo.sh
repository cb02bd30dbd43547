#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The README's first command: install what is missing, build, then run the
# realtime loop (examples/rt_loop) three times and show the runs side by
# side: plain; offloaded (the loop's thread marked, default policy); and
# offloaded with asynchronous logging (policy=stdio:async).  Beside the
# loop, on its CPU and above it, a probe thread that only sleeps and
# measures stands for the CPU's other realtime work.
#
#   examples/demo.sh [--no-load] [--legacy] [SECONDS]
#
# SECONDS is the length of each run (default 15: the demo takes about a
# minute).  While the loop runs, a dd on the housekeeping CPU keeps the
# disk busy, as a real machine would; --no-load leaves the machine idle.
# --legacy runs examples/legacy_loop instead, the program that knows
# nothing of the library: plain, then under `rtoffload --mark rt`, with
# and without async logging.
# Library options pass through, e.g. RTOFFLOAD_OPTIONS=helper_idle_us=1500
# keeps a helper polling through the whole 1 ms period: faster round
# trips, for a housekeeping CPU busy polling.
set -euo pipefail

secs=15
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
user_opts=${RTOFFLOAD_OPTIONS:-}

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

# The files of an earlier demo that was killed by a signal it could not
# trap (its pid is in the name): the runs and the load end by themselves.
sweep_stale() {
	local d pid
	for d in "$build"/demo.*; do
		[[ -d $d ]] || continue
		pid=${d##*/demo.}
		pid=${pid%%.*}
		if [[ $pid =~ ^[0-9]+$ ]] && ! kill -0 "$pid" 2>/dev/null; then
			rm -rf -- "$d"
		fi
	done
}

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
# disk load and the library's helpers get the first.
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
		echo "note: one CPU only: the helpers share it with the loop, expect no gain"
	fi
}

# The kernel's preemption model decides how long a kernel path on the
# realtime CPU can hold off a higher-priority thread there.
preemption() {
	local m=
	if [[ -r /sys/kernel/realtime ]] && [[ $(cat /sys/kernel/realtime) == 1 ]]; then
		m=rt
	else
		m=$(sed -n 's/.*(\([a-z]*\)).*/\1/p' /sys/kernel/debug/sched/preempt 2>/dev/null) || true
		[[ -n $m ]] || m=$( (dmesg 2>/dev/null || true) | sed -n 's/.*Dynamic Preempt: \([a-z]*\).*/\1/p' | tail -n 1)
	fi
	case $m in
	none | voluntary)
		echo "note: kernel preemption: $m: a kernel path holds its CPU until it yields, and a" \
			"higher-priority thread there waits for it"
		;;
	"") ;;
	*) echo "note: kernel preemption: $m" ;;
	esac
}

# Other realtime threads on the loop's CPU make every run noisy, and so
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
# for 50-150 ms, and then all runs miss most of their periods and nothing
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

# legacy_loop cannot ask the library for its numbers: take them from the
# launcher's stats file, as the lines rt_loop prints.
stats_lines() {
	local f
	f=$(find "$work" -maxdepth 1 -name "$1.*.json" | head -n 1)
	[[ -n $f ]] || return 0
	awk '{
		t = $0; sub(/.*"totals":\{/, "", t); sub(/\}.*/, "", t)
		n = split(t, kv, ",")
		for (i = 1; i <= n; i++) { split(kv[i], p, ":"); gsub(/"/, "", p[1]); v[p[1]] = p[2] }
		printf "calls offloaded: %d\nwrites queued async: %d\n", v["offloaded"], v["async"]
		printf "offload round trip p50: %.1f us\n", v["p50_ns"] / 1000
		printf "offload round trip p99: %.1f us\n", v["p99_ns"] / 1000
		printf "offload round trip max: %.1f us\n", v["max_ns"] / 1000
	}' "$f"
}

# The three runs.  rt_loop marks its own thread when told (--offload),
# with the library preloaded; legacy_loop is marked from outside by the
# launcher.  The user's RTOFFLOAD_OPTIONS come last: they win.
run_all() {
	local loop=$build/examples/rt_loop
	local lib=$build/libsrc/librtoffload.so launcher=$build/libsrc/launcher/rtoffload
	local how="--offload, librtoffload preloaded"
	((legacy)) && loop=$build/examples/legacy_loop how="under rtoffload --mark rt"
	local where="dd writing to disk on CPU $hk_cpu"
	((load)) || where="idle machine"
	local i=0 name opts
	for name in plain offloaded async; do
		i=$((i + 1))
		case $name in
		plain) say "run $i/3: ${loop##*/} on CPU $rt_cpu, plain, ${secs} s ($where)" ;;
		offloaded) say "run $i/3: ${loop##*/} on CPU $rt_cpu, $how, ${secs} s ($where)" ;;
		async) say "run $i/3: the same with policy=stdio:async, ${secs} s ($where)" ;;
		esac
		opts=verbosity=1
		[[ $name == async ]] && opts+=:policy=stdio:async
		opts+=${user_opts:+:$user_opts}
		if [[ $name == plain ]]; then
			run_loop plain "$loop"
		elif ((legacy)); then
			run_loop "$name" env RTOFFLOAD_OPTIONS="$opts" "$launcher" --mark rt \
				--rt-cpus "$rt_cpu" --helper-cpus "$hk_cpu" --stats \
				--stats-file "$work/$name.%p.json" -- "$loop"
			stats_lines "$name" >>"$work/$name.txt"
		else
			run_loop "$name" env LD_PRELOAD="$lib${LD_PRELOAD:+:$LD_PRELOAD}" \
				RTOFFLOAD_OPTIONS="stats=1:$opts" "$loop" --offload
		fi
	done
}

# The runs side by side: the rows below, taken from the "label: value"
# lines the programs print ('#' lines are headings).
table() {
	local probe loop
	probe=$(sed -n 's/^probe: *//p' "$work/plain.txt")
	loop=$(sed -n 's/^scheduling: *//p' "$work/plain.txt")
	cat >"$work/rows" <<-'EOF'
		# probe (PROBE): the CPU's other realtime work
		probe wake-up latency p50|wake-up latency p50
		probe wake-up latency p99|wake-up latency p99
		probe wake-up latency p99.9|wake-up latency p99.9
		probe wake-up latency max|wake-up latency max
		probe wake-ups > 100 us late|wake-ups > 100 us late
		probe wake-ups > 1 ms late|wake-ups > 1 ms late
		probe late, loop in its calls|> 100 us late, loop in a call
		# loop (LOOP, 1 kHz): fprintf every cycle, fsync every 10
		loop wake-up latency p50|wake-up latency p50
		loop wake-up latency p99|wake-up latency p99
		loop wake-up latency p99.9|wake-up latency p99.9
		loop wake-up latency max|wake-up latency max
		loop wake-ups > 100 us late|wake-ups > 100 us late
		loop wake-ups > 1 ms late|wake-ups > 1 ms late
		cycle work p50|cycle work p50
		cycle work p99|cycle work p99
		missed periods|missed periods
		# CPU time during the run
		loop CPU time|the loop, on CPU RT
		loop page faults|the loop's page faults
		other threads' CPU time|the helpers, on CPU HK
		# librtoffload
		calls offloaded|calls offloaded
		writes queued async|writes queued async
		offload round trip p50|round trip p50
		offload round trip p99|round trip p99
		offload round trip max|round trip max
	EOF
	awk -v w1=30 -v w2=15 -v probe="$probe" -v loop="$loop" -v rt="$rt_cpu" -v hk="$hk_cpu" '
	BEGIN { printf "%-*s  %*s  %*s  %*s\n", w1, "", w2, "plain", w2, "offloaded", w2, "+ async log" }
	FNR == 1 { f++ }
	f <= 3 {
		label = $0; sub(/:.*/, "", label); value = $0; sub(/^[^:]*: */, "", value)
		v[f, label] = value; next
	}
	/^#/ {
		h = substr($0, 3); sub(/PROBE/, probe, h); sub(/LOOP/, loop, h)
		printf "%s\n", h; next
	}
	{
		split($0, r, "|"); sub(/RT/, rt, r[2]); sub(/HK/, hk, r[2])
		printf "  %-*s", w1 - 2, r[2]
		for (i = 1; i <= 3; i++) printf "  %*s", w2, ((i, r[1]) in v) ? v[i, r[1]] : "-"
		printf "\n"
	}' "$work/plain.txt" "$work/offloaded.txt" "$work/async.txt" "$work/rows"
}

main() {
	read -r load_before _ </proc/loadavg
	mkdir -p "$build"
	sweep_stale
	work=$(mktemp -d "$build/demo.$$.XXXXXX") # on disk: fsync on a tmpfs costs nothing
	build_demo "$work/build.log"
	choose_cpus
	preemption
	warn_noise
	run_all
	echo
	table
	local marked="never marked"
	((legacy)) && marked="marked too by --mark rt (it is SCHED_FIFO), though it calls nothing"
	cat <<-EOF

		How to read it.  The probe stands for the other realtime work of CPU $rt_cpu: it
		only sleeps and wakes up, above the loop, $marked.
		Plain, the loop's fsync, mmap and page faults run in the kernel on CPU $rt_cpu and
		hold the probe off until they yield; offloaded, they run on CPU $hk_cpu.  What moves
		for sure is the loop's CPU time and page faults on CPU $rt_cpu: to the helpers on
		CPU $hk_cpu (their polling included).  The probe's p99.9 and late wake-ups, above
		all those while the loop was in a call, drop with them when nothing else
		disturbs CPU $rt_cpu; its p50 and p99 hardly move: most wake-ups find the CPU free.
		The loop itself waits for each offloaded call, so a slow fsync stays slow: its
		cycle work and missed periods do not improve, and the round trip is what that
		waiting costs.  Async logging takes the per-cycle fprintf off the wait; the
		fsync every 10 cycles still waits for the disk, as it must (the round trip
		then counts only the calls that waited).
		On a virtual machine the hypervisor stops a virtual CPU for milliseconds at
		times, and on a busy machine other work adds its own: such stalls hit the
		probe and the loop alike, in every column, whatever the library does.  They
		set the max and can swamp the probe's counts (see the notes at the top):
		compare the columns rather than single numbers, and run the demo again.
	EOF
}

main
