#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# trace=lttng (issue 33): a real LTTng session traces trace_child's marked
# loop, and babeltrace2's events match the program's own statistics:
# check_lttng.py counts them (offload_request/return and helper_begin/end
# of "write" equal the statistics' offloaded writes, each id seen on both
# sides; "local" of clock_nanosleep equals its local count).  The loop runs
# under the seccomp witness: with the tracepoints enabled its calls make no
# system call but futex.  A second run (pool hog) counts the pool_full,
# stall and stall_verdict events against the statistics, and pairs the
# predicted windows' and naps' begins and ends.
#
# The session daemon is private: started with --daemonize for the test
# only, as an unprivileged user (nobody) when run as root, with LTTNG_HOME
# in a temporary directory (a per-user daemon keeps its sockets there, so
# it never meets the machine's own root session daemon), and stopped at
# the end.
#
# Usage: test_lttng.sh TRACE_CHILD CHECK_LTTNG_PY PYTHON3 [POOL_MIN]
# (POOL_MIN 0 under a sanitizer, whose allocator wins over malloc=pool)
set -eu
child=$1
check=$2
python=${3:-python3}
pool_min=${4:-1}

for p in lttng-sessiond lttng babeltrace2 setpriv; do
	command -v "$p" >/dev/null || { echo "FAIL: $p missing (.ci/deps installs lttng-tools, babeltrace2)"; exit 1; }
done

dir=$(mktemp -d /tmp/rtoffload-lttng.XXXXXX)
# rt: the second run's busy thread takes SCHED_FIFO 99: CAP_SYS_NICE kept
# for nobody (a container may not let root raise RLIMIT_RTPRIO instead).
if [ "$(id -u)" -eq 0 ]; then
	chown nobody "$dir"
	as() { setpriv --reuid=nobody --regid=nogroup --clear-groups $rt env HOME="$dir" LTTNG_HOME="$dir" "$@"; }
else
	as() { env HOME="$dir" LTTNG_HOME="$dir" "$@"; }
fi
rt=
chmod 755 "$dir"

stop() {
	pid=$(cat "$dir/.lttng/lttng-sessiond.pid" 2>/dev/null || true)
	if [ -n "$pid" ]; then
		kill "$pid" 2>/dev/null || true
		i=0
		while kill -0 "$pid" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	fi
	rm -rf "$dir"
}
trap stop EXIT

as lttng-sessiond --daemonize --no-kernel
# One session, one traced run: session NAME TRACE_CHILD_ARGS... (options in $opts).
session() {
	name=$1
	shift
	as lttng create "$name" --output="$dir/$name" >/dev/null
	# The read timer (LTTng's default for user space): the consumer wakes by
	# itself, the traced thread never writes to its wake-up pipe.
	as lttng enable-channel --userspace --read-timer=200000 rto >/dev/null
	as lttng enable-event --userspace --channel=rto 'rtoffload:*' >/dev/null
	as lttng start >/dev/null
	status=0
	as env RTOFFLOAD_OPTIONS="trace=lttng:fd_local=none:stats_file=$dir/$name.json$opts" \
		"$child" "$@" >"$dir/child.out" 2>"$dir/child.err" || status=$?
	as lttng stop >/dev/null
	as lttng destroy >/dev/null
	cat "$dir/child.out"
	if [ $status -ne 0 ]; then
		echo "FAIL: trace_child $* exited $status:"
		cat "$dir/child.err"
		exit 1
	fi
	babeltrace2 "$dir/$name" >"$dir/$name.txt"
}

opts=
session rto 300 witness
if [ -s "$dir/child.err" ]; then
	echo "FAIL: trace_child wrote on stderr:"
	cat "$dir/child.err"
	exit 1
fi
grep -q "installed=1 .*other_syscalls=0 " "$dir/child.out" || {
	echo "FAIL: the witness saw system calls other than futex with the tracepoints enabled"
	exit 1
}
"$python" "$check" "$dir/rto.txt" "$dir/rto.json"

# The other events: malloc=pool's pool_full each cycle, and stalls while a
# SCHED_FIFO 99 thread holds the helpers' CPU (as in test_trace.c).
opts=:malloc=pool:pool_kb=64:helper_cpus=0:stall_us=2000
rt="--inh-caps=+sys_nice --ambient-caps=+sys_nice"
session more 300 pool hog
"$python" "$check" --more "$dir/more.txt" "$dir/more.json" "$pool_min"
