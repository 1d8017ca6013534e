#!/bin/sh
# bench/rollout.sh - multi-step (unrolled) training for the regions that
# advance a field in place (miniWeather, heat): the workflow's arch and
# training options with --rollout 1 (one call at a time, the default)
# against --rollout R (the model applied R times in a row along a run's
# calls, the rows split by blocks of R calls and the best epoch chosen by
# the R-step validation error, hml-train(1) ROLLOUT), trained on the same
# data with the same options and seed, each compiled to C and evaluated
# end to end (bench/field_arms.sh).
#
#   bench/rollout.sh [--bench] [BUILD_DIR] [REPEAT]
#     --bench    bench/apps.sh's benchmark sizes (miniWeather 200 x 100
#                cells, 4 runs of 400 steps at k 20; heat 128^2); without
#                it the workflows' own (test) collect and evaluate sizes
#     REPEAT     hml evaluate's runs per arm (default 3)
#   ROLLOUTS="1 2 4" the arms (default; the first is the baseline).
#   HML_BENCH_TRAIN="--epochs 20" adds options to every arm's hml train.
#   APPS="miniweather" runs one of the two (default: miniweather heat).
#
# Per application and rollout: the card's one-call validation RMSE and,
# for R > 1, its R-step one (what picked the best epoch), the best and last
# epochs, the relative L2 error of the final state or field of `hml
# evaluate --json`'s QoI files (bench/apps_goals.py), miniWeather's mass
# drift in the surrogate run, the training time, and the C deployment's
# end-to-end speedup (accurate over surrogate runs, alternated in the one
# hml evaluate command). The ratio column is each arm's relative L2 over
# the first arm's, from this run.
set -eu

size=test
if [ "${1:-}" = --bench ]; then
	size=bench
	shift
fi
. "$(dirname "$0")/field_arms.sh"
ROLLOUTS=${ROLLOUTS:-1 2 4}

echo "rollout: $size sizes, rollouts $ROLLOUTS, $repeat repeats, $OMP_NUM_THREADS threads," \
     "$(getconf _NPROCESSORS_ONLN) cpus, load average $(cut -d' ' -f1-3 /proc/loadavg) at start"
APPS=${APPS:-miniweather heat}
for app in $APPS; do
	bench_sizes "$app" "$size"
	field_collect "$app"
	for r in $ROLLOUTS; do
		echo "  $app: rollout $r: train, deploy --target c, evaluate ..." >&2
		field_arm "$app" "$r" --rollout "$r"
	done
done

# shellcheck disable=SC2086
HML_BENCH_TRAIN="${HML_BENCH_TRAIN:-}" "$py" - "$src" "$tmp" "$ROLLOUTS" $APPS <<'PY'
import os, sys
src, tmp, rollouts, apps = sys.argv[1], sys.argv[2], sys.argv[3].split(), sys.argv[4:]
sys.path.insert(0, os.path.join(src, "bench"))
import field_arms

extra = os.environ.get("HML_BENCH_TRAIN", "").strip()
hdr = ("app", "arch", "rollout", "val RMSE", "val R-step RMSE", "best/last epoch", "rel L2",
       "mass drift", "train s", "C e2e x", "rel L2 / R=" + rollouts[0])
rows = []
for app in apps:
    first = None
    for r in rollouts:
        tr, ev, rel, drift = field_arms.arm(tmp, app, r)
        m = tr["metrics"]
        first = rel if first is None else first
        rstep = m.get("val_rollout_rmse")
        rows.append((app, tr["arch"], str(tr["options"]["rollout"]), "%.4g" % m["val_rmse"],
                     "-" if rstep is None else "%.4g" % rstep,
                     "%d/%d" % (m["best_epoch"], m["epochs_run"]), "%.4g" % rel,
                     "-" if drift is None else "%.2g" % drift, "%.1f" % m["train_seconds"],
                     "%.2f" % ev["speedup"]["end_to_end"]["mean"],
                     "%.3g" % (rel / first) if first > 0 else "-"))
field_arms.table(hdr, rows)
print("training: the workflow's options%s, seed 1; speedups: hml evaluate --json, C target"
      % (" + " + extra if extra else ""))
PY
