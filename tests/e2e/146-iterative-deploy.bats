#!/usr/bin/env bats
# A model of an iterative application runs at the k and interleave it was
# judged at wherever it runs (lib/store/model_run.h): deploy
# --max-qoi-error's check, the deployment's environment and record, hml
# evaluate of the deployment, and a plain run of the application through
# the environment deploy prints. The heat workflow at test size: 64 steps
# at k 8 are 8 region calls; interleave 2 (two model calls, then the
# original code for one) leaves calls 2 and 5 to the original code: 6
# model calls and 2 original ones. At the workflow's own k 4 there would
# be 16 calls, with interleave 0 no original one.

load helpers

setup() {
	common_setup
	HEAT="$HML_BUILD_DIR/workflows/heat/heat"
}

# One heat_field model trained on data collected at k 8, its card edited
# as an iterative search registers it: k 8, interleave 2 (training is not
# the point).
k8_model() {
	run --separate-stderr hml -q collect heat --runs 2 \
		--args '--n 32 --steps 64 --k 8 --seed {seed}'
	assert_success
	run --separate-stderr hml -q train --threads 1 --epochs 2
	assert_success
	"$PY" - <<'PY'
import json
p = "hml-experiment/manifest.json"
d = json.load(open(p))
d["models"][0]["iterative"] = {"k": 8, "interleave": 2, "qoi_error": None}
json.dump(d, open(p, "w"))
PY
}

@test "iterative deploy: --max-qoi-error checks the model at its k and interleave; the deployment records and applies them" {
	k8_model
	run --separate-stderr hml --json deploy --max-qoi-error 1e9 --force
	assert_success
	echo "$output" > p.json
	# The check ran the model at --k 8 with interleave 2: its argv, and
	# the calls the runtime's profile of that run counted.
	c='d["deployment"]["qoi_check"]["checks"][0]'
	[ "$(json p.json "$c"'["argv"]['"$c"'["argv"].index("--k") + 1]')" = 8 ]
	[ "$(json p.json "$c"'["run"]')" = "{'k': 8, 'interleave': 2}" ]
	[ "$(json p.json "$c"'["interleave"]')" = 2 ]
	[ "$(json p.json "$c"'["calls"]')" = "{'calls': 8, 'model': 6, 'original': 2}" ]
	[[ "$stderr" == *"QoI check: workflow 'heat', seed "*", k 8: accurate run"* ]]
	# The deployment records the run and its environment applies it.
	[ "$(json p.json 'd["deployment"]["run"]')" = "{'k': 8, 'interleave': 2}" ]
	[ "$(json p.json 'd["deployment"]["env"]["HML_MODE_HEAT_FIELD"]')" = interleave ]
	[ "$(json p.json 'd["deployment"]["env"]["HML_INTERLEAVE_HEAT_FIELD"]')" = 2 ]
	[[ "$stderr" == *"predicts 8 steps per call: run the application with '--k 8'"* ]]

	# hml evaluate of the deployment runs it so: 6 model calls and 2
	# original ones per surrogate run.
	run --separate-stderr hml --json evaluate --repeat 1
	assert_success
	echo "$output" > e.json
	[ "$(json e.json 'd["evaluation"]["argv"][d["evaluation"]["argv"].index("--k") + 1]')" = 8 ]
	[ "$(json e.json 'd["evaluation"]["interleave"], d["evaluation"]["run"]')" = "(2, {'k': 8, 'interleave': 2})" ]
	[ "$(json e.json 'd["evaluation"]["surrogate"]["model_calls"], d["evaluation"]["surrogate"]["original_calls"]')" = "(6, 2)" ]

	# A plain run of the application through the environment deploy
	# prints (its shell form) runs the model the same way.
	run --separate-stderr hml deploy m1 --force
	assert_success
	echo "$output" > env.sh
	grep -qx "export HML_INTERLEAVE_HEAT_FIELD='2'" env.sh
	grep -qx "export HML_MODE_HEAT_FIELD='interleave'" env.sh
	(. ./env.sh && HML_PROFILE=prof.json timeout 300 "$HEAT" --n 32 --steps 64 --k 8 --seed 77 >/dev/null)
	"$PY" - <<'PY'
import json
p = json.load(open("prof.json"))
r = [r for r in p["regions"] if r["label"] == "heat_field"][0]
print(r["mode"], r["model_calls"], r["original_calls"])
assert r["mode"] == "interleave", r
assert (r["model_calls"], r["original_calls"]) == (6, 2), r
PY
}

