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
#   (about 12 minutes on this 2-core machine; hml from BUILD_DIR, a build
#   tree or an installed prefix, which must not be rebuilt meanwhile: the
#   application links its libhml)
#   RPF_RUNS=400      collected videos
#   RPF_ARCH=SPEC     architecture (default: the workflow's, cnnvec's defaults)
#   RPF_TRAIN='...'   hml train options (default: --threads 2 --max-seconds 300:
#                     the workflow's 100 epochs with patience 10 took 19.5 min
#                     here for a best epoch of 1)
#   RPF_SEEDS=10      held-out videos for the errors against the truth
#   RPF_REPEAT=3      hml evaluate --repeat
#   RPF_SIZE=128 RPF_FRAMES=10 RPF_PARTICLES=10000   Rodinia's arguments
#   RPF_KEEP=DIR      work there and keep it (default: a temporary folder)
#   RPF_START=1       also apply bench/rodinia-pf-start.patch: the disk (and
#                     the filter's first estimate) start moved by
#                     seed % 33 - 16 pixels along both axes, so that the
#                     path differs between videos and a constant cannot
#                     match the truth (no longer Rodinia's workload: 6 lines)
set -eu

[ $# -ge 1 ] || { echo "usage: $0 RODINIA_SOURCE.c [BUILD_DIR]" >&2; exit 2; }
SRC=$1
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=$(cd "${2:-$HERE/../build}" && pwd)
HML="$BUILD/cmd/hml"
[ -x "$HML" ] || HML="$BUILD/bin/hml"   # an installed prefix
PY=/usr/bin/python3
RUNS=${RPF_RUNS:-400}
SEEDS=${RPF_SEEDS:-10}
REPEAT=${RPF_REPEAT:-3}
S=${RPF_SIZE:-128}
F=${RPF_FRAMES:-10}
P=${RPF_PARTICLES:-10000}
[ -r "$SRC" ] || { echo "rodinia-pf: cannot read '$SRC'" >&2; exit 1; }
[ -x "$HML" ] || { echo "rodinia-pf: no hml in '$BUILD' (cmd/hml or bin/hml; build it first)" >&2; exit 1; }
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
START=${RPF_START:-0}
if [ "$START" = 1 ]; then
	patch -s "$W/ex_particle_OPENMP_seq.c" < "$HERE/rodinia-pf-start.patch"
	echo "RPF_START=1: and bench/rodinia-pf-start.patch (the start moved by seed % 33 - 16 px):"
	grep -E '^[-+][^-+]' "$HERE/rodinia-pf-start.patch"
fi
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
"$HML" train -C "$X" -q ${RPF_TRAIN:---threads 2 --max-seconds 300} --json > train.json
t2=$(date +%s)
"$HML" deploy -C "$X" -q --best --target c --force --json > deploy.json
t3=$(date +%s)
"$HML" evaluate -C "$X" -q --json > evaluate.json
t4=$(date +%s)
echo "== life cycle: collect ${RUNS} runs $((t1 - t0)) s, train $((t2 - t1)) s," \
     "deploy --target c $((t3 - t2)) s, evaluate --repeat $REPEAT $((t4 - t3)) s (load $(load))"

# The held-out videos, accurate and with the deployed model (each
# evaluation keeps its last runs' QoI files).
i=0
while [ "$i" -lt "$SEEDS" ]; do
	"$HML" evaluate -C "$X" -q --repeat 1 \
		--args "-x $S -y $S -z $F -np $P $((200000 + i))" --json > "heldout-$i.json"
	i=$((i + 1))
done

"$PY" - "$W" "$S" "$F" "$SEEDS" "$P" "$START" <<'PY'
import glob, json, os, subprocess, sys, time
import h5py, numpy as np
w, S, F, seeds, P = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
start = sys.argv[6] == "1"
# Rodinia's true path: videoSequence() puts the disk's centre of frame k
# (k >= 1) at I[y0 - 2(k-1)][x0 + (k-1)] with x0 = round(IszY/2),
# y0 = round(IszX/2) (its roundDouble() truncates); frame 0 at [x0][y0].
# RPF_START moves the start by seed % 33 - 16 along both axes.
x0 = y0 = int(S / 2.0)
def truth_of(seed):
    d = seed % 33 - 16 if start else 0
    return [y0 + d - 2 * (F - 2), x0 + d + (F - 2)]
def rmse(p, seeds_of):
    p = np.asarray(p, float).reshape(-1, 2)
    t = np.array([truth_of(s) for s in seeds_of], float)
    return float(np.sqrt(((p - t) ** 2).sum(1).mean()))
held = [200000 + i for i in range(seeds)]
data = glob.glob(os.path.join(w, "exp", "data", "*.h5"))[0]
with h5py.File(data, "r") as f:
    out = f["particlefilter/output"][:, F - 1, :]
mean = out.mean(0)
acc, sur = [], []
for i in range(seeds):
    ev = json.load(open(os.path.join(w, f"heldout-{i}.json")))["evaluation"]
    for kind, into in (("accurate", acc), ("surrogate", sur)):
        with h5py.File(os.path.join(w, "exp", ev["files"]["qoi_" + kind]), "r") as q:
            into.append(q["final_position"][:])
ev = json.load(open(os.path.join(w, "evaluate.json")))["evaluation"]
tr = json.load(open(os.path.join(w, "train.json")))["model"]
m = tr["metrics"]
print("== final position against Rodinia's true path (%g, %g%s), px RMSE"
      % (y0 - 2 * (F - 2), x0 + (F - 2), ", moved by seed % 33 - 16 on both axes" if start else ""))
print("filter, %d collected videos:       %.3f  (mean estimate %.3f, %.3f; spread %.3f px)"
      % (len(out), rmse(out, range(1, len(out) + 1)), mean[0], mean[1], float(out.std(0).mean())))
print("filter, %d held-out videos:        %.3f" % (seeds, rmse(acc, held)))
print("surrogate, same videos:            %.3f  (%s)" % (rmse(sur, held), tr["arch"]))
print("constant (training mean), same:    %.3f" % rmse([mean] * seeds, held))
d = np.array(sur).reshape(-1, 2) - np.array(acc).reshape(-1, 2)
print("surrogate against the filter:      %.3f" % float(np.sqrt((d ** 2).sum(1).mean())))
const = m.get("test_rmse_const")
print("== the card (outputs: every frame's estimate, px): test RMSE %.4f, a constant's %s;"
      " best epoch %s of %s, %.0f s" % (m["test_rmse"], "%.4f" % const if const else "(not recorded)", m["best_epoch"],
                                       m["epochs_run"], m["train_seconds"]))
# What linking hml costs the program where no model runs: Rodinia as
# downloaded against the annotated build in off mode, 5 alternating runs.
env = {k: v for k, v in os.environ.items() if not k.startswith("HML_")}
env["OMP_NUM_THREADS"] = "1"
args = ["-x", str(S), "-y", str(S), "-z", str(F), "-np", P]
t = {"original": [], "particle_filter": []}
for i in range(6):
    for prog in t:
        a = time.perf_counter()
        subprocess.run([os.path.join(w, prog)] + args + (["7"] if prog != "original" else []),
                       env=env, stdout=subprocess.DEVNULL, check=True)
        if i:
            t[prog].append(time.perf_counter() - a)
o, a = np.median(t["original"]), np.median(t["particle_filter"])
print("== off mode: Rodinia as downloaded %.3f s, annotated and linked with hml %.3f s (%.2fx; medians of 5)"
      % (o, a, a / o))
sp, pr = ev["speedup"], ev["predicted"]
print("== hml evaluate --repeat %d (%s form), QoI RMSE against the filter %.4f px"
      % (ev["repeat"], ev["target"], ev["qoi"]["rmse"]))
print("end to end: median %.1fx (%.1f to %.1f), predicted %.1fx; accurate %.3f s, surrogate %.3f s (medians)"
      % (sp["end_to_end"]["median"], sp["end_to_end"]["min"], sp["end_to_end"]["max"], pr["end_to_end"],
         float(np.median(ev["accurate"]["wall_seconds"])), float(np.median(ev["surrogate"]["wall_seconds"]))))
print("region:     median %.1fx (%.1f to %.1f), predicted %.1fx (model %.0f us + moving rows %.0f us per"
      " video; the collected cost waited for a CPU %.0f%% of its time)"
      % (sp["region"]["median"], sp["region"]["min"], sp["region"]["max"], pr["region"],
         pr["model_per_row"] * 1e6, pr["move_per_row"] * 1e6, 100 * (pr.get("cpu_wait_share") or 0)))
PY
echo "load: $(load)"
