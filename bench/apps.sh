#!/bin/sh
# bench/apps.sh - one row per bundled application: the whole hml life cycle
# at benchmark size, and what it buys on this machine.
#
#   hml collect APP [--runs N --args ...]   the sizes of bench/sizes.sh
#   hml train [--arch ...]                  the workflow's default arch and
#                                           train options (or the table's)
#   hml deploy --best                       (--force when deploy refuses a
#                                           model predicted slower than the
#                                           original code: the table says
#                                           so, and measures it all the same)
#   hml evaluate --repeat R [--args ...]
#   hml deploy --target c --best, hml evaluate again: the same model
#                                           compiled to C (no libtorch in
#                                           the application's process)
#
# Beside each measured speedup the table gives the predicted one (`hml
# evaluate`'s "predicted": the original code's cost per row as collected
# against the model card's latency, per row for the region, and for the
# evaluated runs end to end), so that the prediction deploy and search
# act on is checked against what the application pays.
#
# The table quotes `hml evaluate --json` as it is: median wall time of the
# accurate and the surrogate runs (process start-up, libtorch and model
# loading included), the end-to-end and region speedups (medians over the
# repeats, each accurate run against its own surrogate run: one run slowed
# by other work moved a mean of three heat ratios from 0.38x to 2.09x
# here, so the median is quoted, and judged on), the error of
# the quantity of interest in the workflow's metric, the model and how it
# was chosen, and the annotation cost: the lines the program needs for hml
# (its directive lines and hml calls, bench/annotation.sh; blank lines and
# comments left out) against its total of such lines. The last columns
# give issue 30's goal for the application and whether this run met it
# (bench/apps_goals.py: the thresholds are constants there, the verdict is
# computed from the figures measured here; a goal is read at benchmark
# size, so a --quick verdict says little).
#
# usage: bench/apps.sh [--quick] [BUILD_DIR] [REPEAT] [APP ...]
#   --quick   the small sizes the tests use (each workflow.json's own
#             collect and evaluate arguments, smaller for the three row
#             applications); without it, benchmark (paper-like) sizes
#   APPS      default: binomial bonds minibude heat heat-rows miniweather
#             particlefilter
#   HML_BENCH_TRAIN="--epochs 10" adds options to every `hml train` (the
#   table then says so): for a loaded machine where training at the
#   workflow's own epochs would take too long.
#   HML_BENCH_KEEP=DIR keeps every command's --json output and error text
#   (DIR/APP-*.json, *.err) for a closer look; the experiments' data go.
#   HML_BENCH_SEARCH="--budget 200 --time-limit 1h --workers 2" replaces
#   hml train by hml search with these options (issue 30's protocol: at
#   most 200 configurations or an hour per application), and the table
#   gives the search's wall time. Each form then deploys the fastest model
#   whose QoI error, checked by running the application, meets the goal's
#   where the goal is in the workflow's own QoI metric (hml deploy
#   --max-qoi-error E, once per form: binomial, bonds, miniBUDE), else the
#   most accurate (--best, which runs nothing; also when no model meets E:
#   the table says so, per form where the two differ).
#   The TorchScript form is evaluated with --device cpu (its columns are the
#   CPU's on a machine with a GPU too).
#   HML_BENCH_DEVICE=cuda evaluates the TorchScript form once more with
#   --device cuda (the model on the GPU; needs a CUDA build and a GPU:
#   scripts/cuda-check.sh CHECK_APPS runs this on a lent GPU machine) and
#   adds its columns (the application's wall time, end-to-end and region
#   speedup, QoI error) to the table. The goal's verdict stays the CPU's
#   (issue 30's goals are for the CPU); HML_BENCH_DEVICE=cpu checks the
#   plumbing on a machine without a GPU.
set -eu

quick=0
if [ "${1:-}" = --quick ]; then
	quick=1
	shift
