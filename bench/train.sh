#!/bin/sh
# bench/train.sh - training throughput of `hml train` against the same
# training written in Python PyTorch (bench/train_pytorch.py, python3-torch:
# the same libtorch), as ratios measured in one run of this script:
#   samples/s = training rows * epochs / train_step_seconds on both sides,
#   where the step time covers each epoch's shuffle, gather and training
#   steps; file loading, split, normalisation, initialisation and the
#   per-epoch validation (run by both) are outside it.
# Goal: hml / PyTorch >= 1.2 at batch 256 and >= 1.0 at batch 4096.
#
# One binomial data set is collected with the real CLI, then for each batch
# the two sides alternate REPEAT times (default 3) with the same model
# (mlp:64x64:relu), optimiser (Adam, lr 1e-3, gradient clipping 5, plateau
# schedule), seed, epochs and thread count, and no early stopping; medians
# are quoted, the ratio as the median of the paired runs' ratios.
#
# Other work on the machine spoils the figures, above all with THREADS > 1:
# by default libgomp's threads spin between parallel regions, and a thread
# the kernel has descheduled holds up every region (every GEMM of a step),
# so on a shared machine the same run varies tenfold. The script therefore
# runs both sides with OMP_WAIT_POLICY=passive unless the environment sets
# it (OMP_WAIT_POLICY=active for a quiet, dedicated machine), and prints the
# load average first.
#
# usage: bench/train.sh [BUILD_DIR] [THREADS] [EPOCHS]
set -eu

build=${1:-build}
threads=${2:-2}
epochs=${3:-20}
repeat=${REPEAT:-3}
py=/usr/bin/python3
here=$(cd "$(dirname "$0")" && pwd)
hml="$build/cmd/hml"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The bundled workflow next to the hml executable, nothing else.
export HML_WORKFLOW_PATH=
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"
exp="$tmp/exp"
common="--arch mlp:64x64:relu --epochs $epochs --lr 1e-3 --optimizer adam
	--schedule plateau --clip 5 --seed 1 --patience 0 --threads $threads"

# fields FILE EXPR: rows, samples/s, step seconds and validation RMSE of a
# JSON result, `r` being the object that holds them.
fields() {
	"$py" -c 'import json, sys
d = json.load(open(sys.argv[1]))
r = eval(sys.argv[2])
print(r["n_train"], r["samples_per_second"], r["train_step_seconds"], r["val_rmse"])' "$1" "$2"
}

"$hml" -q -C "$exp" collect binomial --args '--options 16384 --seed {seed}' >/dev/null
data="$exp/$("$py" -c 'import json, sys
print(json.load(open(sys.argv[1]))["datasets"][0]["files"]["data"])' "$exp/manifest.json")"

echo "binomial, 16384 options, mlp:64x64:relu, $epochs epochs, $threads threads, $repeat repeats"
echo "load average $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores," \
     "OMP_WAIT_POLICY=$OMP_WAIT_POLICY"
: > "$tmp/runs"
for batch in 256 4096; do
	i=0
	while [ "$i" -lt "$repeat" ]; do
		# shellcheck disable=SC2086
		"$hml" -q -C "$exp" --json train $common --batch "$batch" > "$tmp/hml.json"
		h=$(fields "$tmp/hml.json" 'dict(d["model"]["metrics"], n_train=d["model"]["rows"]["train"])')
		# shellcheck disable=SC2086
		"$py" "$here/train_pytorch.py" "$data" $common --batch "$batch" --json > "$tmp/py.json"
		p=$(fields "$tmp/py.json" 'd')
		echo "$batch $h $p" >> "$tmp/runs"
		echo "$batch $((i + 1)) $h $p" | awk '{ printf "  batch %s, run %s: hml %.0f samples/s, pytorch %.0f samples/s\n", $1, $2, $4, $8 }'
		i=$((i + 1))
	done
done

"$py" - "$tmp/runs" <<'PY'
import statistics, sys

runs = {}
for line in open(sys.argv[1]):
    f = line.split()
    runs.setdefault(int(f[0]), []).append([float(v) for v in f[1:]])
print(f"{'batch':>6} {'hml samples/s':>14} {'pytorch samples/s':>18} {'ratio':>6}"
      f" {'goal':>6}   val RMSE hml / pytorch")
for batch, rows in runs.items():
    # Columns: hml rows, samples/s, step s, val RMSE; then PyTorch's.
    if any(r[0] != r[4] for r in rows):
        sys.exit(f"batch {batch}: the two sides trained on different row counts")
    hml = statistics.median(r[1] for r in rows)
    pt = statistics.median(r[5] for r in rows)
    ratio = statistics.median(r[1] / r[5] for r in rows)
    goal = 1.2 if batch <= 256 else 1.0
    print(f"{batch:>6} {hml:>14.0f} {pt:>18.0f} {ratio:>5.2f}x {goal:>5.1f}x"
          f"   {statistics.median(r[3] for r in rows):.4g} / {statistics.median(r[7] for r in rows):.4g}")
PY
