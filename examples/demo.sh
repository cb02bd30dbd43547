#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The README's first command: install what is missing, build, then show
# what librtoffload does for a realtime CPU.  A 1 kHz SCHED_FIFO control
# loop (examples/rt_loop) logs every cycle and, in turn, saves a state
# snapshot, maps and unmaps a buffer, reads its config, scans a directory
# and resolves a name.  Beside it on CPU 1, above it, a probe thread that
# only sleeps and measures (cyclictest's method) stands for the CPU's
# other realtime work.  Four configurations run in short interleaved
# rounds, so that the machine's own noise falls on all of them alike:
#
#   plain       the loop as it is, no library;
#   offloaded   the loop's thread marked: its calls run on a helper on CPU 0;
#   + async     the same with policy=stdio:async (the log line is queued);
#   ideal       the same loop without the library on the housekeeping CPU:
#               CPU 1 has only the probe.  What offloading at best gets.
#
# One verdict line comes first (how often the probe woke more than 100 us
# late, per minute: median of the rounds and spread), then a table of the
# key figures, and the paths of a latency histogram (PNG) and of a timeline
# of a few periods of one offloaded run, from its trace (PNG).
#
#   examples/demo.sh [--quick] [--legacy] [--load] [--rounds N] [--round-secs S]
#                    [--png FILE] [--prebuilt BUILD_DIR]
#
# Default: 7 rounds of 2 s per configuration, about a minute with the
# start-ups; --quick: 4 rounds of 1 s, about 20 s.  --legacy runs
# examples/legacy_loop instead, the program that knows nothing of the
# library, under `rtoffload --mark rt`.  --load adds a dd writing to disk
# on the housekeeping CPU.  --prebuilt uses the library and examples
# already built in BUILD_DIR (no install, no build: the test uses it).
# Library options pass through, e.g. RTOFFLOAD_OPTIONS=helper_idle_us=1500.
# DEMO_PRELOAD_FIRST (tests only) goes first in the offloaded runs'
# LD_PRELOAD: a sanitizer's runtime, which must come before the library.
set -euo pipefail

rounds=7
round_secs=2
load=0
legacy=0
prebuilt=
png=
usage() {
	echo "usage: $0 [--quick] [--legacy] [--load] [--rounds N] [--round-secs S]" \
		"[--png FILE] [--prebuilt BUILD_DIR]" >&2
	exit 2
}
whole() { # NAME VALUE LO HI
	if ! [[ $2 =~ ^[0-9]+$ ]] || (($2 < $3 || $2 > $4)); then
		echo "$0: $1 must be a whole number from $3 to $4" >&2
		exit 2
	fi
}
while (($#)); do
	case $1 in
	--quick) rounds=4 round_secs=1 ;;
	--legacy) legacy=1 ;;
	--load) load=1 ;;
	--no-load) load=0 ;; # the default now; kept for old command lines
	--rounds | --round-secs | --png | --prebuilt)
		(($# >= 2)) || usage
		case $1 in
		--rounds) whole --rounds "$2" 1 100 && rounds=$2 ;;
		--round-secs) whole --round-secs "$2" 1 600 && round_secs=$2 ;;
		--png) png=$2 ;;
		--prebuilt) prebuilt=$2 ;;
		esac
		shift
		;;
	*) usage ;;
	esac
	shift
