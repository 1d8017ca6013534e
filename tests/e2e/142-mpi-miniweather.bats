#!/usr/bin/env bats
# miniWeather in its MPI form (workflows/miniweather-mpi: the domain split
# in x over 3 ranks, halos exchanged with MPI_Sendrecv) through the whole
# pipeline under `mpirun -n 3`: collect (each rank its file, the data set
# one HDF5 virtual data set of the 3 ranks' rows), train at test size,
# deploy (TorchScript, then compiled to C), evaluate under the launcher
# (the QoI over all ranks). Skipped where mpirun or the MPI build is absent.

load helpers
bats_require_minimum_version 1.5.0

setup() {
	common_setup
	command -v mpirun >/dev/null || skip "mpirun is not installed"
	MWMPI="$HML_BUILD_DIR/workflows/miniweather-mpi/miniweather_mpi"
	[ -x "$MWMPI" ] || skip "built without MPI (HML_WITH_MPI=OFF)"
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
	       OMPI_MCA_rmaps_base_oversubscribe=1 OMP_NUM_THREADS=1
}

# mw_workflow DIR: the shipped workflow at test size (48 x 16 cells, 16
# columns per rank, 4 region calls of 10 steps; 2 collect runs).
mw_workflow() {
	mkdir -p "$1"
	"$PY" - "$HML_SOURCE_DIR/workflows/miniweather-mpi/workflow.json" "$1/workflow.json" "$MWMPI" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
d["program"] = sys.argv[3]
size = ["--nx", "48", "--nz", "16", "--steps", "40", "--k", "10"]
d["collect"]["args"] = size + ["--seed", "{seed}"]
d["collect"]["runs"] = 2
d["evaluate"]["args"] = size + ["--seed", "0"]
d["regions"][0]["model"]["train"]["epochs"] = 5
json.dump(d, open(sys.argv[2], "w"), indent=2)
PYEOF
}

@test "the MPI form conserves mass over the domain and matches the serial program" {
	args="--nx 48 --nz 16 --steps 40 --k 10 --seed 3"
	run timeout 300 mpirun -n 3 "$MWMPI" $args
	assert_success
	assert_output --regexp "check mass: relative drift [-0-9.e+]+ \(bound 1e-12\) pass"
	mpi_energy=$(echo "$output" | grep -o 'total energy [0-9.e+]*')
	run timeout 300 "$HML_BUILD_DIR/workflows/miniweather/miniweather_api" $args
	assert_success
	[ "$mpi_energy" = "$(echo "$output" | grep -o 'total energy [0-9.e+]*')" ]
	# --nx not a multiple of the ranks: one line, exit 2.
	run timeout 300 mpirun -n 3 "$MWMPI" --nx 50
	[ "$status" -ne 0 ]
	[ "$(echo "$output" | grep -c 'miniweather: error: --nx 50 is not a multiple of the 3 ranks')" = 1 ]
	# Started without a launcher (Open MPI's singleton: PMIX_RANK=0, no
	# size), the program is one process: it collects into HML_DB itself.
	HML_MODE=collect HML_DB="$PWD/one.h5" run timeout 300 "$MWMPI" --nx 48 --nz 16 --steps 20 --k 10
	assert_success
	[ -f one.h5 ] && [ ! -e one.r0000.h5 ]
}

