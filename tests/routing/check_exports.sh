#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# calls.tbl is the complete inventory of what librtoffload exports:
#   1. every exported function is a row of calls.tbl, or the public API
#      (rt_offload_* in include/rtoffload.h);
#   2. every row is exported (vfork only on x86-64, where it is written);
#   3. no PLT slot of the library points at a name it exports: the library
#      never calls its own interceptors (libsrc/base/real.h);
#   4. every row is named by a test under tests/;
#   5. the "made" column says how each wrapper is made: the generated unit
#      (shims.c) defines exactly the exported names of the rows made "gen";
#      a "hand" or "thread" row's exported name comes from another unit.
#
#   check_exports.sh LIBRARY CALLS_TBL RTOFFLOAD_H TESTS_DIR OBJDIR
set -eu
lib=$1 tbl=$2 hdr=$3 tests=$4 objdir=$5
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

nm -D --defined-only "$lib" | awk '$2 ~ /^[TWi]$/ { sub(/@.*/, "", $3); print $3 }' |
	sort -u >"$tmp/exported"
awk '!/^#/ && NF >= 3 { print $3 }' "$tbl" | sort -u >"$tmp/rows"
grep -o 'rt_offload_[a-z_]*' "$hdr" | sort -u >"$tmp/api"
[ "$(uname -m)" = x86_64 ] || grep -vx vfork "$tmp/rows" >"$tmp/r" && mv "$tmp/r" "$tmp/rows" 2>/dev/null || true

sort -u "$tmp/rows" "$tmp/api" >"$tmp/known"
comm -23 "$tmp/exported" "$tmp/known" >"$tmp/unlisted"
if [ -s "$tmp/unlisted" ]; then
	echo "exported but not a row of calls.tbl:" $(cat "$tmp/unlisted")
	fail=1
fi
comm -13 "$tmp/exported" "$tmp/rows" >"$tmp/missing"
if [ -s "$tmp/missing" ]; then
	echo "rows of calls.tbl the library does not export:" $(cat "$tmp/missing")
	fail=1
fi

objdump -R "$lib" | awk '$2 ~ /JUMP_SLOT|GLOB_DAT/ { sub(/@.*/, "", $3); print $3 }' |
	sort -u >"$tmp/slots"
comm -12 "$tmp/slots" "$tmp/exported" >"$tmp/self"
# Under ThreadSanitizer the library's own mutexes go through the tool's
# interceptor, first in the lookup order (libsrc/base/real.h: rto_mutex_lock).
if nm -D --undefined-only "$lib" | grep -q '__tsan_init'; then
	grep -vx 'pthread_mutex_lock\|pthread_mutex_trylock\|pthread_mutex_timedlock\|pthread_mutex_unlock' \
		"$tmp/self" >"$tmp/s" || true
	mv "$tmp/s" "$tmp/self"
fi
if [ -s "$tmp/self" ]; then
	echo "the library calls its own exported names through the PLT/GOT:" $(cat "$tmp/self")
	echo "(call rto_real_NAME instead: libsrc/base/real.h)"
	fail=1
fi

shims_o=$(find "$objdir" -name 'shims.c.o' | head -n 1)
if [ -z "$shims_o" ]; then
	echo "no shims.c.o under $objdir"
	fail=1
else
	nm --defined-only "$shims_o" | awk '$2 == "T" { sub(/@.*/, "", $3); print $3 }' |
		sort -u >"$tmp/generated"
	awk '!/^#/ && NF >= 4 && $4 == "gen" { print $3 }' "$tbl" | sort -u >"$tmp/gen"
	comm -12 "$tmp/gen" "$tmp/exported" >"$tmp/gen_exported"
	comm -23 "$tmp/gen_exported" "$tmp/generated" >"$tmp/gen_missing"
	comm -13 "$tmp/gen_exported" "$tmp/generated" >"$tmp/gen_extra"
	if [ -s "$tmp/gen_missing" ]; then
		echo "rows made gen whose wrapper shims.c does not define:" $(cat "$tmp/gen_missing")
		fail=1
	fi
	if [ -s "$tmp/gen_extra" ]; then
		echo "wrappers generated into shims.c for rows not made gen:" $(cat "$tmp/gen_extra")
		fail=1
	fi
	awk '!/^#/ && NF >= 4 && $4 != "gen" && $4 != "hand" && $4 != "thread" { print $3 }' \
		"$tbl" >"$tmp/bad_made"
	if [ -s "$tmp/bad_made" ]; then
		echo "rows whose made column is not gen, hand or thread:" $(cat "$tmp/bad_made")
		fail=1
	fi
fi

untested=
for name in $(cat "$tmp/rows"); do
	grep -rqw --include='*.c' --include='*.h' --include='*.py' --include='*.sh' -- "$name" "$tests" ||
		untested="$untested $name"
done
if [ -n "$untested" ]; then
	echo "rows of calls.tbl that no test names:$untested"
	fail=1
fi

[ $fail -eq 0 ] && echo "$(wc -l <"$tmp/rows") rows ($(wc -l <"$tmp/gen") generated), $(wc -l <"$tmp/exported") exported names: inventory complete, made as the table says, no self-calls, every row tested"
exit $fail