fi
build=${1:-build}
repeat=${2:-3}
[ $# -ge 2 ] && shift 2 || shift $#
APPS="binomial bonds minibude heat heat-rows miniweather particlefilter"
[ $# -gt 0 ] && APPS="$*"
src=$(cd "$(dirname "$0")/.." && pwd)
hml="$build/cmd/hml"
py=${HML_BENCH_PYTHON:-/usr/bin/python3}   # needs h5py and numpy
tmp=$(mktemp -d)
keep() {
	if [ -n "${HML_BENCH_KEEP:-}" ]; then
		mkdir -p "$HML_BENCH_KEEP" && cp "$tmp"/*.json "$tmp"/*.err "$tmp"/*-choice "$tmp"/*-search-wall "$HML_BENCH_KEEP"/ 2>/dev/null || :
	fi
	rm -rf "$tmp"
}
trap keep EXIT
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-$(nproc)}"
export HML_THREADS="${HML_THREADS:-$OMP_NUM_THREADS}"

# bench_sizes APP SIZE (bench/sizes.sh): src_app, runs, cargs, arch, eargs.
# shellcheck source=bench/sizes.sh
. "$src/bench/sizes.sh"
size=bench
[ "$quick" = 1 ] && size="test"

# annotation APP: "hml_lines total_lines" of APP's directive program, all
# its files (bench/annotation.sh says how they are counted).
annotation() {
	sh "$src/bench/annotation.sh" --app "$1"
}

# deploy_or_force APP FORM ARGS...: hml deploy ARGS, and when it refuses a
# model predicted slower than the original code, again with --force; the
# refusal is noted in $tmp/APP-FORM-refused for the table. Another failure
# returns 1, its message in $tmp/APP-FORM.err.
deploy_or_force() {
	_app=$1 _form=$2
	shift 2
	if "$hml" -C "$exp" -q --json deploy "$@" > /dev/null 2> "$tmp/$_app-$_form.err"; then
		return 0
	fi
	grep -q "^hml: error: .*is predicted \(slower\|faster\) than the original code" \
		"$tmp/$_app-$_form.err" || return 1
	cp "$tmp/$_app-$_form.err" "$tmp/$_app-$_form-refused"
	"$hml" -C "$exp" -q --json deploy "$@" --force > /dev/null 2> "$tmp/$_app-$_form.err"
}

# deploy_form APP FORM ARGS...: deploy one form (ARGS: its --target), then
# print the deploy's error, if any, and return 1. Under HML_BENCH_SEARCH,
# the fastest model whose QoI error, checked by running the application,
# meets the goal's $qoi_e (hml deploy --max-qoi-error: one deploy, each
# candidate run once), else, when no model meets it or the goal is not
# in the workflow's QoI metric, the most accurate (--best); the choice is
# appended to $tmp/APP-choice for the table's model column ("ts: ..."
# then "C: ..." when the two forms chose differently).
deploy_form() {
	_a=$1 _f=$2
	shift 2
	if [ -z "${HML_BENCH_SEARCH:-}" ]; then
		deploy_or_force "$_a" "$_f" "$@" --best || { cat "$tmp/$_a-$_f.err" >&2; return 1; }
		return 0
	fi
	if [ -z "$qoi_e" ]; then
		_how="most accurate"
	elif deploy_or_force "$_a" "$_f" "$@" --max-qoi-error "$qoi_e"; then
		_how="fastest within QoI $qoi_e"
	elif grep -q "^hml: error: .*no model's .* is within" "$tmp/$_a-$_f.err"; then
		cp "$tmp/$_a-$_f.err" "$tmp/$_a-$_f-choice.err"
		_how="none within QoI $qoi_e: most accurate"
	else
		cat "$tmp/$_a-$_f.err" >&2
		return 1
	fi
	case $_how in
	fastest*) ;;
	*)	rm -f "$tmp/$_a-$_f-refused"   # of the --max-qoi-error deploy that failed
		deploy_or_force "$_a" "$_f" "$@" --best || { cat "$tmp/$_a-$_f.err" >&2; return 1; } ;;
	esac
	if [ ! -s "$tmp/$_a-choice" ]; then
		echo "$_how" > "$tmp/$_a-choice"
	elif [ "$(cat "$tmp/$_a-choice")" != "$_how" ]; then
		echo "ts: $(cat "$tmp/$_a-choice"); C: $_how" > "$tmp/$_a-choice"
	fi
}

# search APP: hml search $HML_BENCH_SEARCH (its --json and wall time
# kept), and $qoi_e, the goal's QoI error bound where the goal is in the
# workflow's QoI metric (bench/apps_goals.py qoi_bound), else empty.
search() {
	_a=$1
	set -- -C "$exp" -q --json search --threads "$HML_THREADS"
	t0=$(date +%s.%N)
	# shellcheck disable=SC2086
	"$hml" "$@" ${HML_BENCH_SEARCH} > "$tmp/$_a-search.json"
	echo "$t0 $(date +%s.%N)" | awk '{ printf "%.0f\n", $2 - $1 }' > "$tmp/$_a-search-wall"
	qoi_e=$("$py" -c 'import sys; sys.path.insert(0, sys.argv[1]); import apps_goals as g; print(g.qoi_bound(sys.argv[2]) or "")' \
	    "$src/bench" "$_a")
}

size_name=benchmark
[ "$quick" = 1 ] && size_name="quick (test)"
echo "apps: $size_name sizes, $OMP_NUM_THREADS threads, $repeat repeats, $(uname -m), $(nproc) cpus," \
     "load average $(cut -d' ' -f1-3 /proc/loadavg) at start"
for app in $APPS; do
	exp="$tmp/$app"
	bench_sizes "$app" "$size"
	echo "  $app: collect, train, deploy, evaluate ..." >&2
	set -- -C "$exp" -q --json collect "$app"
	[ -n "$runs" ] && set -- "$@" --runs "$runs"
	[ -n "$cargs" ] && set -- "$@" --args "$cargs"
	"$hml" "$@" > "$tmp/$app-collect.json"
	if [ -n "${HML_BENCH_SEARCH:-}" ]; then
		search "$app"
	else
		set -- -C "$exp" -q --json train --threads "$HML_THREADS"
		[ -n "$arch" ] && set -- "$@" --arch "$arch"
		# shellcheck disable=SC2086
		"$hml" "$@" ${HML_BENCH_TRAIN:-} > "$tmp/$app-train.json"
	fi
	deploy_form "$app" ts
	set -- -C "$exp" -q --json evaluate --repeat "$repeat"
	[ -n "$eargs" ] && set -- "$@" --args "$eargs"
	"$hml" "$@" --device cpu > "$tmp/$app-eval.json"
	if [ -n "${HML_BENCH_DEVICE:-}" ]; then
		"$hml" "$@" --device "$HML_BENCH_DEVICE" > "$tmp/$app-evaldev.json"
	fi
	if deploy_form "$app" c --target c 2> "$tmp/$app-c-deploy.err"; then
		"$hml" "$@" > "$tmp/$app-evalc.json"
	else
		echo "  $app: no C target: $(cat "$tmp/$app-c-deploy.err")" >&2
	fi
	if [ -n "${HML_BENCH_SEARCH:-}" ]; then
		# The searched models evaluated, for the table's model column.
		for f in eval evalc; do
			[ -f "$tmp/$app-$f.json" ] || continue
			id=$("$py" -c 'import json, sys; print(json.load(open(sys.argv[1]))["evaluation"]["model"])' \
			     "$tmp/$app-$f.json")
			"$hml" -C "$exp" -q --json show "$id" > "$tmp/$app-$f-model.json"
		done
	fi
	if [ "$app" = particlefilter ]; then
		# The filter's and the surrogate's final positions against the truth.
		"$py" - "$exp" "$tmp/$app-eval.json" > "$tmp/$app-truth" <<'PY'
import h5py, json, sys
import numpy as np
ev = json.load(open(sys.argv[2]))["evaluation"]
f = [h5py.File(sys.argv[1] + "/" + ev["files"][k], "r") for k in ("qoi_accurate", "qoi_surrogate")]
t = f[0]["truth"][:]
print(" ".join("%.3g" % np.sqrt(np.mean(np.sum((g["final_position"][:] - t) ** 2, axis=1))) for g in f))
PY
	fi
	set -- $(annotation "$src_app")
	echo "$app $1 $2 ${arch:-}" >> "$tmp/lines"
	rm -rf "$exp/data"   # the collected data of the big sizes: hundreds of MB
done

HML_BENCH_TRAIN="${HML_BENCH_TRAIN:-}" HML_BENCH_SEARCH="${HML_BENCH_SEARCH:-}" HML_BENCH_DEVICE="${HML_BENCH_DEVICE:-}" \
	"$py" - "$src" "$tmp" $APPS <<'PY'
import json, os, statistics, sys
src, tmp, apps = sys.argv[1], sys.argv[2], sys.argv[3:]
sys.path.insert(0, os.path.join(src, "bench"))
import apps_goals
extra = os.environ.get("HML_BENCH_TRAIN", "").strip()
lines = {l.split()[0]: l.split()[1:] for l in open(os.path.join(tmp, "lines"))}
hdr = ("app", "accurate s", "surrogate s", "e2e x", "pred", "region x", "pred", "QoI error",
       "C: surrogate s", "e2e x", "pred", "region x", "pred", "QoI error", "model (chosen by)",
       "hml lines", "goal (issue 30)", "met", "judged on")
dev = os.environ.get("HML_BENCH_DEVICE", "")
if dev:
    hdr += (dev + ": surrogate s", "e2e x", "region x", "QoI error")


def x(v, refused):
    """A predicted speedup, two significant digits; '!' when deploy refused it."""
    if v is None:
        return "?"
    t = "%.0f" % v if v >= 99.5 else "%.2g" % v
    return t + ("!" if refused else "")

def device_columns(app, metric, unit):
    """The TorchScript form evaluated with --device $HML_BENCH_DEVICE."""
    if not dev:
        return ()
    path = os.path.join(tmp, app + "-evaldev.json")
    if not os.path.exists(path):
        return ("-",) * 4
    d = json.load(open(path))["evaluation"]
    return ("%.3f" % statistics.median(d["surrogate"]["wall_seconds"]),
            "%.2f" % d["speedup"]["end_to_end"]["median"],
            x(d["speedup"]["region"]["median"], False),
            "%.4g%s" % (d["qoi"][metric], unit))

rows, notes = [], []
for app in apps:
    ev = json.load(open(os.path.join(tmp, app + "-eval.json")))["evaluation"]
    searched = os.path.exists(os.path.join(tmp, app + "-search.json"))
    tr = json.load(open(os.path.join(tmp, app + ("-eval-model.json" if searched else "-train.json"))))
    tr = tr if searched else tr["model"]
    q = ev["qoi"]
    err = q[q["metric"]]
    unit = "%" if q["metric"] == "mape" else ""
    n, total = map(int, lines[app][:2])
    cpath = os.path.join(tmp, app + "-evalc.json")
    c = json.load(open(cpath))["evaluation"] if os.path.exists(cpath) else None
    how = ("bench --arch" if len(lines[app]) > 2 else "workflow default") + \
          (", " + extra if extra else "") + ", hml train"
    if searched:
        cm = os.path.join(tmp, app + "-evalc-model.json")
        carch = json.load(open(cm)).get("arch") if os.path.exists(cm) else None
        how = "hml search %s, %s s; %s" % (os.environ.get("HML_BENCH_SEARCH", ""),
                                          open(os.path.join(tmp, app + "-search-wall")).read().strip(),
                                          open(os.path.join(tmp, app + "-choice")).read().strip())
        if carch and carch != tr.get("arch"):
            how += "; C: " + carch
    ref = {f: os.path.exists(os.path.join(tmp, "%s-%s-refused" % (app, f))) for f in ("ts", "c")}
    pt, pc = ev.get("predicted", {}), (c or {}).get("predicted", {})
    rows.append((app,
                 "%.3f" % statistics.median(ev["accurate"]["wall_seconds"]),
                 "%.3f" % statistics.median(ev["surrogate"]["wall_seconds"]),
                 "%.2f" % ev["speedup"]["end_to_end"]["median"],
                 x(pt.get("end_to_end"), ref["ts"]),
                 x(ev["speedup"]["region"]["median"], False),
                 x(pt.get("region"), ref["ts"]),
                 "%s %.4g%s" % (q["metric"], err, unit),
                 "%.3f" % statistics.median(c["surrogate"]["wall_seconds"]) if c else "-",
                 "%.2f" % c["speedup"]["end_to_end"]["median"] if c else "-",
                 x(pc.get("end_to_end"), ref["c"]) if c else "-",
                 x(c["speedup"]["region"]["median"], False) if c else "-",
                 x(pc.get("region"), ref["c"]) if c else "-",
                 "%.4g%s" % (c["qoi"][q["metric"]], unit) if c else "-",
                 "%s (%s)" % (tr.get("arch", "?"), how),
                 "%d/%d (%.1f%%)" % (n, total, 100.0 * n / total))
                + apps_goals.verdict(app, os.path.join(tmp, app), ev, c,
                                     open(os.path.join(tmp, app + "-ts-refused")).read()
                                     if ref["ts"] else None)
                + device_columns(app, q["metric"], unit))
    wait = pt.get("cpu_wait_share")
    if pt.get("cpu_waited"):   # hml's one rule (hml__profile_cpu_waited)
        notes.append("%s: the collect runs' threads waited for a CPU %.0f%% of their time (hml"
                     " collect's note): its cost of the original code, and so every pred figure,"
                     " is too high" % (app, 100 * wait))
    truth = os.path.join(tmp, app + "-truth")
    if os.path.exists(truth):
        a, s = open(truth).read().split()
        notes.append("%s: final-position rmse vs ground truth: filter %s px, surrogate %s px"
                     % (app, a, s))
w = [max(len(str(r[i])) for r in rows + [hdr]) for i in range(len(hdr))]
for r in [hdr] + rows:
    print("  ".join(str(c).ljust(w[i]) for i, c in enumerate(r)))
for n in notes:
    print(n)
print("goal: issue 30's, at benchmark size (bench/apps_goals.py: the thresholds; the verdict"
      " computed from this run's figures: the end-to-end speedup of a form, TorchScript or C,"
      " with that form's error; '?': no figure to judge on; ceiling: hml evaluate's end-to-end"
      " speedup of a model that cost nothing in these runs, 'goal out of reach' when the goal"
      " is above it)")
if dev:
    print("%s: the TorchScript form evaluated again with --device %s (the model on that"
          " device; the original code and the data movement on the CPU as before);"
          " the goal's verdict is the CPU's" % (dev, dev))
print("C: the same model deployed with --target c (compiled, no libtorch loaded);"
      " '-': hml deploy refused to compile it (the reason is printed above)")
print("pred: the speedup predicted from the collected cost of the original code and the"
      " model card (end to end for the evaluated runs; region per row); '!': hml deploy"
      " refused the model as predicted slower than the original code, and --force deployed"
      " it for the measurement; '?': no prediction")
PY
