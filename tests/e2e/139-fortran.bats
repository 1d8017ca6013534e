#!/usr/bin/env bats
# The Fortran heat (workflows/heat-fortran, over the module hml of
# runtime/fortran): its own check, the layout of what it collects (a
# Fortran array as its C view: dims reversed, indices from the lower
# bound), its errors, and the whole life cycle by the same commands as the
# C heat. Skipped only where the build found no Fortran compiler.

load helpers

setup() {
	common_setup
	command -v gfortran >/dev/null || skip "no gfortran"
	grep -q '^HML_WITH_FORTRAN:BOOL=ON' "$HML_BUILD_DIR/CMakeCache.txt" ||
		skip "hml built with -DHML_WITH_FORTRAN=OFF"
	FHEAT="$HML_BUILD_DIR/workflows/heat-fortran/heat"
}

@test "heat-fortran: the accurate run passes its mode-decay check, in every mode that runs it" {
	run timeout 300 "$FHEAT" --init mode --n 24 --steps 40 --k 4
	assert_success
	assert_output --partial "mode off"
	assert_output --partial " pass"
	run timeout 300 "$FHEAT" --init mode --n 24 --steps 40 --k 5
	assert_success
	assert_output --partial " pass"
	run timeout 300 "$FHEAT" --init mode --n 24 --steps 40 --region rows
	assert_success
	assert_output --partial " pass"
	# the baseline build (no hml) computes the same field
	run timeout 300 "$HML_BUILD_DIR/workflows/heat-fortran/heat_baseline" --init mode --n 24 --steps 40
	assert_success
	assert_output --partial "mode baseline"
	assert_output --partial " pass"
}

@test "heat-fortran: collect records u(0:n+1, 0:n+1) as its C view, dataset [j][i] = u(i+1, j+1)" {
	HML_MODE=collect HML_DB=c.h5 HML_QOI=q.h5 run timeout 300 "$FHEAT" --init mode --n 6 --steps 8 --k 4
	assert_success
	assert_output --partial "mode collect"
	assert_output --partial " pass"
	[ "$(h5 c.h5 'f["heat_field/input"].shape')" = "(2, 6, 6)" ]
	[ "$(h5 q.h5 'f["field"].shape')" = "(6, 6)" ]
	"$PY" - <<'PY'
import h5py, numpy as np
n = 6
i = np.arange(1, n + 1)
# the initial field u(i, j) = sin(pi i/(n+1)) sin(2 pi j/(n+1)), not
# symmetric in i and j: row j (the second Fortran index), column i
u0 = np.outer(np.sin(2 * np.pi * i / (n + 1)), np.sin(np.pi * i / (n + 1)))
c = h5py.File("c.h5", "r")["heat_field"]
q = h5py.File("q.h5", "r")
assert np.allclose(c["input"][0], u0, atol=1e-15), (c["input"][0], u0)
assert np.allclose(c["output"][-1], q["field"][:]), "the last call's output is the final field"
assert np.allclose(c["input"][1], c["output"][0]), "in place: call 2 starts where call 1 ended"
assert np.allclose(q["total_heat"][-1], q["field"][:].sum())
PY
}

@test "heat-fortran-rows: each row is a cell's 5-point neighbourhood, read through the C view" {
	HML_MODE=collect HML_DB=r.h5 run timeout 300 "$FHEAT" --init mode --n 5 --steps 2 --region rows
	assert_success
	assert_output --partial " pass"
	[ "$(h5 r.h5 'f["heat_rows/input"].shape')" = "(50, 5)" ]
	"$PY" - <<'PY'
import h5py, numpy as np
n = 5
a = np.arange(n + 2)
# C view of u(0:n+1, 0:n+1): U[b, a] = u(a, b) = sin(pi a/(n+1)) sin(2 pi b/(n+1))
U = np.outer(np.sin(2 * np.pi * a / (n + 1)), np.sin(np.pi * a / (n + 1)))
U[0, :] = U[-1, :] = U[:, 0] = U[:, -1] = 0
r = h5py.File("r.h5", "r")["heat_rows"]
x, y = r["input"][:n * n], r["output"][:n * n, 0]
for i in range(1, n + 1):
    for j in range(1, n + 1):
        row = (i - 1) * n + (j - 1)
        want = [U[i - 1, j], U[i + 1, j], U[i, j - 1], U[i, j], U[i, j + 1]]
        assert np.allclose(x[row], want, atol=1e-15), (i, j, x[row], want)
        step = U[i, j] + 0.2 * (want[0] + want[1] + want[2] + want[4] - 4 * U[i, j])
        assert abs(y[row] - step) < 1e-14, (i, j, y[row], step)
PY
}

