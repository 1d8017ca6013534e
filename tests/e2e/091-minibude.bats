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
	local small='--poses 4096 --protein 192 --batch 256'
	run --separate-stderr hml --json collect minibude --args "$small --seed {seed}"
	assert_success
	echo "$output" > collect.json
	[ "$(json collect.json 'd["dataset"]["regions"]["minibude"]["rows"]')" = 4096 ]
	# Float application data stays float32 in the file.
	[ "$(h5 hml-experiment/data/d1.h5 'str(f["minibude/input"].dtype), f["minibude/input"].shape[1], str(f["minibude/output"].dtype)')" = "('float32', 6, 'float32')" ]

	run --separate-stderr hml --json train --arch mlp:32x32:relu --epochs 20 --threads 2
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
	# Energies span about -80 to 1500 (clashes); mape_floor 1 keeps exactly
	# the poses with |E| >= 1, most of them. The bound: the surrogate's
	# MAPE is finite and under a quarter of the best constant's (the mean
	# energy, ~2500%), computed from the registered accurate QoI file.
	"$PY" - <<'PY'
import h5py, json, math, numpy as np
d = json.load(open("eval.json"))["evaluation"]
q = d["qoi"]
assert q["dataset"] == "energy" and q["metric"] == "mape" and q["values"] == 4096, q
a = h5py.File("hml-experiment/eval/%s-accurate.h5" % d["id"], "r")["energy"][:].astype(np.float64)
kept = np.abs(a) >= 1
assert q["mape_values"] == kept.sum() and kept.mean() > 0.5, q
const = 100 * np.mean(np.abs(a[kept] - a.mean()) / np.abs(a[kept]))
assert math.isfinite(q["mape"]) and 0 < q["mape"] < 0.25 * const, (q, const)
PY

	run --separate-stderr hml --json show
	assert_success
	echo "$output" > show.json
	[ "$(json show.json '[len(d[k]) for k in ("datasets", "models", "deployments", "evaluations")]')" = "[1, 1, 1, 1]" ]
}
