#!/bin/sh
# bench/cmodel.sh - inference latency of models compiled to C by
# `hml deploy --target c` against the same models run by libtorch, at
# batches from 1 to 4096, for the binomial MLP (5-64-64-1), a larger MLP
# (5-256-256-256-1) and the main job's typical front model, four ReLU
# layers of 250 (5-250-250-250-250-1). Goals (issue 13): <= 0.5 us per
# call at batch 1 and >= 1.0x libtorch at 4096.
#
# A binomial data set is collected and the models trained (one epoch: the
# weights' values do not change the cost) with the real CLI; each is
# compiled as deployed (portable, with OpenBLAS's sgemm path when hml was
# configured with it), with --march native, and from the same generated
# source without OpenBLAS (the blocked kernel alone, the compiler flags of
# the record less the BLAS ones); bench_cmodel times them in one process
# (see bench/cmodel.c). The ratio is libtorch / C. Where the "blocked"
# column beats "C" is where the sgemm path should not be taken: the
# generated code takes it from the batch at which the widest layer does
# 2^20 multiply-adds (GEMM_MACS in lib/deploy/cg_mlp.c), the crossover measured
# with this table.
# Both sides use THREADS threads (libtorch intra-op; OpenMP in the compiled
# model, from 1024 rows; OpenBLAS runs single-threaded inside those
# regions). On a shared machine, libgomp's spinning threads spoil the
# figures: OMP_WAIT_POLICY=passive unless the environment says otherwise;
# the load average is printed first and last.
#
# usage: bench/cmodel.sh [BUILD_DIR] [THREADS] [SECONDS] [ARCH...]
#   ARCH: other architectures to time instead of the three above (hml
#   train's --arch, e.g. mlp:106x106x106x106:tanh)
set -eu

build=${1:-build}
threads=${2:-2}
seconds=${3:-1}
[ $# -gt 3 ] && shift 3 || shift $#
archs=${*:-mlp:64x64:relu mlp:256x256x256:relu mlp:250x250x250x250:relu}
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
n=0
for arch in $archs; do
	"$hml" -q -C "$exp" train --epochs 1 --threads "$threads" --arch "$arch" >/dev/null
	n=$((n + 1))
done
models=$(seq -f 'm%g' 1 "$n")
for m in $models; do
	"$hml" -q -C "$exp" deploy --target c "$m" >/dev/null
	"$hml" -q -C "$exp" deploy --target c --march native "$m" >/dev/null
done
# cN.c again without OpenBLAS: the flags of its record, less the BLAS ones.
python3 "$(dirname "$0")/noblas.py" "$exp" blocked
blas=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["compiled"][0]["compiler"]["blas"])' "$exp/manifest.json")
echo "compiled models' OpenBLAS: $blas"
echo
n=1
for arch in $archs; do
	case $arch in
	mlp:64x64:relu) title="binomial MLP 5-64-64-1" ;;
	mlp:256x256x256:relu) title="larger MLP 5-256-256-256-1" ;;
	mlp:250x250x250x250:relu) title="main job's front model 5-250-250-250-250-1 (relu)" ;;
	*) title=$arch ;;
	esac
	"$build/bench/bench_cmodel" "$threads" "$seconds" "$title" "$exp/models/m$n.pt" \
		"C=$exp/models/c$((2 * n - 1)).so" "C-native=$exp/models/c$((2 * n)).so" \
		"C-blocked=$exp/models/c$((2 * n - 1))-blocked.so"
	echo
	n=$((n + 1))
done
# What the model cards recorded when hml train measured both forms (at the
# workflow's batch, 4096 rows), for comparison with the tables above.
for m in $models; do
	printf '%s card: ' "$m"
	"$hml" -C "$exp" show "$m" | tail -n 1
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