@test "heat-fortran: bad arguments and bad settings get one line and their exit status" {
	run timeout 120 "$FHEAT" --n 0
	[ "$status" -eq 2 ]
	assert_output "heat: error: --n needs an integer >= 1, got '0'"
	run timeout 120 "$FHEAT" --steps 10 --k 4
	[ "$status" -eq 2 ]
	assert_output "heat: error: --steps 10 is not a multiple of --k 4"
	run timeout 120 "$FHEAT" --init cold
	[ "$status" -eq 2 ]
	assert_output "heat: error: --init needs 'random' or 'mode', got 'cold'"
	run timeout 120 "$FHEAT" --region cols
	[ "$status" -eq 2 ]
	assert_output "heat: error: --region needs 'field' or 'rows', got 'cols'"
	run timeout 120 "$FHEAT" --bogus
	[ "$status" -eq 2 ]
	assert_output "heat: error: unknown argument '--bogus'"
	# the runtime's refusal reaches the Fortran program as a status and
	# a message: an unknown mode
	HML_MODE=sideways run timeout 120 "$FHEAT"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	assert_output --regexp "^heat: error: .*sideways"
	# a QoI file that is not HDF5 is refused and left as it was
	echo "not hdf5" > q.txt
	HML_QOI=q.txt run timeout 120 "$FHEAT" --quiet
	[ "$status" -eq 1 ]
	assert_output --regexp "^heat: error: "
	[ "$(cat q.txt)" = "not hdf5" ]
	run timeout 120 "$FHEAT" --help
	assert_success
	assert_output --partial "usage: heat"
}

# check_pipeline WORKFLOW REGION: collect, train, deploy (forced: whether
# a model is predicted faster depends on the region and the machine's
# load), evaluate, as tests/e2e/100-heat.bats does for the C heat; the
# final field's RMSE under 0.6 of its RMS (finite, not diverging).
check_pipeline() {
	run --separate-stderr hml --json collect "$1"
	assert_success
	run --separate-stderr hml --json train --threads 1
	assert_success
	echo "$output" > train.json
	[ "$(json train.json 'd["model"]["metrics"]["test_rmse"] < 0.05')" = True ]
	run --separate-stderr hml --json deploy --best --force
	assert_success
	run --separate-stderr hml --json evaluate --repeat 1
	assert_success
	echo "$output" > eval.json
	[ "$(json eval.json 'd["evaluation"]["region"]')" = "$2" ]
	[ "$(json eval.json 'd["evaluation"]["qoi"]["nonfinite"]')" = 0 ]
	[ "$(json eval.json 'd["evaluation"]["surrogate"]["model_calls"] > 0')" = True ]
	run --separate-stderr hml --json show
	assert_success
	echo "$output" > show.json
	[ "$(json show.json 'd["datasets"][0]["workflow"]["name"]')" = "$1" ]
	[ "$(json show.json '[len(d[k]) for k in ("datasets", "models", "deployments", "evaluations")]')" = "[1, 1, 1, 1]" ]
	"$PY" - <<'PY'
import glob, h5py, json, numpy as np
rmse = json.load(open("eval.json"))["evaluation"]["qoi"]["rmse"]
acc = h5py.File(glob.glob("hml-experiment/eval/*-accurate.h5")[0], "r")
rms = float(np.sqrt(np.mean(acc["field"][:] ** 2)))
print("final field rmse %.4g, field rms %.4g" % (rmse, rms))
assert 0 < rmse < 0.6 * rms, (rmse, rms)
PY
}

@test "heat-fortran: field region, CNN: collect, train, deploy, evaluate by the same commands as the C heat" {
	check_pipeline heat-fortran heat_field
}

@test "heat-fortran-rows: 5-point rows, MLP: collect, train, deploy, evaluate" {
	check_pipeline heat-fortran-rows heat_rows
}
