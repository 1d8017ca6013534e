#!/bin/sh
# bench/search.sh - hml search measured in one run of this script:
#
#  (a) suggestion latency of hml's optimiser at 100, 500 and 1000
#      observations: bench/bo.sh (bench_bo: the windowed GP against the
#      exact GP measured in the same run);
#  (b) sample efficiency on binomial: the hypervolume of the (validation
#      RMSE, latency per sample) front found by `hml search` against random
#      search and Optuna's TPE and NSGA-II (python3-optuna), the peers
#      driving the same objective -- one `hml train` per trial, the same
#      command line hml's workers run, at the search's full-fidelity epochs
#      (bench/search_peers.py), the latency of the same deployment form
#      (--target: c when a C compiler is found, as hml search's default
#      auto; the peers read that target's latency from the model card) --
#      at each budget of --budgets, from one run
#      of the largest budget per method and seed (--seeds: several, and
#      the mean and spread over them), as ratios hml/peer
#      (bench/search_report.py says what is counted and the reference
#      point). hml's multi-fidelity search (ASHA) trains most
#      configurations for a fraction of the epochs, so at equal budget it
#      spends less training time than the peers; the wall times are printed;
#  (c) with --full: the wall time of `hml search --budget N` (default 1000)
#      on binomial with the workflow's data and epochs (its counts, its
#      coordinator's cost per trial, its front), then `hml evaluate` of
#      the front's most accurate model deployed as TorchScript and compiled
#      to C, of the fastest (model, target) within validation RMSE 0.01
#      (`deploy --max-error 0.01 --target auto`), and of the fastest whose
#      QoI RMSE on a check run is within 0.01 (`deploy --max-qoi-error
#      0.01 --target auto`): QoI RMSE and speedups. Off by default: it ran
#      26-28 min here (1000 configurations, 2 workers). The experiment is
#      kept (--keep); --reuse redoes only the deployments and evaluations
#      on a kept one.
#
# The machine's load changes every figure but the hypervolumes; the load
# average is printed first. The default (b) trains 3 x 200 full-fidelity
# peer trials on the workflow's data: hours on 2 cores; --quick or
# --budgets/--options/--epochs shrink it.
#
# usage: bench/search.sh [options]
#   --build DIR        build directory (default build)
#   --budgets LIST     budgets of (b), comma-separated (default 50,100,200)
#   --quick            test-size run: budgets 10,20,30, 2048 options,
#                      9 epochs, 5 asks in (a) (about 10 minutes here)
#   --options N        options (rows) collected for (b) (default: the workflow's)
#   --epochs N         full-fidelity epochs of (b) (default 27)
#   --methods LIST     peers of (b) (default random,tpe,nsga2)
#   --workers N        trials at once, hml and peers alike (default 2)
#   --seed S           seed of every method (default 1)
#   --seeds LIST       (b) once per seed, comma-separated (default: --seed);
#                      with two or more, the report adds the mean and spread
#                      of each hypervolume and ratio over the runs
#   --runs DIR         keep (b)'s runs in DIR/seed-S (hml.json, peers.json,
#                      wall, settings): bench/search_report.py BUDGETS DIR/seed-*
#                      reports them again, or together with other runs of
#                      the same settings (default: a temporary directory)
#   --asks N           suggestions timed per size in (a) (default 20)
#   --skip-bo          leave (a) out
#   --full [N]         run (c) with a budget of N (default 1000)
#   --keep DIR         where (c) keeps its experiment (default BUILD/search-full)
#   --reuse            (c) on the finished search s1 kept in --keep DIR: no new
#                      search; its wall time is the one its record kept
#   --skip-peers       leave (b) out
#   --target T         deployment form of (b)'s latency objective, c or
#                      torchscript (default c when cc is found)
set -eu