done

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${prebuilt:-$repo/build}
[[ -n $png ]] || png=$build/demo-latency.png
[[ $png == /* ]] || png=$PWD/$png
work=
load_pid=
loop_pid=
load_before=0 # 1-minute load average at start
user_opts=${RTOFFLOAD_OPTIONS:-}
probe_period=200 # us, as OSADL's and bench/jitter's
configs=(plain offloaded async ideal)
declare -A title=([plain]=plain [offloaded]=offloaded [async]="+ async log" [ideal]=ideal)

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
	if [[ -n $prebuilt ]]; then
		local f
		for f in libsrc/librtoffload.so examples/rt_loop examples/legacy_loop; do
			[[ -x $build/$f || -f $build/$f ]] || {
				echo "$0: --prebuilt $build: no $f there" >&2
				exit 1
			}
		done
		return 0
	fi
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

# The CPUs we may use: the loop and the probe take the second (rt_loop's
# default), the library's helpers, the ideal's loop and the load the first.
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
preempt_model=
preemption() {
	local m=
	if [[ -r /sys/kernel/realtime ]] && [[ $(cat /sys/kernel/realtime) == 1 ]]; then
		m=rt
	elif uname -v | grep -q PREEMPT_RT; then
		m=rt
	else
		m=$(sed -n 's/.*(\([a-z]*\)).*/\1/p' /sys/kernel/debug/sched/preempt 2>/dev/null) || true
		[[ -n $m ]] || m=$( (dmesg 2>/dev/null || true) | sed -n 's/.*Dynamic Preempt: \([a-z]*\).*/\1/p' | tail -n 1)
	fi
	preempt_model=$m
	case $m in
	none | voluntary)
		echo "note: kernel preemption: $m: a kernel path holds its CPU until it yields, and a" \
			"higher-priority thread there waits for it"
		;;
	rt)
		echo "note: kernel preemption: PREEMPT_RT: the kernel preempts its own paths almost" \
			"anywhere, so plain is already close to ideal here; expect a small gap"
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

# Disk load on the housekeeping CPU (--load): 32 MiB written and synced,
# a pause, over and over.  In its own process group, so cleanup ends all
# of it; it also stops by itself if this script is gone.
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

# legacy_loop cannot ask the library for its numbers: take them from the
# launcher's stats file, as the lines rt_loop prints.
stats_lines() {
	[[ -f $1 ]] || return 0
	awk '{
		t = $0; sub(/.*"totals":\{/, "", t); sub(/\}.*/, "", t)
		n = split(t, kv, ",")
		for (i = 1; i <= n; i++) { split(kv[i], p, ":"); gsub(/"/, "", p[1]); v[p[1]] = p[2] }
		printf "calls offloaded: %d\nwrites queued async: %d\n", v["offloaded"], v["async"]
		printf "offload round trip p50: %.1f us\n", v["p50_ns"] / 1000
	}' "$1"
	rm -f -- "$1"
}

# One run of one configuration in one round: its report goes to
# NAME.ROUND.txt, the probe's histogram to NAME.ROUND.hist.  In the
# background with a wait, which a signal interrupts: bash would not run
# the trap until a foreground child ends.  rt_loop marks its own thread
# (--offload, library preloaded); legacy_loop is marked from outside by
# the launcher.  The user's RTOFFLOAD_OPTIONS come last: they win.
run_one() {
	local name=$1 r=$2 status=0
	local loop=$build/examples/rt_loop
	((legacy)) && loop=$build/examples/legacy_loop
	local lib=$build/libsrc/librtoffload.so launcher=$build/tools/rtoffload
	local base=$work/$name.$r opts=
	[[ $name == async ]] && opts=policy=stdio:async
	[[ -n $user_opts ]] && opts+=${opts:+:}$user_opts
	local args=(--duration "$round_secs" --probe-period "$probe_period" --dir "$work"
		--histogram "$base.hist")
	local cmd
	case $name in
	plain) cmd=("$loop" --cpu "$rt_cpu") ;;
	ideal) cmd=("$loop" --cpu "$hk_cpu" --probe-cpu "$rt_cpu") ;;
	*)
		if ((legacy)); then
			cmd=(env RTOFFLOAD_OPTIONS="$opts" "$launcher" --mark rt --rt-cpus "$rt_cpu"
				--helper-cpus "$hk_cpu" --stats-file "$base.json" -- "$loop" --cpu "$rt_cpu")
		else
			cmd=(env LD_PRELOAD="${DEMO_PRELOAD_FIRST:+$DEMO_PRELOAD_FIRST:}$lib${LD_PRELOAD:+:$LD_PRELOAD}"
				RTOFFLOAD_OPTIONS="$opts" "$loop" --offload --cpu "$rt_cpu")
		fi
		;;
	esac
	"${cmd[@]}" "${args[@]}" >"$base.txt" 2>"$base.err" &
	loop_pid=$!
	wait "$loop_pid" || status=$?
	loop_pid=
	if ((status)); then
		sed 's/^/    /' "$base.err" >&2
		echo "$0: $name run failed (exit status $status)" >&2
		exit 1
	fi
	if ((legacy)) && [[ $name != plain && $name != ideal ]]; then
		stats_lines "$base.json" >>"$base.txt"
	fi
	cat "$base.err" >>"$work/notes"
}

