#!/bin/sh
# bench/guard-minibude.sh - guards out of distribution on miniBUDE (issue
# #28 item 4), bench/guard.sh's sibling, in one run of this script, on
# miniBUDE's API form (workflow minibude-api: the original code iterates
# over hml_region_rows(), so a guard falls back per pose):
#
#   1. collect POSES poses with the default translations {-7..7} angstrom
#      and train the workflow's default model; deploy it compiled to C
#      (--target c) with no guard, bounds, and distance:fa=0.01;
#   2. QoI (energy) RMSE and MAPE of each, in distribution and with the
#      translations widened to {-WIDE..WIDE} (--translation WIDE), through
#      hml evaluate --args; the ratio of each out-of-distribution error to
#      the in-distribution one with no guard;
#   3. poses guarded, split by whether a translation lies beyond the
#      largest trained one: the application is run once accurately (in
#      collect mode, which stores the poses) and once per guard with the
#      deployment's environment; a pose counts as guarded when its energy
#      is the accurate one bit for bit (guarded poses are the physics',
#      exactly);
#   4. the guard's cost in distribution over the surrogate runs' region
#      and wall time.
#
# usage: bench/guard-minibude.sh [BUILD_DIR] [POSES] [WIDE] [REPEAT]
set -eu

build=$(cd "${1:-build}" && pwd)
poses=${2:-8192}
wide=${3:-14}
repeat=${4:-1}
py=/usr/bin/python3
hml="$build/cmd/hml"
api="$build/workflows/minibude/minibude_api"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-$(nproc)}"
run="--poses $poses --protein 2672 --batch 256"
eval_poses=$((poses / 2))

echo "minibude-api: trained on translations {-7..7} ($poses poses collected, the workflow's"
echo "default model), evaluated on $eval_poses poses (seed 42) at 7 and at $wide; C target;"
echo "$OMP_NUM_THREADS threads, repeat $repeat"
"$hml" -q -C exp collect minibude-api --args "$run --seed {seed}" >/dev/null
"$hml" -q -C exp train >/dev/null

in_args="--poses $eval_poses --protein 2672 --batch 256 --seed 42"
ood_args="$in_args --translation $wide"
# the accurate out-of-distribution run: its energies and its poses (inputs)
HML_MODE=collect HML_DB=poses.h5 HML_QOI=accurate.h5 "$api" $ood_args --quiet
for g in none bounds distance:fa=0.01; do
	n=$(echo "$g" | tr ':=' '__')
	"$hml" -q -C exp --json deploy m1 --target c --force --guard "$g" > dep.json
	"$hml" -q -C exp --json evaluate --repeat "$repeat" --args "$in_args" > "in-$n.json"
	"$hml" -q -C exp --json evaluate --repeat "$repeat" --args "$ood_args" > "ood-$n.json"
	env $("$py" -c 'import json,sys; d=json.load(open(sys.argv[1]))["deployment"]["env"]; print(" ".join(k+"="+v for k,v in d.items()))' dep.json) \
		HML_ON_ERROR=fail HML_QOI="rows-$n.h5" "$api" $ood_args --quiet
done

"$py" - <<'PY'
import json
import h5py, numpy as np

card = json.load(open("exp/models/m1.json"))
tmax = max(abs(card["guard"]["min"][k]) for k in (3, 4, 5))
tmax = max([tmax] + [card["guard"]["max"][k] for k in (3, 4, 5)])
x = h5py.File("poses.h5", "r")["minibude"]["input"][:]
out = (np.abs(x[:, 3:6]) > tmax).any(axis=1)
acc = h5py.File("accurate.h5", "r")["energy"][:]
n = len(x)
acc = acc[:n]   # a last, shorter batch runs outside the region
ev = lambda f: json.load(open(f))["evaluation"]
base = ev("in-none.json")["qoi"]
print(f"largest trained |translation| {tmax:g}; {out.sum()} of {n} poses beyond it")
print(f"{'guard':18} {'RMSE in':>9} {'RMSE OOD':>9} {'ratio':>7} {'MAPE in':>9} {'MAPE OOD':>9}"
      f" {'ratio':>7} {'out guarded':>12} {'in guarded':>11} {'cost/region':>12} {'cost/wall':>10}")
for g, nm in (("none", "none"), ("bounds", "bounds"), ("distance:fa=0.01", "distance_fa_0.01")):
    i, o = ev(f"in-{nm}.json"), ev(f"ood-{nm}.json")
    rows = h5py.File(f"rows-{nm}.h5", "r")["energy"][:n]
    guarded = rows == acc
    go = guarded[out].mean() if out.any() else float("nan")
    gi = guarded[~out].mean()
    gs = i["guard"]["seconds"] or 0.0
    reg = np.mean(i["surrogate"]["region_seconds"])
    wall = np.mean(i["surrogate"]["wall_seconds"])
    qi, qo = i["qoi"], o["qoi"]
    print(f"{g:18} {qi['rmse']:9.4g} {qo['rmse']:9.4g} {qo['rmse'] / base['rmse']:7.2f}"
          f" {qi['mape']:9.4g} {qo['mape']:9.4g} {qo['mape'] / base['mape']:7.2f}"
          f" {100 * go:11.1f}% {100 * gi:10.2f}% {100 * gs / reg:11.2f}% {100 * gs / wall:9.3f}%")
print("ratio: the OOD error over the in-distribution one with no guard; 'in guarded':"
      " poses within the trained translations that the guard sent to the physics")
PY
