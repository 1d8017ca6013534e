#!/bin/sh
# The main job: the whole hml life cycle on the bundled binomial workflow.
#   hml collect binomial   the tree's inputs and outputs -> HDF5
#   hml search             a small search (BUDGET configurations, minutes here):
#                          MLP surrogates through libtorch, BO + successive
#                          halving, the Pareto front of error against latency
#                          registered as models, plots in search/s1/
#                          (the full search: hml search --budget 1000 --workers 2,
#                          28 min on 2 cores, measured by bench/search.sh --full)
#   hml deploy --best      the most accurate model of the front (TorchScript)
#   hml evaluate           accurate vs surrogate runs: error of the prices, speedups
#   hml deploy --best --target c   the same model compiled to C (no libtorch)
#   hml evaluate           the compiled deployment, the same way
#   hml deploy --max-qoi-error 0.02 --target auto
#                          the fastest front model (and form) whose prices, on a
#                          check run of the application, stay within RMSE 0.02
#   hml evaluate           that deployment, on the evaluation's own seed
#
# usage: scripts/main-job.sh [BUILD_DIR] [OPTIONS] [BUDGET]
#   OPTIONS: options priced per run (a multiple of the 4096 batch; default 32768)
#   BUDGET: configurations the search tries (default 20)
set -eu

build=${1:-build}
options=${2:-32768}
budget=${3:-20}
hml="$build/cmd/hml"
exp=${HML_MAIN_JOB_DIR:-$build/main-job}

[ -x "$hml" ] || { echo "main-job: error: '$hml' not found: build first" >&2; exit 1; }
rm -rf "$exp"
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-$(nproc)}"
export HML_THREADS="${HML_THREADS:-$OMP_NUM_THREADS}"

echo "== hml collect binomial ($options options)"
"$hml" -C "$exp" collect binomial --args "--options $options --seed {seed}"
echo "== hml search --budget $budget --workers 2 --max-epochs 27"
echo "   (the full search: hml search --budget 1000 --workers 2)"
"$hml" -C "$exp" search --budget "$budget" --workers 2 --max-epochs 27
echo "== hml deploy --best (from the front)"
"$hml" -C "$exp" deploy --best
echo "== hml evaluate (TorchScript through the libtorch plugin)"
"$hml" -C "$exp" evaluate --args "--options $options --seed 42"
echo "== hml deploy --best --target c"
"$hml" -C "$exp" deploy --best --target c
echo "== hml evaluate (the model compiled to C)"
"$hml" -C "$exp" evaluate --args "--options $options --seed 42"
echo "== hml deploy --search s1 --max-qoi-error 0.02 --target auto"
echo "   (the fastest model of the front whose prices stay within RMSE 0.02, checked by running binomial)"
if "$hml" -C "$exp" deploy --search s1 --max-qoi-error 0.02 --target auto; then
	echo "== hml evaluate (that deployment)"
	"$hml" -C "$exp" evaluate --args "--options $options --seed 42"
else
	echo "   (no model of this small search is within 0.02; the full search finds several)"
fi
echo "== hml show"
"$hml" -C "$exp" show
echo "== hml show s1 (the search's front and plots)"
"$hml" -C "$exp" show s1
