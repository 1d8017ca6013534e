#!/usr/bin/env bats
# A conserved sum (hml-workflow(5) "conserve", hml-runtime(3)
# HML_CONSERVE_<LABEL>, lib/core/conserve.h): miniWeather declares that
# its model's output keeps the sum of channel 0 (rho') over the interior,
# which is its mass; every run of a model (hml evaluate here) and the
# environment hml deploy prints set the variable, and the runtime corrects each output so that the mass of the
# surrogate run stays that of its start, where the same model without the
# declaration drifts. Bad specs get one line and their exit codes. The
# spec's grammar, its canonical form and the correction itself are
# unit.conserve's; the variable in a run's environment unit.childenv's.

load helpers

setup() {
	common_setup
	MW="$HML_BUILD_DIR/workflows/miniweather/miniweather"
	SMALL='--nx 20 --nz 10 --steps 40 --k 5 --seed {seed}'
	EVAL='--nx 20 --nz 10 --steps 40 --k 5 --seed 0'
	TRAIN=(--threads 1 --seed 3 --epochs 2 --arch cnn:4:tanh:kernel=3)
}

# workflow DIR CONSERVE: miniWeather's workflow in DIR, its program the
# built one, "conserve" CONSERVE (JSON; null: removed).
workflow() {
	mkdir -p "$1"
	"$PY" - "$HML_SOURCE_DIR/workflows/miniweather/workflow.json" "$MW" "$1" "$2" <<'PY'
import json, sys
w = json.load(open(sys.argv[1]))
w["program"] = sys.argv[2]
v = json.loads(sys.argv[4])
if v is None:
    del w["regions"][0]["conserve"]
else:
    w["regions"][0]["conserve"] = v
json.dump(w, open(sys.argv[3] + "/workflow.json", "w"))
PY
}

# drift EXP EVAL_JSON: the surrogate run's largest relative change of mass.
drift() {
	"$PY" - "$1" "$2" <<'PY'
import h5py, json, sys
import numpy as np
ev = json.load(open(sys.argv[2]))["evaluation"]
m = h5py.File(sys.argv[1] + "/" + ev["files"]["qoi_surrogate"], "r")["mass"][:]
print("%.3e" % (np.max(np.abs(m - m[0])) / abs(m[0])))
PY
}

# surrogate EXP WORKFLOW: collect, train, deploy in C, evaluate; the
# evaluation's --json in EXP.json.
surrogate() {
	run --separate-stderr hml -C "$1" -q collect "$2" --runs 2 --args "$SMALL"
	assert_success
	run --separate-stderr hml -C "$1" -q --json train "${TRAIN[@]}"
	assert_success
	id=$(echo "$output" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["model"]["id"])')
	run --separate-stderr hml -C "$1" -q --json deploy --force --target c "$id"
	assert_success
	echo "$output" > "$1-deploy.json"
	run --separate-stderr hml -C "$1" -q --json evaluate --repeat 1 --args "$EVAL"
	assert_success
	echo "$output" > "$1.json"
}

@test "conserve: the declared sum keeps miniWeather's mass; without it the same model drifts" {
	[ "$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["regions"][0]["conserve"])' \
	     "$HML_SOURCE_DIR/workflows/miniweather/workflow.json")" = "0, 2:-2, 2:-2" ]
	surrogate with miniweather
	workflow wf null
	surrogate without ./wf/workflow.json
	# the environment deploy prints runs the model as evaluate did
	[ "$(json with-deploy.json 'd["deployment"]["env"]["HML_CONSERVE_MINIWEATHER"]')" = "0,2:-2,2:-2" ]
	[ "$(json without-deploy.json '"HML_CONSERVE_MINIWEATHER" in d["deployment"]["env"]')" = False ]
	kept=$(drift with with.json)
	lost=$(drift without without.json)
	echo "mass drift: $kept with, $lost without"
	[ "$("$PY" -c "print($kept <= 1e-6 and $lost > 1e-4)")" = True ]
}

@test "conserve: a bad declaration in the workflow gets one line, exit 3" {
	workflow wf '"0, 2:x, 2:-2"'
	run --separate-stderr hml -q collect ./wf/workflow.json --runs 1 --args "$SMALL"
	[ "$status" -eq 3 ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "$stderr" == *"key 'regions[0].conserve' is not a spec (conserve '0, 2:x, 2:-2': 'x' is not an index)"* ]]
	[ ! -e hml-experiment/data ] || [ -z "$(ls hml-experiment/data)" ]
}

@test "conserve: the runtime refuses a malformed spec, and one that does not fit the output" {
	run --separate-stderr hml -q collect miniweather --runs 1 --args "$SMALL"
	assert_success
	run --separate-stderr hml -q --json train "${TRAIN[@]}"
	assert_success
	model=$PWD/hml-experiment/models/$(echo "$output" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["model"]["id"])').pt
	export HML_MODE_MINIWEATHER=infer HML_MODEL_MINIWEATHER="$model"
	# not a spec: the region does not open
	run --separate-stderr env HML_CONSERVE_MINIWEATHER='0,x' timeout 120 "$MW" $EVAL
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"conserve '0,x': 'x' is not an index"* ]]
	# two dimensions for a row of three: a model failure, by HML_ON_ERROR
	run --separate-stderr env HML_ON_ERROR=fail HML_CONSERVE_MINIWEATHER='0,2:-2' timeout 120 "$MW" $EVAL
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"conserve '0,2:-2': 2 dimensions, a row has 3 ([4, 14, 24])"* ]]
	run --separate-stderr env HML_CONSERVE_MINIWEATHER='0,2:-2' timeout 120 "$MW" $EVAL
	assert_success
	[[ "$stderr" == *"a row has 3 ([4, 14, 24]); running the original code"* ]]
}
