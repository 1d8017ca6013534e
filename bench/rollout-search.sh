#!/bin/sh
# bench/rollout-search.sh - the search's rollout dimension (hml-search(1)
# ROLLOUT) on miniWeather (or heat: APP=heat) at the workflow's test size,
# collect and evaluate arguments as the workflow's: the same search, on
# the same data with the same seed and budget, without and with a
# "rollout" parameter in its space, each front's most accurate model
# deployed (hml deploy --best --target c) and evaluated end to end.
#
#   bench/rollout-search.sh [BUILD_DIR] [BUDGET [MAX_EPOCHS [REPEAT]]]
#     defaults: build, 8 configurations, 20 epochs, 3 evaluate runs
#   ROLLOUTS="1, 2, 4"  the rollout arm's choice values (JSON list body)
#   HML_BENCH_KEEP=DIR  keeps the experiments in DIR (default: removed)
#   SEED=S              the searches' --seed (default 1; the data are
#                       collected with the workflow's own seeds)
#
# The arms' spaces are the workflow's search_space (its region's), given
# as a --space file, the second with "rollout" added; the workflow's
# search_args make k (the one collected: miniWeather 10, heat 4) and the
# interleave ratio
# search dimensions and every trial's objective the error of the final
# state (heat: field) after the whole run (hml-search(1) "Iterative
# applications"). Per arm: the search's wall time, its trials per rollout,
# the front's best QoI error and that trial's k, interleave and rollout,
# then what deploy --best chose and its evaluation: the relative L2 error
# of the final state (QoI 'state', heat's 'field'; bench/apps_goals.py),
# miniWeather's mass drift in the surrogate run
# and the C form's end-to-end speedup (accurate over surrogate runs,
# alternated in the one hml evaluate command). The load average is printed
# at the start and before each arm's evaluation.
set -eu

build=$(cd "${1:-build}" && pwd)
budget=${2:-8}
epochs=${3:-20}
repeat=${4:-3}
src=$(cd "$(dirname "$0")/.." && pwd)
app=${APP:-miniweather}
hml="$build/cmd/hml"
py=${PYTHON:-/usr/bin/python3}
tmp=${HML_BENCH_KEEP:-}
if [ -z "$tmp" ]; then
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
fi
mkdir -p "$tmp"
load() { cut -d' ' -f1-3 /proc/loadavg; }

echo "rollout-search: $app test size, budget $budget, $epochs epochs, seed ${SEED:-1}," \
     "$repeat evaluate runs, $(getconf _NPROCESSORS_ONLN) cpus, load $(load) at start"
"$hml" -C "$tmp/data" -q collect "$app" > /dev/null
"$py" - "$src/workflows/$app/workflow.json" "$tmp" "${ROLLOUTS:-1, 2, 4}" <<'PY'
import json, sys
space = json.load(open(sys.argv[1]))["regions"][0]["model"]["search_space"]
space.pop("rollout", None)
json.dump(space, open(sys.argv[2] + "/space-none.json", "w"))
space["rollout"] = {"type": "choice", "values": json.loads("[" + sys.argv[3] + "]")}
json.dump(space, open(sys.argv[2] + "/space-rollout.json", "w"))
PY
for arm in none rollout; do
	rm -rf "${tmp:?}/$arm"
	cp -r "$tmp/data" "$tmp/$arm"
	echo "  arm $arm: search ..." >&2
	t0=$(date +%s)
	"$hml" -C "$tmp/$arm" -q search --budget "$budget" --max-epochs "$epochs" --seed "${SEED:-1}" \
		--deterministic --workers 1 --target c --space "$tmp/space-$arm.json" > /dev/null
	echo $(($(date +%s) - t0)) > "$tmp/$arm-search-seconds"
	# (an empty front, every model slower than the original code: nothing
	# to deploy, the row says so)
	if "$hml" -C "$tmp/$arm" -q --json deploy --best --force --target c \
	       > "$tmp/$arm-deploy.json"; then
		load > "$tmp/$arm-load"
		echo "  arm $arm: evaluate (load $(cat "$tmp/$arm-load")) ..." >&2
		"$hml" -C "$tmp/$arm" -q --json evaluate --repeat "$repeat" > "$tmp/$arm-eval.json"
	else
		rm -f "$tmp/$arm-deploy.json"
	fi
done

"$py" - "$src" "$tmp" "$app" "${SEED:-1}" <<'PY'
import collections, json, os, sys
src, tmp, app, seed = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
mw = app == "miniweather"
sys.path.insert(0, os.path.join(src, "bench"))
import apps_goals, field_arms

hdr = ("arm", "search s", "trials ok by rollout", "front best qoi_error", "its k/il/R",
       "deployed (arch, R)", "rel L2 (%s)" % ("state" if mw else "field"), "mass drift", "C e2e x (min-max)", "load at eval")
rows = []
for arm in ("none", "rollout"):
    exp = os.path.join(tmp, arm)
    hist = [json.loads(l) for l in open(os.path.join(exp, "search/s1/trials.jsonl"))]
    params = {l["trial"]: l["params"] for l in hist if l["status"] == "running"}
    ok = collections.Counter(params[l["trial"]].get("rollout", 1) for l in hist if l["status"] == "ok")
    man = json.load(open(os.path.join(exp, "manifest.json")))
    front = man["searches"][-1].get("front") or []
    best = min(front, key=lambda e: e["qoi_error"]) if front else None
    bp = params[best["trial"]] if best else {}
    if not os.path.exists(os.path.join(tmp, arm + "-deploy.json")):
        rows.append((arm, open(os.path.join(tmp, arm + "-search-seconds")).read().strip(),
                     " ".join("R%s:%d" % kv for kv in sorted(ok.items())), "-", "-",
                     "none: empty front", "-", "-", "-", "-"))
        continue
    dep = json.load(open(os.path.join(tmp, arm + "-deploy.json")))["deployment"]
    mod = next(m for m in man["models"] if m["id"] == dep["model"])
    ev = json.load(open(os.path.join(tmp, arm + "-eval.json")))["evaluation"]
    e2e = ev["speedup"]["end_to_end"]
    rows.append((arm, open(os.path.join(tmp, arm + "-search-seconds")).read().strip(),
                 " ".join("R%s:%d" % kv for kv in sorted(ok.items())),
                 "%.4g" % best["qoi_error"] if best else "-",
                 "%s/%s/%s" % (bp.get("k"), bp.get("interleave"), bp.get("rollout", 1)),
                 "%s %s R%s" % (dep["model"], mod.get("arch"), mod["options"].get("rollout", 1)),
                 "%.4g" % apps_goals._rel_l2(exp, ev, "state" if mw else "field"),
                 "%.2g" % apps_goals._mass_drift(exp, ev) if mw else "-",
                 "%.2f (%.2f-%.2f)" % (e2e["mean"], e2e.get("min", float("nan")),
                                       e2e.get("max", float("nan"))),
                 open(os.path.join(tmp, arm + "-load")).read().strip()))
field_arms.table(hdr, rows)
print("searches: hml search --deterministic --workers 1 --target c --seed %s; the same data (one"
      " collection, copied); deployed: hml deploy --best --target c; evaluated at the card's k"
      " and interleave" % seed)
PY
