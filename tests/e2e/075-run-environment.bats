#!/usr/bin/env bats
# The application's environment is built from scratch for every run
# (lib/run/childenv.h): collect and evaluate give the records of a clean shell
# when the shell has eval-ed `hml deploy` (HML_MODE_<LABEL>=infer, ...) and
# when the workflow's env sets the variables hml controls, global or per
# region. Before, evaluate's "accurate" runs inferred too and it recorded
# an RMSE of 0.

load helpers

ARGS=(--args '--options 4096 --seed {seed}')
EARGS=(--repeat 1 --keep-runs --args '--options 4096 --seed 42')

# A copy of the binomial workflow whose env sets what hml controls.
make_workflow() {
	mkdir -p "$1"
	"$PY" - "$HML_BUILD_DIR/workflows/binomial/workflow.json" "$1/workflow.json" "$BINOMIAL" "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["program"] = sys.argv[3]
d["env"] = {
    "HML_MODE_BINOMIAL": "infer", "HML_MODEL_BINOMIAL": sys.argv[4] + "/none.pt",
    "HML_MODE": "shadow", "HML_MODEL": sys.argv[4] + "/none.pt",
    "HML_DB_BINOMIAL": sys.argv[4] + "/elsewhere.h5", "HML_QOI": sys.argv[4] + "/q.h5",
    "HML_PROFILE_BINOMIAL": "1", "HML_ON_ERROR": "fallback", "OMP_PROC_BIND": "false",
}
json.dump(d, open(sys.argv[2], "w"), indent=2)
PY
}

setup_file() {
	cd "$BATS_FILE_TMPDIR"
	export CLEAN="$BATS_FILE_TMPDIR/clean" WFEXP="$BATS_FILE_TMPDIR/wfexp"
	export WF="$BATS_FILE_TMPDIR/wf"
	make_workflow "$WF"
	"$HML" -q -C "$CLEAN" collect binomial "${ARGS[@]}" >/dev/null
	"$HML" -q -C "$CLEAN" train --epochs 20 --threads 2 >/dev/null
	"$HML" -q -C "$WFEXP" collect "$WF/workflow.json" "${ARGS[@]}" 2>/dev/null >/dev/null
	"$HML" -q -C "$WFEXP" train --epochs 20 --threads 2 >/dev/null
}

setup() {
	common_setup
	cp -r "$CLEAN" "$WORK/exp"
}

# same_data A B: the collected region data of two HDF5 files is identical.
same_data() {
	"$PY" - "$1" "$2" <<'PY'
import sys, h5py, numpy as np
a, b = (h5py.File(p, "r")["binomial"] for p in sys.argv[1:3])
assert a["input"].shape == b["input"].shape == (4096, 5), (a["input"].shape, b["input"].shape)
assert np.array_equal(a["input"][:], b["input"][:])
assert np.array_equal(a["output"][:], b["output"][:])
PY
}

# model_calls PROFILE: the region's model calls in a run's profile.
model_calls() { json "$1" '[r["model_calls"] for r in d["regions"] if r["label"] == "binomial"][0]'; }

@test "collect after eval \"\$(hml deploy)\" collects what a clean shell collects" {
	eval "$(hml -C exp deploy m1)"
	[ -n "$HML_MODE_BINOMIAL" ] && [ -n "$HML_MODEL_BINOMIAL" ]
	export HML_MODE=infer HML_MODEL="$HML_MODEL_BINOMIAL" HML_DB="$WORK/elsewhere.h5" \
	       HML_QOI="$WORK/q.h5" HML_PROFILE="$WORK/p.json" HML_SOME_FUTURE_SETTING=1
	run --separate-stderr hml -C exp --json collect binomial "${ARGS[@]}"
	assert_success
	echo "$output" > out.json
	[ "$(json out.json 'd["dataset"]["id"]')" = d2 ]
	[ "$(json out.json 'd["dataset"]["complete"]')" = True ]
	same_data exp/data/d1.h5 exp/data/d2.h5
	[ ! -e elsewhere.h5 ] && [ ! -e q.h5 ] && [ ! -e p.json ]
}

@test "collect ignores, with a warning, the workflow env's settings of mode, model, db, qoi, profile" {
	run --separate-stderr hml -C wexp --json collect "$WF/workflow.json" "${ARGS[@]}"
	assert_success
	echo "$output" > out.json
	[ "$(json out.json 'd["dataset"]["regions"]["binomial"]["rows"]')" = 4096 ]
	same_data exp/data/d1.h5 wexp/data/d1.h5
	[[ "$stderr" == *"workflow 'binomial' sets HML_MODE_BINOMIAL in its env; hml sets it for each run, so it is ignored"* ]]
	[[ "$stderr" == *"sets HML_DB_BINOMIAL"* ]]
	[[ "$stderr" != *"OMP_PROC_BIND"* ]]
	[ ! -e "$WF/elsewhere.h5" ] && [ ! -e "$WF/q.h5" ]
}

