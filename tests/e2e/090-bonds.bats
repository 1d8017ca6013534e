#!/usr/bin/env bats
# The bonds workflow at a small size: its own correctness check, integer
# dates collected beside the rate, and collect -> train -> deploy ->
# evaluate through --json.

load helpers

setup() { common_setup; }

bonds() {
	timeout 300 "$HML_BUILD_DIR/workflows/bonds/bonds" "$@"
}

@test "bonds: --help, bad arguments exit 2 with one line" {
	run bonds --help
	assert_success
	assert_line --index 0 --partial "usage: bonds"
	for bad in "--bonds 0" "--bonds x" "--batch" "--seed -1" "--nope"; do
		run --separate-stderr bonds $bad
		[ "$status" -eq 2 ]
		[ "${#stderr_lines[@]}" -eq 1 ]
		[[ "$stderr" == "bonds: error: "* ]]
	done
}

@test "bonds: the accurate run passes its check" {
	# NPV at the solved yield = dirty price to 1e-8, clean = dirty - accrued.
	run bonds --bonds 3000 --batch 512 --seed 7 --check
	assert_success
	assert_output --partial "check passed: 0 of 3000 bonds fail"
}

@test "bonds: collect, train, deploy, evaluate a surrogate of the dirty price" {
	run --separate-stderr hml --json collect bonds --args '--bonds 8192 --batch 2048 --seed {seed}'
	assert_success
	echo "$output" > collect.json
	[ "$(json collect.json 'd["dataset"]["regions"]["bonds"]["rows"]')" = 8192 ]
	# Rate and nine int32 dates per row, collected as float64; three prices out.
	"$PY" - <<'PY'
import h5py, numpy as np
f = h5py.File("hml-experiment/data/d1.h5", "r")
x, y = f["bonds/input"], f["bonds/output"]
assert x.shape == (8192, 10) and x.dtype == np.float64, (x.shape, x.dtype)
assert y.shape == (8192, 3), y.shape
x = x[:]
assert ((x[:, 0] >= 0.03) & (x[:, 0] <= 0.13)).all()
assert set(np.unique(x[:, 1])) <= {1998.0, 1999.0} and set(np.unique(x[:, 4])) <= {2000.0, 2001.0}
assert (x[:, 1:] == np.round(x[:, 1:])).all()
y = y[:]
assert np.allclose(y[:, 2], 89.97693786, rtol=1e-8) and np.allclose(y[:, 0] - y[:, 1], y[:, 2])
PY

	run --separate-stderr hml --json train --arch mlp:32x32:relu --epochs 40 --threads 2
	assert_success
	echo "$output" > train.json
	[ "$(json train.json 'd["model"]["id"]')" = m1 ]

	# bonds' region costs a few us per row: on a loaded machine a model's
	# measured latency can exceed it, and deploy would refuse the model as
	# predicted slower (tests/e2e/062-predicted.bats tests that); --force
	# keeps this test about the pipeline.
	run --separate-stderr hml --json deploy --best --force
	assert_success

	# The check is real: the surrogate's approximate prices fail it.
	run --separate-stderr env HML_MODE=infer HML_MODEL=hml-experiment/models/m1.pt HML_ON_ERROR=fail \
		"$HML_BUILD_DIR/workflows/bonds/bonds" --bonds 4096 --batch 4096 --check
	[ "$status" -eq 1 ]
	[[ "$output" == *"check failed"* ]]

	run --separate-stderr hml --json evaluate --repeat 1 --args '--bonds 8192 --batch 2048 --seed 42'
	assert_success
	echo "$output" > eval.json
	# Dirty prices lie in [89.98, 96.5]; they vary with the accrued amount, a
	# sawtooth of the dates. The bound: the surrogate's RMSE is finite and
	# below that of the best constant (the standard deviation of the
	# accurate prices, ~1.3), read from the registered accurate QoI file.
	"$PY" - <<'PY'
import h5py, json, math, numpy as np
d = json.load(open("eval.json"))["evaluation"]
q = d["qoi"]
assert q["dataset"] == "dirty_price" and q["metric"] == "rmse" and q["values"] == 8192, q
a = h5py.File("hml-experiment/eval/%s-accurate.h5" % d["id"], "r")["dirty_price"][:]
assert 89.97 < a.min() and a.max() < 97, (a.min(), a.max())
assert math.isfinite(q["rmse"]) and 0 < q["rmse"] < a.std(), (q, a.std())
PY

	# Every artefact is registered and exists.
	run --separate-stderr hml --json show
	assert_success
	echo "$output" > show.json
	[ "$(json show.json '[len(d[k]) for k in ("datasets", "models", "deployments", "evaluations")]')" = "[1, 1, 1, 1]" ]
	"$PY" - <<'PY'
import json, os
m = json.load(open("hml-experiment/manifest.json"))
n = 0
for kind in ("datasets", "models", "deployments", "evaluations"):
    for r in m[kind]:
        for rel in r["provenance"].get("sha256", {}):
            assert os.path.isfile(os.path.join("hml-experiment", rel)), rel
            n += 1
assert n >= 5, n
PY
}
