#!/bin/sh
# scripts/check-no-torch.sh - hml builds and works without libtorch
# (-DHML_WITH_TORCH=OFF): configure and build libhml, the CLI and the
# binomial workflow in their own tree, then check that nothing links
# libtorch, that binomial runs in off and collect mode, and that a model
# or `hml train` is refused with a clear message. Not part of ctest: the
# build takes a few minutes (most of it the HDF5/OpenMP C code; no C++).
#
# usage: scripts/check-no-torch.sh [SOURCE_DIR] [BUILD_DIR]
set -eu

src=${1:-.}
build=${2:-build-notorch}
fail() { echo "check-no-torch: $*" >&2; exit 1; }

start=$(date +%s)
cmake -S "$src" -B "$build" -DHML_WITH_TORCH=OFF -DHML_BUILD_TESTS=OFF \
	-DHML_BUILD_BENCH=OFF -DHML_WERROR=ON >/dev/null
cmake --build "$build" -j2 --target hml hml_cli binomial >/dev/null
echo "check-no-torch: configured and built in $(($(date +%s) - start)) s"
build=$(cd "$build" && pwd)

for f in "$build/runtime/libhml.so" "$build/cmd/hml" "$build/workflows/binomial/binomial"; do
	if readelf -d "$f" | grep NEEDED | grep -q -e torch -e c10; then
		fail "$f links libtorch"
	fi
done
[ ! -e "$build/runtime/libhml-torch.so" ] || fail "a libtorch plugin was built"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bin="$build/workflows/binomial/binomial"
HML_MODE=off "$bin" --options 256 --batch 64 --quiet || fail "binomial does not run in off mode"
HML_MODE=collect HML_DB="$tmp/d.h5" "$bin" --options 256 --batch 64 --quiet ||
	fail "binomial does not collect"
[ -s "$tmp/d.h5" ] || fail "collect wrote no data"
# The region refuses the model (binomial then runs its original code).
: > "$tmp/m.pt"
HML_MODE=infer HML_MODEL="$tmp/m.pt" "$bin" --options 256 --batch 64 --quiet 2> "$tmp/err" || true
grep -q "hml was built without libtorch (HML_WITH_TORCH=OFF)" "$tmp/err" ||
	fail "unexpected message: $(cat "$tmp/err")"
"$build/cmd/hml" --json --version | grep -q '"libtorch": "none"' || fail "hml --version names a libtorch"
(
	cd "$tmp"
	HML_WORKFLOW_PATH= "$build/cmd/hml" -q -C exp collect binomial \
		--args '--options 512 --batch 128 --seed {seed}' >/dev/null || fail "hml collect fails"
	rc=0
	"$build/cmd/hml" -q -C exp train --epochs 1 2> err || rc=$?
	[ "$rc" = 3 ] || fail "hml train exited $rc, expected 3"
	grep -q "cannot train: hml was built without libtorch" err || fail "hml train: $(cat err)"
)
echo "check-no-torch: off and collect work; models and training are refused with a clear message"
