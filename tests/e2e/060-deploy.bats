#!/usr/bin/env bats
# hml deploy: choosing a model by id, as the most accurate, or as the
# fastest within an error bound; the printed environment runs the region
# as inference; bad choices fail without touching the manifest.

load helpers

# One experiment for the file: a small collection and two models of
# different quality (m1 trained longer than m2).
setup_file() {
	export EXP0="$BATS_FILE_TMPDIR/exp"
	cd "$BATS_FILE_TMPDIR"
	"$HML" -q -C "$EXP0" collect binomial --args '--options 8192 --seed {seed}' >/dev/null
	"$HML" -q -C "$EXP0" train --epochs 30 --seed 1 --threads 2 >/dev/null
	"$HML" -q -C "$EXP0" train --epochs 2 --seed 2 --threads 2 --arch mlp:16:tanh >/dev/null
}

setup() {
	common_setup
	cp -r "$EXP0" "$WORK/exp"
	cd "$WORK"
}

m() { json exp/manifest.json "$1"; }

# m2 (5-16-1) is the faster model, and the --max-qoi-error tests rely on
# both models being on the front. Measured latencies can invert on a loaded
# machine (a CI run beside other jobs did), so the manifest's figures, what
# the choice reads, are set to say so plainly; the models' files are
# untouched.
m2_faster() {
	"$PY" - <<'PY'
import json
m = json.load(open("exp/manifest.json"))
for r, k in zip(m["models"], (10.0, 1.0)):
    r["latency"]["torchscript"] = 2e-7 * k
    r["latency"]["c"] = 1e-7 * k
json.dump(m, open("exp/manifest.json", "w"))
PY
}

@test "deploy MODEL records the deployment and prints the environment" {
	run --separate-stderr hml -C exp deploy m2
	assert_success
	assert_line "export HML_MODE_BINOMIAL='infer'"
	assert_line "export HML_MODEL_BINOMIAL='$(cd exp && pwd)/models/m2.pt'"
	[ "$(m 'len(d["deployments"])')" = 1 ]
	[ "$(m 'd["deployments"][0]["id"]')" = p1 ]
	[ "$(m 'd["deployments"][0]["model"]')" = m2 ]
	[ "$(m 'd["deployments"][0]["selection"]')" = id ]
	[ "$(m '"time" in d["deployments"][0]["provenance"]')" = True ]
	# The printed lines are what a shell needs to run the application with it.
	eval "$output"
	run binomial --options 8192 --seed 3
	assert_success
	assert_output --partial "mode infer"
}

@test "--best deploys the model with the lowest validation RMSE; --json gives the record" {
	want=$(m 'min(d["models"], key=lambda r: r["metrics"]["val_rmse"])["id"]')
	run --separate-stderr hml -C exp --json deploy --best
	assert_success
	echo "$output" > out.json
	[ "$(json out.json 'd["schema_version"]')" = 1 ]
	[ "$(json out.json 'd["deployment"]["model"]')" = "$want" ]
	[ "$(json out.json 'd["deployment"]["selection"]')" = best ]
	[ "$(json out.json 'd["deployment"]["env"]["HML_MODE_BINOMIAL"]')" = infer ]
	[ "$(json out.json 'd["deployment"] == json.load(open("exp/manifest.json"))["deployments"][-1]')" = True ]
}

@test "--max-error picks the fastest model within the bound" {
	run --separate-stderr hml -C exp --json deploy --max-error 1e9
	assert_success
	echo "$output" > out.json
	want=$(m 'min(d["models"], key=lambda r: r["latency"]["torchscript"])["id"]')
	[ "$(json out.json 'd["deployment"]["model"]')" = "$want" ]
	[ "$(json out.json 'd["deployment"]["max_error"]')" = 1000000000.0 ]
	[ "$(json out.json 'd["deployment"]["target"]')" = torchscript ]
	[ "$(m 'min(r["latency"]["torchscript"] for r in d["models"])')" = \
	  "$(json out.json 'd["deployment"]["latency_seconds_per_sample"]')" ]
}

