#!/usr/bin/env bats
# The search's rollout dimension (hml-search(1) ROLLOUT): a "rollout"
# parameter of the search space trains each trial with hml train --rollout
# R. On heat's in-place field region: an iterative search (the
# workflow's search_args; heat at its own size, 4 runs of 16 calls) runs
# trials at more than one R, ranked by the QoI after the whole run, and
# its front, history and hml show carry each trial's rollout; at a small
# size (4 runs of 8 calls), a trial whose data hold too few
# calls for its R fails alone, with the training's line; a workflow without
# search_args ranks every R by the one-step validation error and says so;
# bad values, and a region not in place, exit 3 with one line and register
# no search; miniWeather's workflow declares rollout 1, 2, 4 and a point's
# rollout becomes its hml train --rollout. The values' checks in detail
# are unit.trialmap's.

load helpers

setup() {
	common_setup
	export HML_SEARCH_TEST_LATENCY_PARAMS=1   # the error objective is what is tested
	SMALL='--n 16 --steps 32 --k 4 --seed {seed}'
	QUICK=(--max-epochs 2 --deterministic --threads 1 --target torchscript)
}

# space FILE ROLLOUT: a small cnn space with "rollout": ROLLOUT (JSON).
space() {
	printf '{"width": {"type": "int", "low": 2, "high": 6},
	         "kernel": {"type": "choice", "values": [3, 5]},
	         "rollout": %s}\n' "$2" > "$1"
}

# hist EXPR: a Python expression over search s1's events `ev` and the
# params of each trial `par` (from its "running" line).
hist() {
	"$PY" -c 'import json,sys
ev = [json.loads(l) for l in open(sys.argv[1])]
par = {e["trial"]: e["params"] for e in ev if e["status"] == "running"}
print(eval(sys.argv[2]))' hml-experiment/search/s1/trials.jsonl "$1"
}

searches() {
	json hml-experiment/manifest.json 'len(d.get("searches", []))'
}

@test "search rollout: trials at several R, each carried by the front, the history and hml show" {
	# the workflow's own size: an iterative trial runs the application at it
	run --separate-stderr hml -q collect heat
	assert_success
	space sp.json '{"type": "choice", "values": [1, 2, 4]}'
	run --separate-stderr hml --json search --budget 3 "${QUICK[@]}" --space sp.json
	assert_success
	echo "$output" > s.json
	[[ "$stderr" == *"trials of every rollout are ranked by the error of the application's QoI after the whole run"* ]]
	# ok trials at more than one R, each ranked by its QoI error; those of
	# R > 1 record their R-step validation error beside val_rmse
	[ "$(hist 'len({par[e["trial"]]["rollout"] for e in ev if e["status"] == "ok"})')" -ge 2 ]
	[ "$(hist 'all("qoi_error" in e["metrics"] for e in ev if e["status"] == "ok")')" = True ]
	[ "$(hist 'all(("val_rollout_rmse" in e["metrics"]) == (par[e["trial"]]["rollout"] > 1) for e in ev if e["status"] == "ok")')" = True ]
	# each kept model trained with its trial's rollout (its card's options)
	"$PY" - <<'PY'
import json
man = json.load(open("hml-experiment/manifest.json"))
ev = [json.loads(l) for l in open("hml-experiment/search/s1/trials.jsonl")]
par = {e["trial"]: e["params"] for e in ev if e["status"] == "running"}
kept = {e["model"]: e["trial"] for e in ev if e["status"] == "kept"}
assert kept, ev
for m in man["models"]:
    if m["id"] in kept:
        assert m["options"]["rollout"] == par[kept[m["id"]]]["rollout"], (m, kept)
front = man["searches"][0]["front"]
assert front and all(f["rollout"] == par[f["trial"]]["rollout"] for f in front), front
PY
	[ "$(json s.json 'all("rollout" in f for f in d["search"]["front"])')" = True ]
	run --separate-stderr hml show s1
	assert_success
	assert_line --regexp '^  [0-9.e-]+ .* rollout [124]$'
	run --separate-stderr hml --json show s1
	assert_success
	[ "$(echo "$output" | "$PY" -c 'import json,sys; f=json.load(sys.stdin)["results"]["front"]; print(all(e["config_params"]["rollout"] in (1, 2, 4) for e in f))')" = True ]
}

