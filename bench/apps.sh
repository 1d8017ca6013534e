#!/bin/sh
# bench/apps.sh - one row per bundled application: the whole hml life cycle
# at the workflow's own (benchmark) sizes, and what it buys on this machine.
#
#   hml collect APP          the workflow's collect arguments
#   hml train                the workflow's default arch and train options
#   hml deploy --best
#   hml evaluate --repeat R  the workflow's evaluate arguments
#
# The table quotes `hml evaluate --json` as it is: mean wall time of the
# accurate and the surrogate runs (process start-up, libtorch and model
# loading included), the end-to-end and region speedups (means over the
# repeats, each accurate run against its own surrogate run), the error of
# the quantity of interest in the workflow's metric, the model and how it
# was chosen, and the annotation cost: the lines the program needs for hml
# (inside its `#ifndef HML_BASELINE` blocks, blank lines and comments left
# out) against its total of such lines.
#
# usage: bench/apps.sh [BUILD_DIR] [REPEAT] [APP ...]
#   default apps: binomial bonds minibude (others add theirs to APPS below)
#   HML_BENCH_TRAIN="--epochs 10" adds options to every `hml train` (the
#   table then says so): for a loaded machine where training at the
#   workflow's own epochs would take too long.
set -eu

build=${1:-build}
repeat=${2:-3}
[ $# -ge 2 ] && shift 2 || shift $#
APPS="binomial bonds minibude"
[ $# -gt 0 ] && APPS="$*"
src=$(cd "$(dirname "$0")/.." && pwd)
hml="$build/cmd/hml"
py=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-$(nproc)}"
export HML_THREADS="${HML_THREADS:-$OMP_NUM_THREADS}"

# annotation FILE: "hml_lines total_lines" of one C source.
annotation() {
	awk '
	/^[ \t]*$/ { next }
	/^[ \t]*(\/\*|\*|\/\/)/ { next }
	{ total++ }
	/^#ifndef HML_BASELINE/ { depth++; hml[depth] = 1; next }
	/^#if/ { depth++; hml[depth] = 0; next }
	/^#else/ { if (hml[depth]) hml[depth] = 2; next }
	/^#endif/ { depth--; next }
	{ for (d = 1; d <= depth; d++) if (hml[d] == 1) { n++; break } }
	END { print n + 0, total + 0 }' "$1"
}

echo "apps: $OMP_NUM_THREADS threads, $repeat repeats, $(uname -m), $(nproc) cpus"
for app in $APPS; do
	exp="$tmp/$app"
	echo "  $app: collect, train, deploy, evaluate ..." >&2
	"$hml" -C "$exp" -q --json collect "$app" > "$tmp/$app-collect.json"
	# shellcheck disable=SC2086
	"$hml" -C "$exp" -q --json train --threads "$HML_THREADS" ${HML_BENCH_TRAIN:-} \
		> "$tmp/$app-train.json"
	"$hml" -C "$exp" -q --json deploy --best > /dev/null
	"$hml" -C "$exp" -q --json evaluate --repeat "$repeat" > "$tmp/$app-eval.json"
	set -- $(annotation "$src/workflows/$app/$app.c")
	echo "$app $1 $2" >> "$tmp/lines"
done

HML_BENCH_TRAIN="${HML_BENCH_TRAIN:-}" "$py" - "$tmp" $APPS <<'PY'
import json, os, statistics, sys
tmp, apps = sys.argv[1], sys.argv[2:]
extra = os.environ.get("HML_BENCH_TRAIN", "").strip()
how = "workflow default" + (", " + extra if extra else "") + ", hml train"
lines = {l.split()[0]: l.split()[1:] for l in open(os.path.join(tmp, "lines"))}
hdr = ("app", "accurate s", "surrogate s", "e2e x", "region x", "QoI error", "model (chosen by)", "hml lines")
rows = []
for app in apps:
    ev = json.load(open(os.path.join(tmp, app + "-eval.json")))["evaluation"]
    tr = json.load(open(os.path.join(tmp, app + "-train.json")))["model"]
    q = ev["qoi"]
    err = q[q["metric"]]
    unit = "%" if q["metric"] == "mape" else ""
    n, total = map(int, lines[app])
    rows.append((app,
                 "%.3f" % statistics.mean(ev["accurate"]["wall_seconds"]),
                 "%.3f" % statistics.mean(ev["surrogate"]["wall_seconds"]),
                 "%.2f" % ev["speedup"]["end_to_end"]["mean"],
                 "%.1f" % ev["speedup"]["region"]["mean"],
                 "%s %.4g%s" % (q["metric"], err, unit),
                 "%s (%s)" % (tr.get("arch", "?"), how),
                 "%d/%d (%.1f%%)" % (n, total, 100.0 * n / total)))
w = [max(len(str(r[i])) for r in rows + [hdr]) for i in range(len(hdr))]
for r in [hdr] + rows:
    print("  ".join(str(c).ljust(w[i]) for i, c in enumerate(r)))
PY
