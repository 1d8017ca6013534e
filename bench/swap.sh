#!/bin/sh
# bench/swap.sh - what a region watching for a hot swap (HML_DEPLOYMENT,
# the runtime's swap.h) costs per call against the same region not watching,
# both measured in alternation in one process (bench/swap.c: a compiled
# 5-32-1 MLP, one thread), at the default look interval (500 ms) and at
# 1 ms (a stat(2) every millisecond: the worst a setting allows); and the
# time of the one call that switched models.
#
# usage: bench/swap.sh [BUILD_DIR] [CALLS] [ROWS]
set -eu
build=${1:-build} calls=${2:-200000} rows=${3:-16}
bin=$(realpath "$build")/bench/bench_swap
[ -x "$bin" ] || { echo "no $bin: build with -DHML_BUILD_BENCH=ON" >&2; exit 1; }
export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
printf '%-9s %-6s %6s %12s %12s %8s\n' interval calls rows plain_ns watch_ns ratio
for interval in 500 1; do
	out=$(HML_SWAP_INTERVAL=$interval "$bin" "$calls" "$rows")
	echo "$out" | awk -v i="${interval}ms" -v r="$rows" '
		$1 == "batch" || $1 == "row" {
			printf "%-9s %-6s %6d %12.1f %12.1f %8.3f\n", i, $1, ($1 == "row" ? 1 : r), $2, $3, $3 / $2 }
		$1 == "swap" { printf "%-9s the call that swapped models took %.3f ms\n", i, 1e3 * $2 }'
done
