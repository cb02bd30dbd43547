#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Issue 32: an installation works wherever it is put.
#
#   install_check.sh BUILD_DIR SOURCE_DIR
#
# Installs BUILD_DIR into a temporary prefix (`cmake --install --prefix`,
# not the configure-time prefix), then builds examples/hello_offload.c
# against that prefix with pkg-config and with find_package
# (examples/consumer), and runs each program linked and preloaded: it
# exits 0 only when its marked thread's calls ran on a helper.
set -eu
build=$1
src=$2
cc=${CC:-cc}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rto-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

fail() {
	echo "install_check: $*" >&2
	exit 1
}

cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" || {
	cat "$tmp/install.log"
	fail "cmake --install failed"
}

pc=$(find "$prefix" -name rtoffload.pc)
[ -n "$pc" ] || fail "no rtoffload.pc installed"
grep -q "^prefix=$prefix\$" "$pc" || fail "rtoffload.pc's prefix is not $prefix: $(grep ^prefix= "$pc")"
export PKG_CONFIG_PATH="$(dirname "$pc")"
libdir=$(pkg-config --variable=libdir rtoffload)
[ -e "$libdir/librtoffload.so.0" ] || fail "no librtoffload.so.0 in pkg-config's libdir $libdir"
for f in include/rtoffload.h bin/rtoffload share/man/man1/rtoffload.1 share/man/man7/librtoffload.7 \
	share/man/man3/rt_offload_mark_thread.3 share/man/man3/rt_offload_get_stats.3; do
	[ -e "$prefix/$f" ] || fail "$f not installed"
done
grep -q '^\.BI helper_wake= ' "$prefix/share/man/man7/librtoffload.7" ||
	fail "librtoffload(7) has no generated option list"
[ -e "$libdir/cmake/rtoffload/rtoffloadConfig.cmake" ] ||
	fail "no CMake package config under $libdir/cmake/rtoffload"

# pkg-config: linked (an rpath for the library outside the loader's path)
# and header only, preloaded.
# shellcheck disable=SC2046
$cc -Wall -Werror -o "$tmp/pc_linked" "$src/examples/hello_offload.c" \
	$(pkg-config --cflags --libs rtoffload) -Wl,-rpath,"$libdir" ||
	fail "building with pkg-config --cflags --libs failed"
# shellcheck disable=SC2046
$cc -Wall -Werror -o "$tmp/pc_plain" "$src/examples/hello_offload.c" \
	$(pkg-config --cflags rtoffload) || fail "building with pkg-config --cflags failed"

# find_package(rtoffload CONFIG REQUIRED): rtoffload::rtoffload.
cmake -S "$src/examples/consumer" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$prefix" \
	-DCMAKE_C_COMPILER="$cc" >"$tmp/consumer.log" 2>&1 &&
	cmake --build "$tmp/consumer" >>"$tmp/consumer.log" 2>&1 || {
	cat "$tmp/consumer.log"
	fail "building examples/consumer with find_package failed"
}

run() { # NAME PRELOAD PROGRAM
	out=$(env ${2:+LD_PRELOAD="$2"} "$3" 2>&1) || fail "$1: exit $?: $out"
	echo "$1: $out"
}
run "pkg-config, linked" "" "$tmp/pc_linked"
run "pkg-config, preloaded" "$libdir/librtoffload.so.0" "$tmp/pc_plain"
run "find_package, linked" "" "$tmp/consumer/hello_offload"
run "find_package, preloaded" "$libdir/librtoffload.so.0" "$tmp/consumer/hello_offload_plain"
# The plain program without the library says so: the runs above were the library's.
if "$tmp/pc_plain" >/dev/null 2>&1; then
	fail "hello_offload succeeded without the library"
fi
# The launcher installed with it finds the installed library.
out=$("$prefix/bin/rtoffload" -- "$tmp/pc_plain" 2>&1) || fail "rtoffload launcher: $out"
echo "launcher: $out"
echo "install_check: ok ($prefix)"
