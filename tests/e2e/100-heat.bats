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
	run timeout 300 "$HEAT" --init mode --n 24 --steps 40 --k 4
	assert_success
	assert_output --partial "check mode decay"
	assert_output --partial " pass"
	run timeout 300 "$HEAT" --init mode --n 24 --steps 40 --region rows
	assert_success
	assert_output --partial " pass"
	# The check has teeth: a wrong alpha in the check's factor would not
	# pass, and collect mode (the original code, collected) passes too.
	HML_MODE=collect HML_DB=c.h5 run timeout 300 "$HEAT" --init mode --n 24 --steps 40 --k 5
	assert_success
	assert_output --partial " pass"
	[ "$(h5 c.h5 'f["heat_field/input"].shape')" = "(8, 24, 24)" ]
}

@test "heat: bad arguments get one line and exit 2" {
	run timeout 120 "$HEAT" --n 0
	[ "$status" -eq 2 ]
	assert_output "heat: error: --n needs an integer >= 1, got '0'"
	run timeout 120 "$HEAT" --steps 10 --k 4
	[ "$status" -eq 2 ]
	assert_output "heat: error: --steps 10 is not a multiple of --k 4"
	run timeout 120 "$HEAT" --alpha 0.3
	[ "$status" -eq 2 ]
	run timeout 120 "$HEAT" --region cols
	[ "$status" -eq 2 ]
	assert_output "heat: error: --region needs 'field' or 'rows', got 'cols'"
	run timeout 120 "$HEAT" --help
	assert_success
	assert_output --partial "usage: heat"
}

# check_pipeline WORKFLOW REGION: collect -> train -> deploy -> evaluate with
# the workflow's defaults (training on one libtorch thread: on a loaded
# 2-core machine two threads are several times slower), every artefact
# registered, and the surrogate's error. Bound: the final field's RMSE
# stays under 0.6 of the accurate final field's RMS, and total heat within
# 100% of its largest value after every call -- finite, not diverging,
# but far from accurate: a K-step model's small error per call (test RMSE
# ~0.01) builds up over the 16 (field) or 64 (rows) calls; the measured
# figures are printed.
check_pipeline() {
	run --separate-stderr hml --json collect "$1"
	assert_success
	run --separate-stderr hml --json train --threads 1
	assert_success
	echo "$output" > train.json
	[ "$(json train.json 'd["model"]["metrics"]["test_rmse"] < 0.05')" = True ]
	# heat-rows' region is a 5-point update, a few ns per row: no model is
	# predicted faster and deploy refuses, naming both costs; the field
	# region's prediction depends on the machine's load. --force deploys
	# all the same, to test the rest of the pipeline.
	run --separate-stderr hml --json deploy --best
	if [ "$1" = heat-rows ]; then
		[ "$status" -eq 3 ]
		[[ "$stderr" == *"no model is predicted faster than the original code: the region costs "* ]]
	fi
	run --separate-stderr hml --json deploy --best --force
	assert_success
	run --separate-stderr hml --json evaluate --repeat 1
	assert_success
	echo "$output" > eval.json
	[ "$(json eval.json 'd["evaluation"]["region"]')" = "$2" ]
	[ "$(json eval.json 'd["evaluation"]["qoi"]["nonfinite"]')" = 0 ]
	[ "$(json eval.json 'd["evaluation"]["surrogate"]["model_calls"] > 0')" = True ]
	run --separate-stderr hml --json show
	assert_success
	echo "$output" > show.json
	[ "$(json show.json '[len(d[k]) for k in ("datasets", "models", "deployments", "evaluations")]')" = "[1, 1, 1, 1]" ]
	"$PY" - <<'PY'
import glob, h5py, json, numpy as np
rmse = json.load(open("eval.json"))["evaluation"]["qoi"]["rmse"]
acc = h5py.File(glob.glob("hml-experiment/eval/*-accurate.h5")[0], "r")
sur = h5py.File(glob.glob("hml-experiment/eval/*-surrogate.h5")[0], "r")
rms = float(np.sqrt(np.mean(acc["field"][:] ** 2)))
rel = np.abs(sur["total_heat"][:] - acc["total_heat"][:]) / np.abs(acc["total_heat"][:]).max()
print("final field rmse %.4g, field rms %.4g" % (rmse, rms))
print("total heat relative error per call:", " ".join("%.2e" % e for e in rel))
assert 0 < rmse < 0.6 * rms, (rmse, rms)
assert np.all(np.isfinite(rel)) and rel.max() < 1.0, rel
PY
}

@test "heat: field region, CNN: collect, train, deploy, evaluate" {
	check_pipeline heat heat_field
}

@test "heat-rows: 5-point rows, MLP: collect, train, deploy, evaluate" {
	check_pipeline heat-rows heat_rows
}
