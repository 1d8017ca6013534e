#!/usr/bin/env bats
# Guards (hml deploy --guard): the card's input statistics, the guard file
# the deployment names, per-row fallback in binomial's API form and in its
# directive form's over() loop (guarded rows are the original code's,
# exactly; whole-call fallback is unit.guard's), hml evaluate --args over a
# wider spot range with the rows guarded and the guard's cost, and the bad
# inputs.

load helpers

API="$HML_BUILD_DIR/workflows/binomial/binomial_api"

setup_file() {
	export EXP0="$BATS_FILE_TMPDIR/exp"
	cd "$BATS_FILE_TMPDIR"
	"$HML" -q -C "$EXP0" collect binomial-api --args '--options 4096 --seed {seed}' >/dev/null
	"$HML" -q -C "$EXP0" train --epochs 20 --threads 2 >/dev/null
}

setup() {
	common_setup
	unset HML_GUARD_BINOMIAL
	cp -r "$EXP0" "$WORK/exp"
	cd "$WORK"
}

@test "hml train records the training inputs' statistics in the card" {
	c='d["guard"]'
	[ "$(json exp/models/m1.json "$c['features']")" = 5 ]
	[ "$(json exp/models/m1.json "$c['rows']")" = 4096 ]
	# Spots were drawn from 5:30.
	[ "$(json exp/models/m1.json "5 <= $c['min'][0] < 5.1 and 29.9 < $c['max'][0] <= 30")" = True ]
	[ "$(json exp/models/m1.json "len($c['whiten']) == 25 and $c['calibration_rows'] == 819")" = True ]
	[ "$(json exp/models/m1.json "[q[0] for q in $c['quantiles']][-1] == 1.0")" = True ]
}

@test "deploy --guard bounds, evaluate --args over twice the spots: out-of-range rows guarded, per row" {
	run --separate-stderr hml -C exp --json deploy m1 --guard bounds
	assert_success
	echo "$output" > dep.json
	[ "$(json dep.json 'd["deployment"]["guard"]["spec"]')" = "bounds:margin=0" ]
	g=$(json dep.json 'd["deployment"]["env"]["HML_GUARD_BINOMIAL"]')
	[ "$g" = "$PWD/exp/$(json dep.json 'd["deployment"]["guard"]["file"]')" ]
	[ "$(json "$g" 'd["kind"]')" = bounds ]
	run --separate-stderr hml -C exp --json evaluate --repeat 1 --args '--options 4096 --seed 42 --spot-range 5:60'
	assert_success
	echo "$output" > ood.json
	e='d["evaluation"]["guard"]'
	[ "$(json ood.json "$e['spec']")" = "bounds:margin=0" ]
	[ "$(json ood.json "$e['checked_rows']")" = 4096 ]
	# About 30/55 of the spots lie above the largest trained.
	[ "$(json ood.json "0.45 < $e['guarded_fraction'] < 0.65")" = True ]
	[ "$(json ood.json "$e['whole_calls'] == 0 and $e['guarded_calls'] == 1")" = True ]
	[ "$(json ood.json "$e['seconds'] >= 0 and $e['region_fraction'] >= 0")" = True ]
	[ "$(json ood.json 'd["evaluation"]["surrogate"]["model_calls"]')" = 1 ]
	# The --args reached both runs: the recorded argv has them.
	[ "$(json ood.json "'--spot-range' in d['evaluation']['argv']")" = True ]
	# In distribution, hardly a row is guarded; the text report names them.
	run hml -C exp evaluate --repeat 1 --args '--options 4096 --seed 42'
	assert_success
	assert_output --regexp "guard: +bounds:margin=0, [0-9]+ of 4096 rows guarded"
	[ "$(json exp/eval/e2.json 'd["guard"]["guarded_fraction"] <= 0.02')" = True ]
}

