#!/bin/sh
# bench/residual.sh - residual learning for the regions that advance a
# field in place (miniWeather, heat): the workflow's cnn arch without
# ':residual' against the same arch with it (the network predicts y - x,
# hml-train(1) ARCHITECTURES), trained on the same data with the same
# options and seed, each compiled to C and evaluated end to end
# (bench/field_arms.sh).
#
#   bench/residual.sh [--bigger] [BUILD_DIR] [REPEAT]
#     --bigger   heat 64^2 (k 8), miniWeather 80 x 40 cells; without it
#                the workflows' own (test) collect and evaluate sizes
#     REPEAT     hml evaluate's runs per arm (default 3)
#   HML_BENCH_TRAIN="--epochs 20" adds options to both arms' hml train.
#   APPS="miniweather" runs one of the two (default: miniweather heat).
#
# Per application and arch: the card's validation RMSE (in the outputs'
# units, so the two arms compare), the QoI error of `hml evaluate --json`
# from its QoI files (bench/apps_goals.py: relative L2 of the final state
# or field, miniWeather's mass drift in the surrogate run), and the C
# deployment's end-to-end and region speedups (accurate over surrogate
# runs, alternated in the one hml evaluate command). The ratio column is
# the residual arm's relative L2 over the plain arm's, from this run.
set -eu

size=test
if [ "${1:-}" = --bigger ]; then
	size=bigger
	shift
fi
. "$(dirname "$0")/field_arms.sh"

echo "residual: $size sizes, $repeat repeats, $OMP_NUM_THREADS threads, $(getconf _NPROCESSORS_ONLN) cpus," \
     "load average $(cut -d' ' -f1-3 /proc/loadavg) at start"
APPS=${APPS:-miniweather heat}
for app in $APPS; do
	bench_sizes "$app" "$size"
	field_collect "$app"
	# the workflow's arch without the flag, then with it
	base=$("$py" -c 'import json,sys; a=json.load(open(sys.argv[1]))["regions"][0]["model"]["arch"]; print(a.replace(":residual", ""))' \
	       "$src/workflows/$app/workflow.json")
	n=0
	for arch in "$base" "$base:residual"; do
		n=$((n + 1))
		echo "  $app: $arch: train, deploy --target c, evaluate ..." >&2
		field_arm "$app" "$n" --arch "$arch"
	done
done

# shellcheck disable=SC2086
HML_BENCH_TRAIN="${HML_BENCH_TRAIN:-}" "$py" - "$src" "$tmp" $APPS <<'PY'
import os, sys
src, tmp, apps = sys.argv[1], sys.argv[2], sys.argv[3:]
sys.path.insert(0, os.path.join(src, "bench"))
import field_arms

extra = os.environ.get("HML_BENCH_TRAIN", "").strip()
hdr = ("app", "arch", "val RMSE", "rel L2", "mass drift", "C e2e x", "C region x",
       "rel L2 / plain")
rows = []
for app in apps:
    first = None
    for n in (1, 2):
        tr, ev, rel, drift = field_arms.arm(tmp, app, n)
        first = rel if n == 1 else first
        rows.append((app, tr["arch"], "%.4g" % tr["metrics"]["val_rmse"], "%.4g" % rel,
                     "-" if drift is None else "%.2g" % drift,
                     "%.2f" % ev["speedup"]["end_to_end"]["mean"],
                     "%.2f" % ev["speedup"]["region"]["mean"],
                     "%.3g" % (rel / first) if first and first > 0 else "-"))
field_arms.table(hdr, rows)
print("training: the workflow's options%s, seed 1; speedups: hml evaluate --json, C target"
      % (" + " + extra if extra else ""))
PY
