#!/bin/sh
# bench/search-target.sh - what `hml search --target c` costs against
# `--target torchscript`, measured in one run of this script on binomial:
# the same search (seed, budget, workers, epochs) once per target, then
#
#   - per trial, the seconds a worker spent compiling and timing the C form
#     (the history's latency_cost_seconds of the trials measured), and how
#     many trials took their architecture's figure from the cache instead;
#   - the C cost against a trial's own training seconds (its baseline, the
#     same trial) as a ratio, and the whole search's wall time c / torchscript;
#   - the coordinator's time per trial outside its waits of both searches,
#     the optimiser's part and the rest, wall and CPU time
#     (bench/coordinator_cost.py).
#
# Usage: bench/search-target.sh [BUILD_DIR] [--budget N] [--workers N]
#        [--epochs N] [--space FILE]
# The machine's load changes every figure; the load average is printed first.
set -eu
build=${1:-build}
[ $# -gt 0 ] && shift
budget=20 workers=2 epochs=3 space=
while [ $# -gt 0 ]; do
	case $1 in
	--budget) budget=$2; shift 2 ;;
	--workers) workers=$2; shift 2 ;;
	--epochs) epochs=$2; shift 2 ;;
	--space) space="--space $(readlink -f "$2")"; shift 2 ;;
	*) echo "usage: $0 [BUILD_DIR] [--budget N] [--workers N] [--epochs N] [--space FILE]" >&2
	   exit 2 ;;
	esac
done
hml=$(readlink -f "$build/cmd/hml")
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "load: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
"$hml" -q -C "$tmp/exp" collect binomial --args '--options 4096 --seed {seed}' >/dev/null
for t in torchscript c; do
	cp -r "$tmp/exp" "$tmp/$t"
	# shellcheck disable=SC2086
	"$hml" -q -C "$tmp/$t" --json search --budget "$budget" --workers "$workers" \
		--max-epochs "$epochs" --seed 1 --target "$t" $space > "$tmp/$t.json"
done
/usr/bin/python3 - "$tmp" "$here" <<'PY'
import json, statistics, sys
tmp = sys.argv[1]
sys.path.insert(0, sys.argv[2])
from coordinator_cost import report
rec = {t: json.load(open(f"{tmp}/{t}.json"))["search"] for t in ("torchscript", "c")}
ev = [json.loads(l) for l in open(f"{tmp}/c/search/s1/trials.jsonl")]
ok = [e for e in ev if e["status"] == "ok"]
meas = [e for e in ok if not e["metrics"]["latency_cached"]]
cost = [e["metrics"]["latency_cost_seconds"] for e in meas]
# a trial's training: its wall seconds less the measurement
train = [e["seconds"] - e["metrics"]["latency_cost_seconds"] for e in meas]
print(f"--target c: {len(ok)} trials ok, {len(meas)} compiled and timed, "
      f"{len(ok) - len(meas)} from the cache ({(len(ok) - len(meas)) / max(len(ok), 1):.0%})")
if cost:
    print(f"C measurement per compiled trial: median {statistics.median(cost):.2f} s, "
          f"max {max(cost):.2f} s; per trial of the search: {sum(cost) / len(ok):.2f} s")
    print(f"C measurement / the same trial's training: median "
          f"{statistics.median(c / t for c, t in zip(cost, train) if t > 0):.2f}x")
print(f"search wall time c / torchscript: {rec['c']['seconds'] / rec['torchscript']['seconds']:.2f}x "
      f"({rec['c']['seconds']:.1f} s / {rec['torchscript']['seconds']:.1f} s)")
for t, r in rec.items():
    print(f"--target {t}, {r['counts']['trials']} trials:")
    report(r)
PY
