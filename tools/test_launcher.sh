#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Tests of the rtoffload launcher: flag errors, the environment it builds,
# exec failures, runs under the real library, and `rtoffload check`.
#
#   test_launcher.sh LAUNCHER LIBRARY
#
# LAUNCHER is the rtoffload executable, LIBRARY the librtoffload it should
# find beside itself in the build tree.  The environment tests preload a
# stub library built here (RTOFFLOAD_LIBRARY), so that `env` can print what
# the launcher set without the real library in the way; the runs that must
# succeed use the real one.  No test asserts a timing.
set -u

if [ $# -ne 2 ]; then
	echo "usage: $0 LAUNCHER LIBRARY" >&2
	exit 2
fi
launcher=$1
library=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unset LD_PRELOAD RTOFFLOAD_OPTIONS RTOFFLOAD_LIBRARY
failed=0

ok() {
	echo "ok - $1"
}

not_ok() {
	echo "not ok - $1"
	sed 's/^/#   /' "$tmp/err" "$tmp/out" 2>/dev/null | head -n 20
	failed=$((failed + 1))
}

# run CMD...: status in $status, output in $tmp/out and $tmp/err.
run() {
	"$@" >"$tmp/out" 2>"$tmp/err"
	status=$?
}

# The value of NAME in the output of `env`.
var() {
	sed -n "s/^$1=//p" "$tmp/out"
}

# expect WHAT EXPECTED ACTUAL
expect() {
	if [ "$2" = "$3" ]; then
		ok "$1"
	else
		echo "#   expected: $2"
		echo "#   got:      $3"
		not_ok "$1"
	fi
}

# ---- usage errors: exit 2, one line naming the flag, then the usage -------

# usage_error FLAG ARGS...: rtoffload ARGS fails, and its first line names FLAG.
usage_error() {
	flag=$1
	shift
	run "$launcher" "$@"
	first=$(head -n 1 "$tmp/err")
	if [ "$status" -eq 2 ] && [ "$(wc -l <"$tmp/err")" -eq 2 ] &&
		case $first in "rtoffload: "*"$flag"*) true ;; *) false ;; esac &&
		sed -n 2p "$tmp/err" | grep -q '^Usage: ' && [ ! -s "$tmp/out" ]; then
		ok "usage error: rtoffload $*"
	else
		echo "#   status $status, want 2 and one line naming '$flag'"
		not_ok "usage error: rtoffload $*"
	fi
}

usage_error --rt-cpus --rt-cpus 1-x true
usage_error --rt-cpus --rt-cpus 3-1 true
usage_error --rt-cpus --rt-cpus 99999 true
usage_error --helper-cpus --helper-cpus a true
usage_error --mode --mode fast true
usage_error --mark --mark bogus true
usage_error --mark --mark rt, true
usage_error --mark --mark name: true
usage_error --mark --mark none,rt true
usage_error --mark --mark name:a,name:b true
usage_error "--mark cpus needs --rt-cpus" --mark cpus true
usage_error --workers --workers 0 true
usage_error --workers --workers 65 true
usage_error --workers --workers 2x true
usage_error --stats-file --stats-file= true
usage_error --frobnicate --frobnicate true
usage_error "-x" -x true
usage_error "ambiguous option '--st'" --st true
usage_error "'--mark' needs a value" --mark
usage_error "no program" --stats
usage_error "no program"
usage_error "check: unexpected argument" check extra
usage_error --bogus check --bogus

# ---- help and version ---------------------------------------------------

run "$launcher" --help
if [ "$status" -eq 0 ] && grep -q -- '--mark POLICY' "$tmp/out" &&
	grep -q 'else --mark rt' "$tmp/out"; then
	ok "--help"
else
	not_ok "--help"
fi
run "$launcher" --version
if [ "$status" -eq 0 ] && grep -q '^rtoffload [0-9]' "$tmp/out"; then
	ok "--version"
