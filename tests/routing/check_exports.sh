#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# calls.tbl is the complete inventory of what librtoffload exports:
#   1. every exported function is a row of calls.tbl, or the public API
#      (rt_offload_* in include/rtoffload.h);
#   2. every row is exported (vfork only on x86-64, where it is written);
#   3. no PLT slot of the library points at a name it exports: the library
#      never calls its own interceptors (libsrc/real.h);
#   4. every row is named by a test under tests/.
#
#   check_exports.sh LIBRARY CALLS_TBL RTOFFLOAD_H TESTS_DIR
set -eu
lib=$1 tbl=$2 hdr=$3 tests=$4
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
# interceptor, first in the lookup order (libsrc/real.h: rto_mutex_lock).
if nm -D --undefined-only "$lib" | grep -q '__tsan_init'; then
	grep -vx 'pthread_mutex_lock\|pthread_mutex_trylock\|pthread_mutex_timedlock\|pthread_mutex_unlock' \
		"$tmp/self" >"$tmp/s" || true
	mv "$tmp/s" "$tmp/self"
fi
if [ -s "$tmp/self" ]; then
	echo "the library calls its own exported names through the PLT/GOT:" $(cat "$tmp/self")
	echo "(call rto_real_NAME instead: libsrc/real.h)"
	fail=1
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

[ $fail -eq 0 ] && echo "$(wc -l <"$tmp/rows") rows, $(wc -l <"$tmp/exported") exported names: inventory complete, no self-calls, every row tested"
exit $fail