@test "search rollout: too few calls for a trial's R fail that trial alone; no search_args ranks by the one-step error" {
	mkdir wf
	"$PY" - "$HML_SOURCE_DIR/workflows/heat/workflow.json" "$HML_BUILD_DIR/workflows/heat/heat" <<'PY'
import json, sys
w = json.load(open(sys.argv[1]))
w["program"] = sys.argv[2]
del w["search_args"]
json.dump(w, open("wf/workflow.json", "w"))
PY
	run --separate-stderr hml -q collect ./wf/workflow.json --args "$SMALL"
	assert_success
	# 16 steps: more than the 8 calls of a run
	space sp.json '{"type": "choice", "values": [1, 2, 16]}'
	run --separate-stderr hml --json search --budget 6 "${QUICK[@]}" --space sp.json
	assert_success
	[[ "$stderr" == *"trials of every rollout are ranked by their one-step validation error, the only one they share (the R-step error, val_rollout_rmse, grows with R); declare search_args in the workflow to rank them by the error after the whole run"* ]]
	[ "$(hist '{e["error"] for e in ev if e["status"] == "failed"}')" = \
	  "{'--rollout 16 is more than the 8 consecutive calls of the longest run in the data'}" ]
	[ "$(hist 'all(par[e["trial"]]["rollout"] == 16 for e in ev if e["status"] == "failed")')" = True ]
	[ "$(hist 'len({par[e["trial"]]["rollout"] for e in ev if e["status"] == "ok"})')" -ge 2 ]
	[ "$(hist 'any("qoi_error" in e["metrics"] for e in ev if e["status"] == "ok")')" = False ]
	[ "$(json hml-experiment/manifest.json 'd["searches"][0]["status"]')" = finished ]
}

@test "search rollout: bad values and a region not in place exit 3 with one line, no search registered" {
	run --separate-stderr hml -q collect heat --args "$SMALL"
	assert_success
	for bad in '{"type": "choice", "values": [1, 0]}|0 is not an integer from 1 to 64' \
	           '{"type": "choice", "values": [-1, 2]}|-1 is not an integer from 1 to 64' \
	           '{"type": "int", "low": 1, "high": 65}|65 is not an integer from 1 to 64' \
	           '{"type": "choice", "values": [1, 2.5]}|2.5 is not an integer from 1 to 64' \
	           '{"type": "float", "low": 1, "high": 4}|must be of type int or choice, not '"'float'"; do
		space bad.json "${bad%%|*}"
		run --separate-stderr hml search --budget 2 "${QUICK[@]}" --space bad.json
		[ "$status" -eq 3 ]
		[ "${#stderr_lines[@]}" -eq 1 ]
		[[ "$stderr" == "hml: error: search space 'bad.json': parameter 'rollout'"*"${bad#*|}" ]]
	done
	[ "$(searches)" = 0 ]
	# heat-rows: a row of 5 values gives 1
	run --separate-stderr hml -C rows -q collect heat-rows --runs 1 \
		--args '--n 12 --steps 4 --region rows --seed {seed}'
	assert_success
	printf '{"width": {"type": "int", "low": 2, "high": 6}, "rollout": {"type": "choice", "values": [1, 2]}}\n' > rows.json
	run --separate-stderr hml -C rows search --budget 2 "${QUICK[@]}" --space rows.json
	[ "$status" -eq 3 ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "$stderr" == *"search space 'rows.json': parameter 'rollout' needs a region whose output has its input's shape; region 'heat_rows' takes [5] and gives [1]"* ]]
	[ "$(json rows/manifest.json 'len(d.get("searches", []))')" = 0 ]
}

@test "search rollout: miniWeather's workflow searches rollout 1, 2 and 4; a point's --rollout is what its trial trains with" {
	run --separate-stderr hml -q collect miniweather --runs 1 \
		--args '--nx 40 --nz 20 --steps 40 --k 10 --seed {seed}'
	assert_success
	[ "$(json "$HML_SOURCE_DIR/workflows/miniweather/workflow.json" 'd["regions"][0]["model"]["search_space"]["rollout"]["values"]')" = "[1, 2, 4]" ]
	run --separate-stderr hml --json search --train-args '{"rollout": 4, "width": 8}'
	assert_success
	[ "$(echo "$output" | "$PY" -c 'import json,sys; a=json.load(sys.stdin)["train_args"]; print(a[a.index("--rollout") + 1])')" = 4 ]
	run --separate-stderr hml --json search --train-args '{"rollout": 1}'
	assert_success
	[ "$(echo "$output" | "$PY" -c 'import json,sys; print("--rollout" in json.load(sys.stdin)["train_args"])')" = False ]
	run --separate-stderr hml search --train-args '{"rollout": 65}'
	[ "$status" -eq 3 ]
	[ "$stderr" = "hml: error: trial parameter 'rollout': 65 is more than 64" ]
}
