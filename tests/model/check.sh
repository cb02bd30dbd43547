#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Check the hand-off model (handoff.pml, README.md here) exhaustively with
# spin.  Exits non-zero on any violation and on any search that was not
# complete (cut short by its depth bound or its memory limit).
#
#   tests/model/check.sh             the model as the code has it
#   tests/model/check.sh --mutants   that, then each seeded bug: spin must
#                                    report a violation for every one
#
# Environment: RTO_MODEL_MEMLIM (MiB per pan run, default 3000),
# RTO_MODEL_KEEP=1 keeps the work directory (pan's trails) and says where.
# RTO_MODEL_JOBS: pans at once (default: the CPUs).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
model=$here/handoff.pml
memlim=${RTO_MODEL_MEMLIM:-3000}
depth=1000000 # far above any run's depth (README: a few hundred)

mutants=0
normal=1
case "${1:-}" in
--mutants) mutants=1 ;;
--mutants-only) mutants=1 normal=0 ;; # for working on the mutants
"") ;;
*)
	echo "usage: $0 [--mutants]" >&2
	exit 2
	;;
esac

for tool in spin gcc; do
	if ! command -v "$tool" >/dev/null; then
		echo "check.sh: $tool not found (.ci/deps installs it)" >&2
		exit 1
	fi
done

work=$(mktemp -d "${TMPDIR:-/tmp}/rto-model.XXXXXX")
if [ "${RTO_MODEL_KEEP:-0}" = 1 ]; then
	echo "check.sh: work directory $work" >&2
else
	trap 'rm -rf "$work"' EXIT
fi

