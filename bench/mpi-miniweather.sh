#!/bin/sh
# bench/mpi-miniweather.sh - the MPI miniWeather (workflows/miniweather-mpi,
# issue #29) through hml under its launcher: collect at RANKS ranks, train
# its CNN, deploy (TorchScript, then compiled to C), and `hml evaluate`
# under the launcher, which alternates accurate and surrogate runs of the
# same command line (the baseline, measured in this run) and compares the
# QoI over all ranks' files. Prints, for each form, the end-to-end and
# region speedups (median over REPEAT pairs, accurate / surrogate) and the
# QoI errors over the ranks: the final state's RMSE (also relative to the
# state's RMS) and the RMSE of the ranks' mass shares.
#
# usage: bench/mpi-miniweather.sh [BUILD_DIR] [RANKS] [REPEAT] [EPOCHS]
set -eu
py=${HML_PYTHON:-/usr/bin/python3}   # with h5py
build=$(realpath "${1:-build}") ranks=${2:-3} repeat=${3:-3} epochs=${4:-60}
command -v mpirun >/dev/null || { echo "bench/mpi-miniweather.sh: mpirun is not installed" >&2; exit 1; }
app=$build/workflows/miniweather-mpi/miniweather_mpi
[ -x "$app" ] || { echo "no $app: build with HML_WITH_MPI=ON and MPI found" >&2; exit 1; }
src=$(cd "$(dirname "$0")/.." && pwd)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
       OMPI_MCA_rmaps_base_oversubscribe=1 OMP_NUM_THREADS=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
hml() { "$build/cmd/hml" -q -C "$tmp/exp" "$@"; }

"$py" - "$src/workflows/miniweather-mpi/workflow.json" "$tmp/workflow.json" "$app" \
	"$ranks" "$epochs" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["program"], d["ranks"] = sys.argv[3], int(sys.argv[4])
d["regions"][0]["model"]["train"]["epochs"] = int(sys.argv[5])
json.dump(d, open(sys.argv[2], "w"))
PY
hml --json collect "$tmp/workflow.json" > "$tmp/collect.json"
hml --json train --threads 1 > /dev/null
hml deploy --best --force > /dev/null
hml --json evaluate --repeat "$repeat" > "$tmp/ts.json"
hml deploy --target c --force m1 > /dev/null
hml --json evaluate --repeat "$repeat" > "$tmp/c.json"
"$py" - "$tmp" "$ranks" <<'PY'
import json, sys, h5py, numpy as np
tmp, ranks = sys.argv[1], int(sys.argv[2])
c = json.load(open(tmp + "/collect.json"))["dataset"]
print("miniweather-mpi: %d ranks, %d samples collected (one view over the ranks' files)"
      % (ranks, c["regions"]["miniweather"]["rows"]))
print("%-12s %10s %10s %14s %12s %14s" % ("form", "e2e x", "region x", "state rmse", "/ state rms",
                                          "mass rmse"))
for form in ("ts", "c"):
    e = json.load(open("%s/%s.json" % (tmp, form)))["evaluation"]
    q = {x["dataset"]: x for x in e["qois"]}
    acc = [h5py.File("%s/exp/%s" % (tmp, e["files"]["qoi_accurate.r%04d" % k]), "r")["state"][:]
           for k in range(ranks)]
    rms = float(np.sqrt(np.mean(np.concatenate([a.ravel() for a in acc]) ** 2)))
    print("%-12s %10.3f %10.3f %14.4g %12.3f %14.4g" % (
        e["target"], e["speedup"]["end_to_end"]["median"], e["speedup"]["region"]["median"],
        q["state"]["rmse"], q["state"]["rmse"] / rms, q["mass"]["rmse"]))
PY
