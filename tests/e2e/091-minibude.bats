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

@test "minibude: --translation widens the poses' translations; bad values exit 2 with one line" {
	api="$HML_BUILD_DIR/workflows/minibude/minibude_api"
	for prog in "$HML_BUILD_DIR/workflows/minibude/minibude" "$api"; do
		for bad in 0 -3 x 1001 '' 7.5; do
			run --separate-stderr timeout 60 "$prog" --translation "$bad"
			[ "$status" -eq 2 ]
			[ "${#stderr_lines[@]}" -eq 1 ]
			[ "$stderr" = "minibude: error: --translation needs an integer in [1, 1000] (angstrom), got '$bad'" ]
		done
	done
	run --separate-stderr minibude --translation
	[ "$status" -eq 2 ]
	[ "$stderr" = "minibude: error: --translation needs an integer in [1, 1000] (angstrom), got ''" ]
	# The poses as collected: the default 7 draws what every earlier run
	# drew (the same poses as no argument), 14 translations up to 14.
	local small='--poses 512 --protein 64 --batch 256 --seed 5 --quiet'
	for t in none 7 14; do
		a=$([ "$t" = none ] && echo "" || echo "--translation $t")
		HML_MODE=collect HML_DB="p$t.h5" minibude $small $a
		HML_MODE=collect HML_DB="q$t.h5" "$api" $small $a
	done
	[ "$(h5 pnone.h5 'bool((f["minibude/input"][:] == h5py.File("p7.h5")["minibude/input"][:]).all())')" = True ]
	[ "$(h5 p14.h5 'bool((f["minibude/input"][:] == h5py.File("q14.h5")["minibude/input"][:]).all())')" = True ]
	[ "$(h5 p7.h5 'float(np.abs(f["minibude/input"][:, 3:6]).max())')" = 7.0 ]
	[ "$(h5 p14.h5 'float(np.abs(f["minibude/input"][:, 3:6]).max())')" = 14.0 ]
	[ "$(h5 p14.h5 'bool(np.all(f["minibude/input"][:, 3:6] == np.round(f["minibude/input"][:, 3:6])))')" = True ]
}

@test "minibude-api: a guard sends the poses past the trained translations to the physics, exactly" {
	local small='--poses 2048 --protein 64 --batch 256'
	api="$HML_BUILD_DIR/workflows/minibude/minibude_api"
	run --separate-stderr hml -q --json collect minibude-api --args "$small --seed {seed}"
	assert_success
	run --separate-stderr hml -q --json train --arch mlp:32x32:relu --epochs 5 --threads 2
	assert_success
	run --separate-stderr hml --json deploy m1 --guard bounds
	assert_success
	g=$(ls "$PWD"/hml-experiment/models/m1.guard-bounds-margin-0.json)
	HML_MODE=collect HML_DB=poses.h5 HML_QOI=acc.h5 "$api" $small --seed 9 --translation 14 --quiet
	HML_MODE_MINIBUDE=infer HML_MODEL_MINIBUDE="$PWD/hml-experiment/models/m1.pt" HML_GUARD_MINIBUDE="$g" \
		HML_ON_ERROR=fail HML_PROFILE=prof.json HML_QOI=sur.h5 "$api" $small --seed 9 --translation 14 --quiet
	# the poses past {-7..7} in some translation are exactly the guarded ones,
	# and their energies are the physics' bit for bit
	run h5 poses.h5 "int(np.sum(np.abs(f['minibude/input'][:, 3:6]).max(axis=1) > 7))"
	out=$output
	[ "$(json prof.json 'd["regions"][0]["guarded_rows"]')" = "$out" ]
	[ "$out" -gt 1000 ]
	run h5 acc.h5 "int(np.sum((f['energy'][:] == h5py.File('sur.h5')['energy'][:]) & (np.abs(h5py.File('poses.h5')['minibude/input'][:, 3:6]).max(axis=1) > 7)))"
	[ "$output" = "$out" ]
	[ "$(json prof.json 'd["regions"][0]["guard_whole_calls"]')" = 0 ]
	# hml evaluate --args takes the argument to both runs
	run --separate-stderr hml --json evaluate --repeat 1 --args "$small --seed 9 --translation 14"
	assert_success
	echo "$output" > ood.json
	[ "$(json ood.json 'd["evaluation"]["guard"]["guarded_rows"]')" = "$out" ]
}

@test "minibude: energies equal the simple double-precision evaluation" {
	run minibude --poses 96 --batch 32 --protein 300 --ligand 20 --seed 3 --check
	assert_success
	assert_output --partial "check passed: 0 of 32 poses"
	# A different deck is a different problem: the energies change.
	run minibude --poses 8 --protein 300 --ligand 20 --seed 3 --deck 2 --check
	assert_success
}

@test "minibude: --seed draws the poses only: a pose has one energy under every seed" {
	# With translations in {-1..1} there are 36^3 * 27 poses: two runs of
	# 8192 share some ~50. The ligand is the deck's (--deck), so a pose
	# both runs drew has the same energy in both (it once came from
	# --seed, and every seed docked another molecule).
	local small='--poses 8192 --protein 64 --batch 256 --translation 1 --quiet'
	HML_MODE=collect HML_DB=s1.h5 minibude $small --seed 1
	HML_MODE=collect HML_DB=s2.h5 minibude $small --seed 2
	run "$PY" - <<'PY'
import h5py, numpy as np
a, b = (h5py.File(f, "r")["minibude"] for f in ("s1.h5", "s2.h5"))
ea = {tuple(x): e for x, e in zip(a["input"][:].tolist(), a["output"][:, 0].tolist())}
shared = [(ea[tuple(x)], e) for x, e in zip(b["input"][:].tolist(), b["output"][:, 0].tolist()) if tuple(x) in ea]
assert len(shared) >= 10, len(shared)
assert all(u == v for u, v in shared), shared[:5]
assert len({u for u, _ in shared}) > 1
print(len(shared))
PY
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