# Late wake-ups of the probe per minute of probing, from one report.
late_per_minute() {
	awk -v p="$probe_period" '
		/^probe wake-ups:/ { n = $3 }
		/^probe wake-ups > 100 us late:/ { late = $NF }
		END { printf "%.0f", n ? late * 60e6 / (n * p) : 0 }' "$1"
}

# The rounds: each runs every configuration once, the order turning by
# one from round to round, so no configuration always comes first.
run_rounds() {
	local loop=rt_loop how="--offload, librtoffload preloaded"
	((legacy)) && loop=legacy_loop how="under rtoffload --mark rt"
	say "$rounds rounds of ${round_secs} s per configuration, interleaved; probe: late wake-ups per minute"
	echo "    plain: $loop on CPU $rt_cpu; offloaded: $how, helpers on CPU $hk_cpu;" \
		"+ async log: policy=stdio:async; ideal: $loop on CPU $hk_cpu, only the probe on CPU $rt_cpu"
	start_load
	local r i name line
	for ((r = 1; r <= rounds; r++)); do
		line=$(printf 'round %d/%d:' "$r" "$rounds")
		printf '%s' "$line"
		for ((i = 0; i < 4; i++)); do
			name=${configs[(r - 1 + i) % 4]}
			run_one "$name" "$r"
			printf '  %s %s' "${title[$name]}" "$(late_per_minute "$work/$name.$r.txt")"
		done
		printf '\n'
	done
}

# One row per figure: the median over the rounds, then min-max.  The
# figures are taken from the "label: value" lines the programs print.
# Writes $work/summary: "KEY CONFIG MEDIAN MIN MAX" lines.
summarize() {
	local name r f
	for name in "${configs[@]}"; do
		for ((r = 1; r <= rounds; r++)); do
			f=$work/$name.$r.txt
			awk -v c="$name" -v p="$probe_period" -v s="$round_secs" '
				function num(x) { sub(/^[^:]*: */, "", x); return x + 0 }
				/^probe wake-ups:/ { n = num($0) }
				/^probe wake-ups > 100 us late:/ { late = num($0) }
				/^probe wake-ups > 1 ms late:/ { late1 = num($0) }
				/^probe wake-up latency p99.9:/ { print "p999", c, num($0) }
				/^probe wake-up latency max:/ { print "pmax", c, num($0) }
				/^missed periods:/ { print "missed", c, num($0) * 60 / s }
				/^cycle work p99:/ { print "work99", c, num($0) }
				/^loop CPU time:/ { print "cpu", c, num($0) / (s * 10) }
				/^offload round trip p50:/ { print "rtt", c, num($0) }
				/^work [a-z]*:/ {
					k = $2; sub(/:$/, "", k); v = $0; sub(/.*avg /, "", v)
					print "t_" k, c, v + 0
				}
				END {
					if (n) {
						print "late", c, late * 60e6 / (n * p)
						print "late1", c, late1 * 60e6 / (n * p)
					}
				}' "$f"
		done
	done | sort -k1,1 -k2,2 -k3,3g | awk '
		function flush() {
			if (cnt) {
				m = cnt % 2 ? v[(cnt + 1) / 2] : (v[cnt / 2] + v[cnt / 2 + 1]) / 2
				print key, cfg, m, v[1], v[cnt]
			}
			cnt = 0
		}
		$1 != key || $2 != cfg { flush(); key = $1; cfg = $2 }
		{ v[++cnt] = $3 }
		END { flush() }' >"$work/summary"
}