@test "guarded rows hold exactly the original code's prices; the others the model's" {
	hml -q -C exp deploy m1 --guard bounds >/dev/null
	g=$(ls "$PWD"/exp/models/m1.guard-bounds-margin-0.json)
	args=(--options 4096 --seed 9 --spot-range 5:60 --quiet)
	HML_QOI=acc.h5 "$API" "${args[@]}"
	HML_MODE_BINOMIAL=infer HML_MODEL_BINOMIAL="$PWD/exp/models/m1.pt" HML_GUARD_BINOMIAL="$g" \
		HML_ON_ERROR=fail HML_PROFILE=prof.json HML_QOI=sur.h5 "$API" "${args[@]}"
	# the spots, as binomial draws them, are not in the QoI: the guarded
	# rows are those whose price equals the accurate one bit for bit
	run h5 acc.h5 "int(np.sum(f['price'][:] == h5py.File('sur.h5')['price'][:]))"
	same=$output
	[ "$(json prof.json 'd["regions"][0]["guarded_rows"]')" = "$same" ]
	[ "$(json prof.json 'd["regions"][0]["guard"]')" = "bounds:margin=0" ]
	[ "$(json prof.json 'd["regions"][0]["model_calls"] == 1 and d["regions"][0]["guard_whole_calls"] == 0')" = True ]
	[ "$same" -gt 1800 ] && [ "$same" -lt 2700 ]
}

@test "the directive form's over() loop runs the guarded rows only, exactly" {
	hml -q -C exp deploy m1 --guard bounds:margin=0.1 >/dev/null
	g=$(ls "$PWD"/exp/models/m1.guard-bounds-margin-0.1.json)
	HML_QOI=acc.h5 binomial --options 4096 --seed 9 --spot-range 5:60 --quiet
	HML_MODE_BINOMIAL=infer HML_MODEL_BINOMIAL="$PWD/exp/models/m1.pt" HML_GUARD_BINOMIAL="$g" \
		HML_ON_ERROR=fail HML_PROFILE=prof.json HML_QOI=sur.h5 \
		binomial --options 4096 --seed 9 --spot-range 5:60 --quiet
	run h5 acc.h5 "int(np.sum(f['price'][:] == h5py.File('sur.h5')['price'][:]))"
	[ "$(json prof.json 'd["regions"][0]["guarded_rows"]')" = "$output" ]
	# margin 0.1 of 25: spots beyond 32.5, about 27.5/55 of them
	[ "$output" -gt 1700 ] && [ "$output" -lt 2500 ]
	[ "$(json prof.json 'd["regions"][0]["guard_whole_calls"] == 0 and d["regions"][0]["model_calls"] == 1')" = True ]
}

@test "deploy --guard distance: calibrated threshold, few in-distribution rows guarded" {
	run --separate-stderr hml -C exp --json deploy m1 --guard distance:fa=0.02
	assert_success
	echo "$output" > dep.json
	[ "$(json dep.json 'd["deployment"]["guard"]["threshold"] > 0')" = True ]
	run --separate-stderr hml -C exp --json evaluate --repeat 1 --args '--options 4096 --seed 42'
	assert_success
	echo "$output" > ind.json
	[ "$(json ind.json 'd["evaluation"]["guard"]["guarded_fraction"] < 0.06')" = True ]
	[ "$(json dep.json 'len(d["deployment"]["guard"]["component_thresholds"]) == 5')" = True ]
	# Rows past the spot range whose other features are typical: the spot's
	# component of the whitened deviation guards them (the Mahalanobis distance alone let
	# about half of them through): about 30/55 of the rows at 5:60.
	run --separate-stderr hml -C exp --json evaluate --repeat 1 --args '--options 4096 --seed 42 --spot-range 5:60'
	assert_success
	echo "$output" > ood.json
	[ "$(json ood.json '0.5 < d["evaluation"]["guard"]["guarded_fraction"] < 0.65')" = True ]
}