@test "iterative deploy: evaluate's --k and --interleave win over the deployment's; a hostile run record is ignored" {
	k8_model
	run --separate-stderr hml -q deploy m1 --force
	assert_success
	run --separate-stderr hml --json evaluate --repeat 1 --interleave 0
	assert_success
	echo "$output" > e.json
	[ "$(json e.json 'd["evaluation"]["run"]')" = "{'k': 8, 'interleave': 0}" ]
	[ "$(json e.json 'd["evaluation"]["surrogate"]["model_calls"], d["evaluation"]["surrogate"]["original_calls"]')" = "(8, 0)" ]
	# A deployment whose "run" is not integers: the card's run.
	"$PY" - <<'PY'
import json
p = "hml-experiment/manifest.json"
d = json.load(open(p))
d["deployments"][-1]["run"] = {"k": "8; rm -rf /", "interleave": -3}
json.dump(d, open(p, "w"))
PY
	run --separate-stderr hml --json evaluate --repeat 1
	assert_success
	echo "$output" > e.json
	[ "$(json e.json 'd["evaluation"]["run"]')" = "{'k': 8, 'interleave': 2}" ]
}

@test "iterative deploy: a model at a k its workflow cannot set gets one line and exit 3" {
	run --separate-stderr hml -q collect binomial --runs 1 --args '--options 256 --seed {seed}'
	assert_success
	run --separate-stderr hml -q train --threads 1 --epochs 1
	assert_success
	"$PY" - <<'PY'
import json
p = "hml-experiment/manifest.json"
d = json.load(open(p))
d["models"][0]["iterative"] = {"k": 8, "interleave": 1, "qoi_error": None}
json.dump(d, open(p, "w"))
PY
	before=$(cat hml-experiment/manifest.json)
	run --separate-stderr hml deploy m1 --force
	[ "$status" -eq 3 ]
	[ "${#lines[@]}" -eq 0 ]
	[ "$stderr" = "hml: error: k 8: workflow 'binomial' declares no steps per model call (search_args.k in hml-workflow(5))" ]
	[ "$(cat hml-experiment/manifest.json)" = "$before" ]
	[ ! -e hml-experiment/deployed/binomial.json ]
	run --separate-stderr hml evaluate --repeat 1 m1
	[ "$status" -eq 3 ]
	[ "$stderr" = "hml: error: k 8: workflow 'binomial' declares no steps per model call (search_args.k in hml-workflow(5))" ]
}

