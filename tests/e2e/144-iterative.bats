#!/usr/bin/env bats
# An iterative application (miniWeather at test size): its workflow's
# search_args make the steps per model call (k) and the interleave ratio
# search dimensions whose objective is the QoI error after the whole run
# (lib/search/iterative.h); hml evaluate reports the error over time of
# the state it records over time (QoI 'trajectory', lib/store/qoi_series.h).

load helpers

setup() {
	common_setup
	MW="$HML_BUILD_DIR/workflows/miniweather/miniweather"
}

# Data at k 10 and at k 20 (three runs each of 80 steps: 24 and 12 rows).
collect_two_ks() {
	run --separate-stderr hml -q collect miniweather --runs 3 \
		--args '--nx 40 --nz 20 --steps 80 --k 10 --seed {seed}'
	assert_success
	run --separate-stderr hml -q collect miniweather --runs 3 --seed 5 \
		--args '--nx 40 --nz 20 --steps 80 --k 20 --seed {seed}'
	assert_success
}

@test "iterative: a search over k and interleave ranks trials by the QoI error after the whole run; resume continues it" {
	collect_two_ks
	# Latencies from the parameter count (hml-search(1), test hooks): on a
	# loaded machine a measured one may pass the region's own cost per row
	# and leave the front empty; this test is about the error objective.
	export HML_SEARCH_TEST_LATENCY_PARAMS=1
	run --separate-stderr hml --json search --budget 4 --max-epochs 3 --deterministic \
		--target torchscript --threads 1
	assert_success
	echo "$output" > s.json
	# k takes the declared values data was collected with; interleave its range.
	[ "$(json s.json 'd["search"]["space"]["k"]["values"]')" = "[10, 20]" ]
	[ "$(json s.json 'd["search"]["space"]["interleave"]["values"]')" = "[0, 1, 2, 3, 4]" ]
	[ "$(json s.json '[g["k"] for g in d["search"]["iterative"]["groups"]]')" = "[10, 20]" ]
	hist=hml-experiment/search/s1/trials.jsonl
	# Every trial that ended well ran the application: its objective is
	# qoi_error, and the trials cover more than one (k, interleave). (A
	# trial whose model makes the run fail, e.g. NaN in a call, fails.)
	"$PY" - "$hist" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
starts = {l["trial"]: l["params"] for l in lines if l["status"] == "running"}
oks = [l for l in lines if l["status"] == "ok"]
assert len(oks) >= 3, len(oks)
assert all("qoi_error" in l["metrics"] and l["metrics"]["qoi_error"] > 0 for l in oks), oks
pairs = {(starts[l["trial"]]["k"], starts[l["trial"]]["interleave"]) for l in oks}
assert len(pairs) >= 2, pairs
print(sorted(pairs))
# The second objective: the region's seconds per time step at the trial's
# k and interleave (lib/store/cost.h), worked out from the data sets of
# its k: of C calls a run, interleave N leaves floor(C / (N + 1)) to the
# original code (the runtime's c % (N + 1) == N).
import math
man = json.load(open("hml-experiment/manifest.json"))
def cost(k):
    o = rows = calls = runs = gather = 0
    for d in man["datasets"]:
        a = d["runs"][0]["argv"]
        if int(a[a.index("--k") + 1]) != k:
            continue
        r = d["regions"]["miniweather"]
        o += r["original_seconds_per_row"] * r["rows"]
        rows += r["rows"]; calls += r["calls"]; runs += len(d["runs"])
        gather += r.get("gather_seconds", 0)
    return o / rows, gather / rows, rows, calls, runs
for l in oks:
    k, il = starts[l["trial"]]["k"], starts[l["trial"]]["interleave"]
    per_row, move, rows, calls, runs = cost(k)
    c = math.floor(calls / runs)
    share = 1 if il == 0 else (c - math.floor(c / (il + 1))) / c
    row = share * (l["metrics"]["latency_seconds_per_sample"] + move) + (1 - share) * per_row
    want = rows * row / (calls * k)
    got = l["metrics"]["step_seconds"]
    assert abs(got - want) <= 1e-9 * want, (l, want)
PY
	# The front is ranked by it and says at which k and interleave.
	[ "$(json s.json 'all("qoi_error" in f and "k" in f and "interleave" in f for f in d["search"]["front"])')" = True ]
	[ "$(json s.json 'len(d["search"]["front"]) >= 1')" = True ]

	# The objective is the application's own error after the whole run:
	# the front's model run by hand at its k and interleave on the search's
	# command line, with the mass the workflow conserves (hml-workflow(5)
	# conserve), gives the same RMSE of the final state.
	"$PY" - s.json "$HML_SOURCE_DIR/workflows/miniweather/workflow.json" > check.sh <<'PY'
import json, sys, shlex
s = json.load(open(sys.argv[1]))["search"]
conserve = json.load(open(sys.argv[2]))["regions"][0]["conserve"]
f = s["front"][0]
argv = list(s["iterative"]["argv"])
argv[argv.index("--k") + 1] = str(f["k"])
mode = "interleave" if f["interleave"] > 0 else "infer"
cmd = " ".join(shlex.quote(a) for a in argv)
print("HML_QOI=acc.h5 %s >/dev/null" % cmd)
print("HML_MODE_MINIWEATHER=%s HML_INTERLEAVE_MINIWEATHER=%d HML_ON_ERROR=fail "
      "HML_CONSERVE_MINIWEATHER=%s "
      "HML_MODEL_MINIWEATHER=hml-experiment/models/%s.pt HML_QOI=sur.h5 %s >/dev/null"
      % (mode, max(f["interleave"], 1), shlex.quote(conserve), f["model"], cmd))
print("echo %r > expected" % repr(f["qoi_error"]))
PY
	run bash -e check.sh
	assert_success
	"$PY" - <<'PY'
import h5py, numpy as np
a = h5py.File("acc.h5", "r")["state"][:]
b = h5py.File("sur.h5", "r")["state"][:]
rmse = float(np.sqrt(np.mean((a - b) ** 2)))
want = float(eval(open("expected").read()))
print(rmse, want)
assert abs(rmse - want) <= 1e-9 * max(1.0, want), (rmse, want)
PY

	# --resume continues the same search to a larger budget.
	run --separate-stderr hml --json search --resume --budget 5
	assert_success
	echo "$output" > r.json
	[ "$(json r.json 'd["search"]["counts"]["configs"]')" = 5 ]
	[ "$(json r.json 'd["search"]["space"] == json.load(open("s.json"))["search"]["space"]')" = True ]

	# The front's model records its k and interleave, and hml evaluate runs
	# it at them by default.
	m=$(json s.json 'd["search"]["front"][0]["model"]')
	run --separate-stderr hml --json show
	assert_success
	echo "$output" > show.json
	[ "$(json show.json '[(x["iterative"]["k"], x["iterative"]["interleave"]) for x in d["models"] if x["id"] == "'"$m"'"]')" = "$(json s.json '[(f["k"], f["interleave"]) for f in d["search"]["front"][:1]]')" ]
	run --separate-stderr hml --json evaluate --repeat 1 "$m"
	assert_success
	echo "$output" > e.json
	[ "$(json e.json 'int(d["evaluation"]["argv"][d["evaluation"]["argv"].index("--k") + 1])')" = "$(json s.json 'd["search"]["front"][0]["k"]')" ]
	[ "$(json e.json 'd["evaluation"].get("interleave", 0)')" = "$(json s.json 'd["search"]["front"][0]["interleave"]')" ]

	# Each registered model lists the data sets of its k only; deploy
	# --best picks the lowest QoI error the search recorded and says so.
	"$PY" - <<'PY'
import json
man = json.load(open("hml-experiment/manifest.json"))
ks = {d["id"]: int(d["runs"][0]["argv"][d["runs"][0]["argv"].index("--k") + 1]) for d in man["datasets"]}
its = [m for m in man["models"] if m.get("iterative")]
assert its
for m in its:
    assert {ks[i] for i in m["datasets"]} == {m["iterative"]["k"]}, m
best = min(its, key=lambda m: m["iterative"]["qoi_error"])
open("best", "w").write(best["id"])
PY
	run --separate-stderr hml --json deploy --best --force
	assert_success
	echo "$output" > p.json
	[ "$(json p.json 'd["deployment"]["model"]')" = "$(cat best)" ]
	[ "$(json p.json 'd["deployment"]["chosen_by"]["metric"], d["deployment"]["chosen_by"]["source"]')" = "('qoi_error', 'iterative')" ]
	[ "$(json p.json 'd["deployment"]["predicted"]["model_share"] <= 1')" = True ]
}

