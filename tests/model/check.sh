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
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
model=$here/handoff.pml
memlim=${RTO_MODEL_MEMLIM:-3000}
depth=1000000 # far above any run's depth (README: a few hundred)

mutants=0
case "${1:-}" in
--mutants) mutants=1 ;;
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

# run NAME KIND [-DDEFINE...]: build and run one pan; its output in $work/NAME.log.
# KIND: safety  the model with the workers' timed waits (asserts)
#       end     LIVE: asserts and invalid end states (a caller left waiting)
#       cycles  LIVE: non-progress cycles, with no progress label: any cycle
# Prints "errors N states S seconds T"; returns 0 if pan ran to its end.
run() {
	local name=$1 kind=$2
	shift 2
	local dir=$work/$name live=() cflags=(-DSAFETY) flags=()
	mkdir -p "$dir"
	cp "$model" "$dir/"
	[ "$kind" != safety ] && live=(-DLIVE)
	if [ "$kind" = cycles ]; then
		cflags=(-DNP)
		flags=(-l)
	fi
	(
		cd "$dir"
		spin -a "${live[@]}" "$@" handoff.pml >spin.log 2>&1 ||
			{ cat spin.log >&2; exit 1; }
		gcc -w -O2 -DNOCLAIM -DCOLLAPSE -DMEMLIM="$memlim" "${cflags[@]}" -o pan pan.c ||
			exit 1
		start=$(date +%s.%N)
		./pan -m"$depth" "${flags[@]}" >pan.log 2>&1 || true
		end=$(date +%s.%N)
		echo "$start $end" >time.log
	) || return 1
	cp "$dir/pan.log" "$work/$name.log"
	local errors states secs
	errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' "$dir/pan.log" | tail -1)
	states=$(sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' "$dir/pan.log" | tail -1)
	secs=$(awk '{printf "%.1f", $2 - $1}' "$dir/time.log")
	echo "errors ${errors:-?} states ${states:-?} seconds $secs"
	[ -n "$errors" ]
}

# A search that found nothing must have seen every state.
complete() {
	! grep -qE 'max search depth too small|Search not completed|out of memory|pan: reached -DMEMLIM' \
		"$work/$1.log"
}

failed=0

# ---- the model as the code has it ------------------------------------------------
for check in "safety safety" "end end" "cycles cycles"; do
	set -- $check
	if ! out=$(run "$1" "$2"); then
		echo "model: $1: pan did not run" >&2
		failed=1
		continue
	fi
	errors=${out#errors }
	errors=${errors%% *}
	if [ "$errors" = 0 ] && complete "$1"; then
		echo "model: $1: ok ($out)"
	elif [ "$errors" = 0 ]; then
		echo "model: $1: INCOMPLETE search ($out)" >&2
		grep -E 'depth|memory|MEMLIM|not completed' "$work/$1.log" >&2 || true
		failed=1
	else
		echo "model: $1: VIOLATION ($out)" >&2
		grep -E '^pan:' "$work/$1.log" >&2 || true
		failed=1
	fi
done

# ---- the seeded bugs (README.md, "Mutants") ---------------------------------------
# NAME KINDS: the checks to try, in order, until one reports a violation.
if [ $mutants = 1 ]; then
	while read -r mut kinds what; do
		[ -z "$mut" ] && continue
		caught=""
		for kind in ${kinds//,/ }; do
			out=$(run "$mut-$kind" "$kind" "-D$mut") || continue
			errors=${out#errors }
			errors=${errors%% *}
			if [ "$errors" != 0 ]; then
				why=$(grep -m1 -E '^pan:[0-9]*:|^pan: .*(cycle|end state)' "$work/$mut-$kind.log" || true)
				caught="$kind: ${why:-violation} ($out)"
				break
			fi
		done
		if [ -n "$caught" ]; then
			echo "mutant $mut: caught by $caught"
		else
			echo "mutant $mut: MISSED ($what)" >&2
			failed=1
		fi
	done <<'EOF'
MUT_NO_RECHECK end,cycles idle() sleeps without the re-check after sleepers++
MUT_LATE_DEC end,cycles idle() re-checks before sleepers++ and awake--
MUT_LATE_SEQ end,cycles idle() reads wake_seq after the re-check
MUT_NO_SLEEPER_WAKE end,cycles sleep_until_done() does not wake a sleeper
MUT_WAITING_STORE end,cycles PENDING -> WAITING by a plain store
MUT_CLAIM_NO_CAS end the slot's claim by load and store
MUT_POST_BEFORE_BODY end the post counter before the request
MUT_NO_KICKING_HOLD end,cycles publish() replaces KICKING
MUT_KICK_STORE end,cycles kick() stores KICKING without compare-and-swap
MUT_REQ_CLEAR_LATE end me->req cleared after DONE
MUT_NO_TAKE_KICK end,safety publish() leaves a pending kick for the next call
EOF
fi

if [ $failed != 0 ]; then
	echo "check.sh: FAILED" >&2
	exit 1
fi
echo "check.sh: passed"