@test "iterative search: slower than the original code is judged per k, from the data of that k" {
	# Data at k 2 and at k 8: a call advances 2 or 8 steps, so the
	# original code's cost per row differs by k.
	run --separate-stderr hml -q collect heat --runs 2 \
		--args '--n 32 --steps 64 --k 2 --seed {seed}'
	assert_success
	run --separate-stderr hml -q collect heat --runs 2 --seed 7 \
		--args '--n 32 --steps 64 --k 8 --seed {seed}'
	assert_success
	# Latencies from the parameter count (hml-search(1), test hooks): the
	# test is about which bound each trial gets, not about how fast it is.
	export HML_SEARCH_TEST_LATENCY_PARAMS=1
	run --separate-stderr hml --json search --budget 3 --max-epochs 1 --deterministic \
		--target torchscript --threads 1
	assert_success
	echo "$output" > s.json
	echo "$stderr" > s.err
	# One "costs X per row" line per k, none pooled over both.
	grep -q "the original code of region 'heat_field' at k 2 costs .* per row" s.err
	grep -q "the original code of region 'heat_field' at k 8 costs .* per row" s.err
	! grep -q "the original code of region 'heat_field' costs" s.err
	# Each k's cost is that of its own data sets, and each trial that
	# ended well records the bound of its own k: the room its k's cost
	# per row leaves after moving a row (lib/search/iterative.h).
	"$PY" - <<'PY'
import json
man = json.load(open("hml-experiment/manifest.json"))
s = json.load(open("s.json"))["search"]
def cost(k):
    o = rows = gather = 0
    for d in man["datasets"]:
        a = d["runs"][0]["argv"]
        if int(a[a.index("--k") + 1]) != k:
            continue
        r = d["regions"]["heat_field"]
        o += r["original_seconds_per_row"] * r["rows"]
        rows += r["rows"]
        gather += r.get("gather_seconds", 0)
    return o / rows, gather / rows
groups = {g["k"]: g for g in s["iterative"]["groups"]}
assert sorted(groups) == [2, 8], groups
for k, g in groups.items():
    per_row, move = cost(k)
    assert abs(g["region_cost_per_row"] - per_row) <= 1e-9 * per_row, (k, g, per_row)
    assert abs(g["region_move_per_row"] - move) <= 1e-9 * max(move, 1e-12), (k, g, move)
lines = [json.loads(l) for l in open("hml-experiment/search/s1/trials.jsonl")]
starts = {l["trial"]: l["params"] for l in lines if l["status"] == "running"}
oks = [l for l in lines if l["status"] == "ok"]
assert oks
for l in oks:
    k = starts[l["trial"]]["k"]
    per_row, move = cost(k)
    want = per_row - move
    got = l["metrics"]["latency_bound"]
    assert abs(got - want) <= 1e-9 * want, (l, want)
print(sorted((starts[l["trial"]]["k"], l["metrics"]["latency_bound"]) for l in oks))
# The front holds no trial slower than its own k's bound.
ok_by_trial = {l["trial"]: l for l in oks}
for f in s["front"]:
    l = ok_by_trial[f["trial"]]
    assert l["metrics"]["latency_seconds_per_sample"] <= l["metrics"]["latency_bound"], (f, l)
PY
}

@test "iterative deploy: collect --guarded runs the deployed model at its k and interleave" {
	k8_model
	run --separate-stderr hml -q deploy m1 --force --guard bounds
	assert_success
	# --init mode puts every model call's field outside the training
	# data's bounds, so the guard sends each model call's rows to the
	# original code: at k 8 with interleave 2 that is the 6 model calls
	# (the --k 4 given would make 16 calls, all of them the model's).
	run --separate-stderr hml --json collect heat --guarded --runs 1 \
		--args '--n 32 --steps 64 --k 4 --init mode --seed {seed}'
	assert_success
	echo "$output" > c.json
	[ "$(json c.json 'd["dataset"]["runs"][0]["argv"][d["dataset"]["runs"][0]["argv"].index("--k") + 1]')" = 8 ]
	[ "$(json c.json 'd["dataset"]["regions"]["heat_field"]["rows"]')" = 6 ]
	[ "$(json c.json 'd["dataset"]["guarded"]["deployment"]')" = p1 ]
}

@test "iterative deploy: a deployment at another interleave says that a running application adopts it" {
	k8_model
	run --separate-stderr hml -q deploy m1 --force
	assert_success
	"$PY" - <<'PY'
import json
p = "hml-experiment/manifest.json"
d = json.load(open(p))
d["models"][0]["iterative"]["interleave"] = 3
json.dump(d, open(p, "w"))
PY
	run --separate-stderr hml --json deploy m1 --force
	assert_success
	echo "$output" > p.json
	[[ "$stderr" == *"model 'm1' runs at interleave 3, the region's previous deployment 'p1' at 2: an application running with that one swaps to this model at interleave 3"* ]]
	[[ "$stderr" != *"refuses to swap"* && "$stderr" != *"keeps its interleave"* ]]
	[ "$(json hml-experiment/deployed/heat_field.json 'd["k"], d["interleave"]')" = "(8, 3)" ]
	[ "$(json p.json 'd["deployment"]["run"], d["deployment"]["env"]["HML_INTERLEAVE_HEAT_FIELD"]')" = "({'k': 8, 'interleave': 3}, '3')" ]
	# The same run again: nothing said.
	run --separate-stderr hml deploy m1 --force
	assert_success
	[[ "$stderr" != *"swaps to this model"* ]]
}