else
	not_ok "--version"
fi

# ---- the environment, seen through `env` with a stub library ------------

mkdir "$tmp/lib" "$tmp/empty"
: >"$tmp/stub.c"
if ! ${CC:-cc} -shared -fPIC -o "$tmp/lib/libstub.so" "$tmp/stub.c" ||
	! ${CC:-cc} -shared -fPIC -o "$tmp/lib/libother.so" "$tmp/stub.c"; then
	echo "not ok - cannot build the stub libraries with ${CC:-cc}"
	exit 1
fi
libdir=$(cd "$tmp/lib" && pwd -P)
stub=$libdir/libstub.so
other=$libdir/libother.so

run env RTOFFLOAD_LIBRARY="$stub" "$launcher" -- env
expect "status of rtoffload -- env" 0 "$status"
expect "LD_PRELOAD holds the library" "$stub" "$(var LD_PRELOAD)"
expect "RTOFFLOAD_OPTIONS defaults to mark=rt" "mark=rt" "$(var RTOFFLOAD_OPTIONS)"

run env RTOFFLOAD_LIBRARY="$stub" "$launcher" --rt-cpus 1 --helper-cpus 0 --workers 3 \
	--mode strict --mark 'name:ctrl*,rt' --stats --stats-file "$tmp/s:%p.json" -v -v -- env
expect "every flag becomes a key; values with ':' quoted" \
	"rt_cpus=1:helper_cpus=0:workers=3:mode=strict:mark=\"name:ctrl*,rt\":stats=1:stats_file=\"$tmp/s:%p.json\":verbosity=2" \
	"$(var RTOFFLOAD_OPTIONS)"
expect "--verbose shows the variables" 1 \
	"$(grep -c "^rtoffload: LD_PRELOAD=$stub RTOFFLOAD_OPTIONS=rt_cpus=1:" "$tmp/err")"

run env RTOFFLOAD_LIBRARY="$stub" LD_PRELOAD="$other" "$launcher" -- env
expect "an existing LD_PRELOAD is kept, after the library" "$stub:$other" "$(var LD_PRELOAD)"

run env RTOFFLOAD_LIBRARY="$stub" LD_PRELOAD="$other $stub" "$launcher" -- env
expect "the library is not added twice" "$other:$stub" "$(var LD_PRELOAD)"

cp "$stub" "$libdir/libasan.so.8"
run env RTOFFLOAD_LIBRARY="$stub" LD_PRELOAD="$other:$libdir/libasan.so.8" "$launcher" -- env
expect "a sanitizer's runtime stays first" "$libdir/libasan.so.8:$stub:$other" \
	"$(var LD_PRELOAD)"

run env RTOFFLOAD_LIBRARY="$stub" RTOFFLOAD_OPTIONS="spin_ns=1000:" "$launcher" --stats -- env
expect "an existing RTOFFLOAD_OPTIONS is kept" "spin_ns=1000:mark=rt:stats=1" \
	"$(var RTOFFLOAD_OPTIONS)"

run env RTOFFLOAD_LIBRARY="$stub" RTOFFLOAD_OPTIONS='mark="name:x*"' "$launcher" -- env
expect "no default mark= when the environment has one" 'mark="name:x*"' \
	"$(var RTOFFLOAD_OPTIONS)"

run env RTOFFLOAD_LIBRARY="$stub" RTOFFLOAD_OPTIONS=mark=main "$launcher" --mark all -- env
expect "--mark comes after, so it wins" "mark=main:mark=all" "$(var RTOFFLOAD_OPTIONS)"

run env RTOFFLOAD_LIBRARY="$stub" RTOFFLOAD_OPTIONS=rt_cpus=1 "$launcher" --mark cpus -- env
expect "--mark cpus takes rt_cpus= from the environment" "rt_cpus=1:mark=cpus" \
	"$(var RTOFFLOAD_OPTIONS)"

