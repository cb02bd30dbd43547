#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The demo's test: what it prints and writes, not how fast anything was.
#
#   test_demo.sh DEMO_SH BUILD_DIR
#
# Runs the demo with the examples of BUILD_DIR (--prebuilt), 2 rounds of
# 1 s, plain and --legacy, and checks: every round runs the four
# configurations, each once, in an order that turns from round to round;
# the first line after the rounds is the verdict, in one of its three
# forms, with a figure for each configuration or the ideal's spread; the
# table (when the verdict is clear) has a median and a spread for every
# configuration; the PNG is a PNG; the exit status is 0; a bad option
# stops the demo with status 2 before it runs anything.
set -euo pipefail

demo=$1
build=$2
tmp=$(mktemp -d)
trap 'rm -rf -- "$tmp"' EXIT
fails=0
fail() {
	echo "FAIL: $*" >&2
	fails=$((fails + 1))
}

unset RTOFFLOAD_OPTIONS

check_run() { # NAME [demo options...]
	local name=$1 out=$tmp/$1.out png=$tmp/$1.png status=0
	shift
	bash "$demo" --prebuilt "$build" --rounds 2 --round-secs 1 --png "$png" "$@" >"$out" 2>&1 ||
		status=$?
	echo "--- $name: exit status $status; its output:"
	cat "$out"
	((status == 0)) || fail "$name: exit status $status"

	# Interleaving: two round lines, each with the four configurations
	# once, the second starting where the first's second one stood.
	local rounds
	rounds=$(grep -E '^round [0-9]+/2:' "$out" || true)
	[[ $(grep -c . <<<"$rounds") == 2 ]] || fail "$name: not 2 round lines"
	local r1 r2
	r1=$(sed -n 's/^round 1\/2: *//p' <<<"$rounds" | sed -E 's/ +[0-9]+( +|$)/|/g')
	r2=$(sed -n 's/^round 2\/2: *//p' <<<"$rounds" | sed -E 's/ +[0-9]+( +|$)/|/g')
	[[ $r1 == "plain|offloaded|+ async log|ideal|" ]] || fail "$name: round 1 ran '$r1'"
	[[ $r2 == "offloaded|+ async log|ideal|plain|" ]] || fail "$name: round 2 ran '$r2'"

	# The verdict: the first line after the rounds (and a blank line).
	local verdict
	verdict=$(awk '/^round 2\/2:/ { getline; getline; print; exit }' "$out")
	if [[ $verdict =~ ^VERDICT:\ the\ other\ realtime\ thread\ on\ CPU\ [0-9]+\ woke\ more\ than\ 100\ us\ late\ [0-9]+\ times\ a\ minute\ plain,\ [0-9]+\ offloaded,\ [0-9]+\ offloaded\ \+\ async\ log,\ [0-9]+\ ideal\ \(median\ of\ 2\ rounds\;\ spread\ plain\ [0-9]+-[0-9]+,\ offloaded\ [0-9]+-[0-9]+,\ \+\ async\ log\ [0-9]+-[0-9]+,\ ideal\ [0-9]+-[0-9]+\)$ ]]; then
		# Clear: the table follows, a median and a spread in every column.
		grep -qE '^median of 2 \(min-max\) +plain +offloaded +\+ async log +ideal$' "$out" ||
			fail "$name: clear verdict, no table header"
		local row
		row=$(grep -E '^probe: > 100 us late, /min' "$out" || true)
		[[ $row =~ ^probe:\ \>\ 100\ us\ late,\ /min(\ +[0-9]+\ \([0-9]+-[0-9]+\)){4}$ ]] ||
			fail "$name: table row '$row'"
	elif [[ $verdict =~ ^VERDICT:\ too\ noisy\ to\ tell:\ .*\ still\ woke\ more\ than\ 100\ us\ late\ [0-9]+-[0-9]+\ times\ a\ minute\ \(median\ [0-9]+\ of\ 2\ rounds\),\ against\ [0-9]+\ plain ]]; then
		# Too noisy: no table, it would mislead.
		! grep -qE '^median of 2 \(min-max\)' "$out" || fail "$name: noisy verdict, yet a table"
	elif [[ $verdict =~ ^VERDICT:\ PREEMPT_RT\ kernel: ]]; then
		:
	else
		fail "$name: no verdict line after the rounds: '$verdict'"
	fi
	[[ $(grep -c '^VERDICT:' "$out") == 1 ]] || fail "$name: not exactly one verdict line"

	# Each task of the loop is named in the output.
	local t
	for t in log snapshot buffers config directory name; do
		grep -qE "^ +(each cycle: +)?$t +" "$out" || fail "$name: task '$t' not named"
	done

	# The picture: its path printed, a PNG there.
	grep -qxF "latency histogram: $png" "$out" || fail "$name: PNG path not printed"
	[[ $(head -c 8 "$png" 2>/dev/null | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]] ||
		fail "$name: $png is not a PNG"
	# rt_loop's runs: the timeline of a traced offloaded run beside it (issue 33).
	if [[ " $* " != *" --legacy "* && $build != "$tmp/fake" ]]; then
		local tl=${png%.png}-timeline.png
		grep -qxF "timeline: $tl" "$out" || fail "$name: timeline path not printed"
		[[ $(head -c 8 "$tl" 2>/dev/null | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]] ||
			fail "$name: $tl is not a PNG"
	fi
	# Nothing of the run is left behind in the build directory.
	compgen -G "$build/demo.*" >/dev/null && fail "$name: demo.* left in the build directory"
	return 0
}

# The verdict's logic, on figures chosen here: a stand-in rt_loop that
# prints the report lines of the real one with FAKE_LATE's late counts
# (per 10000 probe wake-ups), in a build directory of its own.  It says
# nothing on stderr: the demo shows what the programs said.
fake_build() {
	local b=$tmp/fake
	mkdir -p "$b/examples" "$b/libsrc"
	# The real library, which the stand-in's shell and tools take well.
	ln -s "$build/libsrc/librtoffload.so" "$b/libsrc/librtoffload.so"
	cat >"$b/examples/rt_loop" <<-'FAKE'
		#!/usr/bin/env bash
		cfg=plain hist=
		while (($#)); do
			case $1 in
			--offload) cfg=offloaded ;;
			--probe-cpu) cfg=ideal ;;
			--histogram) hist=$2 ;;
			esac
			shift
		done
		[[ $cfg == offloaded && $RTOFFLOAD_OPTIONS == *stdio:async* ]] && cfg=async
		late=$(tr ' ' '\n' <<<"$FAKE_LATE" | sed -n "s/^$cfg=//p")
		echo "probe wake-ups:                10000"
		echo "probe wake-up latency p99.9:   150.0 us"
		echo "probe wake-up latency max:     900.0 us"
		echo "probe wake-ups > 100 us late:  $late"
		echo "probe wake-ups > 1 ms late:    0"
		echo "cycle work p99:                40.0 us"
		echo "missed periods:                3"
		echo "loop CPU time:                 20.0 ms"
		[[ $cfg == offloaded || $cfg == async ]] && echo "offload round trip p50:        2.0 us"
		echo "work snapshot:                 10, avg 900.0 us, max 1000.0 us (save)"
		printf '30 %d\n150 %d\n' $((10000 - late)) "$late" >"$hist"
	FAKE
	chmod +x "$b/examples/rt_loop"
	cp "$b/examples/rt_loop" "$b/examples/legacy_loop"
	echo "$b"
}

check_run plain
check_run legacy --legacy
fake=$(fake_build)
FAKE_LATE="plain=500 offloaded=12 async=10 ideal=9" build=$fake check_run fake-clear
grep -qE '^VERDICT: the other realtime thread on CPU [0-9]+ woke more than 100 us late 15000 times a minute plain, 360 offloaded, 300 offloaded \+ async log, 270 ideal \(median of 2 rounds' \
	"$tmp/fake-clear.out" || fail "fake-clear: not the clear verdict with 15000/360/300/270"
grep -qE '^probe: > 100 us late, /min +15000 \(15000-15000\) +360 \(360-360\) +300 \(300-300\) +270 \(270-270\)$' \
	"$tmp/fake-clear.out" || fail "fake-clear: table row of the late wake-ups"
grep -qE '^  offloading removed 98% of them, with async logging 98%; ideal \(the work on CPU [0-9]+\) removes 98%\.$' \
	"$tmp/fake-clear.out" || fail "fake-clear: no line saying what offloading removed"
FAKE_LATE="plain=500 offloaded=600 async=550 ideal=9" build=$fake check_run fake-worse
grep -qE '^  offloading did not help here, though ideal \(the work on CPU [0-9]+\) removes 98%' \
	"$tmp/fake-worse.out" || fail "fake-worse: the verdict hides that offloading did not help"
FAKE_LATE="plain=500 offloaded=400 async=420 ideal=450" build=$fake check_run fake-noisy
for f in fake-clear fake-worse fake-noisy; do
	! grep -q '^the programs said:' "$tmp/$f.out" || fail "$f: the stand-in said something"
done
grep -qE '^VERDICT: too noisy to tell: .* 13500-13500 times a minute \(median 13500 of 2 rounds\), against 15000 plain' \
	"$tmp/fake-noisy.out" || fail "fake-noisy: not the noisy verdict with ideal 13500, plain 15000"

# A bad option: usage, status 2, nothing run.
status=0
bash "$demo" --prebuilt "$build" --rounds 0 >"$tmp/bad.out" 2>&1 || status=$?
((status == 2)) || fail "--rounds 0: exit status $status, not 2"
grep -q -- '--rounds must be a whole number' "$tmp/bad.out" || fail "--rounds 0: no message"
status=0
bash "$demo" --prebuilt "$build" --frobnicate >"$tmp/bad.out" 2>&1 || status=$?
((status == 2)) || fail "--frobnicate: exit status $status, not 2"
grep -q '^round ' "$tmp/bad.out" && fail "--frobnicate: rounds ran"

if ((fails)); then
	echo "test_demo: $fails failures" >&2
	exit 1
fi
echo "test_demo: all passed"