@test "every model card records its latency per target" {
	for i in 0 1; do
		[ "$(m "d['models'][$i]['latency']['torchscript'] > 0")" = True ]
		[ "$(m "d['models'][$i]['latency']['c'] > 0")" = True ]
		[ "$(m "d['models'][$i]['latency']['batch']")" = 4096 ]
		[ "$(m "'cores' in d['models'][$i]['latency']['machine']")" = True ]
		[ "$(m "json.load(open('exp/models/m$((i + 1)).json'))['latency'] == d['models'][$i]['latency']")" = True ]
	done
	run --separate-stderr hml -C exp show m1
	assert_success
	assert_line --regexp '^latency per sample at batch 4096: torchscript [0-9.e+-]+ us, c [0-9.e+-]+ us \(.*cores\)$'
	assert_line --regexp '^start-up added to an application: torchscript [0-9.e+-]+ s, c [0-9.e+-]+ s$'
	assert_line --regexp '^latency.c: [0-9.e+-]+$'
}

@test "--max-latency picks the most accurate model within the bound" {
	# A bound every model meets: the most accurate; the fastest model's own
	# latency: the most accurate among those at least as fast.
	run --separate-stderr hml -C exp --json deploy --max-latency 1
	assert_success
	echo "$output" > out.json
	[ "$(json out.json 'd["deployment"]["model"]')" = "$(m 'min(d["models"], key=lambda r: r["metrics"]["val_rmse"])["id"]')" ]
	[ "$(json out.json 'd["deployment"]["selection"]')" = max-latency ]
	[ "$(json out.json 'd["deployment"]["max_latency"]')" = 1.0 ]
	l=$(m 'repr(min(r["latency"]["torchscript"] for r in d["models"]))')
	run --separate-stderr hml -C exp --json deploy --max-latency "$l"
	assert_success
	echo "$output" > out.json
	want=$(m "min((r for r in d['models'] if r['latency']['torchscript'] <= $l), key=lambda r: r['metrics']['val_rmse'])['id']")
	[ "$(json out.json 'd["deployment"]["model"]')" = "$want" ]
	# both bounds
	run --separate-stderr hml -C exp --json deploy --max-latency 1 --max-error 1e9
	assert_success
	echo "$output" > out.json
	[ "$(json out.json 'd["deployment"]["selection"]')" = max-error,max-latency ]
}

@test "--target auto deploys the faster form per application run: of a named model, of the pairs within a bound" {
	# The cards record each form's start-up (hml-probe): libtorch's is
	# hundreds of milliseconds, a compiled model's a few.
	[ "$(m 'all(r["latency"]["startup"]["torchscript"] > 10 * r["latency"]["startup"]["c"] for r in d["models"])')" = True ]
	run --separate-stderr hml -C exp --json deploy --target auto m2
	assert_success
	echo "$output" > out.json
	[ "$(json out.json 'd["deployment"]["target"]')" = c ]
	[ "$(json out.json 'd["deployment"]["target_requested"]')" = auto ]
	[ "$(json out.json 'd["deployment"]["env"]["HML_MODEL_BINOMIAL"].endswith(".so")')" = True ]
	[[ "$stderr" == *"per run of 8192 rows"*"s start-up)"* ]]
	# the fastest (model, target) pair within the bound: start-up + rows x latency
	run --separate-stderr hml -C exp --json deploy --target auto --max-error 1e9
	assert_success
	echo "$output" > out.json
	"$PY" - <<'PY'
import json
d = json.load(open("exp/manifest.json"))
rows = 8192   # the one data set: 8192 options in one run
# a form's start-up: the least any card records for it
up = {t: min(r["latency"]["startup"][t] for r in d["models"]) for t in ("torchscript", "c")}
pairs = [(up[t] + rows * r["latency"][t], r["id"], t)
         for r in d["models"] for t in ("torchscript", "c")]
cost, mid, t = min(pairs)
dep = json.load(open("out.json"))["deployment"]
assert (dep["model"], dep["target"]) == (mid, t), (dep, pairs)
PY
	# runs of another size: --rows-per-run (1e12 rows: per-sample latency decides)
	run --separate-stderr hml -C exp --json deploy --target auto --rows-per-run 1e12 m2
	assert_success
	echo "$output" > out.json
	want=$(m 'min(("torchscript", "c"), key=lambda t: min(r["latency"]["startup"][t] for r in d["models"]) + 1e12 * d["models"][1]["latency"][t])')
	[ "$(json out.json 'd["deployment"]["target"]')" = "$want" ]
	[[ "$stderr" == *"per run of 1000000000000 rows"* ]]
	run hml -C exp deploy --target auto --rows-per-run 0 m2
	[ "$status" -eq 2 ]
	assert_output --partial "option '--rows-per-run' must be more than 0, not 0"
}