@test "3 ranks: collect, train, deploy, evaluate under the launcher; the QoI over all ranks" {
	mw_workflow wf
	run --separate-stderr hml -C exp --json collect wf/workflow.json
	assert_success
	echo "$output" > collect.json
	# 2 runs x 4 calls x 3 ranks, one sample (a rank's state) per call.
	[ "$(json collect.json 'd["dataset"]["regions"]["miniweather"]["rows"]')" = 24 ]
	[ "$(json exp/manifest.json 'd["datasets"][0]["mpi"]["collected"]')" = "[0, 1, 2]" ]
	# One data set: virtual data sets over the 3 ranks' files, each rank's
	# rows in it.
	"$PY" - <<'PY'
import h5py, numpy as np
v = h5py.File("exp/data/d1.h5", "r")
x, y = v["miniweather/input"], v["miniweather/output"]
assert x.is_virtual and y.is_virtual
assert x.shape == (24, 4, 20, 20) and y.shape == x.shape, (x.shape, y.shape)
srcs = sorted({s.file_name for s in x.virtual_sources()})
assert srcs == ["d1.r0000.h5", "d1.r0001.h5", "d1.r0002.h5"], srcs
at = 0
for k in range(3):
    r = h5py.File("exp/data/d1.r%04d.h5" % k, "r")["miniweather/input"][:]
    assert r.shape[0] == 8, r.shape
    assert np.array_equal(x[at:at + 8], r)
    at += 8
PY
	run --separate-stderr hml -C exp --json train --threads 1
	assert_success
	# At test size the CNN is no faster than 10 steps: --force (as 110 does).
	run --separate-stderr hml -C exp --json deploy --best --force
	assert_success
	run --separate-stderr hml -C exp --json evaluate --repeat 1
	assert_success
	echo "$output" > eval.json
	[ "$(json eval.json 'd["evaluation"]["mpi"]["ranks"]')" = 3 ]
	[ "$(json eval.json 'd["evaluation"]["target"]')" = torchscript ]
	# The state of every rank (4 x 16 x 16 each) and every rank's share of
	# the mass after the warm-up and each of its 4 calls.
	[ "$(json eval.json '[(q["dataset"], q["values"]) for q in d["evaluation"]["qois"]]')" = "[('state', 3072), ('mass', 15)]" ]
	[ "$(json eval.json 'd["evaluation"]["qoi"]["nonfinite"]')" = 0 ]
	[ "$(json eval.json 'd["evaluation"]["qoi"]["rmse"] > 0')" = True ]
	[ "$(json eval.json 'd["evaluation"]["surrogate"]["model_calls"]')" = 12 ]
	[ "$(json eval.json 'd["evaluation"]["surrogate"]["original_calls"]')" = 0 ]
	# Each rank's part of the state, compared on its own: the ranks' RMSEs
	# make up the RMSE over all ranks (equal parts).
	"$PY" -c 'import json, math; e = json.load(open("eval.json"))["evaluation"]; by = e["mpi"]["qoi_by_rank"]; assert [(r["rank"], r["values"]) for r in by] == [(0, 1024), (1, 1024), (2, 1024)], by; t = math.sqrt(sum(r["error"] ** 2 for r in by) / 3); assert abs(t - e["qoi"]["rmse"]) <= 1e-9 * e["qoi"]["rmse"], (t, e["qoi"]["rmse"])'
	# The compiled form, evaluated as deployed, under the launcher too.
	run --separate-stderr hml -C exp --json deploy --target c --force m1
	assert_success
	run --separate-stderr hml -C exp evaluate --repeat 1
	assert_success
	[[ "$output" == *"3 MPI ranks (QoI over all ranks)"* ]]
	[[ "$output" =~ "by rank:  "+"0: "[0-9.e+-]+" 1: "[0-9.e+-]+" 2: "[0-9.e+-]+"  [rmse of 'state']" ]]
	# Its record, as the report eval/e2.json holds it.
	"$PY" -c 'import json; json.dump({"evaluation": json.load(open("exp/eval/e2.json"))}, open("evalc.json", "w"))'
	[ "$(json evalc.json 'd["evaluation"]["target"]')" = c ]
	[ "$(json evalc.json 'd["evaluation"]["qois"][0]["values"]')" = 3072 ]
	[ "$(json evalc.json 'd["evaluation"]["surrogate"]["model_calls"]')" = 12 ]
	# The two forms of one model agree on the QoI error (float rounding apart).
	"$PY" -c 'import json; t, c = (json.load(open(f))["evaluation"]["qoi"]["rmse"] for f in ("eval.json", "evalc.json")); print(t, c); assert abs(t - c) <= 1e-3 * t, (t, c)' 
	# deploy --max-qoi-error checks the model under the launcher too: its
	# QoI over the 3 ranks' files (3072 state values), no file left behind.
	run --separate-stderr hml -C exp --json deploy --max-qoi-error 1e300 --force
	assert_success
	echo "$output" > qoic.json
	[ "$(json qoic.json 'd["deployment"]["qoi_check"]["argv"][0].endswith("mpirun")')" = True ]
	[ "$(json qoic.json 'd["deployment"]["qoi_check"]["checks"][0]["qois"][0]["values"]')" = 3072 ]
	[ -z "$(find exp -name '.tmp-*')" ]
}

@test "a guard that sends one rank to the original code: every rank runs it (hml_region_set_agree), no deadlock" {
	# Rank 0 alone guards every row (a bounds guard of [0, 0] over the
	# rank's 4 x 20 x 20 state); ranks 1 and 2 have no guard and the
	# identity model. Without the agreement rank 0 would wait in its halo
	# exchange for ranks that took the model's answer.
	"$PY" - <<'PYEOF'
import json
F = 4 * 20 * 20
stats = {"features": F, "rows": 1, "min": [0.0] * F, "max": [0.0] * F, "mean": None,
         "whiten": None, "calibration_rows": 0, "quantiles": None, "component_quantiles": None}
json.dump({"schema_version": 2, "spec": "bounds:margin=0", "kind": "bounds", "margin": 0,
           "fa": 0.01, "threshold": 0, "component_thresholds": None, "stats": stats},
          open("box.json", "w"))
PYEOF
	args="--nx 48 --nz 16 --steps 40 --k 10 --seed 3"
	run timeout 300 mpirun -n 3 "$MWMPI" $args
	assert_success
	accurate=$(echo "$output" | grep -o 'total energy [0-9.e+]*')
	HML_MODE=infer HML_MODEL_MINIWEATHER="$HML_TEST_MODELS/identity.pt" \
		HML_PROFILE="$PWD/p.json" run timeout 300 mpirun -n 1 \
		env HML_GUARD_MINIWEATHER="$PWD/box.json" "$MWMPI" $args : -n 2 "$MWMPI" $args
	assert_success
	# Every call of every rank ran the original code: the accurate energy.
	[ "$(echo "$output" | grep -o 'total energy [0-9.e+]*')" = "$accurate" ]
	for r in 0 1 2; do
		"$PY" - "p.r000$r.json" "$r" <<'PYEOF'
import json, sys
g = json.load(open(sys.argv[1]))["regions"][0]
rank = int(sys.argv[2])
assert g["calls"] == 4 and g["original_calls"] == 4 and g["model_calls"] == 0, g
# rank 0: its guard sent every call back; 1 and 2: the agreement did.
want = (0, 4) if rank == 0 else (4, 0)
assert (g["agreed_calls"], g["guard_whole_calls"]) == want, g
PYEOF
	done
}
