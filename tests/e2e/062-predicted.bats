#!/usr/bin/env bats
# What a surrogate is predicted to pay (lib/store/cost.h): hml collect
# records the region's original cost, deploy prints and records the
# predicted speedup, never picks a model predicted slower than the
# original code and refuses one named unless --force; a search makes such
# models infeasible; show and evaluate print the prediction (evaluate
# against the measurement). heat-rows (a 5-point stencil row: a few ns)
# is the region no model can beat; binomial's tree (~100 us a row at test
# size) the one every model beats.

load helpers

setup() {
	common_setup
}

# collect_train WORKFLOW [COLLECT ARGS...]: one data set and a short model.
collect_train() {
	local wf=$1
	shift
	run --separate-stderr hml --json collect "$wf" "$@"
	assert_success
	run --separate-stderr hml --json train --epochs 3 --threads 1
	assert_success
}

@test "collect records the region's original cost" {
	run --separate-stderr hml --json collect heat-rows
	assert_success
	echo "$output" > c.json
	run --separate-stderr hml --json show d1
	assert_success
	echo "$output" > d.json
	[ "$(json d.json 'd["regions"]["heat_rows"]["original_seconds"] > 0')" = True ]
	[ "$(json d.json 'd["regions"]["heat_rows"]["collect_seconds"] >= 0')" = True ]
	# the median per row: a 5-point update, well under a microsecond
	[ "$(json d.json '0 < d["regions"]["heat_rows"]["original_seconds_per_row"] < 1e-6')" = True ]
	# moving the rows in and out: part of the collector's time
	[ "$(json d.json '0 <= d["regions"]["heat_rows"]["gather_seconds"] <= d["regions"]["heat_rows"]["collect_seconds"]')" = True ]
	[ "$(json d.json 'd["regions"]["heat_rows"]["threads"] >= 1')" = True ]
}

@test "latencies are measured with the threads the application gives its model" {
	# the application's environment (its workflow's HML_THREADS, else OpenMP's)
	OMP_NUM_THREADS=1 run --separate-stderr hml --json collect binomial
	assert_success
	OMP_NUM_THREADS=2 run --separate-stderr hml --json collect binomial --seed 7
	assert_success
	run --separate-stderr hml --json show d1
	echo "$output" > d1.json
	[ "$(json d1.json 'd["regions"]["binomial"]["threads"]')" = 1 ]
	run --separate-stderr hml --json show d2
	echo "$output" > d2.json
	[ "$(json d2.json 'd["regions"]["binomial"]["threads"]')" = 2 ]
	# trained with 2 threads on d1: the card is measured with its 1
	run --separate-stderr hml --json train --data d1 --epochs 2 --threads 2
	assert_success
	run --separate-stderr hml --json show m1
	echo "$output" > m1.json
	[ "$(json m1.json 'd["latency"]["threads"]')" = 1 ]
	# data sets that differ: the training's threads
	run --separate-stderr hml --json train --data d1 --data d2 --epochs 2 --threads 2
	assert_success
	run --separate-stderr hml --json show m2
	echo "$output" > m2.json
	[ "$(json m2.json 'd["latency"]["threads"]')" = 2 ]
}