build=build
budgets=50,100,200
options=
epochs=27
methods=random,tpe,nsga2
workers=2
seed=1
seeds=
runs_dir=
asks=20
skip_bo=0
skip_peers=0
target=
keep_dir=
full=0
reuse=0
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$2; shift 2 ;;
	--budgets) budgets=$2; shift 2 ;;
	--quick) budgets=10,20,30; options=2048; epochs=9; asks=5; shift ;;
	--options) options=$2; shift 2 ;;
	--epochs) epochs=$2; shift 2 ;;
	--methods) methods=$2; shift 2 ;;
	--workers) workers=$2; shift 2 ;;
	--seed) seed=$2; shift 2 ;;
	--seeds) seeds=$2; shift 2 ;;
	--runs) runs_dir=$2; shift 2 ;;
	--asks) asks=$2; shift 2 ;;
	--skip-bo) skip_bo=1; shift ;;
	--skip-peers) skip_peers=1; shift ;;
	--keep) keep_dir=$2; shift 2 ;;
	--reuse) reuse=1; shift ;;
	--target) target=$2; shift 2 ;;
	--full)
		full=1000
		case ${2:-} in [0-9]*) full=$2; shift ;; esac
		shift ;;
	*) echo "bench/search.sh: unknown option '$1'" >&2; exit 2 ;;
	esac
done

py=/usr/bin/python3
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/.." && pwd)
hml=$(cd "$build" && pwd)/cmd/hml
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export HML_WORKFLOW_PATH=
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"
[ -n "$seeds" ] || seeds=$seed
[ -n "$runs_dir" ] || runs_dir="$tmp/runs"
maxb=$(echo "$budgets" | tr ',' '\n' | sort -n | tail -1)
if [ -z "$target" ]; then
	if command -v cc >/dev/null; then target=c; else target=torchscript; fi
fi
cores=$(nproc)
threads=$(( cores / workers )); [ "$threads" -ge 1 ] || threads=1

now() { date +%s.%N; }
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) on $cores cores"

if [ "$skip_bo" = 0 ]; then
	echo
	echo "== (a) suggestion latency of the optimiser (bench/bo.sh) =="
	sh "$here/bo.sh" "$build" "$asks"
fi

[ -n "$keep_dir" ] || keep_dir=$(cd "$build" && pwd)/search-full

if [ "$skip_peers" = 0 ]; then
	echo
	echo "== (b) sample efficiency on binomial: budgets $budgets, $epochs epochs, $workers workers x $threads threads, latency of target $target =="
	exp="$tmp/exp"
	if [ -n "$options" ]; then
		"$hml" -q -C "$exp" collect binomial --args "--options $options --seed {seed}" >/dev/null
	else
		"$hml" -q -C "$exp" collect binomial >/dev/null
	fi
	if [ -n "$options" ]; then data="$options options"; else data="the workflow's options"; fi
	runs=
	for s in $(echo "$seeds" | tr ',' ' '); do
		run="$runs_dir/seed-$s"
		rm -rf "$run" "$tmp/exp-hml"
		mkdir -p "$run"
		cp -r "$exp" "$tmp/exp-hml"
		t0=$(now)
		"$hml" -q -C "$tmp/exp-hml" search --budget "$maxb" --max-epochs "$epochs" --seed "$s" \
			--workers "$workers" --threads "$threads" --target "$target" >/dev/null
		t1=$(now)
		echo "$t1 - $t0" | bc >"$run/wall"
		echo "budget $maxb, $data, $epochs epochs, $workers workers x $threads threads, target $target" >"$run/settings"
		"$hml" -C "$tmp/exp-hml" --json show s1 >"$run/hml.json"
		"$py" "$here/search_peers.py" "$hml" "$exp" "$src/workflows/binomial/workflow.json" \
			binomial "$maxb" "$epochs" "$methods" "$threads" "$workers" "$s" "$target" \
			>"$run/peers.json"
		runs="$runs $run"
	done
	# shellcheck disable=SC2086 # one argument per run directory
	"$py" "$here/search_report.py" "$budgets" $runs
	[ "$runs_dir" = "$tmp/runs" ] || echo "the runs are kept in $runs_dir"
fi

