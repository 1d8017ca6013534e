#!/bin/sh
# The main job: the binomial workflow run accurately, then collecting its
# region's data into HDF5, then with the region replaced by a model trained
# on that data. Prints what each mode did, the surrogate's error on the
# application's own output (all option prices) and the speedup.
#
# usage: scripts/main-job.sh [BUILD_DIR] [OPTIONS]
#
# Training uses scripts/train-interim.py until `hml train` exists.
set -eu

build=${1:-build}
options=${2:-32768}   # a multiple of the 4096 batch
here=$(cd "$(dirname "$0")/.." && pwd)
bin="$build/workflows/binomial/binomial"
py=/usr/bin/python3
out=${HML_MAIN_JOB_DIR:-$build/main-job}

[ -x "$bin" ] || { echo "main-job: error: '$bin' not found: build first" >&2; exit 1; }
rm -rf "$out"
mkdir -p "$out"
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-$(nproc)}"
export HML_THREADS="${HML_THREADS:-$OMP_NUM_THREADS}"

echo "== 1. accurate run (mode off)"
HML_QOI="$out/accurate.h5" "$bin" --options "$options" --seed 42 >"$out/accurate.txt"
cat "$out/accurate.txt"

echo "== 2. collect run: the tree's inputs and outputs go to $out/data.h5"
HML_MODE=collect HML_DB="$out/data.h5" HML_PROFILE=1 \
	"$bin" --options "$options" --seed 1

echo "== 3. train a 5-64-64-1 MLP on the collected data"
"$py" "$here/scripts/train-interim.py" "$out/data.h5" binomial "$out/model.pt" --epochs 150

echo "== 4. infer run: the tree replaced by the model"
HML_MODE=infer HML_MODEL="$out/model.pt" HML_QOI="$out/surrogate.h5" \
	HML_PROFILE="$out/surrogate.json" "$bin" --options "$options" --seed 42 >"$out/surrogate.txt"
cat "$out/surrogate.txt"

echo "== 5. evaluation"
"$py" - "$out" <<'PY'
import json, sys, h5py, numpy as np
d = sys.argv[1]
a = h5py.File(f"{d}/accurate.h5", "r")["price"][:]
b = h5py.File(f"{d}/surrogate.h5", "r")["price"][:]
rb = json.load(open(f"{d}/surrogate.json"))["regions"][0]
def priced(name):
    for line in open(f"{d}/{name}.txt"):
        if line.startswith("binomial: priced in "):
            return float(line.split()[3])
ta, tb = priced("accurate"), priced("surrogate")
err = b - a
print(f"prices: {len(a)}, mean {a.mean():.4f}")
print(f"surrogate rmse {np.sqrt(np.mean(err**2)):.4g}, max abs error {np.abs(err).max():.4g}")
print(f"surrogate region: {rb['model_calls']} model calls, {rb['original_calls']} original; "
      f"forward {rb['forward_s']:.3f} s, gather {rb['gather_s']:.4f} s, scatter {rb['scatter_s']:.4f} s")
print(f"pricing time: accurate {ta:.3f} s, surrogate {tb:.3f} s, speedup {ta / tb:.1f}x")
PY
