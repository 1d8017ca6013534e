#!/bin/sh
# bench/rows.sh - a region inside a loop body, one call per iteration, the
# loop an OpenMP parallel for, against the same rows as one batch call (the
# baseline, measured in the same process), per mode: off, collect (HDF5 in
# a scratch folder) and infer with MODEL (a TorchScript file or a compiled
# model from `hml deploy --target c`, 5 inputs, 1 output; default: a
# 5-64-64-1 MLP scripted here). Three row forms:
#   row  hml_region_row_begin: maps bound over the loop's domain
#   at   hml_region_row_begin_at: one-row maps, each iteration's addresses
#   dir  a directive inside the loop body (bench/rows_dir.c built with
#        hml cc: the `at` call through libhml's directive calls; its own process,
#        so compare it with the batch column of the same mode)
#   call one thread, a batch call per row, the maps re-pointed each call:
#        how a directive in a loop body was translated before row calls
# Prints ns per row for each and the ratios to the batch call.
#
# usage: bench/rows.sh [BUILD_DIR] [ROWS] [THREADS] [MODEL]
set -eu
build=${1:-build} rows=${2:-200000} threads=${3:-1} model=${4:-}
bin=$(realpath "$build")/bench/bench_rows
hml=$(realpath "$build")/cmd/hml
[ -x "$bin" ] || { echo "no $bin: build with -DHML_BUILD_BENCH=ON" >&2; exit 1; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
"$hml" cc "${CC:-cc}" -O2 -fopenmp -o "$scratch/rows_dir" "$(dirname "$0")/rows_dir.c"
if [ -z "$model" ]; then
	model=$scratch/mlp.pt
	/usr/bin/python3 -c 'import torch, sys
m = torch.nn.Sequential(torch.nn.Linear(5, 64), torch.nn.ReLU(), torch.nn.Linear(64, 64),
                        torch.nn.ReLU(), torch.nn.Linear(64, 1)).double()
torch.jit.script(m).save(sys.argv[1])' "$model"
fi
export OMP_NUM_THREADS=$threads OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive} HML_THREADS=1
printf '%-8s %8s %9s %9s %9s %9s %9s %7s %7s %7s %7s\n' mode rows batch_ns row_ns at_ns \
	dir_ns call_ns row/b at/b dir/b call/b
for mode in off collect infer; do
	set -- "$rows" 5
	[ "$mode" = infer ] && set -- $((rows / 10)) 3
	out=$(cd "$scratch" && HML_MODE=$mode HML_DB=$scratch/d.h5 HML_MODEL=$model "$bin" "$@")
	rm -f "$scratch/d.h5"
	dir=$(cd "$scratch" && HML_MODE=$mode HML_DB=$scratch/d.h5 HML_MODEL=$model \
		"$scratch/rows_dir" "$@")
	rm -f "$scratch/d.h5"
	echo "$out $dir" | awk -v m="$mode" -v n="$1" '{ b = ($1 > 0 ? $1 : 1)
		printf "%-8s %8d %9.1f %9.1f %9.1f %9.1f %9.1f %7.2f %7.2f %7.2f %7.2f\n", m, n,
		       $1, $2, $3, $5, $4, $2 / b, $3 / b, $5 / b, $4 / b }'
done
