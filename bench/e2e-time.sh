#!/bin/bash
# bench/e2e-time.sh - what end-to-end test files cost, a base revision's
# against the work tree's, run back to back with the same hml build: the
# wall time and the CPU time (user + system of bats and everything it
# started) of each file, the ratio of each, and the sums.
#
# The base revision's tests/, bench/ and workflow files come from `git
# archive BASE` into a temporary directory (so that editing the work tree
# cannot change a run in progress); both run against BUILD's hml, so only
# what the test files do differs. On a shared machine the wall time
# follows the load (printed with each run); the CPU time varies less, but
# libtorch's worker threads spin while they wait for a core, so it grows
# with the load too: compare runs made close together, alternate them (-n
# runs each pair N times, base first), and read the ratios, not the
# seconds. Nothing here is a test.
#
# usage: bench/e2e-time.sh [-b BUILD] [-r BASE] [-n N] FILE...
#   -b  build directory (default build)
#   -r  the base revision (default HEAD~1)
#   -n  runs of each file per tree (default 1)
#   FILE: a file's stem in tests/e2e (e.g. 066-deploy-c-cnn); a stem that
#   only one tree has is run in that tree alone (a file split in two:
#   name both halves and the original).
# Prints one line per run and a summary; exits 1 when a run failed.
set -u

build=build
base=HEAD~1
n=1
while getopts b:r:n: opt; do
	case $opt in
	b) build=$OPTARG ;;
	r) base=$OPTARG ;;
	n) n=$OPTARG ;;
	*) echo "usage: $0 [-b BUILD] [-r BASE] [-n N] FILE..." >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { echo "usage: $0 [-b BUILD] [-r BASE] [-n N] FILE..." >&2; exit 2; }
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$build" && pwd) || exit 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/base"
git -C "$src" archive "$base" | tar -x -C "$work/base" || { echo "e2e-time: cannot archive '$base'" >&2; exit 2; }
# run TREE STEM: one run of tests/e2e/STEM.bats of TREE; prints
# "wall cpu" (seconds), or nothing when TREE has no such file.
run() {
	local tree=$1 stem=$2 rc w u s
	[ -f "$tree/tests/e2e/$stem.bats" ] || return 0
	(cd "$tree" && /usr/bin/time -f "%e %U %S" -o "$work/time" env \
		HML_BUILD_DIR="$build" HML_SOURCE_DIR="$tree" HML_TEST_MODELS="$build/tests/models" \
		HML_TEST_PYTHON="${HML_TEST_PYTHON:-/usr/bin/python3}" HML_TEST_TMP="$work" \
		OMP_NUM_THREADS=2 HML_WORKFLOW_PATH= \
		bats --tap "tests/e2e/$stem.bats" > "$work/$stem.tap" 2>&1)
	rc=$?
	read -r w u s < <(tail -n 1 "$work/time")   # after "Command exited with ..."
	if [ $rc != 0 ]; then
		touch "$work/failed"
		echo "e2e-time: $stem failed in $tree:" >&2
		grep -A20 '^not ok' "$work/$stem.tap" >&2
	fi
	echo "$w $(echo "$u + $s" | bc)"
}

echo "e2e-time: base $(git -C "$src" rev-parse --short "$base") against the work tree, $n run(s) each, load average $(cut -d' ' -f1-3 /proc/loadavg)"
tb_w=0 tb_c=0 tn_w=0 tn_c=0
for stem in "$@"; do
	for ((i = 1; i <= n; i++)); do
		b=$(run "$work/base" "$stem")
		t=$(run "$src" "$stem")
		read -r bw bc_ <<< "${b:-0 0}"
		read -r nw nc <<< "${t:-0 0}"
		printf '%-28s base %7.1f s wall %7.1f s cpu | new %7.1f s wall %7.1f s cpu | load %s\n' \
			"$stem" "$bw" "$bc_" "$nw" "$nc" "$(cut -d' ' -f1 /proc/loadavg)"
		tb_w=$(echo "$tb_w + $bw" | bc); tb_c=$(echo "$tb_c + $bc_" | bc)
		tn_w=$(echo "$tn_w + $nw" | bc); tn_c=$(echo "$tn_c + $nc" | bc)
	done
done
ratio() { [ "$(echo "$2 > 0" | bc)" = 1 ] && echo "scale=2; $1 / $2" | bc || echo "-"; }
echo "sum: base $tb_w s wall, $tb_c s cpu; new $tn_w s wall, $tn_c s cpu; new/base: wall $(ratio "$tn_w" "$tb_w"), cpu $(ratio "$tn_c" "$tb_c")"
[ ! -e "$work/failed" ]