@test "iterative: hml evaluate reports the error over time (table, --json, plot) at a k and interleave" {
	collect_two_ks
	run --separate-stderr hml -q train --threads 1 --epochs 2 --data d1
	assert_success
	run --separate-stderr hml -q deploy m1 --force
	assert_success
	run --separate-stderr hml --json evaluate --repeat 1 --k 10 --interleave 2
	assert_success
	echo "$output" > e.json
	# 200 steps at k 10: 20 calls, the state recorded after every second.
	[ "$(json e.json '[o["dataset"] for o in d["evaluation"]["over_time"]]')" = "['trajectory']" ]
	[ "$(json e.json 'd["evaluation"]["over_time"][0]["steps"]')" = "[20, 40, 60, 80, 100, 120, 140, 160, 180, 200]" ]
	[ "$(json e.json 'len(d["evaluation"]["over_time"][0]["error"])')" = 10 ]
	[ "$(json e.json 'd["evaluation"]["interleave"]')" = 2 ]
	[ "$(json e.json '"--k" in d["evaluation"]["argv"] and d["evaluation"]["argv"][d["evaluation"]["argv"].index("--k") + 1]')" = 10 ]
	# The last record is the final state: its error is the state's.
	[ "$(json e.json 'abs(d["evaluation"]["over_time"][0]["rmse"][-1] - d["evaluation"]["qois"][0]["rmse"]) <= 1e-12 * d["evaluation"]["qois"][0]["rmse"]')" = True ]
	if command -v gnuplot >/dev/null; then
		png="hml-experiment/$(json e.json 'd["evaluation"]["files"]["over_time_png"]')"
		[ -s "$png" ]
		[ "$(head -c 4 "$png" | od -An -c | tr -d ' ')" = "211PNG" ]
	fi
	# The text report has the table.
	run --separate-stderr hml evaluate --repeat 1 --k 20
	assert_success
	assert_output --partial "error over time of 'trajectory' (rmse):"
	assert_line --regexp '^ +200 +[0-9.e+-]+ +[0-9.e+-]+ +[0-9.e+-]+ +[0-9.e+-]+$'
	# A QoI written at the end only has no table (old files still read).
	[ "$(json e.json '[q["dataset"] for q in d["evaluation"]["qois"]]')" = "['state', 'mass', 'trajectory']" ]
}

