#!/usr/bin/env bats
# The whole pipeline through directives: programs annotated only with
# HPAC-ML's #pragma approx (or only with #pragma hml ... over(i)) built
# with hml cc, described by a workflow.json, collected, trained, deployed
# (TorchScript and --target c) and run in infer mode, with the runtime's
# profile showing that the model ran; and a 2-D stencil with a halo whose
# collected rows are the cells the stencil reads.

load helpers

setup() { common_setup; }

# workflow DIR LABEL QOI ARGS...: DIR/workflow.json for the program DIR/app,
# whose one region LABEL is an MLP, collected and evaluated with ARGS.
workflow() {
	"$PY" - "$@" <<'PY'
import json, sys
d, label, qoi = sys.argv[1:4]
args = sys.argv[4:]
json.dump({"schema_version": 1, "name": label, "program": "app",
           "collect": {"args": args + ["{seed}"], "runs": 1, "seed": 1},
           "evaluate": {"args": args + ["7"], "repeat": 1},
           "regions": [{"label": label, "batch": int(args[0]),
                        "model": {"family": "mlp", "arch": "mlp:32x32:tanh",
                                  "train": {"epochs": 60, "batch": 64, "lr": 0.005}}}],
           "qoi": {"dataset": qoi, "metric": "rmse"}},
          open(d + "/workflow.json", "w"))
PY
}

# close A B TOL: |A - B| <= TOL |B|
close() {
	"$PY" -c 'import sys; a, b, t = map(float, sys.argv[1:]); sys.exit(0 if abs(a - b) <= t * abs(b) else 1)' "$@" ||
		{ echo "$1 is not within $3 of $2"; return 1; }
}

@test "HPAC-ML directives only: hml cc, collect, train, deploy (TorchScript and C), inference through hml" {
	mkdir app
	cp "$HML_SOURCE_DIR/tests/directive/hpac-toy.c" app/toy.c
	run hml cc gcc -O2 -Wall -Wextra -Werror -o app/app app/toy.c
	assert_success
	! grep -q 'hml_' app/toy.c
	workflow app toy sum 2000
	run app/app 2000
	assert_success
	exact=${output#sum }

	run --separate-stderr hml -C exp --json collect app/workflow.json
	assert_success
	echo "$output" > collect.json
	[ "$(json collect.json 'd["dataset"]["regions"]["toy"]["rows"]')" = 2000 ]
	run --separate-stderr hml -C exp --json train --threads 2 --seed 1
	assert_success
	echo "$output" > train.json
	[ "$(json train.json 'd["model"]["id"]')" = m1 ]

	# TorchScript, as hml deploy exports it (--force: a toy region is cheaper
	# than any model): the directive's ml(infer) runs it
	run --separate-stderr hml -C exp deploy --force m1
	assert_success
	eval "$output"
	HML_PROFILE="$WORK/p.json" run app/app 2000
	assert_success
	[ "$(json p.json 'd["regions"][0]["label"]')" = toy ]
	[ "$(json p.json 'd["regions"][0]["model_calls"]')" = 1 ]
	[ "$(json p.json 'd["regions"][0]["fallback_calls"]')" = 0 ]
	close "${output#sum }" "$exact" 0.03
	unset HML_MODE_TOY HML_MODEL_TOY

	# compiled to C, named by HPAC-ML's own variable SURROGATE_MODEL
	run --separate-stderr hml -C exp --json deploy --force --target c m1
	assert_success
	echo "$output" > c.json
	so=$(json c.json 'd["deployment"]["env"]["HML_MODEL_TOY"]')
	[[ "$so" == *.so ]]
	SURROGATE_MODEL="$so" HML_PROFILE="$WORK/c.prof" LD_DEBUG=files run app/app 2000
	assert_success
	[ "$(json c.prof 'd["regions"][0]["model_calls"]')" = 1 ]
	[ "$(json c.prof 'd["regions"][0]["fallback_calls"]')" = 0 ]
	close "$(echo "$output" | grep '^sum ' | cut -d' ' -f2)" "$exact" 0.03
	[[ "$output" != *libtorch* ]]

	# without any model the directive's ml(infer) runs the original code
	HML_PROFILE="$WORK/none.json" run app/app 2000
	assert_output "sum $exact"
}

@test "#pragma hml ml over(i) and qoi only: collect, train, deploy, hml evaluate infers and compares the QoI" {
	mkdir app
	cp "$HML_SOURCE_DIR/tests/directive/hml-pipeline.c" app/opt.c
	run hml cc gcc -O2 -Wall -Wextra -Werror -o app/app app/opt.c
	assert_success
	workflow app opt price 3000

	run --separate-stderr hml -C exp collect app/workflow.json
	assert_success
	[ "$(h5 exp/data/d1.h5 'f["opt"]["input"].shape')" = "(3000, 3)" ]
	run --separate-stderr hml -C exp train --threads 2 --seed 1
	assert_success

	for target in torchscript c; do
		run --separate-stderr hml -C exp deploy --force --target "$target" m1
		assert_success
		run --separate-stderr hml -C exp --json evaluate
		assert_success
		echo "$output" > "ev-$target.json"
		[ "$(json "ev-$target.json" 'd["evaluation"]["target"]')" = "$target" ]
		[ "$(json "ev-$target.json" 'd["evaluation"]["surrogate"]["model_calls"] > 0')" = True ]
		[ "$(json "ev-$target.json" 'd["evaluation"]["surrogate"]["fallback_calls"]')" = 0 ]
		[ "$(json "ev-$target.json" 'd["evaluation"]["qoi"]["values"]')" = 3000 ]
		# prices in [-0.25, 2): a trained surrogate is within a few hundredths
		[ "$(json "ev-$target.json" '0 < d["evaluation"]["qoi"]["rmse"] < 0.05')" = True ]
	done
}

@test "a 2-D stencil with a halo: rows hold the cells read, for arrays, VLAs and declared shapes" {
	cp "$HML_SOURCE_DIR/tests/directive/stencil.c" stencil.c
	run hml cc gcc -O2 -Wall -Wextra -Werror -o stencil stencil.c
	assert_success
	HML_DB="$WORK/s.h5" run ./stencil
	assert_success
	"$PY" - <<'PY'
import h5py, numpy as np
f = h5py.File("s.h5", "r")
n = 6
u = np.array([[1000.0 * i + j for j in range(n + 2)] for i in range(n + 2)])
want = np.array([[u[i - 1, j], u[i + 1, j], u[i, j - 1], u[i, j], u[i, j + 1]]
                 for i in range(1, n + 1) for j in range(1, n + 1)])
for g in ("array", "vla", "flat"):
    x, y = f[g]["input"][:], f[g]["output"][:]
    assert x.shape == (n * n, 5) and y.shape == (n * n, 1), (g, x.shape, y.shape)
    assert (x == want).all(), (g, x[:3], want[:3])
    assert (y == 0).all(), g
PY
	# the same slices on a pointer without a declared shape: an error naming it
	sed -i '/hml declare shape(u/d' stencil.c
	run --separate-stderr hml cc gcc -c stencil.c
	[ "$status" -eq 3 ]
	[[ "$stderr" == "hml: error: stencil.c:34:"*"the row length of this array is not known"*"'u'" ]]
}
