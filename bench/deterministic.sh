#!/bin/sh
# bench/deterministic.sh - what `hml search --deterministic` costs: the same
# search (binomial, 4096 options, 3 rungs up to 9 epochs, TorchScript
# latency) run with and without it, in the order plain, deterministic,
# deterministic, plain (so that a drift of the machine's load falls on both),
# and the wall times and their ratio printed. In lockstep a worker whose
# trial ended waits while an earlier trial runs; this measures how much
# that idles the workers on a search whose trials differ in length (1, 3
# and 9 epochs, widths 8 to 256). The two modes choose different trials
# (the order of the results differs), so their wall times differ by what
# they chose too; the workers' busy share (the trials' seconds summed, over
# workers x wall time) is the figure that isolates the waiting.
#
# usage: bench/deterministic.sh [BUILD] [BUDGET] [WORKERS]   (build 40 2)
set -eu

build=${1:-build}
budget=${2:-40}
workers=${3:-2}
hml=$(cd "$build" && pwd)/cmd/hml
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export HML_WORKFLOW_PATH=

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
"$hml" -q -C "$tmp/exp0" collect binomial --args "--options 4096 --seed {seed}" >/dev/null
# run NAME FLAGS: one search on a fresh copy of the data; prints its wall time
run() {
	cp -r "$tmp/exp0" "$tmp/$1"
	s=$(date +%s.%N)
	# shellcheck disable=SC2086
	"$hml" -q -C "$tmp/$1" search --budget "$budget" --workers "$workers" --threads 1 \
		--max-epochs 9 --seed 3 --target torchscript $2 >/dev/null
	e=$(date +%s.%N)
	echo "$e - $s" | bc
}
p1=$(run p1 "")
d1=$(run d1 --deterministic)
d2=$(run d2 --deterministic)
p2=$(run p2 "")
/usr/bin/python3 - "$tmp" "$budget" "$workers" "$p1" "$p2" "$d1" "$d2" <<'PY'
import json, os, sys
tmp, b, w = sys.argv[1], sys.argv[2], int(sys.argv[3])
wall = dict(zip(("p1", "p2", "d1", "d2"), map(float, sys.argv[4:])))
def busy(name):
    ev = [json.loads(l) for l in open(os.path.join(tmp, name, "search/s1/trials.jsonl"))]
    done = [e for e in ev if e["status"] in ("ok", "failed", "timeout", "crashed")]
    return sum(e.get("seconds", 0) for e in done) / (w * wall[name]), len(done)
print("hml search --budget %s --workers %d --max-epochs 9 (3 rungs), binomial 4096 options" % (b, w))
for mode, runs in (("plain", ("p1", "p2")), ("deterministic", ("d1", "d2"))):
    print("  %-14s " % (mode + ":") + ", ".join("%.1f s, %d trials, workers busy %.0f%%"
          % (wall[r], busy(r)[1], 100 * busy(r)[0]) for r in runs))
bp = sum(busy(r)[0] for r in ("p1", "p2")) / 2
bd = sum(busy(r)[0] for r in ("d1", "d2")) / 2
print("  workers busy: deterministic %.0f%%, plain %.0f%% (lockstep's waiting: %.0f%% of the workers' time)"
      % (100 * bd, 100 * bp, 100 * (bp - bd)))
print("  wall time, deterministic / plain: %.2fx (means; the modes choose different trials)"
      % ((wall["d1"] + wall["d2"]) / (wall["p1"] + wall["p2"])))
PY
