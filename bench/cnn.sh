#!/bin/sh
# bench/cnn.sh - inference latency of CNN models compiled to C by `hml
# deploy --target c` against the same models run by libtorch, on the heat
# workflow's fields (one 32 x 32 field per row), at 1 to 16 fields per call.
#
# Each model is compiled as deployed (with OpenBLAS when hml was configured
# with it: a conv layer with at least 8 output channels and 64 inputs per
# output -- channels x kernel^2 -- runs as im2col + sgemm) and from the same
# generated source without OpenBLAS ("C-direct": the direct loop for every
# layer, the flags of the record less the BLAS ones). Where C-direct beats C
# on a model whose layers take the sgemm path, the thresholds in
# lib/deploy/codegen.c (CONV_GEMM_MIN_OUT, CONV_GEMM_MIN_K) are too low. The
# models train for one epoch: the weights' values do not change the cost.
# The ratio is libtorch / C (> 1: C is faster). Both sides use THREADS
# threads (libtorch intra-op; OpenBLAS's OpenMP threads).
#
# usage: bench/cnn.sh [BUILD_DIR] [THREADS] [SECONDS] [ARCH...]
#   ARCH: hml train --arch specs (default: heat's model and four others)
set -eu

build=${1:-build}
threads=${2:-2}
seconds=${3:-1}
[ $# -gt 3 ] && shift 3 || shift $#
archs=${*:-cnn:8:tanh:kernel=5 cnn:8x8:relu:kernel=3 cnn:16x16:gelu:kernel=3 cnn:32x32:gelu:kernel=5 cnn:64x64x64:gelu:kernel=7}
hml="$build/cmd/hml"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export HML_WORKFLOW_PATH=
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"
export OMP_NUM_THREADS="$threads"
exp="$tmp/exp"

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc --all) cores; $(cc --version | head -n1)"
"$hml" -q -C "$exp" collect heat >/dev/null
n=0
for arch in $archs; do
	"$hml" -q -C "$exp" train --epochs 1 --threads "$threads" --arch "$arch" >/dev/null
	n=$((n + 1))
	"$hml" -q -C "$exp" deploy --target c "m$n" >/dev/null
done
python3 "$(dirname "$0")/noblas.py" "$exp" direct
echo "compiled models' OpenBLAS (those with an sgemm layer): $(python3 -c 'import json,sys; print(next((c["compiler"]["blas"] for c in json.load(open(sys.argv[1]))["compiled"] if c["compiler"]["blas"]), None))' "$exp/manifest.json")"
echo
n=1
for arch in $archs; do
	"$build/bench/bench_cmodel" "$threads" "$seconds" "heat $arch ($(grep -c 'sgemm \*/' \
		"$exp/models/c$n.c") conv layers by sgemm)" "$exp/models/m$n.pt" \
		"C=$exp/models/c$n.so" "C-direct=$exp/models/c$n-direct.so"
	echo
	n=$((n + 1))
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
