#!/bin/sh
# bench/residual.sh - residual learning for the regions that advance a
# field in place (miniWeather, heat): the workflow's cnn arch without
# ':residual' against the same arch with it (the network predicts y - x,
# hml-train(1) ARCHITECTURES), trained on the same data with the same
# options and seed, each compiled to C and evaluated end to end.
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

bigger=0
if [ "${1:-}" = --bigger ]; then
	bigger=1
	shift
fi
build=$(cd "${1:-build}" && pwd)
repeat=${2:-3}
src=$(cd "$(dirname "$0")/.." && pwd)
hml="$build/cmd/hml"
py=${PYTHON:-/usr/bin/python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-$(nproc)}"
export HML_THREADS="${HML_THREADS:-$OMP_NUM_THREADS}"

# sizes APP: cargs, eargs (empty: the workflow's own)
sizes() {
	cargs="" eargs=""
	case "$1:$bigger" in
	heat:1)
		cargs="--n 64 --steps 128 --k 8 --seed {seed}"
		eargs="--n 64 --steps 128 --k 8 --seed 42" ;;
	miniweather:1)
		cargs="--nx 80 --nz 40 --steps 200 --k 10 --seed {seed}"
		eargs="--nx 80 --nz 40 --steps 200 --k 10 --seed 0" ;;
	esac
}

echo "residual: $([ $bigger = 1 ] && echo bigger || echo test) sizes, $repeat repeats," \
     "$OMP_NUM_THREADS threads, $(nproc) cpus, load average $(cut -d' ' -f1-3 /proc/loadavg) at start"
APPS=${APPS:-miniweather heat}
for app in $APPS; do
	exp="$tmp/$app"
	sizes "$app"
	set -- -C "$exp" -q collect "$app"
	[ -n "$cargs" ] && set -- "$@" --args "$cargs"
	"$hml" "$@" > /dev/null
	# the workflow's arch without the flag, then with it
	base=$("$py" -c 'import json,sys; a=json.load(open(sys.argv[1]))["regions"][0]["model"]["arch"]; print(a.replace(":residual", ""))' \
	       "$src/workflows/$app/workflow.json")
	n=0
	for arch in "$base" "$base:residual"; do
		n=$((n + 1))
		echo "  $app: $arch: train, deploy --target c, evaluate ..." >&2
		# shellcheck disable=SC2086
		"$hml" -C "$exp" -q --json train --threads "$HML_THREADS" --seed 1 --arch "$arch" \
			${HML_BENCH_TRAIN:-} > "$tmp/$app-$n-train.json"
		id=$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["model"]["id"])' \
		     "$tmp/$app-$n-train.json")
		"$hml" -C "$exp" -q deploy --force --target c "$id" > /dev/null
		set -- -C "$exp" -q --json evaluate --repeat "$repeat"
		[ -n "$eargs" ] && set -- "$@" --args "$eargs"
		"$hml" "$@" > "$tmp/$app-$n-eval.json"
	done
done

# shellcheck disable=SC2086
HML_BENCH_TRAIN="${HML_BENCH_TRAIN:-}" "$py" - "$src" "$tmp" $APPS <<'PY'
import json, math, os, sys
src, tmp, apps = sys.argv[1], sys.argv[2], sys.argv[3:]
sys.path.insert(0, os.path.join(src, "bench"))
import apps_goals

extra = os.environ.get("HML_BENCH_TRAIN", "").strip()
hdr = ("app", "arch", "val RMSE", "rel L2", "mass drift", "C e2e x", "C region x",
       "rel L2 / plain")
rows = []
for app in apps:
    exp = os.path.join(tmp, app)
    first = None
    for n in (1, 2):
        tr = json.load(open(os.path.join(tmp, "%s-%d-train.json" % (app, n))))["model"]
        ev = json.load(open(os.path.join(tmp, "%s-%d-eval.json" % (app, n))))["evaluation"]
        rel = apps_goals._rel_l2(exp, ev, "state" if app == "miniweather" else "field")
        drift = "%.2g" % apps_goals._mass_drift(exp, ev) if app == "miniweather" else "-"
        first = rel if n == 1 else first
        rows.append((app, tr["arch"], "%.4g" % tr["metrics"]["val_rmse"], "%.4g" % rel, drift,
                     "%.2f" % ev["speedup"]["end_to_end"]["mean"],
                     "%.2f" % ev["speedup"]["region"]["mean"],
                     "%.3g" % (rel / first) if first and first > 0 else "-"))
w = [max(len(str(r[i])) for r in rows + [hdr]) for i in range(len(hdr))]
for r in [hdr] + rows:
    print("  ".join(str(v).ljust(w[i]) for i, v in enumerate(r)).rstrip())
print("training: the workflow's options%s, seed 1; speedups: hml evaluate --json, C target"
      % (" + " + extra if extra else ""))
PY
