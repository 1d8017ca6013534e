#!/bin/sh
# bench/collect-cost.sh - what collecting costs an application's run, and
# whether hml counts all of it as the collector's (cost.h
# "collect_seconds"; the runtime's collect_outside_s): the same binary run
# with HML_MODE=off and HML_MODE=collect, alternated REPEAT times, each
# with a profile (HML_PROFILE). Per mode, the medians of: the process's
# wall time, the region's original code, the collector's time inside the
# region's calls and outside them (loading HDF5, the last flush, closing
# the file), and the rest of the run (wall less all of those): what hml
# counts as the application's own. Then the ratios collect / off of the
# wall and of the rest: a rest near 1x says the collector's time is all
# counted, and the "as collected" predictions and collect's ceiling are
# those of the application alone; the last line gives the rest's ratio
# as hml counted it before it measured the time outside the calls.
#
# usage: bench/collect-cost.sh [BUILD_DIR] [REPEAT] [APP [ARGS...]]
#   defaults: build 20 bonds --bonds 65536 --seed 1 (about 3 s here)
set -eu
build=$(cd "${1:-build}" && pwd)
repeat=${2:-20}
if [ $# -ge 3 ]; then shift 2; else shift $#; set -- bonds --bonds 65536 --seed 1; fi
app=$1
shift
exe="$build/workflows/$app/$app"
[ -x "$exe" ] || { echo "collect-cost.sh: no application '$exe'" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "load average $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores; $app $*; $repeat runs a mode"
/usr/bin/python3 - "$tmp" "$repeat" "$exe" "$@" <<'PY'
import json, os, statistics, subprocess, sys, time

tmp, repeat, exe, args = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
rows = {"off": [], "collect": []}
for _ in range(repeat):
    for mode in ("off", "collect"):
        db, prof = os.path.join(tmp, "c.h5"), os.path.join(tmp, "p.json")
        for f in (db, prof):
            if os.path.exists(f):
                os.remove(f)
        env = dict(os.environ, HML_MODE=mode, HML_DB=db, HML_PROFILE=prof)
        t = time.perf_counter()
        subprocess.run([exe, *args, "--quiet"], env=env, check=True, stdout=subprocess.DEVNULL)
        wall = time.perf_counter() - t
        regs = json.load(open(prof))["regions"]
        orig = sum(r["original_s"] for r in regs)
        inside = sum(r["region_s"] - r["original_s"] for r in regs)
        outside = sum(r.get("collect_outside_s", 0) for r in regs)
        rows[mode].append((wall, orig, inside, outside, wall - orig - inside - outside))
med = {m: [statistics.median(c) * 1e3 for c in zip(*v)] for m, v in rows.items()}
print("%-8s %9s %9s %10s %11s %9s" % ("mode", "wall ms", "orig ms", "inside ms", "outside ms",
                                        "rest ms"))
for m in ("off", "collect"):
    print("%-8s %9.1f %9.1f %10.1f %11.1f %9.1f" % (m, *med[m]))
print("collect / off: wall %.2fx, rest %.2fx (1x: all the collector's time is counted as its)"
      % (med["collect"][0] / med["off"][0], med["collect"][4] / med["off"][4]))
print("without collect_outside_s (hml before it): rest %.2fx"
      % ((med["collect"][4] + med["collect"][3]) / med["off"][4]))
PY
