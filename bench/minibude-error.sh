#!/bin/sh
# bench/minibude-error.sh - where the miniBUDE surrogate's error lies (issue
# #30): the error profiled, not the code. For each pose count N given:
#
#   1. hml collect minibude --args '--poses N ...' at benchmark size (a
#      bm2-sized protein, 2672 atoms) and hml train with the workflow's
#      default model and training options (HML_BENCH_TRAIN adds options);
#   2. a fresh set of EVAL poses (seed 42, as hml evaluate runs) collected
#      with the physics;
#   3. the model's MAPE (mask |E| < 1, the workflow's metric) on the rows it
#      was trained on and on the fresh rows: equal figures say the model
#      does not fit even what it saw (too little signal per dimension or too
#      little capacity), a gap says it over-fits; then the fresh rows' MAPE
#      per |E| band, for poses with an angle at the period's seam (-170 or
#      180 degrees, which a plain MLP sees far apart) against the others,
#      and for negative against positive energies.
#
# A model's figures against a second, larger N show what more rows buy.
#
# usage: bench/minibude-error.sh [BUILD_DIR] [EVAL] [N ...]   (defaults: build 4096 8192)
set -eu

build=$(cd "${1:-build}" && pwd)
eval_poses=${2:-4096}
if [ $# -ge 2 ]; then shift 2; else shift $#; fi
counts="${*:-8192}"
py=/usr/bin/python3
hml="$build/cmd/hml"
app="$build/workflows/minibude/minibude"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-$(nproc)}"
size="--protein 2672 --batch 256"

# shellcheck disable=SC2086
HML_MODE=collect HML_DB=fresh.h5 "$app" --poses "$eval_poses" $size --seed 42 --quiet
echo "minibude: the workflow's default model on N collected poses (seed 1), MAPE (|E| >= 1)"
echo "on its own rows and on $eval_poses fresh poses (seed 42); $OMP_NUM_THREADS threads," \
     "load average $(cut -d' ' -f1-3 /proc/loadavg)${HML_BENCH_TRAIN:+, train options $HML_BENCH_TRAIN}"
for n in $counts; do
	"$hml" -q -C "e$n" collect minibude --args "--poses $n $size --seed {seed}" > /dev/null
	# shellcheck disable=SC2086
	"$hml" -q -C "e$n" --json train --threads "$OMP_NUM_THREADS" ${HML_BENCH_TRAIN:-} > "train$n.json"
	"$py" - "$n" <<'PY'
import json, sys
import h5py, numpy as np, torch

n = sys.argv[1]
card = json.load(open(f"train{n}.json"))["model"]
m = torch.jit.load(f"e{n}/models/{card['id']}.pt")
m.eval()

def rows(path):
    g = h5py.File(path, "r")["minibude"]
    x = g["input"][:]
    with torch.no_grad():
        p = m(torch.from_numpy(x)).numpy()[:, 0].astype(np.float64)
    return x, g["output"][:, 0].astype(np.float64), p

def mape(a, p, sel=None):
    k = np.abs(a) >= 1
    if sel is not None:
        k &= sel
    return (100 * np.mean(np.abs(p[k] - a[k]) / np.abs(a[k])) if k.any() else float("nan")), int(k.sum())

_, at, pt = rows(f"e{n}/data/d1.h5")
x, a, p = rows("fresh.h5")
print(f"N={n} {card['arch']}, {card['metrics']['epochs_run']} epochs, loss {card['loss']}:"
      f" MAPE own rows {mape(at, pt)[0]:.1f}%, fresh {mape(a, p)[0]:.1f}%;"
      f" {100 * np.mean(np.abs(a) < 1):.1f}% of fresh |E| < 1 (masked)")
for lo, hi in ((1, 3), (3, 10), (10, 30), (30, 100), (100, 300), (300, np.inf)):
    band = (np.abs(a) >= lo) & (np.abs(a) < hi)
    e, k = mape(a, p, band)
    print(f"  |E| in [{lo:g}, {hi:g}): {k:5d} poses ({100 * k / len(a):4.1f}%), MAPE {e:6.1f}%,"
          f" MAE {np.mean(np.abs(p[band] - a[band])):8.2f}")
seam = (np.abs(np.rint(np.degrees(x[:, :3]))) >= 170).any(axis=1)
print(f"  an angle at -170 or 180: MAPE {mape(a, p, seam)[0]:.1f}%, the others {mape(a, p, ~seam)[0]:.1f}%;"
      f" E < 0: {mape(a, p, a < 0)[0]:.1f}%, E > 0: {mape(a, p, a > 0)[0]:.1f}%")
PY
done
