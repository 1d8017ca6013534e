#!/usr/bin/env bats
# Multi-step (unrolled) training, hml train --rollout R (hml-train(1)
# ROLLOUT), on the heat workflow's in-place field region at a small size:
# R = 1 is the one-call training bit for bit, R = 2 trains and is
# recorded, model.train.rollout is read from the workflow, and every bad
# value gets one line and its exit code with nothing recorded. That the
# windows never span two runs is unit.rollout's (and unit.collection's for
# the run and call numbers the reader gives each row).

load helpers

setup() {
	common_setup
	HEAT="$HML_BUILD_DIR/workflows/heat/heat"
	# 4 runs of 8 calls: 32 rows of a 16 x 16 field
	SMALL='--n 16 --steps 32 --k 4 --seed {seed}'
	TRAIN=(--threads 1 --seed 3 --epochs 3 --arch cnn:4:tanh:kernel=3:residual)
}

# workflow DIR KEY VALUE: heat's workflow in DIR with model.train.KEY = VALUE
# (JSON), its program the built heat.
workflow() {
	mkdir -p "$1"
	"$PY" - "$HML_SOURCE_DIR/workflows/heat/workflow.json" "$HEAT" "$1" "$2" "$3" <<'PY'
import json, sys
w = json.load(open(sys.argv[1]))
w["program"] = sys.argv[2]
w["regions"][0]["model"]["train"][sys.argv[4]] = json.loads(sys.argv[5])
json.dump(w, open(sys.argv[3] + "/workflow.json", "w"))
PY
}

models() {
	json hml-experiment/manifest.json 'len(d.get("models", []))'
}

@test "rollout: R = 1 is the one-call training; R = 2 trains, is recorded and shown" {
	run --separate-stderr hml -q collect heat --args "$SMALL"
	assert_success
	run --separate-stderr hml --json train "${TRAIN[@]}"
	assert_success
	echo "$output" > none.json
	run --separate-stderr hml --json train "${TRAIN[@]}" --rollout 1
	assert_success
	echo "$output" > one.json
	run --separate-stderr hml --json train "${TRAIN[@]}" --rollout 2
	assert_success
	echo "$output" > two.json
	[ "$(json none.json 'd["model"]["options"]["rollout"]')" = 1 ]
	[ "$(json one.json 'd["model"]["options"]["rollout"]')" = 1 ]
	[ "$(json two.json 'd["model"]["options"]["rollout"]')" = 2 ]
	# the same card errors, to the last bit, with and without --rollout 1
	for k in val_rmse test_rmse test_mae test_max_abs val_mape best_epoch; do
		[ "$(json none.json "repr(d['model']['metrics']['$k'])")" = \
		  "$(json one.json "repr(d['model']['metrics']['$k'])")" ]
	done
	# two steps train another model, finite, on the same split
	[ "$(json two.json 'd["model"]["metrics"]["val_rmse"] != d["model"]["metrics"]["val_rmse"]')" = False ]
	[ "$(json two.json 'd["model"]["rows"]["train"]')" = "$(json none.json 'd["model"]["rows"]["train"]')" ]
	[ "$(json two.json 'd["model"]["metrics"]["val_rmse"]')" != "$(json none.json 'd["model"]["metrics"]["val_rmse"]')" ]
	id=$(json two.json 'd["model"]["id"]')
	run --separate-stderr hml show "$id"
	assert_success
	assert_line --regexp '^ *options\.rollout: +2$'
}

@test "rollout: model.train.rollout is read from the workflow, the command line overrides it" {
	workflow wf rollout 2
	run --separate-stderr hml -q collect ./wf/workflow.json --args "$SMALL"
	assert_success
	run --separate-stderr hml --json train "${TRAIN[@]}"
	assert_success
	[ "$(echo "$output" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["model"]["options"]["rollout"])')" = 2 ]
	run --separate-stderr hml --json train "${TRAIN[@]}" --rollout 1
	assert_success
	[ "$(echo "$output" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["model"]["options"]["rollout"])')" = 1 ]
}

@test "rollout: bad values get one line and their exit codes, nothing recorded" {
	run --separate-stderr hml -q collect heat --args "$SMALL"
	assert_success
	for bad in 0 -1 1.5 two 65; do
		run --separate-stderr hml train "${TRAIN[@]}" --rollout "$bad"
		[ "$status" -eq 2 ]
		[ "${#stderr_lines[@]}" -eq 1 ]
		[[ "$stderr" == *"--rollout"* ]]
	done
	# more steps than the 8 calls of a run: invalid input
	run --separate-stderr hml train "${TRAIN[@]}" --rollout 9
	[ "$status" -eq 3 ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "$stderr" == *"--rollout 9 is more than the 8 consecutive calls of the longest run in the data"* ]]
	# loss log cannot chain
	run --separate-stderr hml train "${TRAIN[@]}" --rollout 2 --loss log --arch cnn:4:tanh
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"loss 'log' cannot train with rollout 2"* ]]
	[ "$(models)" = 0 ]
}

@test "rollout: a region whose output is not shaped as its input, and a bad workflow value, are refused" {
	run --separate-stderr hml -q collect heat-rows --runs 1 --args '--n 12 --steps 4 --region rows --seed {seed}'
	assert_success
	run --separate-stderr hml train --threads 1 --epochs 1 --rollout 2
	[ "$status" -eq 3 ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "$stderr" == *"--rollout 2 needs a region whose output has its input's shape; the input is [5], the output [1]"* ]]
	[ "$(models)" = 0 ]

	workflow wf rollout 0
	run --separate-stderr hml -C w0 -q collect ./wf/workflow.json --args "$SMALL"
	assert_success
	run --separate-stderr hml -C w0 train "${TRAIN[@]}"
	[ "$status" -eq 3 ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "$stderr" == *"rollout must be 1 to 64, not 0"* ]]
	workflow wf2 rollout 2.5
	run --separate-stderr hml -C w2 -q collect ./wf2/workflow.json --args "$SMALL"
	[ "$status" -eq 3 ]
	[[ "$stderr" == *"rollout"* ]]
}
