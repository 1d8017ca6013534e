#!/usr/bin/env bats
# Hot swap of an iterative application's models (hml-runtime(3) "Hot
# swap"): the deployment file records the deployment's k and the runtime's
# interleave (lib/core/deployfile.h). The interleave is the runtime's own
# decision: a swap to a deployment at another interleave adopts it, as
# does a redeployment of the model in use. k is the application's
# argument: a swap to a model trained at another k is refused with one
# line, the application keeps its model. hml deploy says which of the two
# a running application will do. tests/e2e/swap-app.c steps one batch
# call every 10 ms until told to stop; its workflow declares k and an
# interleave range like heat's, and the models' cards are edited as an
# iterative search registers them (training is not the point).

load swap-helpers

setup_file() {
	swap_setup_file 'd["search_args"] = {"k": {"arg": "--k", "values": [4, 8]}, "interleave": {"range": [0, 3]}}'
}

# set_run MODEL K N: MODEL's card says k K, interleave N.
set_run() {
	"$PY" - "$1" "$2" "$3" <<-'EOF'
	import json, sys
	p = "exp/manifest.json"
	d = json.load(open(p))
	m = next(m for m in d["models"] if m["id"] == sys.argv[1])
	m["iterative"] = {"k": int(sys.argv[2]), "interleave": int(sys.argv[3]), "qoi_error": None}
	json.dump(d, open(p, "w"))
	EOF
}

# originals_after C: the calls from C to the last the runtime sends to the
# original code at interleave 2 (calls counted from 0: c % 3 == 2).
originals_after() {
	"$PY" -c 'import sys; c, n = int(sys.argv[1]), int(sys.argv[2]); print(sum(1 for i in range(c, n) if i % 3 == 2))' "$1" "$(steps)"
}

@test "swap: a deployment at another interleave is adopted with its model; the file records k and interleave" {
	set_run m1 4 0
	set_run m2 4 2
	eval "$(hml -C exp deploy --force m1 2>/dev/null)"
	[ "$HML_MODE_STEP" = infer ]
	[ "$(json exp/deployed/step.json 'd["k"], d["interleave"]')" = "(4, 0)" ]
	start_app
	wait_steps 5
	run --separate-stderr hml -C exp deploy --force m2
	assert_success
	[[ "$stderr" == *"model 'm2' runs at interleave 2, the region's previous deployment 'p1' at 0: an application running with that one swaps to this model at interleave 2"* ]]
	[ "$(json exp/deployed/step.json 'd["k"], d["interleave"]')" = "(4, 2)" ]
	wait_said "now at interleave 2 (deployment p2): 2 model calls, then the original code for one"
	n=$(steps)
	wait_steps $((n + 9))
	stop_app
	grep -q "now running model 'm2' (deployment p2)" app.err
	! grep -q warning app.err
	c=$(json prof.json 'd["regions"][0]["swaps"][0]["call"]')
	[ "$(json prof.json 'd["regions"][0]["swaps"][0]["to"]')" = m2 ]
	# every call on m1 the model's; from the swap on, each third the original code's
	[ "$(json prof.json 'd["regions"][0]["original_calls"]')" = "$(originals_after "$c")" ]
	[ "$(json prof.json 'd["regions"][0]["original_calls"] + d["regions"][0]["model_calls"]')" = "$(steps)" ]
	[ "$(json prof.json 'd["regions"][0]["original_calls"]')" -ge 3 ]
}

@test "swap: the model in use redeployed at another interleave: the running application adopts it" {
	set_run m1 4 2
	eval "$(hml -C exp deploy --force m1 2>/dev/null)"
	[ "$HML_MODE_STEP" = interleave ] && [ "$HML_INTERLEAVE_STEP" = 2 ]
	start_app
	wait_steps 5
	set_run m1 4 0
	run --separate-stderr hml -C exp deploy --force m1
	assert_success
	[ "$(json exp/deployed/step.json 'd["interleave"]')" = 0 ]
	wait_said "now at interleave 0 (deployment p2): the model on every call (infer)"
	n=$(steps)
	wait_steps $((n + 6))
	stop_app
	! grep -q warning app.err
	[ "$(json prof.json 'len(d["regions"][0]["swaps"])')" = 0 ]
	# the original code's calls all came before: fewer than a third of them
	o=$(json prof.json 'd["regions"][0]["original_calls"]')
	[ "$o" -ge 1 ] && [ $((3 * o)) -lt "$(steps)" ]
}

@test "swap: a model trained at another k is refused with one line; the application keeps its model" {
	set_run m1 4 0
	set_run m2 8 0
	a=$(mean_of "$PWD/exp/models/m1.pt")
	b=$(mean_of "$PWD/exp/models/m2.pt")
	[ -n "$a" ] && [ -n "$b" ] && [ "$a" != "$b" ]
	eval "$(hml -C exp deploy --force m1 2>/dev/null)"
	start_app
	wait_steps 5
	run --separate-stderr hml -C exp deploy --force m2
	assert_success
	[[ "$stderr" == *"model 'm2' runs at k 8, interleave 0, the region's previous deployment 'p1' at k 4, interleave 0: an application running at that one's k refuses to swap to this model (k is its argument) and keeps its own; start it again with '--k 8' and the environment printed"* ]]
	wait_said "new deployment refused"
	n=$(steps)
	wait_steps $((n + 5))
	stop_app
	[ "$(grep -c 'new deployment refused' app.err)" = 1 ]
	grep -q "region 'step': new deployment refused, keeping model 'm1': model 'm2' (deployment p2) was trained at k 8, and this run's region calls advance k 4, the application's argument, which a swap cannot change: start the application again with the arguments hml deploy printed" app.err
	# every step ran on m1: none switched to m2
	[ "$(only_means "$a" "$b")" = "$(steps)" ]
	[ "$(json prof.json 'd["regions"][0]["swaps_refused"]')" = 1 ]
	[ "$(json prof.json 'len(d["regions"][0]["swaps"])')" = 0 ]
}
