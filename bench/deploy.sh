#!/bin/sh
# bench/deploy.sh - the deployment form's benchmark (issue 13) in one run:
#
#   (a) inference latency of the model compiled to C against the same model
#       in TorchScript, at batches 1 to 4096 (1, 64 and 4096 among them),
#       for the binomial MLP (5-64-64-1) and a larger one (5-256-256-256-1):
#       bench/cmodel.sh. Goals: <= 0.5 us per call at batch 1, >= 1.0x
#       libtorch at 4096.
#   (b) start-up wall time and peak resident memory of binomial in off mode
#       against the same program built without hml: bench/startup.sh.
#       Goal: <= 5 ms and <= 5 MB more.
#   (c) the README's main job (scripts/main-job.sh, run here from scratch)
#       and its evaluations: the search's most accurate model in TorchScript
#       and compiled to C, and the deployment --max-qoi-error 0.02 chose;
#       QoI RMSE and end-to-end speedup of each, C against TorchScript.
#       Goal for binomial: >= 100x end to end at QoI RMSE <= 0.01 with the
#       best model training or search finds; the main job's search is small
#       (budget 20), so the figure the goal is about comes from the
#       budget-1000 search: bench/search.sh --full 1000 (--reuse on a kept
#       one), which deploys and evaluates the same way.
#
# Each part controls its own comparison (see the scripts named); the load
# average is printed first and last, since another job on the machine moves
# every figure.
#
# usage: bench/deploy.sh [BUILD_DIR] [THREADS] [STARTUP_RUNS]
set -eu

here=$(cd "$(dirname "$0")" && pwd)
build=$(readlink -f "${1:-build}")
threads=${2:-2}
runs=${3:-100}
hml="$build/cmd/hml"
py=/usr/bin/python3
[ -x "$hml" ] || { echo "bench/deploy.sh: error: '$hml' not found: build first" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
start=$(date +%s)
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc --all) cores"

echo
echo "== (a) latency per call, compiled C against libtorch ($threads threads) =="
sh "$here/cmodel.sh" "$build" "$threads" 1 mlp:64x64:relu mlp:256x256x256:relu

echo
echo "== (b) start-up of binomial --options 1 against the program built without hml =="
sh "$here/startup.sh" "$build" "$runs"

echo
echo "== (c) the README's main job: scripts/main-job.sh $build =="
t0=$(date +%s)
if ! HML_MAIN_JOB_DIR="$tmp/mj" OMP_NUM_THREADS="$threads" \
	sh "$here/../scripts/main-job.sh" "$build" >"$tmp/mj.log" 2>&1; then
	tail -n 20 "$tmp/mj.log" >&2
	echo "bench/deploy.sh: error: the main job failed (its log's end above)" >&2
	exit 1
fi
echo "main job: $(( $(date +%s) - t0 )) s"
n=0
for e in e1 e2 e3; do
	"$hml" -C "$tmp/mj" --json show "$e" >"$tmp/$e.json" 2>/dev/null || break
	n=$((n + 1))
done
"$hml" -C "$tmp/mj" --json show >"$tmp/show.json"
"$py" - "$tmp" "$n" <<'EOF'
import json, os, sys
tmp, n = sys.argv[1], int(sys.argv[2])
show = json.load(open(os.path.join(tmp, "show.json")))
archs = {m["id"]: m.get("arch", "?") for m in show.get("models", [])}
what = ["deploy --best (TorchScript)", "deploy --best --target c",
        "deploy --max-qoi-error 0.02 --target auto"]
rows = []
print("%-44s %-5s %-22s %-12s %9s %28s %9s" % ("deployment", "model", "arch", "target",
      "QoI RMSE", "end to end median (min-max)", "region"))
for i in range(n):
    e = json.load(open(os.path.join(tmp, "e%d.json" % (i + 1))))
    s, r = e["speedup"]["end_to_end"], e["speedup"]["region"]
    rows.append(e)
    print("%-44s %-5s %-22s %-12s %9.5f %11.1fx (%5.1f-%5.1fx) %8.1fx"
          % (what[i], e["model"], archs.get(e["model"], "?"), e["target"], e["qoi"]["rmse"],
             s["median"], s["min"], s["max"], r["median"]))
if n >= 2:
    ts, c = rows[0], rows[1]
    print("C / TorchScript, the same model: end to end %.2fx, region %.2fx; accurate run %.2f s"
          % (c["speedup"]["end_to_end"]["median"] / ts["speedup"]["end_to_end"]["median"],
             c["speedup"]["region"]["median"] / ts["speedup"]["region"]["median"],
             sorted(c["accurate"]["wall_seconds"])[len(c["accurate"]["wall_seconds"]) // 2]))
met = [e for e in rows if e["qoi"]["rmse"] <= 0.01 and e["speedup"]["end_to_end"]["median"] >= 100]
print("goal >= 100x end to end at QoI RMSE <= 0.01: %s on the main job (budget 20); "
      "bench/search.sh --full 1000 measures it on the budget-1000 search"
      % ("met by " + ", ".join(e["id"] for e in met) if met else "not met"))
EOF
echo
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); bench/deploy.sh: $(( $(date +%s) - start )) s"
