#!/bin/sh
# bench/cnn.sh - inference latency of CNN models compiled to C by `hml
# deploy --target c` against the same models run by libtorch, each on its
# application's data (one field, or one particle-filter video, per row):
# heat's 32 x 32 fields at 1 to 16 fields per call, and the applications'
# default models at their own batches (the region's "batch" in
# workflows/*/workflow.json: miniWeather 1 state of 4 x 24 x 44,
# the particle filter 128 videos of 8 x 32 x 32).
#
# Each model is compiled as deployed (with OpenBLAS when hml was configured
# with it: a conv layer wide enough for lib/deploy/cg_conv_gemm.c's
# CONV_GEMM_MIN_OUT and CONV_GEMM_MIN_K runs as im2col + sgemm) and from
# the same generated source without OpenBLAS ("C-direct": the blocked
# direct loops of lib/deploy/cg_conv.c for every layer, the flags of the
# record less the BLAS ones). Where C-direct beats C on a model whose
# layers take the sgemm path, those thresholds are too low. The models
# train for one epoch: the weights' values do not change the cost. The
# ratio is libtorch / C (> 1: C is faster). Both sides use THREADS
# threads (libtorch intra-op; the compiled model's and OpenBLAS's OpenMP
# threads), in one process (bench/cmodel.c).
#
# usage: bench/cnn.sh [BUILD_DIR] [THREADS] [SECONDS] [[APP/]ARCH[@BATCH,...]...]
#   APP: the workflow whose data the model is trained on (default heat);
#   ARCH: an hml train --arch spec; BATCH: rows per call (default 1 to 16).
#   HML_BENCH_CLOCK=cpu times CPU time instead of wall time (for a loaded
#   machine, with THREADS 1).
set -eu

build=${1:-build}
threads=${2:-2}
seconds=${3:-1}
[ $# -gt 3 ] && shift 3 || shift $#
archs=${*:-cnn:8:tanh:kernel=5 cnn:8x8:relu:kernel=3 cnn:16x16:gelu:kernel=3 cnn:32x32:gelu:kernel=5 \
cnn:64x64x64:gelu:kernel=7 miniweather/cnn:16x16:tanh:kernel=5@1,4 \
particlefilter/cnnvec:8x8:relu:kernel=3:pool=2:head=64@1,16,128 \
particlefilter/cnnvec:8:relu:kernel=1:pool=1:head=0:spatial@1,16,128}
hml="$build/cmd/hml"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export HML_WORKFLOW_PATH=
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"
export OMP_NUM_THREADS="$threads"

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc --all) cores; $(cc --version | head -n1);" \
     "clock: ${HML_BENCH_CLOCK:-wall}"
n=0
for spec in $archs; do
	n=$((n + 1))
	app=heat arch=${spec%@*}
	case "$arch" in */*) app=${arch%%/*} arch=${arch#*/} ;; esac
	exp="$tmp/e$n"
	"$hml" -q -C "$exp" collect "$app" >/dev/null
	"$hml" -q -C "$exp" train --epochs 1 --threads "$threads" --arch "$arch" >/dev/null
	# --force: the cost model may refuse a model slower than the original code
	"$hml" -q -C "$exp" deploy --force --target c m1 >/dev/null
	python3 "$(dirname "$0")/noblas.py" "$exp" direct
done
echo "compiled models' OpenBLAS (those with an sgemm layer): $(python3 -c 'import json,sys; print(next((c["compiler"]["blas"] for c in json.load(open(sys.argv[1]))["compiled"] if c["compiler"]["blas"]), None))' "$tmp/e1/manifest.json")"
echo
n=0
for spec in $archs; do
	n=$((n + 1))
	exp="$tmp/e$n"
	batches=
	case "$spec" in *@*) batches=$(echo "${spec##*@}" | tr , ' ') ;; esac
	HML_BENCH_BATCHES="$batches" "$build/bench/bench_cmodel" "$threads" "$seconds" \
		"${spec%@*} ($(grep -c 'sgemm \*/' "$exp/models/c1.c") conv layers by sgemm)" \
		"$exp/models/m1.pt" "C=$exp/models/c1.so" "C-direct=$exp/models/c1-direct.so"
	echo
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