run env RTOFFLOAD_LIBRARY="$stub" "$launcher" sh -c 'printf "%s|" "$@"' sh --mark 'a b' ''
expect "the program's own arguments are left alone" "--mark|a b||" "$(cat "$tmp/out")"

# ---- exec failures, like env(1) -------------------------------------------

run env RTOFFLOAD_LIBRARY="$stub" "$launcher" "$tmp/missing"
expect "a missing program: 127" 127 "$status"
expect "a missing program: the message" \
	"rtoffload: cannot run '$tmp/missing': No such file or directory" "$(cat "$tmp/err")"

: >"$tmp/plain"
chmod 644 "$tmp/plain"
run env RTOFFLOAD_LIBRARY="$stub" "$launcher" "$tmp/plain"
expect "a program that cannot be run: 126" 126 "$status"

run env RTOFFLOAD_LIBRARY="$stub" PATH="$tmp/empty" "$launcher" -- check
expect "after --, check is a program" 127 "$status"

run env RTOFFLOAD_LIBRARY="$tmp/nope.so" "$launcher" true
expect "RTOFFLOAD_LIBRARY missing: 125" 125 "$status"
expect "RTOFFLOAD_LIBRARY missing: the message names it" 1 \
	"$(grep -c '^rtoffload: RTOFFLOAD_LIBRARY=' "$tmp/err")"

# ---- the real library, found beside the launcher in the build tree ---------

# inode LIB: the file a path names, symlinks followed.
inode() {
	stat -L -c %d:%i "$1" 2>/dev/null
}

