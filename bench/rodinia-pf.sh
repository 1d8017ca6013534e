#!/bin/sh
# bench/rodinia-pf.sh - hml's whole life cycle on Rodinia's OpenMP particle
# filter (openmp/particlefilter/ex_particle_OPENMP_seq.c), a code written
# elsewhere, as a scientist who downloaded it would run it:
#
#   copy it, apply bench/rodinia-pf.patch (printed below: the only lines of
#   Rodinia's code that change), hml cc gcc -O3 -ffast-math -fopenmp,
#   hml collect (one run = one video = one row), hml train (the workflow
#   names the cnnvec family; RPF_ARCH overrides), hml deploy --target c,
#   hml evaluate --repeat R,
#
# then the figures: the filter's own final-position error against the true
# path (Rodinia knows it: the disk starts at (round(IszY/2), round(IszX/2))
# and moves -2 along x and +1 along y a frame from frame 1 on), the
# surrogate's against the same truth on RPF_SEEDS videos no run collected,
# a constant predictor's (the training outputs' mean: Rodinia's path is
# the same in every video, so this is the figure a surrogate must beat to
# show it tracks anything), and hml evaluate's end-to-end and region
# speedups with the machine's load.
#
# usage: sh bench/rodinia-pf.sh RODINIA_SOURCE.c [BUILD_DIR]
#   RPF_RUNS=400      collected videos
#   RPF_ARCH=SPEC     architecture (default: the workflow's, cnnvec's defaults)
#   RPF_TRAIN='...'   more hml train options (default: --threads 2)
#   RPF_SEEDS=10      held-out videos for the errors against the truth
#   RPF_REPEAT=3      hml evaluate --repeat
#   RPF_SIZE=128 RPF_FRAMES=10 RPF_PARTICLES=10000   Rodinia's arguments
#   RPF_KEEP=DIR      work there and keep it (default: a temporary folder)
set -eu

