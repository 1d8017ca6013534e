#!/bin/sh
# bench/apps-fields.sh - the field-shaped applications at benchmark size, one
# row each, with the columns of bench/apps.sh: accurate and surrogate time
# (mean wall seconds of a run, from `hml evaluate --json`), end-to-end and
# region speedups (mean over the measured pairs), error of the quantity of
# interest, the model and how it was chosen, and the annotation lines (the
# lines inside #ifndef HML_BASELINE blocks, against the file's total).
# Each application gets a fresh experiment: collect, train (the workflow's
# default architecture), deploy --best, evaluate.
#
# usage: bench/apps-fields.sh [BUILD_DIR] [REPEAT] [EPOCHS]
set -eu

build=${1:-build}
repeat=${2:-3}
epochs=${3:-20}
src=$(cd "$(dirname "$0")/.." && pwd)
hml="$build/cmd/hml"
py=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-$(nproc)}"
export HML_THREADS="${HML_THREADS:-$OMP_NUM_THREADS}"

# annotation FILE: "hml lines/total lines".
annotation() {
	awk '/^#ifndef HML_BASELINE/ { on = 1 } on { n++ } on && /^#(endif|else)/ { on = 0 }
	     END { printf "%d/%d", n, NR }' "$1"
}

# row NAME WORKFLOW SOURCE 'COLLECT ARGS' RUNS 'EVALUATE ARGS'
row() {
	d="$tmp/$1"
	"$hml" -C "$d" --json collect "$2" --runs "$5" --args "$4" > "$d.collect.json"
	"$hml" -C "$d" --json train --epochs "$epochs" --threads "$OMP_NUM_THREADS" > "$d.train.json"
	"$hml" -C "$d" --json deploy --best > /dev/null
	"$hml" -C "$d" --json evaluate --repeat "$repeat" --args "$6" > "$d.eval.json"
	"$py" - "$1" "$d.train.json" "$d.eval.json" "$(annotation "$3")" <<'PY'
import json, statistics, sys
name, train, ev, ann = sys.argv[1], json.load(open(sys.argv[2])), json.load(open(sys.argv[3])), sys.argv[4]
e = ev["evaluation"]
mean = statistics.mean
q = e["qoi"]
print("%-12s %9.3f %9.3f %8.2fx %8.2fx %10.3g %-7s  %-26s %s" % (
    name, mean(e["accurate"]["wall_seconds"]), mean(e["surrogate"]["wall_seconds"]),
    e["speedup"]["end_to_end"]["mean"], e["speedup"]["region"]["mean"],
    q[q["metric"]], q["metric"], train["model"]["arch"] + " (default)", ann))
PY
}

echo "field applications, $OMP_NUM_THREADS threads, $repeat measured runs each, $epochs epochs"
printf "%-12s %9s %9s %9s %9s %10s %-7s  %-26s %s\n" app accurate_s surrogate_s e2e region \
	qoi_err metric "model (how chosen)" "hml lines"
row heat heat "$src/workflows/heat/heat.c" \
	"--n 128 --steps 256 --k 8 --seed {seed}" 4 "--n 128 --steps 256 --k 8 --seed 42"
row heat-rows heat-rows "$src/workflows/heat/heat.c" \
	"--n 128 --steps 4 --region rows --seed {seed}" 1 "--n 128 --steps 256 --region rows --seed 42"
row miniweather miniweather "$src/workflows/miniweather/miniweather.c" \
	"--nx 200 --nz 100 --steps 400 --k 20 --seed {seed}" 4 \
	"--nx 200 --nz 100 --steps 200 --k 20 --warm 100 --seed 0"