@test "heat-rows: deploy refuses a model predicted slower, names both costs, --force overrides" {
	collect_train heat-rows
	run --separate-stderr hml deploy --best --target auto
	[ "$status" -eq 3 ]
	[[ "$stderr" == *"no model is predicted faster than the original code: the region costs "*" ns per row, the fastest model "*" ('m1' as "* ]]
	# one line, with the predicted slowdown (below 1x, two digits)
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "$stderr" =~ \(\'m1\'\ as\ (c|torchscript),\ predicted\ 0\.0*[1-9][0-9]x\)$ ]]
	for t in c torchscript; do
		run --separate-stderr hml deploy m1 --target $t
		[ "$status" -eq 3 ]
		[ "${#stderr_lines[@]}" -eq 1 ]
		[[ "$stderr" == *"model 'm1' as $t is predicted slower than the original code: the region costs "*" per row, the model "*", predicted 0."*"x (--force deploys it anyway)" ]]
	done
	run --separate-stderr hml --json show
	assert_success
	echo "$output" > show.json
	[ "$(json show.json 'len(d["deployments"])')" = 0 ]   # nothing registered
	run --separate-stderr hml --json deploy m1 --target c --force
	assert_success
	echo "$output" > p.json
	[ "$(json p.json 'd["deployment"]["predicted"]["slower"]')" = True ]
	[ "$(json p.json 'd["deployment"]["forced"]')" = True ]
	[ "$(json p.json 'd["deployment"]["predicted"]["region"] < 1')" = True ]
	[[ "$stderr" == *"predicted speedup: region 0."*"warning: p1: model 'm1' is predicted slower than the original code (deployed with --force)"* ]]
	run --separate-stderr hml --json deploy --best --force
	assert_success
	# a k-model (an iterative search's card) with the lowest QoI error is
	# no exception: no interleave makes a model slower per row pay
	edit_cards 'm["m1"]["iterative"] = {"k": 4, "interleave": 2, "qoi_error": 0.001}'
	run --separate-stderr hml deploy --best
	[ "$status" -eq 3 ]
	[[ "$stderr" == *"no model is predicted faster than the original code: the region costs "*"('m1' as torchscript, predicted 0."*"x)"* ]]
}

@test "binomial: deploy, show and evaluate print the predicted speedup" {
	collect_train binomial -- --options 1024
	run --separate-stderr hml --json deploy --best --target auto
	assert_success
	echo "$output" > p.json
	[ "$(json p.json 'd["deployment"]["predicted"]["slower"]')" = False ]
	[ "$(json p.json 'd["deployment"]["predicted"]["region"] > 10')" = True ]
	[ "$(json p.json 'd["deployment"]["predicted"]["end_to_end"] > 0')" = True ]
	[[ "$stderr" == *"p1: predicted speedup: region "*"x (the original code "*" per row, the model "*"), end to end "*"x for a run as collected"* ]]
	run --separate-stderr hml --json show m1
	assert_success
	echo "$output" > m.json
	[ "$(json m.json 'sorted(d["predicted"])')" = "['c', 'torchscript']" ]
	[ "$(json m.json 'd["predicted"]["c"]["region"] > 1')" = True ]
	run --separate-stderr hml show m1
	assert_success
	assert_output --partial "predicted speedup as c: region "
	run --separate-stderr hml evaluate --repeat 1 -- --options 512
	assert_success
	assert_output --regexp "predicted: +region [0-9.]+x, end to end [0-9.]+x \(original code [0-9.]+ [mun]?s per row, model [0-9.]+ [mun]?s( \+ [0-9.]+ [mun]?s moving rows)?\); measured [0-9.]+x and [0-9.]+x"
	run --separate-stderr hml --json show e1
	assert_success
	echo "$output" > e.json
	[ "$(json e.json 'd["predicted"]["region"] > 1 and d["predicted"]["end_to_end"] > 0')" = True ]
}

@test "the ceiling: collect, deploy and evaluate say the most any surrogate can give (the region's share of the run)" {
	run --separate-stderr hml --json collect binomial -- --options 1024
	assert_success
	echo "$output" > c.json
	# the runs' wall time less the collector's over that less the region's
	# (its median per row x rows, the rest of the run as measured)
	[ "$(json c.json '(lambda r, w: abs(d["ceiling"]["binomial"] - (w - r["original_seconds"] - r["collect_seconds"] + r["original_seconds_per_row"] * r["rows"]) / (w - r["original_seconds"] - r["collect_seconds"])) < 1e-9 * d["ceiling"]["binomial"])(d["dataset"]["regions"]["binomial"], sum(x["wall_seconds"] for x in d["dataset"]["runs"]))')" = True ]
	[ "$(json c.json 'd["ceiling"]["binomial"] > 1')" = True ]
	# on stderr, beside stdout's one line; not with -q
	run --separate-stderr hml collect binomial -- --options 1024
	assert_success
	assert_output "d2: 1024 rows of region 'binomial' (1 run, 1 call) -> data/d2.h5"
	[[ "$stderr" =~ "hml: d2: region 'binomial' took "[0-9.]+"% of the runs' time: a surrogate can make runs like these at most "[0-9.]+"x faster" ]]
	run --separate-stderr hml -q collect binomial -- --options 1024
	[ -z "$stderr" ]
	run --separate-stderr hml --json train --epochs 3 --threads 1
	assert_success
	run --separate-stderr hml --json deploy --best --target c
	assert_success
	echo "$output" > p.json
	# the model's own prediction stays under the bound
	[ "$(json p.json 'd["deployment"]["predicted"]["end_to_end"] < d["deployment"]["predicted"]["ceiling"]')" = True ]
	[[ "$stderr" =~ "end to end "[0-9.]+"x for a run as collected (any model: at most "[0-9.]+"x)" ]]
	run --separate-stderr hml --json evaluate --repeat 2 -- --options 512
	assert_success
	echo "$output" > e.json
	# per measured run, from the accurate run's wall and region times
	[ "$(json e.json '(lambda e, c: all(abs(a - b) < 1e-6 * b for a, b in zip((c["min"], c["max"]), sorted(w / (w - r) for w, r in zip(e["accurate"]["wall_seconds"], e["accurate"]["region_seconds"])))))(d["evaluation"], d["evaluation"]["speedup"]["ceiling"])')" = True ]
	run --separate-stderr hml evaluate --repeat 1 -- --options 512
	assert_success
	assert_output --regexp "ceiling: +[0-9.]+x \\([0-9.]+x-[0-9.]+x\\) end to end, for a model that cost nothing: the calls it answers took [0-9.]+% of the accurate runs' time"
}

@test "data recorded without a cost: nothing predicted, nothing refused" {
	collect_train heat-rows
	# the manifest of an hml that did not measure the cost
	"$PY" - <<'PY'
import json
p = "hml-experiment/manifest.json"
m = json.load(open(p))
for k in ("original_seconds", "collect_seconds", "original_seconds_per_row"):
    m["datasets"][0]["regions"]["heat_rows"].pop(k)
json.dump(m, open(p, "w"))
PY
	run --separate-stderr hml --json deploy --best
	assert_success
	echo "$output" > p.json
	[ "$(json p.json 'd["deployment"]["predicted"]["region"]')" = None ]
	[[ "$stderr" == *"no predicted speedup: the training data record no cost of the region's original code"* ]]
	run --separate-stderr hml show m1
	assert_output --partial "predicted speedup: unknown"
}

@test "a search of a region cheaper than any model registers nothing and says why" {
	run --separate-stderr hml --json collect heat-rows
	assert_success
	run --separate-stderr hml search --budget 3 --max-epochs 3 --threads 1 --target c
	assert_success
	[[ "$stderr" == *"the original code of region 'heat_rows' costs "*" per row"*": slower models are infeasible"* ]]
	[[ "$stderr" == *"warning: search s1: no model on the front: none ran faster than the region's original code"* ]]
	assert_output --partial "Pareto front (0)"
	run --separate-stderr hml --json show
	assert_success
	echo "$output" > show.json
	[ "$(json show.json 'len(d["models"])')" = 0 ]
	run --separate-stderr hml --json show s1
	assert_success
	echo "$output" > s.json
	[ "$(json s.json '0 < d["search"]["region_cost_per_row"] < 1e-6')" = True ]
	[ "$(json s.json 'd["search"]["front"]')" = "[]" ]
	run --separate-stderr hml deploy --search s1 --best
	[ "$status" -eq 3 ]
}

@test "search --qoi-check records the front's QoI errors; deploy --best chooses by them" {
	run --separate-stderr hml --json collect binomial -- --options 1024
	assert_success
	run --separate-stderr hml search --budget 4 --max-epochs 3 --threads 1 --qoi-check 2
	assert_success
	[[ "$stderr" == *"QoI check: workflow 'binomial', seed 2: accurate run"* ]]
	# the ceiling, at the start and with the front
	[[ "$stderr" =~ "hml: search s1: the region took "[0-9.]+"% of the collected runs' time: no model makes them more than "[0-9.]+"x faster end to end" ]]
	assert_output --regexp "  ceiling: the region took [0-9.]+% of the collected runs' time: no model makes runs like them more than [0-9.]+x faster end to end"
	assert_output --regexp "QoI check \(seed 2\): price rmse: m[0-9]+ [0-9.e+-]+"
	run --separate-stderr hml --json show
	assert_success
	echo "$output" > show.json
	"$PY" - <<'PY'
import json, math
d = json.load(open("show.json"))
s = d["searches"][0]
q = s["qoi_check"]
front = [e for e in s["front"] if e.get("model")]
assert q["dataset"] == "price" and q["metric"] == "rmse" and q["seed"] == 2, q
checked = sorted(front, key=lambda e: e["val_rmse"])[:2]
assert [c["model"] for c in q["checks"]] == [e["model"] for e in checked], (q, front)
for e in checked:
    assert e["qoi_error"] > 0 and math.isfinite(e["qoi_error"]), e
models = {m["id"]: m for m in d["models"]}
for c in q["checks"]:
    m = models[c["model"]]["qoi_error"]
    assert m["value"] == c["error"] and m["search"] == s["id"] and m["metric"] == "rmse", m
best = min(q["checks"], key=lambda c: c["error"])
open("best", "w").write(best["model"])
PY
	run --separate-stderr hml --json deploy --best
	assert_success
	echo "$output" > p.json
	[ "$(json p.json 'd["deployment"]["model"]')" = "$(cat best)" ]
	[[ "$stderr" == *"--best chose model '$(cat best)' by its QoI error, "*"(the application's primary QoI on a search's QoI check)"* ]]
	[ "$(json p.json 'd["deployment"]["chosen_by"]["metric"], d["deployment"]["chosen_by"]["source"]')" = "('qoi_error', 'qoi_check')" ]
	run --separate-stderr hml search --qoi-check -1
	[ "$status" -eq 2 ]
	[ "$stderr" = "hml: error: search: option '--qoi-check' must be from 0 to 1000, not -1" ]
}

# Two binomial models whose cards are edited by hand: training is not the
# point. edit_cards PYTHON: run PYTHON with `m` the manifest's models by id.
edit_cards() {
	"$PY" - "$1" <<'PY'
import json, sys
p = "hml-experiment/manifest.json"
d = json.load(open(p))
m = {r["id"]: r for r in d["models"]}
exec(sys.argv[1])
json.dump(d, open(p, "w"))
PY
}

@test "deploy --best: the lower QoI error wins over the lower validation error; mixed candidates; a hostile QoI error" {
	collect_train binomial -- --options 1024
	run --separate-stderr hml --json train --epochs 3 --threads 1
	assert_success
	# m1 the more accurate on held-out rows, m2 on the application's run
	edit_cards '
m["m1"]["metrics"]["val_rmse"] = 0.001; m["m2"]["metrics"]["val_rmse"] = 0.01
m["m1"]["iterative"] = {"k": None, "interleave": None, "qoi_error": 0.05}
m["m2"]["iterative"] = {"k": None, "interleave": 3, "qoi_error": 0.02}
ds = d["datasets"][0]; ds["regions"]["binomial"]["calls"] = 10 * len(ds["runs"])'
	run --separate-stderr hml --json deploy --best
	assert_success
	echo "$output" > p.json
	[ "$(json p.json 'd["deployment"]["model"]')" = m2 ]
	[ "$(json p.json 'd["deployment"]["chosen_by"]')" = "{'metric': 'qoi_error', 'value': 0.02, 'source': 'iterative'}" ]
	[[ "$stderr" == *"--best chose model 'm2' by its QoI error, 0.02 (the application's primary QoI after its iterative search's run at k -1, interleave 3)"* ]]
	# interleave 3: of each 4 calls the last runs the original code
	# (lib/store/cost.h): of 10 calls a run (as edited) calls 3 and 7, so
	# the model answers 0.8 of them; worked out here from the figures
	"$PY" - <<'PY'
import json, math
d = json.load(open("p.json"))["deployment"]["predicted"]
man = json.load(open("hml-experiment/manifest.json"))
ds = man["datasets"][0]
calls = ds["regions"]["binomial"]["calls"] / len(ds["runs"])
share = (math.floor(calls) - math.floor(math.floor(calls) / 4)) / math.floor(calls)
row = share * (d["model_per_row"] + d["move_per_row"]) + (1 - share) * d["cost_per_row"]
assert abs(d["model_share"] - share) < 1e-12, (d, share)
assert abs(d["region"] - d["cost_per_row"] / row) < 1e-9 * d["region"], d
assert share == 0.8 and d["slower"] is False and d["region"] < 5, d   # 1/(1 - 0.8) at most
PY
	# mixed: a candidate without a QoI error ranks after those with one
	edit_cards 'del m["m1"]["iterative"]'
	run --separate-stderr hml --json deploy --best
	assert_success
	echo "$output" > p.json
	[ "$(json p.json 'd["deployment"]["model"]')" = m2 ]
	edit_cards 'del m["m2"]["iterative"]'
	run --separate-stderr hml --json deploy --best
	assert_success
	echo "$output" > p.json
	[ "$(json p.json 'd["deployment"]["model"], d["deployment"]["chosen_by"]["metric"]')" = "('m1', 'val_rmse')" ]
	[[ "$stderr" == *"--best chose model 'm1' by its validation RMSE, 0.001 (no candidate has a QoI error)"* ]]
	# a QoI error that is not a finite number >= 0 is ignored, with a warning
	for bad in '"NaN"' '-0.5' '"0.01"'; do
		edit_cards 'm["m2"]["iterative"] = {"k": 5, "interleave": 0, "qoi_error": '"$bad"'}'
		run --separate-stderr hml --json deploy --best
		assert_success
		echo "$output" > p.json
		[ "$(json p.json 'd["deployment"]["model"]')" = m1 ]
		[[ "$stderr" == *"warning: model 'm2': its recorded QoI error is not a finite number >= 0: ignored (ranked by its validation error)"* ]]
	done
}