# run NAME KIND HUNT [-DDEFINE...]: build and run one pan; its output in $work/NAME.log.
# KIND: end     LIVE: asserts and invalid end states (a caller left waiting)
#       cycles  LIVE: non-progress cycles, with no progress label: any cycle
#       safety  the workers' long timed waits may end: asserts only
# HUNT: 0, the exhaustive search; N > 0, a hunt for a counterexample with
# a randomised search order (seed N) and bitstate hashing: what it finds
# is a real execution of the model, what it misses proves nothing.
# Prints "errors N states S seconds T"; returns 0 if pan ran to its end.
run() {
	local name=$1 kind=$2 hunt=$3
	shift 3
	local dir=$work/$name live=() cflags=(-DSAFETY) flags=() opt=-O2 defs=()
	# -O0 among the defines: a small search, where gcc -O2's 4 s outweigh what it saves.
	for d in "$@"; do
		if [ "$d" = -O0 ]; then opt=-O0; else defs+=("$d"); fi
	done
	set -- "${defs[@]}"
	mkdir -p "$dir"
	cp "$model" "$dir/"
	[ "$kind" != safety ] && live=(-DLIVE)
	if [ "$kind" = cycles ]; then
		cflags=(-DNP)
		flags=(-l)
	fi
	if [ "$hunt" != 0 ]; then
		cflags+=(-DBITSTATE -DT_RAND -DP_RAND)
		flags+=(-RS"$hunt" -w26)
	else
		cflags+=(-DCOLLAPSE -DMEMLIM="$memlim")
	fi
	(
		cd "$dir"
		spin -a "${live[@]}" "$@" handoff.pml >spin.log 2>&1 ||
			{ cat spin.log >&2; exit 1; }
		gcc -w "$opt" -DNOCLAIM "${cflags[@]}" -o pan pan.c || exit 1
		start=$(date +%s.%N)
		if [ "$hunt" != 0 ]; then
			timeout 60 ./pan -m"$depth" "${flags[@]}" >pan.log 2>&1 || true
		else
			./pan -m"$depth" "${flags[@]}" >pan.log 2>&1 || true
		fi
		end=$(date +%s.%N)
		echo "$start $end" >time.log
	) || return 1
	cp "$dir/pan.log" "$work/$name.log"
	local errors states secs
	errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' "$dir/pan.log" | tail -1)
	states=$(sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' "$dir/pan.log" | tail -1)
	secs=$(awk '{printf "%.1f", $2 - $1}' "$dir/time.log")
	echo "errors ${errors:-0} states ${states:-?} seconds $secs"
	[ -n "$errors" ] || [ "$hunt" != 0 ]
}

# A search that found nothing must have seen every state.
complete() {
	! grep -qE 'max search depth too small|Search not completed|out of memory|pan: reached -DMEMLIM' \
		"$work/$1.log"
}

failed=0
# The pans are independent: RTO_MODEL_JOBS (default: the CPUs) at once;
# each one's line goes to $work/NAME.result and they are printed in order.
jobs=${RTO_MODEL_JOBS:-$(nproc)}
throttle() {
	while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do
		wait -n || true
	done
}

# check_model NAME KIND DEFINES: the model must hold, the search complete.
check_model() {
	local name=$1 kind=$2 out errors
	shift 2
	if ! out=$(run "$name" "$kind" 0 "$@"); then
		echo "FAIL model: $name: pan did not run" >"$work/$name.result"
		return
	fi
	errors=${out#errors }
	errors=${errors%% *}
	if [ "$errors" = 0 ] && complete "$name"; then
		echo "ok model: $name ($kind $*): ok ($out)" >"$work/$name.result"
	elif [ "$errors" = 0 ]; then
		{
			echo "FAIL model: $name ($kind $*): INCOMPLETE search ($out)"
			grep -E 'depth|memory|MEMLIM|not completed' "$work/$name.log" || true
		} >"$work/$name.result"
	else
		{
			echo "FAIL model: $name ($kind $*): VIOLATION ($out)"
			grep -E '^pan:' "$work/$name.log" || true
		} >"$work/$name.result"
	fi
}

# check_mutant MUT KIND DEFINES: spin must report a violation, hunted with
# up to 4 random seeds.
check_mutant() {
	local mut=$1 kind=$2 caught="" out errors why seed
	shift 2
	for seed in 1 2 3 4; do
		out=$(run "$mut-$seed" "$kind" "$seed" "-D$mut" "$@") || continue
		errors=${out#errors }
		errors=${errors%% *}
		if [ "$errors" != 0 ]; then
			why=$(grep -m1 -E '^pan:[0-9]+:' "$work/$mut-$seed.log" || true)
			caught="$kind, seed $seed: ${why#pan:1: } ($out)"
			break
		fi
	done
	if [ -n "$caught" ]; then
		echo "ok mutant $mut: caught by $caught" >"$work/$mut.result"
	else
		echo "FAIL mutant $mut: MISSED" >"$work/$mut.result"
	fi
}

# ---- the model as the code has it ------------------------------------------------
# NAME KIND DEFINES: 2 callers, 2 workers, 2 requests each (R=1: one each;
# R1: caller 1's, if fewer).  Caller 0 goes by its slot, caller 1 through
# the queue; a signal handler without SA_RESTART runs on caller 0
# (NO_SIGNALS: not), caller 1 is cancelled (NO_CANCEL: not); TAKEBACK:
# caller 0 takes back a post (on_stall=local); GROW: workers=1 and an extra
# worker, caller 0's first call blocks for good; LEAVE: the workers end
# once the callers are done (alone.c).  README.md, "Runs", says
# why these.  The longest first, so that the lanes end together.
models="
kick end -DNO_CANCEL
timers cycles -DR=1
cancel end -DNO_SIGNALS
takeback end -DTAKEBACK -DNO_SIGNALS -DNO_CANCEL -DR=1
takeback_reuse end -DTAKEBACK -DNO_SIGNALS -DNO_CANCEL -DR1=0 -O0
grow end -DGROW -DNO_SIGNALS -DNO_CANCEL -O0
leave end -DLEAVE -DNO_SIGNALS -DNO_CANCEL -DNO_WORKER_TIMEOUT -DR=1
"

# ---- the seeded bugs (README.md, "Mutants") ---------------------------------------
# NAME KIND DEFINES: the check that must report a violation.
mutants_list="
MUT_NO_RECHECK end -DNO_SIGNALS -DNO_CANCEL
MUT_LATE_DEC end -DNO_SIGNALS -DNO_CANCEL
MUT_LATE_SEQ end -DNO_SIGNALS -DNO_CANCEL
MUT_WAITING_STORE end -DNO_SIGNALS -DNO_CANCEL
MUT_CLAIM_NO_CAS end -DNO_SIGNALS -DNO_CANCEL
MUT_POST_BEFORE_BODY end -DNO_SIGNALS -DNO_CANCEL
MUT_NO_KICKING_HOLD end -DNO_CANCEL
MUT_KICK_STORE cycles -DNO_CANCEL
MUT_REQ_CLEAR_LATE end -DNO_CANCEL
MUT_NO_TAKE_KICK end -DNO_CANCEL
MUT_TAKE_NO_CAS end -DTAKEBACK -DNO_SIGNALS -DNO_CANCEL -DR=1 -O0
MUT_NO_SLEEPER_WAKE end -DGROW -DNO_SIGNALS -DNO_CANCEL -O0
MUT_LEAVE_NOT_WORK end -DLEAVE -DNO_SIGNALS -DNO_CANCEL -DNO_WORKER_TIMEOUT -DR=1
"

names=()
if [ $normal = 1 ]; then
	while read -r name kind defs; do
		[ -n "$name" ] || continue
		throttle
		# shellcheck disable=SC2086 # defs: several words
		check_model "$name" "$kind" $defs &
		names+=("$name")
	done <<<"$models"
fi
if [ $mutants = 1 ]; then
	while read -r mut kind defs; do
		[ -n "$mut" ] || continue
		throttle
		# shellcheck disable=SC2086
		check_mutant "$mut" "$kind" $defs &
		names+=("$mut")
	done <<<"$mutants_list"
fi
wait
for name in "${names[@]}"; do
	if [ ! -s "$work/$name.result" ]; then
		echo "check.sh: $name: no result" >&2
		failed=1
	elif grep -q '^FAIL ' "$work/$name.result"; then
		sed -e '1s/^FAIL //' "$work/$name.result" >&2
		failed=1
	else
		sed -e '1s/^ok //' "$work/$name.result"
	fi
done

if [ $failed != 0 ]; then
	echo "check.sh: FAILED" >&2
	exit 1
fi
echo "check.sh: passed"