# A figure of the summary: FIELD (3 median, 4 min, 5 max) of KEY for CONFIG.
fig() {
	awk -v k="$1" -v c="$2" -v f="$3" '$1 == k && $2 == c { print $f; exit }' "$work/summary"
}

# The verdict: first, alone on its line.  Clear only when plain's median
# lies above every round of the ideal and at least 3 times its median:
# then the gap is the loop's doing, not the machine's.  Otherwise the
# machine's own noise (what the ideal still sees) is as large as the
# effect, and a table would mislead.
verdict() {
	local p o a i
	p=$(fig late plain 3) o=$(fig late offloaded 3) a=$(fig late async 3) i=$(fig late ideal 3)
	local spread
	spread=$(for c in plain offloaded async ideal; do
		printf '%s %.0f-%.0f, ' "${title[$c]}" "$(fig late $c 4)" "$(fig late $c 5)"
	done)
	spread=${spread%, }
	clear=0
	if awk -v p="$p" -v i="$i" -v imax="$(fig late ideal 5)" \
		'BEGIN { exit !(p > imax && p >= 3 * i && p > 0) }'; then
		clear=1
	fi
	echo
	if ((clear)); then
		printf 'VERDICT: the other realtime thread on CPU %s woke more than 100 us late %.0f times a minute plain, %.0f offloaded, %.0f offloaded + async log, %.0f ideal (median of %d rounds; spread %s)\n' \
			"$rt_cpu" "$p" "$o" "$a" "$i" "$rounds" "$spread"
		awk -v p="$p" -v o="$o" -v a="$a" -v i="$i" -v hk="$hk_cpu" 'BEGIN {
			if (o < p) {
				printf "  offloading removed %.0f%% of them, with async logging %.0f%%; ideal (the work on CPU %s) removes %.0f%%.",
					100 * (p - o) / p, 100 * (p - a) / p, hk, 100 * (p - i) / p
				if (o > 2 * i)
					printf "  Offloaded stays above twice the ideal: see the round trip and the loop'"'"'s CPU time below."
				printf "\n"
			} else {
				printf "  offloading did not help here, though ideal (the work on CPU %s) removes %.0f%%: see the round trip and the loop'"'"'s CPU time below.\n",
					hk, 100 * (p - i) / p
			}
		}'
	elif [[ $preempt_model == rt ]]; then
		printf 'VERDICT: PREEMPT_RT kernel: the other realtime thread on CPU %s woke more than 100 us late %.0f times a minute plain, %.0f offloaded, %.0f offloaded + async log, %.0f ideal (median of %d rounds; spread %s): the kernel already preempts these paths, so there is little to gain for that thread; the loop itself still waits for its calls.\n' \
			"$rt_cpu" "$p" "$o" "$a" "$i" "$rounds" "$spread"
	else
		printf 'VERDICT: too noisy to tell: with the loop'"'"'s work off CPU %s (ideal), the other realtime thread there still woke more than 100 us late %.0f-%.0f times a minute (median %.0f of %d rounds), against %.0f plain: something other than the loop holds CPU %s that often.  No table, it would mislead: run the demo on a quieter machine (load average %s at the start), best with CPU %s isolated (isolcpus=%s nohz_full=%s), or with more rounds (--rounds 20).\n' \
			"$rt_cpu" "$(fig late ideal 4)" "$(fig late ideal 5)" "$i" "$rounds" "$p" "$rt_cpu" \
			"$load_before" "$rt_cpu" "$rt_cpu" "$rt_cpu"
	fi
}

