#!/bin/sh
# bench/fortran.sh - what hml costs the Fortran heat (workflows/heat-fortran)
# in off mode: the program with the module hml (heat, HML_MODE=off)
# against the same source built without hml (heat_baseline, HML_BASELINE),
# whole-process wall time, runs interleaved (baseline, hml, baseline, ...)
# so that a change of the machine's load falls on both alike.
#
#   bench/fortran.sh [BUILD_DIR]      default build; REPEAT=N runs of each
#                                     (default 11), N=grid (512), STEPS (400),
#                                     K=steps per region call (4)
#
# Prints the median and the minimum of each and their ratios (hml over
# baseline), and the noise: the ratio of the medians of the baseline's odd
# and even runs, which differ only by chance. Off mode's cost is within
# noise when |ratio - 1| is no larger than |noise - 1|.
set -eu

build=${1:-build}
dir="$build/workflows/heat-fortran"
[ -x "$dir/heat" ] && [ -x "$dir/heat_baseline" ] ||
	{ echo "fortran.sh: no $dir/heat and heat_baseline (built where gfortran is found)" >&2; exit 2; }
REPEAT=${REPEAT:-11}
ARGS="--n ${N:-512} --steps ${STEPS:-400} --k ${K:-4} --quiet"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# wall PROGRAM: seconds one run of PROGRAM $ARGS takes, off mode
wall() {
	t0=$(date +%s%N)
	HML_MODE=off "$1" $ARGS
	t1=$(date +%s%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f\n", (b - a) / 1e9 }'
}

wall "$dir/heat_baseline" >/dev/null   # warm the page cache
wall "$dir/heat" >/dev/null
i=0
while [ $i -lt "$REPEAT" ]; do
	wall "$dir/heat_baseline" >> "$tmp/base"
	wall "$dir/heat" >> "$tmp/hml"
	i=$((i + 1))
done

# median FILE / min FILE / median of the odd (or even) lines
median() { sort -g "$1" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
awk 'NR % 2' "$tmp/base" > "$tmp/odd"
awk '!(NR % 2)' "$tmp/base" > "$tmp/even"
bm=$(median "$tmp/base"); hm=$(median "$tmp/hml")
bmin=$(sort -g "$tmp/base" | head -1); hmin=$(sort -g "$tmp/hml" | head -1)
om=$(median "$tmp/odd"); em=$(median "$tmp/even")
echo "Fortran heat, $ARGS, $REPEAT runs each, off mode against the build without hml"
printf '%-22s %10s %10s\n' "" "median s" "min s"
printf '%-22s %10.4f %10.4f\n' "heat_baseline (no hml)" "$bm" "$bmin"
printf '%-22s %10.4f %10.4f\n' "heat (hml, off)" "$hm" "$hmin"
awk -v a="$hm" -v b="$bm" -v c="$hmin" -v d="$bmin" -v o="$om" -v e="$em" 'BEGIN {
	printf "ratio hml/baseline: median %.3f, min %.3f; noise (baseline odd/even runs): %.3f\n",
	       a / b, c / d, o / e }'
