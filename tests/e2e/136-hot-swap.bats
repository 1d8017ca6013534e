#!/usr/bin/env bats
# Hot swap (issue #28, part 3): hml deploy writes the region's deployment
# file and prints HML_DEPLOYMENT_<LABEL>; an application started with that
# environment (tests/e2e/swap-app.c: one batch call a step, 10 ms apart,
# until told to stop) keeps running while a second model is deployed, and
# its later calls use it: every step's outputs come from one model, the
# first model's before the swap and the second's after; the swap (model
# ids, call number) is in the profile. A corrupt deployment is refused:
# the application keeps its model, warns once, counts it. A bad
# HML_SWAP_INTERVAL is refused at open with one line.

load swap-helpers

setup_file() {
	swap_setup_file
}

@test "deploy writes the region's deployment file and prints HML_DEPLOYMENT_<LABEL>" {
	run --separate-stderr hml -C exp deploy --force m1
	assert_success
	assert_line "export HML_DEPLOYMENT_STEP='$(cd exp && pwd)/deployed/step.json'"
	[ "$(json exp/deployed/step.json 'd["model"]')" = m1 ]
	[ "$(json exp/deployed/step.json 'd["deployment"]')" = p1 ]
	[ "$(json exp/deployed/step.json 'd["region"]')" = step ]
	[ "$(json exp/deployed/step.json 'd["path"]')" = "$(cd exp && pwd)/models/m1.pt" ]
	run --separate-stderr hml -C exp --json deploy --force m2
	assert_success
	echo "$output" >out.json
	[ "$(json out.json 'd["deployment"]["env"]["HML_DEPLOYMENT_STEP"]')" = "$(cd exp && pwd)/deployed/step.json" ]
	[ "$(json exp/deployed/step.json 'd["model"]')" = m2 ]
	[ "$(json exp/deployed/step.json 'd["deployment"]')" = p2 ]
}

@test "a running application switches to a newly deployed model at its next calls, and the profile records it" {
	a=$(mean_of "$PWD/exp/models/m1.pt")
	b=$(mean_of "$PWD/exp/models/m2.pt")
	[ -n "$a" ] && [ -n "$b" ] && [ "$a" != "$b" ]
	eval "$(hml -C exp deploy --force m1 2>/dev/null)"
	start_app
	wait_steps 5
	run --separate-stderr hml -C exp deploy --force m2
	assert_success
	wait_mean "$b"
	n=$(steps)
	wait_steps $((n + 5))
	stop_app
	switch=$(only_means "$a" "$b")
	[ "$switch" -ge 5 ]
	grep -q "now running model 'm2' (deployment p2)" app.err
	! grep -q warning app.err
	[ "$(json prof.json 'len(d["regions"][0]["swaps"])')" = 1 ]
	[ "$(json prof.json 'd["regions"][0]["swaps"][0]["from"]')" = m1 ]
	[ "$(json prof.json 'd["regions"][0]["swaps"][0]["to"]')" = m2 ]
	# the call number: the steps completed on m1
	[ "$(json prof.json 'd["regions"][0]["swaps"][0]["call"]')" = "$switch" ]
	[ "$(json prof.json 'd["regions"][0]["swaps_refused"]')" = 0 ]
	[ "$(json prof.json 'd["regions"][0]["model_calls"]')" = "$(steps)" ]
}

@test "a swap to the compiled form of a model: the application runs on the .so after" {
	a=$(mean_of "$PWD/exp/models/m1.pt")
	eval "$(hml -C exp deploy --force m1 2>/dev/null)"
	start_app
	wait_steps 3
	run --separate-stderr hml -C exp deploy --force --target c m2
	assert_success
	cid=$(json exp/deployed/step.json 'd["model"]')
	[ "$cid" != m2 ] && [ "$cid" != m1 ]
	so=$(json exp/deployed/step.json 'd["path"]')
	b=$(mean_of "$so")
	[ -n "$b" ] && [ "$a" != "$b" ]
	wait_mean "$b"
	stop_app
	switch=$(only_means "$a" "$b")
	[ "$switch" -ge 3 ]
	[ "$(json prof.json 'd["regions"][0]["swaps"][0]["from"]')" = m1 ]
	[ "$(json prof.json 'd["regions"][0]["swaps"][0]["to"]')" = "$cid" ]
}

@test "a corrupt or missing deployment is refused: the application keeps its model, warns once" {
	a=$(mean_of "$PWD/exp/models/m1.pt")
	eval "$(hml -C exp deploy --force m1 2>/dev/null)"
	start_app
	wait_steps 3
	# written whole (a rename, as hml deploy does): a reader must not see
	# the file empty while the shell writes it, and refuse it twice
	echo '{"schema_version": 1, "regi' >corrupt.json
	mv corrupt.json exp/deployed/step.json
	# 10 steps of 10 ms at least: the 20 ms interval has passed, the file was read
	n=$(steps)
	wait_steps $((n + 10))
	rm exp/deployed/step.json
	n=$(steps)
	wait_steps $((n + 10))
	stop_app
	only_means "$a" 1e300 >/dev/null
	[ "$(grep -c 'new deployment refused' app.err)" = 2 ]
	grep -q "keeping model 'm1': cannot read deployment file" app.err
	grep -q "deployment file '.*step.json' is missing" app.err
	[ "$(json prof.json 'd["regions"][0]["swaps_refused"]')" = 2 ]
	[ "$(json prof.json 'len(d["regions"][0]["swaps"])')" = 0 ]
}

@test "a bad HML_SWAP_INTERVAL is refused at open with one line" {
	eval "$(hml -C exp deploy --force m1 2>/dev/null)"
	HML_SWAP_INTERVAL=0 run timeout 60 "$APP" --rows 16
	assert_failure 1
	assert_output "swap-app: invalid HML_SWAP_INTERVAL '0': expected an integer from 1 to 86400000 milliseconds"
}
