#!/bin/sh
# bench/coordinator.sh - the coordinator's cost per trial in `hml search`,
# with trials so short that the coordinator's own work shows.
#
# Collects binomial with 512 options, then runs `hml search --budget N`
# with one epoch per trial (a single rung), the TorchScript latency (no C
# compilation) and WORKERS worker processes, and prints, from the search
# record:
#   - the coordinator's time per trial outside its waits
#     (coordinator_busy_seconds / trials): reading results, the history,
#     the scheduler, starting trials -- and the optimiser's part of it
#     (coordinator_suggest_seconds), and what is left; in wall time and in
#     the coordinating thread's CPU time (coordinator_*_cpu_seconds),
#     printed by bench/coordinator_cost.py.
# The figure averages over 1..N observations; the optimiser's cost grows
# with them (bench/bo.sh measures a suggestion at 100, 500 and 1000).
# The search runs once per worker count: by default with as many workers
# as cores (the coordinator then shares the cores with them, and its wall
# time includes waiting for one) and with one worker less (a core free
# for the coordinator: its wall time is then its own work).
#
# usage: bench/coordinator.sh [BUILD] [BUDGET] [WORKERS...]
#        (default: build 1000, then the cores and the cores - 1)
set -eu

build=${1:-build}
budget=${2:-1000}
if [ $# -gt 2 ]; then
	shift 2
else
	cores=$(nproc)
	set -- "$cores"
	if [ "$cores" -gt 1 ]; then set -- "$cores" $(( cores - 1 )); fi
fi
hml=$(cd "$build" && pwd)/cmd/hml
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export HML_WORKFLOW_PATH=
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
"$hml" -q -C "$tmp/data" collect binomial --args "--options 512 --seed {seed}" >/dev/null
for workers in "$@"; do
	rm -rf "$tmp/exp"
	cp -r "$tmp/data" "$tmp/exp"
	start=$(date +%s.%N)
	"$hml" -q -C "$tmp/exp" search --budget "$budget" --workers "$workers" --threads 1 \
		--max-epochs 1 --target torchscript >/dev/null &
	wait $!
	end=$(date +%s.%N)
	"$hml" -C "$tmp/exp" --json show s1 >"$tmp/s1.json"
	/usr/bin/python3 - "$tmp/s1.json" "$(echo "$end - $start" | bc)" <<-'EOF'
	import json, sys
	s = json.load(open(sys.argv[1]))["search"]
	print("hml search --budget %s --max-epochs 1 --target torchscript, %d workers: %d trials in %.1f s"
	      % (s["budget"], s["workers"], s["counts"]["trials"], float(sys.argv[2])))
	EOF
	/usr/bin/python3 "$here/coordinator_cost.py" "$tmp/s1.json"
done
echo "(the wall time exceeds the CPU time when the workers, sharing the cores, preempt the"
echo " coordinator: compare the run with a core free)"
