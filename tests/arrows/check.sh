#!/bin/sh
# The arrows of the architecture, enforced by the build: the runtime
# (runtime/) and lib/core/ see only lib/core/'s headers, never the CLI-only
# part of lib/ (store, workflows, processes, training, search).
#   1. the build: a runtime-side source including store.h does not compile;
#   2. the sources: no file of runtime/ or lib/core/ names a lib/ header.
# usage: check.sh SOURCE_DIR BUILD_DIR
set -u
src=$1
build=$2
out=$(cmake --build "$build" --target arrow_probe 2>&1)
if printf '%s\n' "$out" | grep -q 'store.h: No such file or directory'; then
	echo "ok: runtime code cannot include store.h"
else
	printf '%s\n' "$out" | tail -n 5
	echo "FAIL: the runtime-side probe did not fail for want of store.h" >&2
	exit 1
fi
bad=0
for h in "$src"/lib/*.h; do
	name=$(basename "$h")
	hits=$(grep -ln "#include \"$name\"" "$src"/runtime/src/* "$src"/lib/core/* 2>/dev/null)
	if [ -n "$hits" ]; then
		echo "FAIL: $name (CLI-only) is included by: $hits" >&2
		bad=1
	fi
done
[ "$bad" = 0 ] && echo "ok: runtime/ and lib/core/ include no CLI-only header of lib/"
exit $bad
