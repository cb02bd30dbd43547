#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Issue 32: the Debian packages build, install, work and leave nothing.
#
#   tests/install/deb_check.sh          (as root; CI: .ci/run)
#
# 1. dpkg-buildpackage -us -uc -b with nocheck (the suite runs apart) in a
#    temporary copy of the tree: it writes its .debs into the parent
#    directory, which must not be the clone's;
# 2. lintian on them: no error (debian/README.source: the warnings);
# 3. apt installs the four; a program is built against them with
#    pkg-config and with find_package, and runs linked and preloaded, and
#    under the installed launcher; the man pages open; librtoffload-lttng0's
#    provider is where the library looks, and trace=lttng loads it;
# 4. apt purges them; every file dpkg listed is gone.
# A few minutes: the build is the library and the launcher only.
set -eu
repo=$(cd "$(dirname "$0")/../.." && pwd)
cc=${CC:-cc}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rto-deb.XXXXXX")
pkgs="librtoffload0 librtoffload-dev rtoffload librtoffload-lttng0"
installed=0

cleanup() {
	if [ $installed = 1 ]; then
		DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq $pkgs >/dev/null 2>&1 || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
	echo "deb_check: $*" >&2
	exit 1
}
for p in $pkgs; do
	if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
		fail "$p is installed already: this test installs and purges it (apt purge $pkgs)"
	fi
done

# 1. The tree as git sees it (committed or not, never ignored files: no build/).
mkdir "$tmp/src"
(cd "$repo" && git ls-files -z --cached --others --exclude-standard |
	xargs -0 sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh |
	tar --null -T - -cf -) | tar -C "$tmp/src" -xf -
echo "deb_check: dpkg-buildpackage (nocheck) in $tmp/src"
(cd "$tmp/src" && DEB_BUILD_OPTIONS="nocheck ${DEB_BUILD_OPTIONS:-}" \
	dpkg-buildpackage -us -uc -b -Pnocheck -j"${JOBS:-2}") >"$tmp/build.log" 2>&1 || {
	tail -50 "$tmp/build.log"
	fail "dpkg-buildpackage failed"
}
grep -i "dpkg-gensymbols: warning" "$tmp/build.log" && fail "the symbols file differs from the library"
for p in $pkgs; do
	ls "$tmp"/${p}_*.deb >/dev/null 2>&1 || fail "no package $p"
done
ls "$tmp"/*.deb

# 2. lintian: errors fail; warnings are listed (debian/README.source says why).
lintian --fail-on error "$tmp"/*.changes || fail "lintian reports errors"

# 3. Installed, used.
debs=
for p in $pkgs; do
	debs="$debs $(ls "$tmp"/${p}_*.deb)" # not the -dbgsym ones
done
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $debs >"$tmp/apt.log" 2>&1 || {
	cat "$tmp/apt.log"
	fail "apt-get install failed"
}
installed=1
for p in $pkgs; do
	dpkg -L "$p" >"$tmp/$p.list"
done
src=$repo/examples
$cc -Wall -Werror -o "$tmp/pc_linked" "$src/hello_offload.c" $(pkg-config --cflags --libs rtoffload) ||
	fail "building with pkg-config --cflags --libs failed"
$cc -Wall -Werror -o "$tmp/pc_plain" "$src/hello_offload.c" $(pkg-config --cflags rtoffload) ||
	fail "building with pkg-config --cflags failed"
cmake -S "$src/consumer" -B "$tmp/consumer" -DCMAKE_C_COMPILER="$cc" >"$tmp/consumer.log" 2>&1 &&
	cmake --build "$tmp/consumer" >>"$tmp/consumer.log" 2>&1 || {
	cat "$tmp/consumer.log"
	fail "building examples/consumer with find_package failed"
}
run() { # NAME PRELOAD PROGRAM...
	name=$1 preload=$2
	shift 2
	out=$(env ${preload:+LD_PRELOAD="$preload"} "$@" 2>&1) || fail "$name: exit $?: $out"
	echo "$name: $out"
}
run "pkg-config, linked" "" "$tmp/pc_linked"
run "pkg-config, preloaded" librtoffload.so.0 "$tmp/pc_plain"
run "find_package, linked" "" "$tmp/consumer/hello_offload"
run "find_package, preloaded" librtoffload.so.0 "$tmp/consumer/hello_offload_plain"
run "rtoffload launcher" "" rtoffload -- "$tmp/pc_plain"
grep -q '^/usr/lib/.*/rtoffload/librtoffload-lttng\.so$' "$tmp/librtoffload-lttng0.list" ||
	fail "librtoffload-lttng0 has no rtoffload/librtoffload-lttng.so"
out=$(RTOFFLOAD_OPTIONS=trace=lttng LD_PRELOAD=librtoffload.so.0 "$tmp/pc_plain" 2>&1) ||
	fail "trace=lttng: exit $?: $out"
case $out in
*"trace=lttng is unavailable"*) fail "trace=lttng: the installed provider did not load: $out" ;;
esac
echo "trace=lttng, preloaded: $out"
man -w librtoffload rt_offload_mark_thread rt_offload_get_stats rtoffload || fail "a man page is missing"
man librtoffload 2>/dev/null | grep -q "helper_wake" || fail "librtoffload(7) has no option list"

# 4. Purged: nothing left but directories other packages own.
DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq $pkgs >"$tmp/purge.log" 2>&1 || {
	cat "$tmp/purge.log"
	fail "apt-get purge failed"
}
installed=0
left=0
for p in $pkgs; do
	status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	case $status in
	"" | *not-installed) ;;
	*)
		echo "deb_check: $p is still $status" >&2
		left=1
		;;
	esac
	while IFS= read -r f; do
		[ "$f" = /. ] && continue
		[ -e "$f" ] || [ -L "$f" ] || continue
		[ -d "$f" ] && dpkg -S "$f" >/dev/null 2>&1 && continue
		echo "deb_check: left behind by $p: $f" >&2
		left=1
	done <"$tmp/$p.list"
done
[ $left = 0 ] || fail "the purge left files"
echo "deb_check: ok"
