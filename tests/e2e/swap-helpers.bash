# Shared set-up of the hot-swap tests (136-hot-swap, 157-swap-run): the
# application tests/e2e/swap-app.c (one batch call a step, 10 ms apart,
# until told to stop) of the stepper workflow, started in the background,
# its steps counted and its outputs read back.

load helpers

APP="$HML_BUILD_DIR/tests/swap-app"

# swap_setup_file [PYTHON]: the stepper workflow (helpers.bash; its dict
# `d` changed by the PYTHON statements), one data set and two models, m1
# and m2 (mlp:8:relu, 2 epochs), made once per file and copied per test.
swap_setup_file() {
	export EXP0="$BATS_FILE_TMPDIR/exp" WF0="$BATS_FILE_TMPDIR/wf"
	stepper_workflow "$WF0"
	"$PY" - "$WF0/workflow.json" "${1:-pass}" <<-'EOF'
	import json, sys
	d = json.load(open(sys.argv[1]))
	exec(sys.argv[2])
	json.dump(d, open(sys.argv[1], "w"))
	EOF
	cd "$BATS_FILE_TMPDIR"
	"$HML" -q -C "$EXP0" collect "$WF0" >/dev/null
	"$HML" -q -C "$EXP0" train --seed 1 --threads 2 >/dev/null
	"$HML" -q -C "$EXP0" train --seed 2 --threads 2 --arch mlp:8:relu --epochs 2 >/dev/null
}

setup() {
	common_setup
	unset HML_SWAP_INTERVAL HML_DEPLOYMENT
	cp -r "$EXP0" "$WORK/exp"
	cd "$WORK"
}

# mean_of MODEL-FILE: the mean output of one step of the application on
# that model (the rows are the same in every run), watching no deployment.
mean_of() {
	env -u HML_MODE_STEP -u HML_MODEL_STEP -u HML_DEPLOYMENT_STEP -u HML_INTERLEAVE_STEP \
		HML_MODE=infer HML_MODEL="$1" timeout 120 "$APP" --rows 256 --log one.log \
		>/dev/null 2>&1 && awk '{print $4}' one.log
}

# start_app: the application in the background, stepping until ./stop
# exists, its steps in steps.log, its profile in prof.json.
start_app() {
	rm -f stop steps.log
	HML_SWAP_INTERVAL=20 HML_PROFILE="$WORK/prof.json" timeout 300 \
		"$APP" --rows 256 --until stop --log steps.log 2>app.err &
	APP_PID=$!
}

# wait_mean M: until the latest step's mean is M.
wait_mean() {
	while ! tail -n 1 steps.log | awk -v m="$1" '{ d = $4 - m; exit !(d < 1e-6 && d > -1e-6) }'; do
		kill -0 "$APP_PID" 2>/dev/null || return 1
		sleep 0.05
	done
}

# wait_said TEXT: until the application's stderr has TEXT.
wait_said() {
	while ! grep -qF "$1" app.err; do
		kill -0 "$APP_PID" 2>/dev/null || return 1
		sleep 0.05
	done
}

stop_app() {
	touch stop
	wait "$APP_PID"
}

# only_means A B: every logged step's mean is A or B (within 1e-6), A first.
only_means() {
	"$PY" - "$1" "$2" <<-'EOF'
	import sys
	a, b = float(sys.argv[1]), float(sys.argv[2])
	ms = [float(l.split()[3]) for l in open("steps.log")]
	near = lambda x, y: abs(x - y) <= 1e-6 * max(1.0, abs(y))
	kinds = ["a" if near(m, a) else "b" if near(m, b) else "?" for m in ms]
	assert "?" not in kinds, kinds
	switch = kinds.index("b") if "b" in kinds else len(kinds)
	assert all(k == "a" for k in kinds[:switch]) and all(k == "b" for k in kinds[switch:]), kinds
	print(switch)
	EOF
}