@test "iterative: bad search_args, k without its data, and bad --k get one line and their exit codes" {
	mkdir bad
	"$PY" - "$HML_SOURCE_DIR/workflows/miniweather/workflow.json" "$MW" <<'PY'
import json, sys
w = json.load(open(sys.argv[1]))
w["program"] = sys.argv[2]
w["search_args"]["k"]["values"] = [10, 5]
json.dump(w, open("bad/workflow.json", "w"))
PY
	run --separate-stderr hml collect ./bad/workflow.json --runs 1
	[ "$status" -eq 3 ]
	[ "${#lines[@]}" -le 1 ]
	[[ "$stderr" == *"key 'search_args.k.values' must be 1 to 64 increasing integers >= 1"* ]]
	[ ! -e hml-experiment/data ] || [ -z "$(ls hml-experiment/data)" ]

	# Data collected only at a k the workflow does not declare: refused.
	run --separate-stderr hml -q collect miniweather --runs 1 \
		--args '--nx 40 --nz 20 --steps 40 --k 40 --seed {seed}'
	assert_success
	run --separate-stderr hml search --budget 2 --max-epochs 1
	[ "$status" -eq 3 ]
	[[ "$stderr" == *"declares search_args.k ('--k': 5, 10, 20) but no data set of region 'miniweather' was collected with one of them"* ]]
	[ "$(json hml-experiment/manifest.json 'len(d.get("searches", []))')" = 0 ]

	run --separate-stderr hml evaluate --k 0
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"--k"* ]]
}