# The key figures side by side: the median of the rounds, its spread below.
table() {
	local rows=(
		"late|probe: > 100 us late, /min|%.0f"
		"late1|probe: > 1 ms late, /min|%.0f"
		"p999|probe: p99.9 latency, us|%.0f"
		"pmax|probe: max latency, us|%.0f"
		"cpu|loop: its CPU's time, %|%.1f"
		"missed|loop: missed periods, /min|%.0f"
		"work99|loop: cycle work p99, us|%.0f"
		"rtt|round trip p50, us|%.1f"
		"t_log|log (each cycle), avg us|%.1f"
		"t_snapshot|snapshot, avg us|%.0f"
		"t_buffers|buffers, avg us|%.0f"
		"t_config|config, avg us|%.0f"
		"t_directory|directory, avg us|%.0f"
		"t_name|name, avg us|%.0f"
	)
	echo
	printf '%-29s' "median of $rounds (min-max)"
	local c row key label fmt cell
	for c in "${configs[@]}"; do printf ' %17s' "${title[$c]}"; done
	printf '\n'
	for row in "${rows[@]}"; do
		IFS='|' read -r key label fmt <<<"$row"
		printf '%-29s' "$label"
		for c in "${configs[@]}"; do
			cell=-
			if [[ -n $(fig "$key" "$c" 3) ]]; then
				# shellcheck disable=SC2059 # the row's format
				cell=$(printf "$fmt ($fmt-$fmt)" "$(fig "$key" "$c" 3)" "$(fig "$key" "$c" 4)" "$(fig "$key" "$c" 5)")
			fi
			printf ' %17s' "$cell"
		done
		printf '\n'
	done
}

# OSADL's latency plot: wake-ups per 1 us bin, log y, one line per
# configuration, all rounds summed; empty bins are filled in so the steps
# drop to the axis.  Below it the same data as "wake-ups at least this
# late, per minute", where the 100 us line crosses the verdict's figures.
plot() {
	local c r
	for c in "${configs[@]}"; do
		for ((r = 1; r <= rounds; r++)); do cat "$work/$c.$r.hist"; done |
			awk -v p="$probe_period" '
			{ n[$1] += $2; total += $2; if ($1 > max) max = $1 }
			END {
				per_min = total ? 60e6 / (total * p) : 0
				for (us = 0; us <= max + 1; us++) c[us] = (us in n) ? n[us] : 0
				for (us = max + 1; us >= 0; us--) { above += c[us]; tail[us] = above }
				for (us = 0; us <= max + 1; us++) print us, c[us], tail[us] * per_min
			}' >"$work/$c.dat"
	done
	if ! command -v gnuplot >/dev/null; then
		echo "note: no gnuplot (.ci/deps installs it): no picture"
		return 0
	fi
	local kernel state
	kernel=$(uname -r)
	state="verdict: clear"
	((clear)) || state="verdict: too noisy to tell"
	[[ $preempt_model == rt ]] && ((!clear)) && state="PREEMPT_RT"
	mkdir -p "$(dirname "$png")"
	gnuplot -e "d='$work'; out='$png'; cpu='$rt_cpu'; rounds='$rounds'; secs='$round_secs'" \
		-e "kernel='$kernel, preempt $preempt_model'; state='$state'; period='$probe_period'" \
		-e "names='${configs[*]}'" - <<-'EOF'
		set terminal pngcairo size 1100,950 font "sans,10" noenhanced
		set output out
		color(c) = c eq "plain" ? "#d62728" : c eq "offloaded" ? "#1f77b4" : c eq "async" ? "#ff7f0e" : "#2ca02c"
		label(c) = c eq "async" ? "offloaded + async log" : c eq "ideal" ? "ideal (the work on the housekeeping CPU)" : c
		cnt(y) = y > 0 ? y : 0.01
		set multiplot layout 2,1 title sprintf("Wake-up latency of a SCHED_FIFO probe on CPU %s (every %s us), %s rounds x %s s per configuration\n%s; %s", cpu, period, rounds, secs, kernel, state)
		set grid
		set logscale xy
		set xrange [1:15000] # the last bin holds 10 ms and over
		set rmargin 5
		set key top right
		set arrow 1 from 100, graph 0 to 100, graph 1 nohead dt 2 lc rgb "#777777"
		set label 1 "100 us" at 100, graph 0.93 offset 0.5, 0 tc rgb "#555555"
		set title "Histogram (OSADL style): wake-ups per 1 us of lateness, all rounds together"
		set yrange [0.8:*]
		set xlabel "wake-up latency, us (log scale; the last bin, 10000, holds all of 10 ms and over)"
		set ylabel "wake-ups (log scale)"
		plot for [c in names] d . "/" . c . ".dat" using ($1 + 0.5):(cnt($2)) with steps lw 1.4 lc rgb color(c) title label(c)
		set title "Wake-ups at least this late, per minute (at 100 us: the verdict's figure, all rounds together)"
		set yrange [0.1:*]
		set ylabel "wake-ups per minute (log scale)"
		plot for [c in names] d . "/" . c . ".dat" using ($1 + 0.5):(cnt($3)) with steps lw 2 lc rgb color(c) title label(c)
		unset multiplot
	EOF
	echo
	echo "latency histogram: $png"
}