if [ "$full" -gt 0 ]; then
	echo
	echo "== (c) hml search --budget $full on binomial (workflow's data and epochs), $workers workers =="
	fexp="$keep_dir"
	if [ "$reuse" = 1 ]; then
		"$hml" -C "$fexp" --json show s1 >"$tmp/full.json"
		t0=0
		t1=$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["search"]["seconds"])' \
			"$tmp/full.json")
		echo "(reusing the search kept in $fexp: its wall time is the one it recorded)"
	else
		rm -rf "$fexp"
		"$hml" -q -C "$fexp" collect binomial >/dev/null
		t0=$(now)
		"$hml" -q -C "$fexp" search --budget "$full" --workers "$workers" --seed "$seed" >/dev/null
		t1=$(now)
		"$hml" -C "$fexp" --json show s1 >"$tmp/full.json"
	fi
	# the most accurate front model, as TorchScript and compiled to C; then
	# the fastest (model, target) whose validation RMSE is within 0.01
	"$hml" -q -C "$fexp" deploy --best >/dev/null
	"$hml" -q -C "$fexp" --json evaluate >"$tmp/eval-ts.json"
	"$hml" -q -C "$fexp" deploy --best --target c >/dev/null
	"$hml" -q -C "$fexp" --json evaluate >"$tmp/eval-c.json"
	if "$hml" -q -C "$fexp" deploy --max-error 0.01 --target auto >/dev/null 2>"$tmp/auto.err"; then
		"$hml" -q -C "$fexp" --json evaluate >"$tmp/eval-auto.json"
	else
		echo "deploy --max-error 0.01: $(cat "$tmp/auto.err")"
	fi
	if "$hml" -q -C "$fexp" deploy --max-qoi-error 0.01 --target auto --search s1 \
		>/dev/null 2>"$tmp/qoi.err"; then
		"$hml" -q -C "$fexp" --json evaluate >"$tmp/eval-qoi.json"
	else
		echo "deploy --max-qoi-error 0.01: $(cat "$tmp/qoi.err")"
	fi
	"$py" - "$tmp" "$(echo "$t1 - $t0" | bc)" "$full" "$here" <<-'EOF'
	import json, os, sys
	tmp, wall, budget, here = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4]
	s = json.load(open(os.path.join(tmp, "full.json")))["search"]
	c = s["counts"]
	print("wall time of hml search --budget %s: %.1f s (%.2f h); goal <= 1 h" % (budget, wall, wall / 3600))
	print("  %d configurations, %d trials (%d failed, %d re-run), %d rungs up to %d epochs, "
	      "%.2f s of wall time per configuration" % (c["configs"], c["trials"], c["failed"],
	      c["reruns"], s["rungs"], s["max_epochs"], wall / max(c["configs"], 1)))
	sys.path.insert(0, here)
	from coordinator_cost import report
	report(s)
	print("  front (%d): val_rmse, us/sample, arch" % len(s["front"]))
	for f in s["front"]:
	    print("    %.4g  %.4g  %s (%s)" % (f["val_rmse"], 1e6 * f["latency_seconds_per_sample"],
	                                     f["arch"], f["model"]))
	for name, what in (("eval-ts", "deploy --best (TorchScript)"), ("eval-c", "deploy --best --target c"),
	                   ("eval-auto", "deploy --max-error 0.01 --target auto"),
	                   ("eval-qoi", "deploy --max-qoi-error 0.01 --target auto")):
	    path = os.path.join(tmp, name + ".json")
	    if not os.path.exists(path):
	        continue
	    e = json.load(open(path))
	    e = e.get("evaluation", e)
	    q = e["qoi"]
	    print("%-40s model %s (%s): QoI %s %.4g (goal <= 0.01), end to end %.1fx, region %.1fx"
	          % (what, e["model"], e["target"], q["metric"], q[q["metric"]],
	             e["speedup"]["end_to_end"]["median"], e["speedup"]["region"]["median"]))
	EOF
	echo "the experiment is kept in $fexp"
fi
