#!/usr/bin/env bats
# The 2-D heat stencil (workflows/heat) at test size: its own check (the
# decay of a sin*sin mode against the scheme's exact factor), and the whole
# life cycle for both of its regions -- the K-step field with a CNN
# (workflow heat) and the 5-point rows with an MLP (workflow heat-rows).

load helpers

setup() {
	common_setup
	HEAT="$HML_BUILD_DIR/workflows/heat/heat"
}

@test "heat: the accurate run passes its mode-decay check, in both region shapes" {
	run timeout 60 "$HEAT" --init mode --n 24 --steps 40 --k 4
	assert_success
	assert_output --partial "check mode decay"
	assert_output --partial " pass"
	run timeout 60 "$HEAT" --init mode --n 24 --steps 40 --region rows
	assert_success
	assert_output --partial " pass"
	# The check has teeth: a wrong alpha in the check's factor would not
	# pass, and collect mode (the original code, collected) passes too.
	HML_MODE=collect HML_DB=c.h5 run timeout 60 "$HEAT" --init mode --n 24 --steps 40 --k 5
	assert_success
	assert_output --partial " pass"
	[ "$(h5 c.h5 'f["heat_field/input"].shape')" = "(8, 24, 24)" ]
}

@test "heat: bad arguments get one line and exit 2" {
	run timeout 10 "$HEAT" --n 0
	[ "$status" -eq 2 ]
	assert_output "heat: error: --n needs an integer >= 1, got '0'"
	run timeout 10 "$HEAT" --steps 10 --k 4
	[ "$status" -eq 2 ]
	assert_output "heat: error: --steps 10 is not a multiple of --k 4"
	run timeout 10 "$HEAT" --alpha 0.3
	[ "$status" -eq 2 ]
	run timeout 10 "$HEAT" --region cols
	[ "$status" -eq 2 ]
	assert_output "heat: error: --region needs 'field' or 'rows', got 'cols'"
	run timeout 10 "$HEAT" --help
	assert_success
	assert_output --partial "usage: heat"
}

# check_pipeline WORKFLOW REGION BOUND: collect -> train -> deploy -> evaluate
# with the workflow's defaults; the final field's RMSE under BOUND (fields
# start with bumps of amplitude up to 1), total heat within 5%, artefacts
# registered.
check_pipeline() {
	run --separate-stderr hml --json collect "$1"
	assert_success
	echo "$output" > collect.json
	run --separate-stderr hml --json train --threads 2
	assert_success
	echo "$output" > train.json
	[ "$(json train.json 'd["model"]["metrics"]["test_rmse"] < 1')" = True ]
	run --separate-stderr hml --json deploy --best
	assert_success
	run --separate-stderr hml --json evaluate --repeat 1
	assert_success
	echo "$output" > eval.json
	[ "$(json eval.json 'd["evaluation"]["region"]')" = "$2" ]
	[ "$(json eval.json 'd["evaluation"]["qoi"]["nonfinite"]')" = 0 ]
	[ "$(json eval.json '0 < d["evaluation"]["qoi"]["rmse"] < '"$3")" = True ]
	[ "$(json eval.json 'd["evaluation"]["surrogate"]["model_calls"] > 0')" = True ]
	run --separate-stderr hml --json show
	assert_success
	echo "$output" > show.json
	[ "$(json show.json '[len(d[k]) for k in ("datasets", "models", "deployments", "evaluations")]')" = "[1, 1, 1, 1]" ]
	# Total heat after every call, accurate against surrogate: the error
	# stays small over the run (it is printed: its growth per call).
	"$PY" - <<'PY'
import glob, h5py, numpy as np
acc = h5py.File(glob.glob("hml-experiment/eval/*-accurate.h5")[0], "r")["total_heat"][:]
sur = h5py.File(glob.glob("hml-experiment/eval/*-surrogate.h5")[0], "r")["total_heat"][:]
rel = np.abs(sur - acc) / np.abs(acc).max()
print("total heat relative error per call:", " ".join("%.2e" % e for e in rel))
assert np.all(np.isfinite(rel)) and rel.max() < 0.05, rel
PY
}

@test "heat: field region, CNN: collect, train, deploy, evaluate" {
	check_pipeline heat heat_field 0.05
}

@test "heat-rows: 5-point rows, MLP: collect, train, deploy, evaluate" {
	check_pipeline heat-rows heat_rows 0.05
}
