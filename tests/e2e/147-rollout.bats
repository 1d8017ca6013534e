#!/usr/bin/env bats
# Multi-step (unrolled) training, hml train --rollout R (hml-train(1)
# ROLLOUT), on the heat workflow's in-place field region at a small size:
# R = 1 is the one-call training bit for bit, R = 2 trains on a split by
# blocks of 2 calls and records its 2-step validation error,
# model.train.rollout is read from the workflow, and every bad value gets
# one line and its exit code with nothing recorded. That the
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
	# one call: no R-step validation error
	for k in val_rollout_rmse val_rollout_mape val_rollout_windows; do
		[ "$(json none.json "d['model']['metrics']['$k']")" = None ]
	done
	# two steps train another model, finite, on a split by blocks of 2
	# calls: the same rows in all, whole windows in validation and test,
	# and the 2-step validation error recorded beside the one-call one
	[ "$(json two.json 'd["model"]["metrics"]["val_rmse"] != d["model"]["metrics"]["val_rmse"]')" = False ]
	[ "$(json two.json 'sum(d["model"]["rows"][k] for k in ("train", "validation", "test"))')" = \
	  "$(json none.json 'sum(d["model"]["rows"][k] for k in ("train", "validation", "test"))')" ]
	[ "$(json two.json 'd["model"]["rows"]["validation"] % 2, d["model"]["rows"]["test"] % 2')" = "(0, 0)" ]
	[ "$(json two.json 'd["model"]["metrics"]["val_rollout_windows"] >= 1')" = True ]
	[ "$(json two.json '(lambda m: 0 < m["val_rollout_rmse"] < float("inf") and m["val_rollout_rmse"] != m["val_rmse"])(d["model"]["metrics"])')" = True ]
	[ "$(json two.json 'd["model"]["metrics"]["val_rmse"]')" != "$(json none.json 'd["model"]["metrics"]["val_rmse"]')" ]
	id=$(json two.json 'd["model"]["id"]')
	run --separate-stderr hml show "$id"
	assert_success
	assert_line --regexp '^ *options\.rollout: +2$'
	assert_line --regexp '^ *metrics\.val_rollout_rmse: +[0-9.e-]+$'
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
	# validation and test by whole blocks of 8 calls: 4 blocks, too few
	run --separate-stderr hml -q train "${TRAIN[@]}" --rollout 8 --val-fraction 0.4 --test-fraction 0.4
	[ "$status" -eq 3 ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "$stderr" == *"--rollout 8: the 32 rows hold 4 blocks of 8 consecutive calls of one run, too few for 2 test, 2 validation and a training block; collect more calls"* ]]
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
