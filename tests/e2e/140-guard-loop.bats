#!/usr/bin/env bats
# The closing loop (issue #28): a long-running application (tests/e2e/
# swap-app.c, region "step") runs on inputs twice as wide as the model
# was trained on, with the model deployed behind a bounds guard; hml
# collect --guarded registers the rows the guard sent to the original
# code (and only those), hml train --from continues the model on old plus
# new rows, hml deploy --guard deploys it, and the running application
# swaps model and guard together: the rows guarded per step drop, and the
# new model's error on the wide inputs is lower than the old one's. Bad
# inputs: --guarded without a guarded deployment; a deployment whose guard
# file is missing (the application keeps its pair, warns once).

load helpers

APP="$HML_BUILD_DIR/tests/swap-app"

setup_file() {
	export EXP0="$BATS_FILE_TMPDIR/exp" WF0="$BATS_FILE_TMPDIR/wf"
	stepper_workflow "$WF0"
	cd "$BATS_FILE_TMPDIR"
	"$HML" -q -C "$EXP0" collect "$WF0" >/dev/null
	"$HML" -q -C "$EXP0" train --seed 1 --threads 2 >/dev/null
}

setup() {
	common_setup
	unset HML_SWAP_INTERVAL HML_DEPLOYMENT HML_COLLECT_GUARDED
	cp -r "$EXP0" "$WORK/exp"
	cd "$WORK"
}

m() { json exp/manifest.json "$1"; }

# rmse_of MODEL-FILE RANGE: the RMSE of one step on that model, unguarded,
# over rows drawn from [-RANGE, RANGE] (seed 99).
rmse_of() {
	env -u HML_MODE_STEP -u HML_MODEL_STEP -u HML_GUARD_STEP -u HML_DEPLOYMENT_STEP \
		HML_MODE=infer HML_MODEL="$1" timeout 120 "$APP" --rows 512 --seed 99 \
		--range "$2" --log one.log >/dev/null 2>&1 && awk '{print $6}' one.log
}

# The application, guarded, per-row fallback, on wide rows, until ./stop.
start_app() {
	rm -f stop steps.log
	HML_SWAP_INTERVAL=20 HML_PROFILE="$WORK/prof.json" timeout 300 \
		"$APP" --rows 512 --seed 99 --range 2 --subset 1 --until stop --log steps.log 2>app.err &
	APP_PID=$!
}

stop_app() {
	touch stop
	wait "$APP_PID"
}

@test "collect --guarded stores only the guarded rows, registered as a data set" {
	eval "$(hml -C exp deploy --force m1 --guard bounds 2>/dev/null)"
	[ -n "$(json exp/deployed/step.json 'd["guard"]')" ]
	run --separate-stderr hml -C exp --json collect --guarded \
		--args '--rows 2048 --seed 5 --range 2 --subset 1'
	assert_success
	echo "$output" >d.json
	[ "$(json d.json 'd["dataset"]["guarded"]["model"]')" = m1 ]
	rows=$(json d.json 'd["dataset"]["regions"]["step"]["rows"]')
	# in-range rows (both |a| and |b| within the training range) are not stored
	[ "$rows" -gt 0 ] && [ "$rows" -lt 2048 ]
	"$PY" - exp/"$(json d.json 'd["dataset"]["files"]["data"]')" "$rows" <<-'EOF'
	import sys, h5py
	f = h5py.File(sys.argv[1], "r")
	x = f["step/input"][:]
	assert len(x) == int(sys.argv[2])
	# every stored row lies outside the training range (about [-1, 1]) in some feature
	assert (abs(x).max(axis=1) > 0.99).all()
	y = f["step/output"][:].reshape(-1)
	import numpy as np
	assert np.allclose(y, np.sin(3 * x[:, 0]) + x[:, 1] ** 2, atol=1e-12)
	EOF
}

@test "collect --guarded without a guarded deployment: one line, exit 3, nothing registered" {
	hml -C exp deploy --force m1 >/dev/null 2>&1
	run --separate-stderr hml -C exp collect --guarded
	assert_failure 3
	[ "$stderr" = "hml: error: collect: --guarded needs a region of workflow 'stepper' deployed with a guard (hml deploy MODEL --guard bounds)" ]
	[ "$(m 'len(d["datasets"])')" = 1 ]
}

