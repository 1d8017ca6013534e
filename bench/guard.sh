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
#      region time and over their wall time (goal: <= 5 %).
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

"$py" - "$options" <<'PY'
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
PY
