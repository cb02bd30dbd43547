#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Every row of calls.tbl is exercised by a family case (a call compared
# direct and marked: tests/harness/families.c).  A case is named after the call it
# makes: "fgets_eof" tests fgets; the longest row name that prefixes a case
# name (followed by "_") is the one it tests, so fread_unlocked_ok does
# not count for fread.  A case defined is a case run: CASE() is static and
# warnings are errors, so an unused one does not build.
#
#   table_tested.sh calls.tbl tests-dir
set -eu
table=$1
tests=$2

# "thread" rows are never routed: no family compares them direct and marked
# (tests/routing names each of them: check_exports.sh).
names=$(awk '!/^[ \t]*(#|$)/ && $4 != "thread" { print $3 }' "$table")
cases=$(find "$tests" -name '*.c' -exec cat {} + | grep -o 'CASE([A-Za-z0-9_]*)' | sed 's/CASE(\(.*\))/\1/')

missing=$(printf '%s\n' "$cases" | awk -v names="$names" '
	BEGIN { n = split(names, list, "\n"); for (i = 1; i <= n; i++) row[list[i]] = 1 }
	{
		best = ""
		for (name in row)
			if (index($0, name "_") == 1 && length(name) > length(best))
				best = name
		if (best != "")
			tested[best] = 1
	}
	END { for (name in row) if (!(name in tested)) print name }' | sort)

count=$(printf '%s\n' "$names" | wc -l)
if [ -n "$missing" ]; then
	echo "calls.tbl rows without a family case (name a case NAME_what):"
	printf '  %s\n' $missing
	exit 1
fi
echo "all $count rows of calls.tbl have a family case"