@test "evaluate after eval \"\$(hml deploy)\" records what a clean shell records" {
	hml -q -C exp deploy m1 >/dev/null
	run --separate-stderr hml -C exp --json evaluate "${EARGS[@]}"
	assert_success
	echo "$output" > clean.json

	eval "$(hml -C exp deploy m1)"
	export HML_MODE=infer HML_MODEL="$HML_MODEL_BINOMIAL" HML_ON_ERROR=fallback \
	       HML_QOI="$WORK/q.h5" HML_PROFILE=1
	run --separate-stderr hml -C exp --json evaluate "${EARGS[@]}"
	assert_success
	echo "$output" > shell.json
	e='d["evaluation"]'
	[ "$(json shell.json "$e['id']")" = e2 ]
	# The accurate runs ran the original code: a real error, no model call.
	[ "$(json shell.json "$e['qoi']['rmse'] > 0")" = True ]
	for run in a0 a1; do
		[ "$(model_calls "exp/eval/e2-runs/$run.json")" = 0 ]
		[ "$(model_calls "exp/eval/e1-runs/$run.json")" = 0 ]
	done
	[ "$(model_calls exp/eval/e2-runs/s1.json)" = 1 ]
	# The same numbers as in the clean shell (the runs are deterministic).
	for k in rmse max_abs values; do
		[ "$(json shell.json "$e['qoi']['$k']")" = "$(json clean.json "$e['qoi']['$k']")" ]
	done
	for k in model_calls fallback_calls original_calls; do
		[ "$(json shell.json "$e['surrogate']['$k']")" = "$(json clean.json "$e['surrogate']['$k']")" ]
	done
	[ "$(h5 exp/eval/e1-accurate.h5 "np.array_equal(f['price'][:], h5py.File('exp/eval/e2-accurate.h5')['price'][:])")" = True ]
	[ ! -e q.h5 ]
}

@test "evaluate times runs that record no QoI; the warm-up pair records the QoI it compares" {
	hml -q -C exp deploy m1 >/dev/null
	run --separate-stderr hml -C exp --json evaluate --repeat 2 --keep-runs --args '--options 4096 --seed 42'
	assert_success
	echo "$output" > out.json
	# Only the untimed warm-up pair (a0, s0) wrote HML_QOI, and its files
	# became the record's; every run has a profile.
	[ -s exp/eval/e1-accurate.h5 ]
	[ -s exp/eval/e1-surrogate.h5 ]
	[ -z "$(ls exp/eval/e1-runs/*.h5 2>/dev/null)" ]
	for run in a0 s0 a1 s1 a2 s2; do
		[ -s "exp/eval/e1-runs/$run.json" ]
	done
	[ "$(json out.json 'len(d["evaluation"]["surrogate"]["wall_seconds"])')" = 2 ]
	[ "$(json out.json 'd["evaluation"]["qoi"]["values"]')" = 4096 ]
	[ "$(h5 exp/eval/e1-surrogate.h5 "f['price'].shape == (4096,)")" = True ]
}

@test "evaluate ignores the workflow env's per-region mode and model" {
	cp -r "$WFEXP" wexp
	run --separate-stderr hml -C wexp --json evaluate m1 "${EARGS[@]}"
	assert_success
	echo "$output" > out.json
	e='d["evaluation"]'
	[ "$(json out.json "$e['qoi']['rmse'] > 0")" = True ]
	[ "$(model_calls wexp/eval/e1-runs/a1.json)" = 0 ]
	[ "$(json out.json "$e['surrogate']['model_calls']")" = 1 ]
	[ "$(json out.json "$e['surrogate']['fallback_calls']")" = 0 ]
	# The accurate QoI is the clean workflow's.
	hml -q -C exp evaluate m1 "${EARGS[@]}" >/dev/null
	[ "$(h5 wexp/eval/e1-accurate.h5 "np.array_equal(f['price'][:], h5py.File('exp/eval/e1-accurate.h5')['price'][:])")" = True ]
	[[ "$stderr" == *"sets HML_MODE_BINOMIAL in its env"* ]]
	[ ! -e "$WF/q.h5" ] && [ ! -e "$WF/elsewhere.h5" ]
}
