#!/usr/bin/env bats
# The miniBUDE workflow at a small size: energies against a simple second
# code path, float32 rows collected, and collect -> train -> deploy ->
# evaluate through --json with the masked MAPE.

load helpers

setup() { common_setup; }

minibude() {
	timeout 300 "$HML_BUILD_DIR/workflows/minibude/minibude" "$@"
}

@test "minibude: --help, bad arguments exit 2 with one line" {
	run minibude --help
	assert_success
	assert_line --index 0 --partial "usage: minibude"
	for bad in "--poses 0" "--protein x" "--ligand" "--deck -2" "--nope"; do
		run --separate-stderr minibude $bad
		[ "$status" -eq 2 ]
		[ "${#stderr_lines[@]}" -eq 1 ]
		[[ "$stderr" == "minibude: error: "* ]]
	done
}

@test "minibude: energies equal the simple double-precision evaluation" {
	run minibude --poses 96 --batch 32 --protein 300 --ligand 20 --seed 3 --check
	assert_success
	assert_output --partial "check passed: 0 of 32 poses"
	# A different deck is a different problem: the energies change.
	run minibude --poses 8 --protein 300 --ligand 20 --seed 3 --deck 2 --check
	assert_success
}

@test "minibude: collect, train, deploy, evaluate a surrogate of the energies" {
	local small='--poses 8192 --protein 256 --batch 256'
	run --separate-stderr hml --json collect minibude --args "$small --seed {seed}"
	assert_success
	echo "$output" > collect.json
	[ "$(json collect.json 'd["dataset"]["regions"]["minibude"]["rows"]')" = 8192 ]
	# Float application data stays float32 in the file.
	[ "$(h5 hml-experiment/data/d1.h5 'str(f["minibude/input"].dtype), f["minibude/input"].shape[1], str(f["minibude/output"].dtype)')" = "('float32', 6, 'float32')" ]

	run --separate-stderr hml --json train --epochs 40 --threads 2
	assert_success
	run --separate-stderr hml --json deploy --best
	assert_success

	# The check is real: the surrogate's energies fail it.
	run --separate-stderr env HML_MODE=infer HML_MODEL=hml-experiment/models/m1.pt HML_ON_ERROR=fail \
		"$HML_BUILD_DIR/workflows/minibude/minibude" $small --check
	[ "$status" -eq 1 ]
	[[ "$output" == *"check failed"* ]]

	run --separate-stderr hml --json evaluate --repeat 1 --args "$small --seed 42"
	assert_success
	echo "$output" > eval.json
	"$PY" - <<'PY'
import json, math
q = json.load(open("eval.json"))["evaluation"]["qoi"]
assert q["dataset"] == "energy" and q["metric"] == "mape" and q["values"] == 8192, q
# mape_floor 1: only |E| >= 1 counts, and most poses do.
assert 0.5 * 8192 < q["mape_values"] <= 8192, q
assert math.isfinite(q["mape"]) and 0 < q["mape"] < MAPE_BOUND, q
PY

	run --separate-stderr hml --json show
	assert_success
	echo "$output" > show.json
	[ "$(json show.json '[len(d[k]) for k in ("datasets", "models", "deployments", "evaluations")]')" = "[1, 1, 1, 1]" ]
}
