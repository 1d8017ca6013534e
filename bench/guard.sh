#!/bin/sh
# bench/guard.sh - guards out of distribution (issue #28's goals), in one
# run of this script, on binomial's API form (workflow binomial-api: the
# original code iterates over hml_region_rows(), so a guard falls back per
# row):
#
#   1. train on the default spot range (5:30); deploy the model compiled to
#      C (--target c) with no guard, bounds, and distance:fa=0.01; train an
#      ensemble of $ENSEMBLE (default 5) members of the same configuration
#      (hml train --ensemble) and deploy it, compiled to C, with no guard
#      and with ensemble:fa=0.01 (its member 0 is another model than the
#      first: its rows are compared with its own unguarded error);
#   2. QoI (price) RMSE of each, in distribution and with spots up to twice
#      the largest trained (--spot-range 5:60), through hml evaluate --args;
#      the ratio of each out-of-distribution RMSE to the in-distribution one
#      with no guard (goal: <= 1.5 with bounds or distance);
#   3. rows guarded, split by whether their spot lies beyond the largest
#      trained one (goals: >= 95 % of those, <= 2 % of the others): the
#      application is run once accurately and once per guard with the
#      deployment's environment, and a row counts as guarded when its price
#      is the accurate one bit for bit (guarded rows are the original
#      code's, exactly); the spots are recomputed from binomial's generator;
#   4. the guard's cost in distribution: its time over the surrogate runs'
#      region time and over their wall time (goal: <= 5 %);
#   5. the embedded-spec path against the guard-file path, C target: m1's
#      .so copied out of the experiment and guarded by HML_GUARD_BINOMIAL=
#      bounds (or distance:fa=0.01) alone, resolved against the statistics
#      the .so carries, beside the deployed .so with the guard file hml
#      deploy wrote; the application run directly, the two arms alternated
#      REPEAT times in distribution (guard time over region time, from the
#      profile) and once at 5:60 (rows guarded beyond and within the
#      trained spots; whether both arms guarded the same rows). Both
#      resolve the spec by the same code, so the rows must be identical and
#      the costs equal within the runs' noise (the ratio spec/file).
#
# usage: bench/guard.sh [BUILD_DIR] [OPTIONS] [EPOCHS] [REPEAT]
set -eu

build=$(cd "${1:-build}" && pwd)
options=${2:-16384}
epochs=${3:-60}
repeat=${4:-2}
members=${ENSEMBLE:-5}
py=/usr/bin/python3
hml="$build/cmd/hml"
api="$build/workflows/binomial/binomial_api"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-$(nproc)}"

echo "binomial-api: trained on spots 5:30 ($options options collected, $epochs epochs),"
echo "evaluated on $options options (seed 42) at 5:30 and at 5:60; C target; $OMP_NUM_THREADS threads"
echo "ensemble: $members members (m2)"
"$hml" -q -C exp collect binomial-api --args "--options $options --seed {seed}" >/dev/null
"$hml" -q -C exp train --epochs "$epochs" >/dev/null
"$hml" -q -C exp train --epochs "$epochs" --ensemble "$members" >/dev/null

# eval NAME ARGS: hml evaluate of the latest deployment, its report in NAME.json
eval_to() {
	out=$1
	shift
	"$hml" -q -C exp --json evaluate --repeat "$repeat" --args "$*" > "$out.json"
}

# per_row NAME: the application with the deployment's environment at 5:60,
# its prices in NAME.h5
per_row() {
	env $("$py" -c 'import json,sys; d=json.load(open(sys.argv[1]))["deployment"]["env"]; print(" ".join(k+"="+v for k,v in d.items()))' dep.json) \
		HML_ON_ERROR=fail HML_QOI="$1.h5" "$api" --options "$options" --seed 42 --spot-range 5:60 --quiet
}

in_args="--options $options --seed 42"
ood_args="--options $options --seed 42 --spot-range 5:60"
HML_QOI=accurate.h5 "$api" --options "$options" --seed 42 --spot-range 5:60 --quiet
for mg in m1/none m1/bounds m1/distance:fa=0.01 m2/none m2/ensemble:fa=0.01; do
	m=${mg%%/*}
	g=${mg#*/}
	n=$(echo "$m-$g" | tr ':=' '__')
	"$hml" -q -C exp --json deploy "$m" --target c --force --guard "$g" > dep.json
	eval_to "in-$n" $in_args
	eval_to "ood-$n" $ood_args
	per_row "rows-$n"
done

# direct NAME MODEL GUARD ARGS...: the application with MODEL and GUARD (a
# file or a spec), its profile in NAME.json and prices in NAME.h5
direct() {
	name=$1 model=$2 guard=$3
	shift 3
	HML_MODE_BINOMIAL=infer HML_MODEL_BINOMIAL="$model" HML_GUARD_BINOMIAL="$guard" \
		HML_ON_ERROR=fail HML_PROFILE="$name.json" HML_QOI="$name.h5" "$api" "$@" --quiet
}

envof() {
	"$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["deployment"]["env"][sys.argv[2]])' dep.json "$1"
}