@test "no model within --max-latency: exit 3 naming the fastest; bad bounds are usage errors" {
	cp exp/manifest.json before.json
	run hml -C exp deploy --max-latency 1e-15
	[ "$status" -eq 3 ]
	assert_output --regexp "^hml: error: no model runs within 1e-15 s per sample \(the fastest is .* s, model 'm[12]' as torchscript\)$"
	run hml -C exp deploy --max-latency 1e-15 --max-error 1e-12 --target auto
	[ "$status" -eq 3 ]
	assert_output --regexp "the lowest RMSE is .*, model 'm[12]'; the fastest is .* s, model 'm[12]' as (c|torchscript)\)$"
	for bad in "--max-error 0" "--max-error -1" "--max-latency 0" "--max-latency -2e-7" \
	           "--max-latency inf" "--max-error 1e999"; do
		run hml -C exp deploy $bad
		[ "$status" -eq 2 ]
		assert_output --regexp "(must be more than 0, not |needs a number, not )"
	done
	run hml -C exp deploy --target fast m1
	[ "$status" -eq 2 ]
	assert_output --partial "unknown --target 'fast' (torchscript, c or auto)"
	cmp before.json exp/manifest.json
}

@test "no model within --max-error: exit 3, nothing recorded" {
	cp exp/manifest.json before.json
	run hml -C exp deploy --max-error 1e-12
	[ "$status" -eq 3 ]
	assert_output --regexp "^hml: error: no model has a validation RMSE within 1e-12 \(the lowest is .*, model 'm[12]'\)$"
	cmp before.json exp/manifest.json
}

@test "none or several choices are usage errors" {
	run hml -C exp deploy
	[ "$status" -eq 2 ]
	assert_output --partial "give exactly one of MODEL, --best and --max-error E / --max-qoi-error E / --max-latency L"
	run hml -C exp deploy m1 --best
	[ "$status" -eq 2 ]
	run hml -C exp deploy --max-error -1
	[ "$status" -eq 2 ]
	run hml -C exp deploy m1 --max-qoi-error 0.1
	[ "$status" -eq 2 ]
	run hml -C exp deploy --max-error 0.1 --max-qoi-error 0.1
	[ "$status" -eq 2 ]
	assert_output "hml: error: deploy: give one of --max-error (validation error) and --max-qoi-error (the application's output)"
	for bad in 0 -1 inf nan; do
		run hml -C exp deploy --max-qoi-error $bad
		[ "$status" -eq 2 ]
		assert_output --regexp "('--max-qoi-error' must be more than 0, not |needs a number, not )"
	done
}

