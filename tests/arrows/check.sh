#!/bin/sh
# The arrows of the architecture (tests/arrows/CMakeLists.txt), checked
# through the build, and the house rules the layout relies on, checked in
# the sources:
#   1. every probe: a forbidden include fails to compile for want of the
#      header, an allowed one compiles;
#   2. lib/ includes its own headers folder-qualified ("store/records.h"),
#      and nothing outside lib/ names a lib/ header unqualified;
#   3. nothing outside runtime/ names runtime/src (CMake files, sources,
#      scripts), so the CLI, tests and benchmarks reach the runtime's
#      internals only through its targets;
#   4. no file in cmd/ is over 600 lines: the commands parse, print and
#      exit; what decides lives in lib/;
#   5. no circle of object files: tests/arrows/cycles.py on the archives.
# usage: check.sh SOURCE_DIR BUILD_DIR PROBE_LIST
set -u
src=$1
build=$2
list=$3
bad=0
fail() { echo "FAIL: $*" >&2; bad=1; }

# 1. the probes
while read -r kind probe target header; do
	out=$(cmake --build "$build" --target "$probe" 2>&1)
	rc=$?
	case $kind in
	forbid)
		if [ $rc -ne 0 ] && printf '%s\n' "$out" | grep -q "$header: No such file or directory"; then
			echo "ok: $target cannot include $header"
		else
			printf '%s\n' "$out" | tail -n 5 >&2
			fail "$target includes $header across a forbidden arrow"
		fi ;;
	allow)
		if [ $rc -eq 0 ]; then
			echo "ok: $target includes $header"
		else
			printf '%s\n' "$out" | tail -n 5 >&2
			fail "$target cannot include $header (an allowed arrow)"
		fi ;;
	esac
done < "$list"

# 2. folder-qualified includes
hits=$(grep -rn '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^/"]*"' "$src/lib" \
       --include='*.c' --include='*.h' --include='*.cpp' | grep -v '"hml_models.h"')
[ -z "$hits" ] || fail "unqualified includes in lib/:
$hits"
for h in $(cd "$src/lib" && find . -name '*.h' | sed 's#^\./##'); do
	name=$(basename "$h")
	hits=$(grep -rln "#include \"$name\"" "$src/cmd" "$src/runtime" "$src/bench" "$src/tests" \
	       --include='*.c' --include='*.h' --include='*.cpp' 2>/dev/null)
	[ -z "$hits" ] || fail "lib/$h is included as \"$name\", not \"$h\", by: $hits"
done
[ $bad -eq 0 ] && echo "ok: every include of a lib/ header is folder-qualified"

# 3. runtime/src named outside runtime/ (documentation aside: man/, *.md,
# and this check);
# the files are git's when SOURCE_DIR is a checkout, so a build tree inside
# it is not searched
if git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
	files=$(git -C "$src" ls-files | grep -v '^runtime/\|^man/\|\.md$\|^tests/arrows/')
else
	files=$(cd "$src" && find . -type f ! -path './runtime/*' ! -path './man/*' ! -name '*.md' \
	        ! -path './tests/arrows/*' \
	        ! -path './.git/*' ! -path "./$(basename "$build")/*" | sed 's#^\./##')
fi
hits=$(cd "$src" && printf '%s\n' "$files" | while read -r f; do
	[ -f "$f" ] && grep -l 'runtime/src' "$f"; done)
if [ -n "$hits" ]; then
	fail "runtime/src is named outside runtime/ by: $hits"
else
	echo "ok: nothing outside runtime/ names runtime/src"
fi

# 4. command files stay small
for f in "$src"/cmd/*.c "$src"/cmd/*.h; do
	n=$(wc -l < "$f")
	[ "$n" -le 600 ] || fail "$(basename "$f") has $n lines (at most 600 in cmd/)"
done
[ $bad -eq 0 ] && echo "ok: no file in cmd/ over 600 lines"

# 5. no circle of object files
python3 "$(dirname "$0")/cycles.py" "$build" || bad=1
exit $bad
