#!/bin/sh
# bench/cmodel.sh - inference latency of models compiled to C by
# `hml deploy --target c` against the same models run by libtorch, at
# batch 1, 64 and 4096, for the binomial MLP (5-64-64-1) and a larger MLP
# (5-256-256-256-1). Goals (issue 13): <= 0.5 us per call at batch 1 and
# >= 1.0x libtorch at 4096.
#
# A binomial data set is collected and both models trained (one epoch: the
# weights' values do not change the cost) with the real CLI; each is
# compiled twice (portable, and --march native), and bench_cmodel times all
# three in one process (see bench/cmodel.c). The ratio is libtorch / C.
# Both sides use THREADS threads (libtorch intra-op; OpenMP in the compiled
# model, from 1024 rows). On a shared machine, libgomp's spinning threads
# spoil the figures: OMP_WAIT_POLICY=passive unless the environment says
# otherwise; the load average is printed first.
#
# usage: bench/cmodel.sh [BUILD_DIR] [THREADS] [SECONDS]
set -eu

build=${1:-build}
threads=${2:-2}
seconds=${3:-1}
hml="$build/cmd/hml"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export HML_WORKFLOW_PATH=
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"
export OMP_NUM_THREADS="$threads"
exp="$tmp/exp"

# nproc --all: plain nproc answers OMP_NUM_THREADS, set above.
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc --all) cores; $(cc --version | head -n1)"
"$hml" -q -C "$exp" collect binomial --args '--options 8192 --seed {seed}' >/dev/null
for arch in mlp:64x64:relu mlp:256x256x256:relu; do
	"$hml" -q -C "$exp" train --epochs 1 --threads "$threads" --arch "$arch" >/dev/null
done
for m in m1 m2; do
	"$hml" -q -C "$exp" deploy --target c "$m" >/dev/null
	"$hml" -q -C "$exp" deploy --target c --march native "$m" >/dev/null
done
"$build/bench/bench_cmodel" "$threads" "$seconds" "binomial MLP 5-64-64-1" \
	"$exp/models/m1.pt" "$exp/models/c1.so" "$exp/models/c2.so"
echo
"$build/bench/bench_cmodel" "$threads" "$seconds" "larger MLP 5-256-256-256-1" \
	"$exp/models/m2.pt" "$exp/models/c3.so" "$exp/models/c4.so"
echo
# What the model cards recorded when hml train measured both forms (at the
# workflow's batch, 4096 rows), for comparison with the tables above.
for m in m1 m2; do
	printf '%s card: ' "$m"
	"$hml" -C "$exp" show "$m" | tail -n 1
done
