#!/bin/sh
# bench/fortran.sh - what hml costs the Fortran heat (workflows/heat-fortran)
# in off mode: the program with the module hml (heat, HML_MODE=off)
# against the same source built without hml (heat_baseline, HML_BASELINE),
# runs interleaved (baseline, hml, baseline, ...) so that a change of the
# machine's load falls on both alike. Two times per run: the stepping
# loop as the program reports it ("stepped in": the region's open, its
# begin/end calls and the physics), the whole process's wall time
# (with loading libhml and libhml_fortran) and its CPU time.
#
#   bench/fortran.sh [BUILD_DIR]      default build; REPEAT=N runs of each
#                                     (default 11), N=grid (512), STEPS (400),
#                                     K=steps per region call (4), REGION
#                                     (field, or rows: one call per step)
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
ARGS="--n ${N:-512} --steps ${STEPS:-400} --k ${K:-4} --region ${REGION:-field}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# wall PROGRAM: "loop_seconds wall_seconds cpu_seconds" of one run of
# PROGRAM $ARGS, off mode; the CPU time (perf's task-clock) is the least
# disturbed by other work on a loaded machine (without perf: the wall time).
wall() {
	t0=$(date +%s%N)
	if [ -n "$perf" ]; then
		loop=$(HML_MODE=off perf stat -x, -e task-clock -o "$tmp/perf" -- "$1" $ARGS |
		       sed -n 's/.*stepped in \([0-9.]*\) s.*/\1/p')
	else
		loop=$(HML_MODE=off "$1" $ARGS | sed -n 's/.*stepped in \([0-9.]*\) s.*/\1/p')
	fi
	t1=$(date +%s%N)
	cpu=$(awk -F, '/task-clock/ { print $1 / 1000 }' "$tmp/perf" 2>/dev/null)
	awk -v l="$loop" -v a="$t0" -v b="$t1" -v c="$cpu" 'BEGIN {
		printf "%s %.6f %.6f\n", l, (b - a) / 1e9, c == "" ? (b - a) / 1e9 : c }'
}
perf=
perf stat -x, -e task-clock -o /dev/null -- true 2>/dev/null && perf=perf

wall "$dir/heat_baseline" >/dev/null   # warm the page cache
wall "$dir/heat" >/dev/null
i=0
while [ $i -lt "$REPEAT" ]; do
	wall "$dir/heat_baseline" >> "$tmp/base"
	wall "$dir/heat" >> "$tmp/hml"
	i=$((i + 1))
done

# median / min of column COL of FILE (ODD: only the odd (1) or even (0) runs)
median() { awk -v c="$2" -v p="${3:-}" 'p == "" || NR % 2 == p { print $c }' "$1" | sort -g |
	awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
min() { awk -v c="$2" '{ print $c }' "$1" | sort -g | head -1; }

echo "Fortran heat, $ARGS, $REPEAT runs each, off mode against the build without hml"
printf '%-12s %-22s %10s %10s\n' "" "" "median s" "min s"
for col in 1 2 3; do
	what=loop
	[ $col = 2 ] && what=process
	[ $col = 3 ] && what="cpu${perf:+ (perf)}"
	bm=$(median "$tmp/base" $col); hm=$(median "$tmp/hml" $col)
	bmin=$(min "$tmp/base" $col); hmin=$(min "$tmp/hml" $col)
	om=$(median "$tmp/base" $col 1); em=$(median "$tmp/base" $col 0)
	printf '%-12s %-22s %10.4f %10.4f\n' "$what" "heat_baseline (no hml)" "$bm" "$bmin"
	printf '%-12s %-22s %10.4f %10.4f\n' "" "heat (hml, off)" "$hm" "$hmin"
	awk -v a="$hm" -v b="$bm" -v c="$hmin" -v d="$bmin" -v o="$om" -v e="$em" 'BEGIN {
		printf "             ratio hml/baseline: median %.3f, min %.3f; noise (baseline odd/even runs): %.3f\n",
		       a / b, c / d, o / e }'
done