@test "--max-qoi-error checks the front on a run of the application and deploys the fastest within" {
	m2_faster
	run --separate-stderr hml -C exp --json deploy --max-qoi-error 1e9
	assert_success
	echo "$output" > out.json
	# m1 (the most accurate) is checked first, then the bisection reaches m2
	# (the fastest), within any bound; the run's seed is the first after the
	# collected one (1) and its arguments are collect's.
	[ "$(json out.json 'd["deployment"]["model"]')" = m2 ]
	[ "$(json out.json 'd["deployment"]["selection"]')" = max-qoi-error ]
	[ "$(json out.json 'd["deployment"]["max_qoi_error"]')" = 1000000000.0 ]
	[ "$(json out.json '[c["model"] for c in d["deployment"]["qoi_check"]["checks"]]')" = "['m1', 'm2']" ]
	[ "$(json out.json 'all(c["within"] and c["error"] > 0 for c in d["deployment"]["qoi_check"]["checks"])')" = True ]
	[ "$(json out.json 'd["deployment"]["qoi_check"]["error"] == d["deployment"]["qoi_check"]["checks"][1]["error"]')" = True ]
	[ "$(json out.json 'd["deployment"]["qoi_check"]["seed"]')" = 2 ]
	[ "$(json out.json 'd["deployment"]["qoi_check"]["argv"][1:]')" = "['--options', '16384', '--seed', '2']" ]
	[ "$(json out.json '(d["deployment"]["qoi_check"]["dataset"], d["deployment"]["qoi_check"]["metric"], d["deployment"]["qoi_check"]["front"])')" = "('price', 'rmse', 2)" ]
	[[ "$stderr" == *"QoI check 2: model 'm2': price rmse "*"(within 1e+09)"* ]]
	[[ "$stderr" == *"model 'm2' gives price rmse "*"on the check run (seed 2; 2 of the front's 2 models checked)"* ]]
	[ -z "$(ls -A exp/eval)" ]
	# The recorded error is the one a run by hand gives.
	prog="$HML_BUILD_DIR/workflows/binomial/binomial"
	HML_MODE=off HML_QOI="$WORK/a.h5" "$prog" --options 16384 --seed 2 >/dev/null
	HML_MODE=off HML_MODE_BINOMIAL=infer HML_MODEL_BINOMIAL="$WORK/exp/models/m2.pt" \
		HML_QOI="$WORK/s.h5" "$prog" --options 16384 --seed 2 >/dev/null
	"$PY" - <<'PY'
import h5py, json, numpy as np
a = h5py.File("a.h5", "r")["price"][...].astype(np.float64).ravel()
s = h5py.File("s.h5", "r")["price"][...].astype(np.float64).ravel()
want = float(np.sqrt(np.mean((s - a) ** 2)))
got = json.load(open("out.json"))["deployment"]["qoi_check"]["error"]
assert abs(got - want) <= 1e-9 * max(want, 1e-30), (got, want)
PY
	# A bound between the two models' errors: m1.
	bound=$(json out.json '(d["deployment"]["qoi_check"]["checks"][0]["error"] + d["deployment"]["qoi_check"]["checks"][1]["error"]) / 2')
	run --separate-stderr hml -C exp --json deploy --max-qoi-error "$bound" --target auto
	assert_success
	echo "$output" > out.json
	[ "$(json out.json 'd["deployment"]["model"]')" = m1 ]
	[ "$(json out.json '[c["within"] for c in d["deployment"]["qoi_check"]["checks"]]')" = "[True, False]" ]
	[ "$(json out.json 'd["deployment"]["target_requested"]')" = auto ]
	run hml -C exp show
	assert_output --regexp "p2 +m1 +max-qoi-error [0-9.e+-]+ +yes"
}

@test "an interrupted --max-qoi-error exits 130 and records nothing" {
	cp exp/manifest.json before.json
	interrupt_when_running "$HML" -q -C exp deploy --max-qoi-error 1e9
	[ "$status" -eq 130 ]
	cmp before.json exp/manifest.json
	[ -z "$(ls -A exp/eval)" ]
}