[ $# -ge 1 ] || { echo "usage: $0 RODINIA_SOURCE.c [BUILD_DIR]" >&2; exit 2; }
SRC=$1
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=$(cd "${2:-$HERE/../build}" && pwd)
HML="$BUILD/cmd/hml"
PY=/usr/bin/python3
RUNS=${RPF_RUNS:-400}
SEEDS=${RPF_SEEDS:-10}
REPEAT=${RPF_REPEAT:-3}
S=${RPF_SIZE:-128}
F=${RPF_FRAMES:-10}
P=${RPF_PARTICLES:-10000}
[ -r "$SRC" ] || { echo "rodinia-pf: cannot read '$SRC'" >&2; exit 1; }
[ -x "$HML" ] || { echo "rodinia-pf: no hml in '$BUILD' (build it first)" >&2; exit 1; }
if [ -n "${RPF_KEEP:-}" ]; then
	W=$RPF_KEEP
	mkdir -p "$W"
else
	W=$(mktemp -d)
	trap 'rm -rf "$W"' EXIT
fi
W=$(cd "$W" && pwd)
load() { cut -d' ' -f1-3 /proc/loadavg; }

echo "== Rodinia's code, and the lines hml needs (bench/rodinia-pf.patch)"
tr -d '\r' < "$SRC" > "$W/ex_particle_OPENMP_seq.c"
cp "$W/ex_particle_OPENMP_seq.c" "$W/original.c"
patch -s "$W/ex_particle_OPENMP_seq.c" < "$HERE/rodinia-pf.patch"
echo "source: $SRC ($(wc -l < "$W/original.c") lines)"
grep -E '^[-+][^-+]|^@@' "$HERE/rodinia-pf.patch"
add=$(grep -cE '^\+[^+]' "$HERE/rodinia-pf.patch" || :)
del=$(grep -cE '^-[^-]' "$HERE/rodinia-pf.patch" || :)
dir=$(grep -cE '^\+#pragma (hml|approx)' "$HERE/rodinia-pf.patch" || :)
echo "lines: +$add -$del, of which $dir directive lines; the rest is the estimates' array," \
     "a seed argument and calloc for malloc (Rodinia reads uninitialised memory)"

cd "$W"
gcc -O3 -ffast-math -fopenmp -w -o original original.c -lm
"$HML" cc gcc -O3 -ffast-math -fopenmp -w -o particle_filter ex_particle_OPENMP_seq.c -lm
ARCH_KEY=""
[ -n "${RPF_ARCH:-}" ] && ARCH_KEY=", \"arch\": \"$RPF_ARCH\""
cat > workflow.json <<EOF
{
  "schema_version": 1,
  "name": "rodinia-particlefilter",
  "description": "Rodinia's OpenMP particle filter; region particleFilter(): video [Nfr, X, Y] in, estimates [Nfr, 2] out, one row per run",
  "program": "particle_filter",
  "env": {"OMP_NUM_THREADS": "1"},
  "collect": {"args": ["-x", "$S", "-y", "$S", "-z", "$F", "-np", "$P", "{seed}"], "runs": $RUNS, "seed": 1},
  "evaluate": {"args": ["-x", "$S", "-y", "$S", "-z", "$F", "-np", "$P", "100000"], "repeat": $REPEAT},
  "regions": [{"label": "particlefilter", "batch": 1, "model": {"family": "cnnvec"$ARCH_KEY}}],
  "qoi": {"dataset": "final_position", "metric": "rmse"}
}
EOF
X="$W/exp"
rm -rf "$X"
t0=$(date +%s)
"$HML" collect -C "$X" ./workflow.json -q --json > collect.json
t1=$(date +%s)
# shellcheck disable=SC2086
"$HML" train -C "$X" -q ${RPF_TRAIN:---threads 2} --json > train.json
t2=$(date +%s)
"$HML" deploy -C "$X" -q --target c --force --json > deploy.json
t3=$(date +%s)
"$HML" evaluate -C "$X" -q --json > evaluate.json
t4=$(date +%s)
echo "== life cycle: collect ${RUNS} runs $((t1 - t0)) s, train $((t2 - t1)) s," \
     "deploy --target c $((t3 - t2)) s, evaluate --repeat $REPEAT $((t4 - t3)) s (load $(load))"

# The held-out videos, accurate and with the deployed model (evaluate's own
# runs keep their QoI with --keep-runs).
i=0
while [ "$i" -lt "$SEEDS" ]; do
	"$HML" evaluate -C "$X" -q --repeat 1 --keep-runs \
		--args "-x $S -y $S -z $F -np $P $((200000 + i))" --json > "heldout-$i.json"
	i=$((i + 1))
done

"$PY" - "$W" "$S" "$F" "$SEEDS" <<'PY'
import glob, json, os, sys
import h5py, numpy as np
w, S, F, seeds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
# Rodinia's true path: videoSequence() puts the disk's centre of frame k
# (k >= 1) at I[y0 - 2(k-1)][x0 + (k-1)] with x0 = round(IszY/2),
# y0 = round(IszX/2) (its roundDouble() truncates); frame 0 at [x0][y0].
x0 = y0 = int(S / 2.0)
truth = np.array([y0 - 2 * (F - 2), x0 + (F - 2)], float)
def rmse(p):
    p = np.asarray(p, float).reshape(-1, 2)
    return float(np.sqrt(((p - truth) ** 2).sum(1).mean()))
data = glob.glob(os.path.join(w, "exp", "data", "*.h5"))[0]
with h5py.File(data, "r") as f:
    out = f["particlefilter/output"][:, F - 1, :]
mean = out.mean(0)
acc, sur = [], []
for i in range(seeds):
    ev = json.load(open(os.path.join(w, f"heldout-{i}.json")))
    runs = os.path.join(w, "exp", "eval", ev["id"] + "-runs")
    for kind, into in (("accurate", acc), ("surrogate", sur)):
        qs = sorted(glob.glob(os.path.join(runs, f"*{kind}*qoi*.h5")))
        with h5py.File(qs[-1], "r") as q:
            into.append(q["final_position"][:])
ev = json.load(open(os.path.join(w, "evaluate.json")))
tr = json.load(open(os.path.join(w, "train.json")))
print("== final position against Rodinia's true path (%g, %g), px RMSE" % tuple(truth))
print("filter, %d collected videos:       %.3f  (mean estimate %.3f, %.3f; spread %.3f px)"
      % (len(out), rmse(out), mean[0], mean[1], float(out.std(0).mean())))
print("filter, %d held-out videos:        %.3f" % (seeds, rmse(acc)))
print("surrogate, same videos:            %.3f  (%s)" % (rmse(sur), tr["model"]["arch"]))
print("constant (training mean), same:    %.3f" % rmse([mean] * seeds))
print("surrogate against the filter:      %.3f" % float(np.sqrt(((np.array(sur).reshape(-1, 2) - np.array(acc).reshape(-1, 2)) ** 2).sum(1).mean())))
print(json.dumps({k: ev.get(k) for k in ("speedup", "region_speedup", "predicted")}, indent=1)[:2000])
PY
echo "load: $(load)"
