#!/bin/sh
# bench/rollout.sh - multi-step (unrolled) training for the regions that
# advance a field in place (miniWeather, heat): the workflow's arch and
# training options with --rollout 1 (one call at a time, the default)
# against --rollout R (the model applied R times in a row along a run's
# calls, hml-train(1) ROLLOUT), trained on the same data with the same
# options and seed, each compiled to C and evaluated end to end.
#
#   bench/rollout.sh [BUILD_DIR] [REPEAT]
#     REPEAT     hml evaluate's runs per arm (default 3)
#   ROLLOUTS="1 2 4" the arms (default; the first is the baseline).
#   HML_BENCH_TRAIN="--epochs 20" adds options to every arm's hml train.
#   APPS="miniweather" runs one of the two (default: miniweather heat).
#
# The workflows' own (test) collect and evaluate sizes. Per application and
# rollout: the card's validation RMSE (one call, in the outputs' units),
# the relative L2 error of the final state or field of `hml evaluate
# --json`'s QoI files (bench/apps_goals.py), miniWeather's mass drift in
# the surrogate run, the training time, and the C deployment's end-to-end
# speedup (accurate over surrogate runs, alternated in the one hml
# evaluate command). The ratio column is each arm's relative L2 over the
# first arm's, from this run.
set -eu

build=$(cd "${1:-build}" && pwd)
repeat=${2:-3}
src=$(cd "$(dirname "$0")/.." && pwd)
hml="$build/cmd/hml"
py=${PYTHON:-/usr/bin/python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-$(nproc)}"
export HML_THREADS="${HML_THREADS:-$OMP_NUM_THREADS}"
ROLLOUTS=${ROLLOUTS:-1 2 4}

echo "rollout: test sizes, rollouts $ROLLOUTS, $repeat repeats, $OMP_NUM_THREADS threads," \
     "$(getconf _NPROCESSORS_ONLN) cpus, load average $(cut -d' ' -f1-3 /proc/loadavg) at start"
APPS=${APPS:-miniweather heat}
for app in $APPS; do
	exp="$tmp/$app"
	"$hml" -C "$exp" -q collect "$app" > /dev/null
	for r in $ROLLOUTS; do
		echo "  $app: rollout $r: train, deploy --target c, evaluate ..." >&2
		# shellcheck disable=SC2086
		"$hml" -C "$exp" -q --json train --threads "$HML_THREADS" --seed 1 --rollout "$r" \
			${HML_BENCH_TRAIN:-} > "$tmp/$app-$r-train.json"
		id=$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["model"]["id"])' \
		     "$tmp/$app-$r-train.json")
		"$hml" -C "$exp" -q deploy --force --target c "$id" > /dev/null
		"$hml" -C "$exp" -q --json evaluate --repeat "$repeat" > "$tmp/$app-$r-eval.json"
	done
done

# shellcheck disable=SC2086
HML_BENCH_TRAIN="${HML_BENCH_TRAIN:-}" "$py" - "$src" "$tmp" "$ROLLOUTS" $APPS <<'PY'
import json, os, sys
src, tmp, rollouts, apps = sys.argv[1], sys.argv[2], sys.argv[3].split(), sys.argv[4:]
sys.path.insert(0, os.path.join(src, "bench"))
import apps_goals

extra = os.environ.get("HML_BENCH_TRAIN", "").strip()
hdr = ("app", "arch", "rollout", "val RMSE", "rel L2", "mass drift", "train s", "C e2e x",
       "rel L2 / R=" + rollouts[0])
rows = []
for app in apps:
    exp = os.path.join(tmp, app)
    first = None
    for r in rollouts:
        tr = json.load(open(os.path.join(tmp, "%s-%s-train.json" % (app, r))))["model"]
        ev = json.load(open(os.path.join(tmp, "%s-%s-eval.json" % (app, r))))["evaluation"]
        rel = apps_goals._rel_l2(exp, ev, "state" if app == "miniweather" else "field")
        drift = "%.2g" % apps_goals._mass_drift(exp, ev) if app == "miniweather" else "-"
        first = rel if first is None else first
        rows.append((app, tr["arch"], str(tr["options"]["rollout"]),
                     "%.4g" % tr["metrics"]["val_rmse"], "%.4g" % rel, drift,
                     "%.1f" % tr["metrics"]["train_seconds"],
                     "%.2f" % ev["speedup"]["end_to_end"]["mean"],
                     "%.3g" % (rel / first) if first > 0 else "-"))
w = [max(len(str(r[i])) for r in rows + [hdr]) for i in range(len(hdr))]
for r in [hdr] + rows:
    print("  ".join(str(v).ljust(w[i]) for i, v in enumerate(r)).rstrip())
print("training: the workflow's options%s, seed 1; speedups: hml evaluate --json, C target"
      % (" + " + extra if extra else ""))
PY
