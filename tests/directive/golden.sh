#!/bin/sh
# tests/directive/golden.sh - the directive translator against golden files
# (ctest directive.golden).
#
# usage: tests/directive/golden.sh [-u] HML [CASE...]
#   HML   the hml executable (build/cmd/hml)
#   CASE  the inputs to check (default: every tests/directive/golden/*.c
#         and *.cpp), by file name
#   -u    update: write each case's expected file from what hml translate
#         prints now (review the diff before committing it)
#
# Each input NAME in tests/directive/golden/ is translated from that folder
# (`hml translate NAME`, so the #line paths are the bare NAME) and compared
# with its expected file:
#   NAME.out  the translation (hml translate exited 0), byte for byte;
#   NAME.err  for a malformed directive: "exit STATUS" and the one-line
#             error, as hml translate printed them on stderr.
# A case without an expected file fails (run -u to make it). Every input
# that translates is also compiled, through hml cc, with -fsyntax-only
# -Wall -Wextra -Werror (cc for .c, c++ for .cpp; CC and CXX override), so
# that the generated code is valid C (C++) too; inputs named *omp* with
# -fopenmp as well (their OpenMP pragmas are then known). Inputs named err-* must be
# malformed, the others must translate. Prints one line per failing case and a summary; exits 1 when
# any case fails.
set -u

update=0
if [ "${1:-}" = -u ]; then
	update=1
	shift
fi
[ $# -ge 1 ] || { echo "usage: $0 [-u] HML [CASE...]" >&2; exit 2; }
hml=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
shift
dir=$(cd "$(dirname "$0")/golden" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hml-golden.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
cd "$dir" || exit 1
if [ $# -eq 0 ]; then
	set -- $(ls *.c *.cpp 2>/dev/null)
fi

fail=0
n=0
for name in "$@"; do
	n=$((n + 1))
	"$hml" translate "$name" > "$tmp/out" 2> "$tmp/stderr"
	rc=$?
	if [ $rc -eq 0 ]; then
		got=$tmp/out
		exp=$name.out
		other=$name.err
	else
		{ echo "exit $rc"; cat "$tmp/stderr"; } > "$tmp/err"
		got=$tmp/err
		exp=$name.err
		other=$name.out
	fi
	if [ $update -eq 1 ]; then
		cp "$got" "$exp"
		rm -f "$other"
	elif [ ! -f "$exp" ]; then
		echo "FAIL $name: exit $rc, and there is no $exp (run $0 -u to make it)"
		[ $rc -eq 0 ] || cat "$tmp/stderr"
		fail=$((fail + 1))
		continue
	elif ! cmp -s "$got" "$exp"; then
		echo "FAIL $name: the translation differs from $exp:"
		diff -u "$exp" "$got" | head -40
		fail=$((fail + 1))
		continue
	fi
	case $name in
	err-*)
		if [ $rc -eq 0 ]; then
			echo "FAIL $name: an err-* case translated"
			fail=$((fail + 1))
		fi
		continue ;;
	esac
	if [ $rc -ne 0 ]; then
		echo "FAIL $name: exit $rc:"
		cat "$tmp/stderr"
		fail=$((fail + 1))
		continue
	fi
	case $name in
	*.cpp) cc=${CXX:-c++} ;;
	*) cc=${CC:-cc} ;;
	esac
	omp=
	case $name in *omp*) omp=-fopenmp ;; esac
	if ! "$hml" cc $cc -fsyntax-only -Wall -Wextra -Werror $omp "$name" > "$tmp/cc" 2>&1; then
		echo "FAIL $name: the translation does not compile with $cc:"
		head -20 "$tmp/cc"
		fail=$((fail + 1))
	fi
done
if [ $update -eq 1 ]; then
	echo "golden: $n expected files written in $dir ($fail cases fail)"
	[ $fail -eq 0 ]
	exit
fi
echo "golden: $((n - fail)) of $n cases pass"
[ $fail -eq 0 ]
