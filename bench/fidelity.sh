#!/bin/sh
# bench/fidelity.sh - what `hml search --fidelity` should save on: the
# epochs of a lower rung (the default), its training rows, or both (sqrt
# of the rung's fraction each; lib/search/plan.h). One run of this script
# searches the same collected data once per fidelity and seed, with the
# same budget, epochs, workers and optimiser seed, and prints per run the
# wall time, the best validation error on the front and the hypervolume
# of the (log10 validation error, log10 latency per sample) front against
# one reference point common to all runs (bench/search_report.py's
# definition); then per fidelity the mean over the seeds and its ratios
# to epochs'. The fidelities run interleaved per seed so that the
# machine's load falls on each alike.
#
# usage: bench/fidelity.sh [--build DIR] [--workflow NAME] [--args ARGS]
#                          [--budget N] [--epochs N] [--workers N]
#                          [--seeds LIST] [--fidelities LIST]
#   defaults: build, binomial with its collect arguments, budget 30,
#   27 epochs, 2 workers, seeds 1,2,3, fidelities epochs,rows,both
set -eu

build=build wf=binomial args= budget=30 epochs=27 workers=2 seeds=1,2,3
fids=epochs,rows,both
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$2; shift 2 ;;
	--workflow) wf=$2; shift 2 ;;
	--args) args=$2; shift 2 ;;
	--budget) budget=$2; shift 2 ;;
	--epochs) epochs=$2; shift 2 ;;
	--workers) workers=$2; shift 2 ;;
	--seeds) seeds=$2; shift 2 ;;
	--fidelities) fids=$2; shift 2 ;;
	*) echo "bench/fidelity.sh: unknown option '$1'" >&2; exit 2 ;;
	esac
done

here=$(cd "$(dirname "$0")" && pwd)
hml=$(cd "$build" && pwd)/cmd/hml
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"
now() { date +%s.%N; }

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
echo "workflow $wf${args:+ (--args '$args')}, budget $budget, $epochs epochs, $workers workers"
if [ -n "$args" ]; then
	"$hml" -q -C "$tmp/exp" collect "$wf" --args "$args" >/dev/null
else
	"$hml" -q -C "$tmp/exp" collect "$wf" >/dev/null
fi
runs=
for s in $(echo "$seeds" | tr ',' ' '); do
	for f in $(echo "$fids" | tr ',' ' '); do
		run="$tmp/runs/$f-$s"
		mkdir -p "$run"
		rm -rf "$tmp/e"
		cp -r "$tmp/exp" "$tmp/e"
		t0=$(now)
		"$hml" -q -C "$tmp/e" search --budget "$budget" --max-epochs "$epochs" --seed "$s" \
			--workers "$workers" --fidelity "$f" >/dev/null
		t1=$(now)
		echo "$t1 - $t0" | bc >"$run/wall"
		"$hml" -C "$tmp/e" --json show s1 >"$run/hml.json"
		runs="$runs $run"
	done
done
# shellcheck disable=SC2086 # one argument per run directory
/usr/bin/python3 "$here/fidelity_report.py" $runs