@test "--max-qoi-error: nothing within, a model whose run fails" {
	m2_faster
	cp exp/manifest.json before.json
	run hml -C exp deploy --max-qoi-error 1e-12
	assert_failure 3
	assert_output --regexp "hml: error: no model's price rmse is within 1e-12: the most accurate candidate, 'm1', gives [0-9.e+-]+ on a run with seed 2$"
	cmp before.json exp/manifest.json
	[ -z "$(ls -A exp/eval)" ]
	# Candidates of two regions (m2's record now names another): which
	# application output would bound them? --region says.
	cp exp/manifest.json good.json
	"$PY" - <<'PY'
import json
m = json.load(open("exp/manifest.json"))
m["models"][1]["region"] = "other"
json.dump(m, open("exp/manifest.json", "w"))
PY
	cp exp/manifest.json before.json
	run hml -C exp deploy --max-qoi-error 1e9
	assert_failure 3
	assert_output "hml: error: --max-qoi-error: the candidates replace more than one region ('binomial' of 'binomial', 'other' of 'binomial'); choose one with --region"
	cmp before.json exp/manifest.json
	cp good.json exp/manifest.json
	# m1's file replaced by a model with NaN outputs (its hash updated):
	# its run fails under HML_ON_ERROR=fail; it is never chosen.
	cp "$MODELS/nonfinite.pt" exp/models/m1.pt
	"$PY" - <<'PY'
import hashlib, json
m = json.load(open("exp/manifest.json"))
m["models"][0]["provenance"]["sha256"]["models/m1.pt"] = hashlib.sha256(open("exp/models/m1.pt", "rb").read()).hexdigest()
json.dump(m, open("exp/manifest.json", "w"))
PY
	cp exp/manifest.json before.json
	run hml -C exp deploy --max-qoi-error 1e9
	[ "$status" -eq 3 ]
	assert_output --partial "hml: warning: QoI check of model 'm1': surrogate run of"
	assert_output --partial "the most accurate candidate, 'm1', gives no value on a run with seed 2"
	cmp before.json exp/manifest.json
	[ -z "$(ls -A exp/eval)" ]
}

@test "unknown model, missing experiment: exit 3" {
	run hml -C exp deploy m9
	[ "$status" -eq 3 ]
	assert_output "hml: error: no model 'm9' in experiment 'exp'"
	run hml -C nowhere deploy --best
	[ "$status" -eq 3 ]
	assert_output --partial "no experiment at 'nowhere'"
	[ ! -e nowhere ]
}

@test "a model file changed since training is refused" {
	cp exp/manifest.json before.json
	printf 'x' >> exp/models/m1.pt
	run hml -C exp deploy m1
	[ "$status" -eq 3 ]
	assert_output --partial "models/m1.pt' changed since it was registered (SHA-256 differs)"
	cmp before.json exp/manifest.json
}

@test "a model whose rows do not match its region's data is refused" {
	# The newest data set of the workflow now has 4 input features.
	"$PY" - <<'PY'
import json
p = "exp/manifest.json"
d = json.load(open(p))
d["datasets"][-1]["regions"]["binomial"]["input_shape"] = [4]
json.dump(d, open(p, "w"), indent=2)
PY
	cp exp/manifest.json before.json
	run hml -C exp deploy m1
	[ "$status" -eq 3 ]
	assert_output "hml: error: model 'm1' has input rows [5] but region 'binomial' of data set 'd1' has [4]"
	cmp before.json exp/manifest.json
}

@test "--search restricts the choice to the front of a search" {
	# A search whose front holds m2 only (the record as hml search writes it).
	"$PY" - <<'PY'
import json
p = "exp/manifest.json"
d = json.load(open(p))
d.setdefault("searches", []).append({"id": "s1", "front": [{"trial": 4, "config": 2, "model": "m2"}],
                                     "files": {}, "provenance": {}})
json.dump(d, open(p, "w"), indent=2)
PY
	run --separate-stderr hml -C exp --json deploy --best --search s1
	assert_success
	echo "$output" > out.json
	[ "$(json out.json 'd["deployment"]["model"]')" = m2 ]
	[ "$(json out.json 'd["deployment"]["search"]')" = s1 ]
	run --separate-stderr hml -C exp --json deploy --max-error 1e9 --target auto --search s1
	assert_success
	echo "$output" > out.json
	[ "$(json out.json 'd["deployment"]["model"]')" = m2 ]
	cp exp/manifest.json before.json
	run hml -C exp deploy --best --search s9
	[ "$status" -eq 3 ]
	assert_output "hml: error: no search 's9' in experiment 'exp'"
	run hml -C exp deploy m1 --search s1
	[ "$status" -eq 2 ]
	assert_output --partial "--search chooses among a search's models"
	cmp before.json exp/manifest.json
}