run "$launcher" -v -- true
found=$(sed -n 's/^rtoffload: LD_PRELOAD=\([^ :]*\).*/\1/p' "$tmp/err")
expect "the build tree's library is found" "$(inode "$library")" "$(inode "$found")"
case $found in
/*) ok "the library's path is absolute" ;;
*) not_ok "the library's path is absolute: $found" ;;
esac

# The success path: these pass mark= (rt by default) to the real library,
# which must accept it and run the program.  In the sanitizer presets the
# library is instrumented: its runtime (LAUNCHER_PRELOAD_FIRST, from CMake)
# is preloaded first, as a program built with -fsanitize would have it.
if [ -n "${LAUNCHER_PRELOAD_FIRST:-}" ]; then
	export LD_PRELOAD="$LAUNCHER_PRELOAD_FIRST"
fi
run "$launcher" --stats -- true
expect "rtoffload --stats -- true: 0" 0 "$status"
expect "--stats prints the library's table" 1 "$(grep -c '^total ' "$tmp/err")"

# shellcheck disable=SC2016 # $1 is the inner shell's
run "$launcher" --mark all --stats-file "$tmp/stats.%p.json" -- sh -c 'echo hello >"$1"; cat "$1"' \
	sh "$tmp/hello"
expect "--mark all: the program's output" hello "$(cat "$tmp/out")"
if grep -q '"offloaded":[1-9]' "$tmp"/stats.*.json 2>/dev/null; then
	ok "--mark all --stats-file: calls were offloaded"
else
	not_ok "--mark all --stats-file: calls were offloaded"
fi

run "$launcher" --mark main -- sh -c 'exit 3'
expect "the program's exit status comes through" 3 "$status"

# ---- rtoffload check -------------------------------------------------------------

run "$launcher" check
expect "check: 0" 0 "$status"
for title in CPUs Kernel Limits Library Recommendations; do
	expect "check prints '$title'" 1 "$(grep -c "^$title\$" "$tmp/out")"
done
for row in model isolated nohz_full "helper CPUs" preemption "RT throttling" "helper polling" clocksource \
	timer_migration RLIMIT_RTPRIO RLIMIT_MEMLOCK SCHED_FIFO; do
	expect "check reports $row" 1 "$(grep -c "^  $row  *[^ ]" "$tmp/out")"
done

# The host's share: said exactly when /proc/stat shows steal on some CPU.
stolen=$(awk '/^cpu[0-9]/ && $9 > 0 { n++ } END { print n ? 1 : 0 }' /proc/stat)
expect "check reports the host's share when there is steal ($stolen)" "$stolen" \
	"$(grep -c "^  host's share  *CPU 0 " "$tmp/out")"

run "$launcher" --rt-cpus 0 check
expect "--rt-cpus 0 check: 0" 0 "$status"
expect "check takes --rt-cpus" 1 "$(grep -c '^  helper CPUs .*rt_cpus 0' "$tmp/out")"

# check --options: the configuration's section, and exit 78 when the
# library would refuse it (with the library's own line).
if [ "$(nproc)" -ge 2 ]; then
	run "$launcher" check --options "rt_cpus=1:helper_cpus=0:workers=1"
	expect "check --options (valid): 0" 0 "$status"
	expect "check --options shows where helpers run" 1 \
		"$(grep -c '^  helpers run on   CPU 0 (helper_cpus=, 1 worker)' "$tmp/out")"
	expect "check --options shows the realtime CPUs" 1 "$(grep -c '^  realtime CPUs    1' "$tmp/out")"
	sed -n '/^Configuration/,$p' "$tmp/out" >"$tmp/conf"
	for r in isolcpus nohz_full "RT throttling" preemption; do
		expect "check --options says whether $r suits" 1 "$(grep -c "^  $r  *[^ ]" "$tmp/conf")"
	done
	expect "check --options explains workers=1" 1 \
		"$(grep -A1 '^    workers=1$' "$tmp/out" | grep -c 'helper threads')"
	expect "check --options: accepted" 1 "$(grep -c '^  verdict  *accepted' "$tmp/out")"
	run "$launcher" check --options "rt_cpus=1:helper_cpus=1"
	expect "check --options helpers on rt_cpus: 78" 78 "$status"
	expect "check --options says why" 1 "$(grep -c 'helper_cpus=1 overlaps rt_cpus=1' "$tmp/out")"
	run env RTOFFLOAD_OPTIONS=helper_cpus=4096 "$launcher" check
	expect "check with RTOFFLOAD_OPTIONS=helper_cpus=4096: 78" 78 "$status"
	expect "check names the key" 1 "$(grep -c 'RTOFFLOAD_OPTIONS: helper_cpus=' "$tmp/out")"
fi
run "$launcher" check --options "policy=nosuchcall:strict"
expect "check --options with a rule the library refuses: 78" 78 "$status"
expect "check shows the library's line" 1 "$(grep -c "no wrapped call or class named 'nosuchcall'" "$tmp/out")"
run "$launcher" --options x -- true
expect "--options outside check: usage error" 2 "$status"

# Every key the library accepts is explained by check, and an unknown one
# is called so.  The keys are the library's own list, from its error line.
run "$launcher" check --options "no_such_key=1"
expect "check --options no_such_key=1: 78" 78 "$status"
expect "check calls no_such_key unknown" 1 "$(grep -A1 '^    no_such_key=1$' "$tmp/out" | grep -c '^        unknown key$')"
keys=$(sed -n "s/.*unknown key 'no_such_key' (keys: \(.*\))\$/\1/p" "$tmp/out" | tr -d ',')
expect "check shows the library's list of keys" 1 "$(test -n "$keys" && echo 1)"
for k in $keys; do # a value in $tmp: stats_file= and report_path= write there
	run "$launcher" check --options "$k=$tmp/x"
	expect "check explains $k" 1 \
		"$(grep -A1 "^    $k=$tmp/x\$" "$tmp/out" | grep -v '^    [^ ]' | grep -vc '^        unknown key$')"
done

echo
if [ "$failed" -ne 0 ]; then
	echo "$failed test(s) failed"
	exit 1
fi
echo "all launcher tests passed"
