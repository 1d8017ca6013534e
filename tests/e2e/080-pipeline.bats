#!/usr/bin/env bats
# The whole life cycle on the bundled binomial workflow at a small size:
# collect -> train -> deploy -> evaluate, checked through --json, the
# manifest's provenance, and Python loading the trained model.

load helpers

setup() { common_setup; }

@test "collect, train, deploy --best, evaluate: a registered, loadable, accurate surrogate" {
	run --separate-stderr hml --json collect binomial --args '--options 8192 --seed {seed}'
	assert_success
	echo "$output" > collect.json
	[ "$(json collect.json 'd["dataset"]["regions"]["binomial"]["rows"]')" = 8192 ]

	run --separate-stderr hml --json train --epochs 40 --threads 2
	assert_success
	echo "$output" > train.json
	[ "$(json train.json 'd["model"]["id"]')" = m1 ]
	[ "$(json train.json '0 < d["model"]["metrics"]["test_rmse"] < 0.5')" = True ]

	run --separate-stderr hml --json deploy --best
	assert_success
	echo "$output" > deploy.json
	[ "$(json deploy.json 'd["deployment"]["model"]')" = m1 ]

	run --separate-stderr hml --json evaluate --repeat 1
	assert_success
	echo "$output" > eval.json
	# The bound a correct model meets on prices averaging ~2.4.
	[ "$(json eval.json '0 < d["evaluation"]["qoi"]["rmse"] < 0.5')" = True ]
	[ "$(json eval.json 'd["evaluation"]["speedup"]["region"]["mean"] > 5')" = True ]

	# Every artefact is registered, exists, and has the recorded hash.
	run --separate-stderr hml --json show
	assert_success
	echo "$output" > show.json
	[ "$(json show.json '[len(d[k]) for k in ("datasets", "models", "deployments", "evaluations")]')" = "[1, 1, 1, 1]" ]
	"$PY" - <<'PY'
import hashlib, json, os
m = json.load(open("hml-experiment/manifest.json"))
assert m["schema_version"] == 1
n = 0
for kind in ("datasets", "models", "deployments", "evaluations"):
    for r in m[kind]:
        p = r["provenance"]
        for key in ("time", "host", "command", "versions"):
            assert key in p, (kind, key)
        for name in ("hml", "libtorch", "hdf5", "jansson"):
            assert name in p["versions"], (kind, name)
        for rel, digest in p.get("sha256", {}).items():
            data = open(os.path.join("hml-experiment", rel), "rb").read()
            assert hashlib.sha256(data).hexdigest() == digest, rel
            n += 1
assert n >= 5, n   # data, log, model, card, report, QoI files
PY

	# The model is plain TorchScript: Python loads it and it reproduces the
	# collected outputs about as well as the card says.
	"$PY" - <<'PY'
import h5py, json, numpy as np, torch
card = json.load(open("hml-experiment/models/m1.json"))
model = torch.jit.load("hml-experiment/models/m1.pt")
f = h5py.File("hml-experiment/data/d1.h5", "r")
x = torch.from_numpy(f["binomial/input"][:1024].astype(np.float32))
y = f["binomial/output"][:1024]
with torch.no_grad():
    p = model(x).numpy()
assert p.shape == y.shape, (p.shape, y.shape)
rmse = float(np.sqrt(np.mean((p - y) ** 2)))
assert rmse < 3 * card["metrics"]["val_rmse"] + 1e-3, (rmse, card["metrics"])
assert list(model.hml_input_shape) == [5] and list(model.hml_output_shape) == [1]
PY
}