@test "the loop: guarded collection, train --from, deploy --guard; the running application swaps model and guard" {
	eval "$(hml -C exp deploy --force m1 --guard bounds 2>/dev/null)"
	start_app
	wait_steps 5
	hml -q -C exp collect --guarded --args '--rows 2048 --seed 5 --range 2 --subset 1' >/dev/null
	hml -q -C exp train --from m1 --threads 2 >/dev/null
	[ "$(m 'd["models"][-1]["id"]')" = m2 ]
	run --separate-stderr hml -C exp deploy --force m2 --guard bounds
	assert_success
	while ! grep -q "now running model 'm2'" app.err; do
		kill -0 "$APP_PID" 2>/dev/null || false
		sleep 0.05
	done
	n=$(steps)
	wait_steps $((n + 5))
	stop_app
	! grep -q warning app.err
	switch=$(json prof.json 'd["regions"][0]["swaps"][0]["call"]')
	# rows guarded per step: before the swap, after it
	read -r before after <<<"$(awk -v s="$switch" '{ if ($2 < s) { b += $8; nb++ } else if ($2 > s) { a += $8; na++ } }
		END { printf "%g %g\n", b / nb, a / na }' steps.log)"
	echo "guarded per step: before $before after $after" >&3
	awk -v b="$before" -v a="$after" 'BEGIN { exit !(b > 0 && a < b) }'
	# the guarded rows were the original code's: every step's error is small
	in1=$(rmse_of "$PWD/exp/models/m1.pt" 1)
	ood1=$(rmse_of "$PWD/exp/models/m1.pt" 2)
	ood2=$(rmse_of "$PWD/exp/models/m2.pt" 2)
	echo "rmse in-distribution m1 $in1, out of distribution m1 $ood1, m2 $ood2" >&3
	awk -v o1="$ood1" -v o2="$ood2" 'BEGIN { exit !(o2 < o1) }'
}

@test "a deployment whose guard file is missing is refused: the application keeps its pair, warns once" {
	eval "$(hml -C exp deploy --force m1 --guard bounds 2>/dev/null)"
	start_app
	wait_steps 3
	"$PY" - exp/deployed/step.json <<-'EOF'
	import json, sys
	d = json.load(open(sys.argv[1]))
	d["deployment"] = "p9"
	d["model"] = "m1x"
	d["path"] = d["path"].replace("m1.pt", "m1x.pt")
	d["guard"] = d["guard"] + ".missing"
	json.dump(d, open(sys.argv[1] + ".new", "w"))
	EOF
	cp exp/models/m1.pt exp/models/m1x.pt
	mv exp/deployed/step.json.new exp/deployed/step.json
	n=$(steps)
	wait_steps $((n + 10))
	stop_app
	[ "$(grep -c 'new deployment refused' app.err)" = 1 ]
	grep -q "keeping model 'm1': model 'm1x' (deployment p9): .*missing" app.err
	[ "$(json prof.json 'd["regions"][0]["swaps_refused"]')" = 1 ]
	[ "$(json prof.json 'len(d["regions"][0]["swaps"])')" = 0 ]
	# still guarded after: the old guard stayed
	tail -n 1 steps.log | awk '{ exit !($8 > 0) }'
}

@test "binomial_api --rounds prices the same options again, a line per round; bad values exit 2" {
	API="$HML_BUILD_DIR/workflows/binomial/binomial_api"
	run --separate-stderr env HML_MODE=off "$API" --options 64 --rounds 3 --quiet
	assert_success
	[ "${#lines[@]}" -eq 3 ]
	[ "${lines[2]}" = "binomial: round 2 rmse 0 guarded 0" ]
	for bad in 0 -1 x; do
		run --separate-stderr "$API" --rounds "$bad"
		[ "$status" -eq 2 ]
		[[ "$stderr" == *"--rounds"* ]]
	done
	run --separate-stderr "$API" --until
	[ "$status" -eq 2 ]
	[ "$stderr" = "binomial: error: --until needs a file name" ]
	run --separate-stderr "$HML_BUILD_DIR/workflows/binomial/binomial" --rounds 2
	[ "$status" -eq 2 ]
	[ "$stderr" = "binomial: error: --rounds and --until are binomial_api's" ]
	# a bad HML_COLLECT_GUARDED: one line at open
	run --separate-stderr env HML_MODE=infer HML_MODEL="$PWD/exp/models/m1.pt" \
		HML_COLLECT_GUARDED=yes timeout 60 "$APP" --rows 16
	assert_failure 1
	[ "$stderr" = "swap-app: invalid HML_COLLECT_GUARDED 'yes': expected an integer from 0 to 1 (1: store the guarded rows in HML_DB)" ]
}