@test "distance on an older model card or an older guard file: one-line refusals" {
	# a card from before component_quantiles: distance refused (exit 3), bounds deploys
	# (deploy reads the model's record in the manifest; the card is its copy)
	"$PY" -c 'import json,sys; p=sys.argv[1]; m=json.load(open(p)); del m["models"][0]["guard"]["component_quantiles"]; json.dump(m, open(p, "w"), indent=2)' exp/manifest.json
	cp exp/manifest.json before.json
	run --separate-stderr hml -C exp deploy m1 --guard distance
	[ "$status" -eq 3 ]
	[ "$stderr" = "hml: error: model 'm1': the model's input statistics predate the per-feature calibration of guard 'distance': retrain the model, or deploy guard 'bounds'" ]
	cmp before.json exp/manifest.json
	run --separate-stderr hml -C exp deploy m1 --guard bounds
	assert_success
	# a distance guard file of schema 1: the runtime warns in one line and
	# runs the original code (HML_ON_ERROR=fail: exit 1)
	printf '{"schema_version": 1, "spec": "distance:fa=0.01", "threshold": 3, "stats": %s}\n' \
		"$("$PY" -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["guard"]))' exp/models/m1.json)" > old.json
	run --separate-stderr env HML_MODE_BINOMIAL=infer HML_MODEL_BINOMIAL="$PWD/exp/models/m1.pt" \
		HML_GUARD_BINOMIAL="$PWD/old.json" HML_ON_ERROR=fail "$API" --options 64 --quiet
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"guard '$PWD/old.json': a distance guard of schema 1 (Mahalanobis only) is no longer read: redeploy the model with --guard"* ]]
	[ "$(echo "$stderr" | wc -l)" -eq 1 ]
}

@test "bad guards and spot ranges: one-line errors, documented exit codes, nothing recorded" {
	cp exp/manifest.json before.json
	for bad in foo bounds:margin=-1 distance:fa=0 distance:fa=0.9 bounds:fa=0.1 'none:x=1'; do
		run --separate-stderr hml -C exp deploy m1 --guard "$bad"
		[ "$status" -eq 2 ]
		[[ "$stderr" == *"malformed guard '$bad'"* ]]
		[ "${#lines[@]}" -eq 0 ]
	done
	cmp before.json exp/manifest.json
	for bad in 6:5 5:5 0:10 x:3 5 5:; do
		run --separate-stderr "$API" --spot-range "$bad"
		[ "$status" -eq 2 ]
		[[ "$stderr" == *"--spot-range needs LO:HI with 0 < LO < HI, got '$bad'"* ]]
	done
	# an unreadable guard file: a warning and the original code (fallback),
	# an error under HML_ON_ERROR=fail
	run --separate-stderr env HML_MODE_BINOMIAL=infer HML_MODEL_BINOMIAL="$PWD/exp/models/m1.pt" \
		HML_GUARD_BINOMIAL=/nonexistent.json "$API" --options 64 --quiet
	assert_success
	[[ "$stderr" == *"cannot read guard '/nonexistent.json'"*"running the original code"* ]]
	run --separate-stderr env HML_MODE_BINOMIAL=infer HML_MODEL_BINOMIAL="$PWD/exp/models/m1.pt" \
		HML_GUARD_BINOMIAL=/nonexistent.json HML_ON_ERROR=fail "$API" --options 64 --quiet
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"cannot read guard '/nonexistent.json'"* ]]
}

@test "a guard on a model without input statistics is refused at deploy" {
	"$PY" -c 'import torch; from torch import nn; torch.manual_seed(0); torch.jit.script(nn.Sequential(nn.Linear(5, 1)).eval()).save("seq.pt")'
	hml -q -C exp import seq.pt --region binomial >/dev/null
	cp exp/manifest.json before.json
	run --separate-stderr hml -C exp deploy m2 --guard bounds
	[ "$status" -eq 3 ]
	[ "$stderr" = "hml: error: model 'm2' has no input statistics for a guard (imported, or trained by an older hml): deploy it with --guard none, or train it with hml train" ]
	cmp before.json exp/manifest.json
	run --separate-stderr hml -C exp deploy m2 --guard none --force
	assert_success
}