# A timeline of a few periods of one offloaded run, from its trace
# (trace_file=, docs/TRACING.md): one more short run of the offloaded
# configuration after the rounds (the rounds themselves are not traced),
# then six periods around its first long offloaded call, one lane for the
# loop's thread on the realtime CPU and one per helper.  The trace file
# has one event a line, which awk reads.
timeline() {
	local out=${png%.png}-timeline.png trace=$work/trace.json
	local lib=$build/libsrc/librtoffload.so
	((legacy)) && return 0 # the launcher's runs: the same picture as rt_loop's
	command -v gnuplot >/dev/null || return 0
	env LD_PRELOAD="${DEMO_PRELOAD_FIRST:+$DEMO_PRELOAD_FIRST:}$lib${LD_PRELOAD:+:$LD_PRELOAD}" \
		RTOFFLOAD_OPTIONS="trace_file=$trace${user_opts:+:$user_opts}" \
		"$build/examples/rt_loop" --offload --cpu "$rt_cpu" --duration 1 \
		--probe-period "$probe_period" --dir "$work" >"$work/trace.txt" 2>&1 || return 0
	awk '
		function field(k,   m) {
			if (!match($0, "\"" k "\":(\"[^\"]*\"|[0-9.]+)")) return ""
			m = substr($0, RSTART + length(k) + 3, RLENGTH - length(k) - 3)
			gsub(/"/, "", m)
			return m
		}
		/"name":"thread_name"/ {
			if (match($0, /"args":\{"name":"[^"]*"/)) {
				n = substr($0, RSTART + 16, RLENGTH - 17)
				if (n ~ /^rtoffload\//) lane[field("tid")] = 1 + substr(n, 11)
				else if (n == "rt_loop") lane[field("tid")] = 0
			}
			next
		}
		/"ph":"X"/ { k++; tid[k] = field("tid"); ts[k] = field("ts") + 0; dur[k] = field("dur") + 0
			name[k] = field("name"); cat[k] = field("cat") }
		/"ph":"i"/ && /"cat":"local"/ { j++; itid[j] = field("tid"); its[j] = field("ts") + 0; iname[j] = field("name") }
		END {
			for (i = 1; i <= k; i++) if (cat[i] == "offload") { t0 = ts[i]; break }
			for (i = 1; i <= k; i++)
				if (cat[i] == "offload" && ts[i] > t0 + 100000 && dur[i] > 200) { w = ts[i] - 2000; break }
			if (!w) exit
			for (i = 1; i <= k; i++)
				if ((tid[i] in lane) && ts[i] + dur[i] >= w && ts[i] <= w + 6000)
					printf "span %d %.3f %.3f %s %s\n", lane[tid[i]], (ts[i] - w) / 1000,
						(ts[i] + dur[i] - w) / 1000, name[i], cat[i]
			for (i = 1; i <= j; i++)
				if ((itid[i] in lane) && its[i] >= w && its[i] <= w + 6000)
					printf "tick %d %.3f %s\n", lane[itid[i]], (its[i] - w) / 1000, iname[i]
		}' "$trace" >"$work/timeline.dat"
	[[ -s $work/timeline.dat ]] || return 0
	grep '^span' "$work/timeline.dat" | cut -d' ' -f2- >"$work/spans.dat"
	grep '^tick' "$work/timeline.dat" | cut -d' ' -f2- >"$work/ticks.dat" || true
	local helpers
	helpers=$(awk '$1 > m { m = $1 } END { print m + 0 }' "$work/spans.dat")
	gnuplot -e "spans='$work/spans.dat'; ticks='$work/ticks.dat'; out='$out'" \
		-e "cpu='$rt_cpu'; hk='$hk_cpu'; helpers=$helpers" - <<-'EOF'
		set terminal pngcairo size 1100,420 font "sans,10" noenhanced
		set output out
		set title sprintf("Six periods of the offloaded loop, from its trace (trace_file=): the loop on CPU %s, the helpers on CPU %s", cpu, hk)
		set xlabel "ms from the window's start"
		set xrange [0:6]
		set yrange [-0.8:helpers + 0.8]
		set ytics ("loop (rt_loop, CPU ".cpu.")" 0)
		do for [h = 1:helpers] { set ytics add (sprintf("helper rtoffload/%d", h - 1) h) }
		set grid xtics
		set key below
		set style fill solid 0.8 noborder
		color(c) = c eq "offload" ? 0x1f77b4 : 0x2ca02c
		plot spans using (($2 + $3) / 2):1:(($3 - $2) / 2 > 0.002 ? ($3 - $2) / 2 : 0.002):(0.3):(color(strcol(5))) \
			with boxxyerror lc rgb variable title "calls: the loop waits (blue), a helper runs them (green)", \
			spans using (($2 + $3) / 2):($1 + 0.42):(($3 - $2) > 0.25 ? strcol(4) : "") with labels font "sans,8" notitle, \
			ticks using 2:1:(0):(0.35) with vectors nohead lc rgb "#d62728" title "local calls (clock_nanosleep: the loop wakes)"
	EOF
	echo "timeline: $out"
}

notes() {
	[[ -s $work/notes ]] || return 0
	echo
	echo "the programs said:"
	sort "$work/notes" | uniq -c | sort -rn | sed 's/^ *\([0-9]*\) /    (x\1) /'
}

explain() {
	cat <<-EOF

		How to read it (examples/README.md says more).  The probe stands for CPU $rt_cpu's other
		realtime work: it only sleeps and wakes up, above the loop.  Plain, the loop's
		snapshot, buffers and the rest run in the kernel on CPU $rt_cpu, which on this kernel
		does not preempt them: the probe waits.  Offloaded, they run on CPU $hk_cpu and the
		probe should see what it sees in ideal, where the loop itself runs on CPU $hk_cpu.
		The loop still waits for each call it offloads: its cycle work and missed periods
		do not improve (async logging takes the per-cycle log line off the wait).  Noise
		of the machine (other work, the hypervisor) hits every column, ideal included:
		that is why the verdict compares medians of interleaved rounds with ideal's.
	EOF
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
	say "the loop: 1 kHz, SCHED_FIFO 80, on CPU $rt_cpu; a probe above it there, every $probe_period us"
	cat <<-EOF
		    each cycle:  log       a line (fprintf; fflush every 10 cycles)
		    every 20 ms, in turn:
		                 snapshot  save 4 MiB of state (open, write, close, rename; fdatasync every 10th)
		                 buffers   map and unmap 16 MiB (mmap MAP_POPULATE, munmap)
		                 config    read the config file (fopen, fgets, fclose)
		                 directory scan 1000 entries (opendir, readdir, closedir)
		                 name      resolve localhost (getaddrinfo: /etc/hosts, no network)
	EOF
	run_rounds
	summarize
	verdict
	((clear)) && table
	plot
	timeline
	notes
	explain
}

main
