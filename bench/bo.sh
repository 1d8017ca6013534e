#!/bin/sh
# bench/bo.sh - suggestion latency of hml's Bayesian optimiser at 100, 500
# and 1000 observations (two objectives, one constraint, the MLP family's
# 10-dimensional space), windowed GP against the exact GP as the baseline,
# both measured in this run by bench_bo (see bench/bo.c).
#
# usage: bench/bo.sh [BUILD_DIR] [ASKS]
set -eu
build=${1:-build}
asks=${2:-20}
src=$(cd "$(dirname "$0")/.." && pwd)
start=$(date +%s.%N)
"$build/bench/bench_bo" "$src/models" "$asks"
end=$(date +%s.%N)
echo "wall time of the script, start-up included: $(echo "$end - $start" | bc) s"