mkdir copy
for g in bounds distance:fa=0.01; do
	n=$(echo "$g" | tr ':=' '__')
	"$hml" -q -C exp --json deploy m1 --target c --force --guard "$g" > dep.json
	so=$(envof HML_MODEL_BINOMIAL)
	file=$(envof HML_GUARD_BINOMIAL)
	cp "$so" "copy/m1-$n.so"
	for k in $(seq "$repeat"); do
		direct "file-$n-in-$k" "$so" "$file" $in_args
		direct "spec-$n-in-$k" "$tmp/copy/m1-$n.so" "$g" $in_args
	done
	direct "file-$n-ood" "$so" "$file" $ood_args
	direct "spec-$n-ood" "$tmp/copy/m1-$n.so" "$g" $ood_args
done

"$py" - "$options" "$repeat" <<'PY'
import json, sys
import h5py, numpy as np

options = int(sys.argv[1])
M = (1 << 64) - 1

def spots(n, seed, lo, hi):
    s, out = seed, []
    for _ in range(n):
        vals = []
        for a, b in ((lo, hi), (1.0, 100.0), (0.25, 10.0)):
            s = (s + 0x9e3779b97f4a7c15) & M
            z = s
            z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & M
            z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & M
            z ^= z >> 31
            vals.append(a + (b - a) * ((z >> 11) * (1.0 / 9007199254740992.0)))
        out.append(vals[0])
    return np.array(out)

card = json.load(open("exp/models/m1.json"))
smax = card["guard"]["max"][0]
S = spots(options, 42, 5.0, 60.0)
out = S > smax
acc = h5py.File("accurate.h5", "r")["price"][:]
ev = lambda f: json.load(open(f))["evaluation"]
print(f"largest trained spot {smax:.4f}; at 5:60, {out.sum()} of {options} rows beyond it")
print(f"{'guard':22} {'RMSE in':>9} {'RMSE OOD':>9} {'OOD/in(none)':>12} {'out guarded':>12} "
      f"{'in guarded':>11} {'cost/region':>12} {'cost/wall':>10}")
for g, n in (("m1 none", "m1-none"), ("m1 bounds", "m1-bounds"),
             ("m1 distance:fa=0.01", "m1-distance_fa_0.01"), ("m2 none", "m2-none"),
             ("m2 ensemble:fa=0.01", "m2-ensemble_fa_0.01")):
    base = ev(f"in-{n[:2]}-none.json")["qoi"]["rmse"]
    i, o = ev(f"in-{n}.json"), ev(f"ood-{n}.json")
    rows = h5py.File(f"rows-{n}.h5", "r")["price"][:]
    guarded = rows == acc
    go = guarded[out].mean() if out.any() else float("nan")
    gi = guarded[~out].mean()
    gs = i["guard"]["seconds"] or 0.0
    reg = np.mean(i["surrogate"]["region_seconds"])
    wall = np.mean(i["surrogate"]["wall_seconds"])
    print(f"{g:22} {i['qoi']['rmse']:9.4g} {o['qoi']['rmse']:9.4g} {o['qoi']['rmse'] / base:12.2f} "
          f"{100 * go:11.1f}% {100 * gi:10.2f}% {100 * gs / reg:11.2f}% {100 * gs / wall:9.3f}%")
print("goals: OOD/in <= 1.5 with a guard; out guarded >= 95%; in guarded <= 2%;"
      " guard cost <= 5% of the surrogate run")
print("m2 is an ensemble (hml train --ensemble): member 0 deployed, the guard runs every member")

repeat = int(sys.argv[2])
prof = lambda f: json.load(open(f))["regions"][0]
print()
print("m1 compiled to C: the guard file hml deploy writes against the spec in HML_GUARD_BINOMIAL")
print("resolved against the statistics the .so carries (copied out of the experiment);")
print(f"direct runs, in distribution {repeat} each, alternated; cost = guard_s / region_s")
print(f"{'guard':18} {'path':6} {'out guarded':>12} {'in guarded':>11} {'cost/region':>12} "
      f"{'spec/file':>10} {'same rows':>10}")
for g, n in (("bounds", "bounds"), ("distance:fa=0.01", "distance_fa_0.01")):
    cost, rows = {}, {}
    for arm in ("file", "spec"):
        ps = [prof(f"{arm}-{n}-in-{k}.json") for k in range(1, repeat + 1)]
        cost[arm] = sum(p["guard_s"] for p in ps) / sum(p["region_s"] for p in ps)
        rows[arm] = h5py.File(f"{arm}-{n}-ood.h5", "r")["price"][:]
        po = prof(f"{arm}-{n}-ood.json")
        guarded = rows[arm] == acc
        assert po["guarded_rows"] == int(guarded.sum()), (arm, g, po["guarded_rows"])
        same = bool(np.array_equal(rows["file"], rows[arm]))
        ratio = f"{cost[arm] / cost['file']:10.2f}" if arm == "spec" else f"{'':10}"
        print(f"{g:18} {arm:6} {100 * guarded[out].mean():11.1f}% {100 * guarded[~out].mean():10.2f}% "
              f"{100 * cost[arm]:11.2f}% {ratio} {str(same) if arm == 'spec' else '':>10}")
print("goal: the spec path guards the same rows as the file path, at the same cost (ratio ~1)")
PY
