#!/usr/bin/env bats
# Several quantities of interest in one workflow ("qoi" as an array): hml
# evaluate compares and records every data set, the primary first; a
# data set's max_error is reported passed or failed, and hml deploy
# --max-qoi-error refuses a model over it; a bad array is refused at load.

load helpers

# qoi_workflow DIR: binomial wrapped so that a run recording its QoI also
# records "mean_price" (the mean of "price", one value), unless DIR/drop
# exists and the run is a surrogate's; its workflow names both, "price" first.
qoi_workflow() {
	mkdir -p "$1"
	cat > "$1/wrap" <<EOF2
#!/bin/sh
"$BINOMIAL" "\$@" || exit \$?
[ -n "\$HML_QOI" ] || exit 0
[ -n "\$HML_MODEL_BINOMIAL" ] && [ -f "$(cd "$1" && pwd)/drop" ] && exit 0
exec "$PY" -c 'import sys, h5py; f = h5py.File(sys.argv[1], "a"); f["mean_price"] = [f["price"][:].mean()]' "\$HML_QOI"
EOF2
	chmod +x "$1/wrap"
	wrap_workflow "$1"
	set_qoi "$1" '[{"dataset": "price"}, {"dataset": "mean_price", "metric": "rmse"}]'
}

# set_qoi DIR JSON: DIR/workflow.json's "qoi" replaced.
set_qoi() {
	"$PY" -c 'import json, sys; p = sys.argv[1] + "/workflow.json"; d = json.load(open(p)); d["qoi"] = json.loads(sys.argv[2]); json.dump(d, open(p, "w"))' "$1" "$2"
}

setup_file() {
	export EXP0="$BATS_FILE_TMPDIR/exp" WF0="$BATS_FILE_TMPDIR/wf"
	cd "$BATS_FILE_TMPDIR"
	qoi_workflow "$WF0"
	"$HML" -q -C "$EXP0" collect "$WF0/workflow.json" --args '--options 2048 --batch 512 --seed {seed}' >/dev/null
	"$HML" -q -C "$EXP0" train --epochs 2 --threads 1 --arch mlp:8 >/dev/null
}

setup() {
	common_setup
	cp -r "$EXP0" "$WORK/exp"
	cd "$WORK"
	# The models name the workflow by its path: the file's copy is the one used.
	cp "$WF0/workflow.json" "$WF0/workflow.json.orig"
}

teardown() {
	mv "$WF0/workflow.json.orig" "$WF0/workflow.json"
	rm -f "$WF0/drop"
}

EARGS=(--repeat 1 --args '--options 2048 --batch 512 --seed 9')

@test "evaluate compares, prints and records every data set, the primary first" {
	run --separate-stderr hml -q -C exp --json evaluate m1 "${EARGS[@]}"
	assert_success
	[ -z "$stderr" ]
	echo "$output" > out.json
	e='d["evaluation"]'
	[ "$(json out.json "[q['dataset'] for q in $e['qois']]")" = "['price', 'mean_price']" ]
	[ "$(json out.json "[q['values'] for q in $e['qois']]")" = "[2048, 1]" ]
	# The single-QoI members are the primary's, as before.
	[ "$(json out.json "$e['qoi']['dataset']")" = price ]
	[ "$(json out.json "$e['qoi']['rmse'] == $e['qois'][0]['rmse'] == $e['qois'][0]['error'] > 0")" = True ]
	[ "$(json out.json "'max_error' in $e['qois'][1] or 'passed' in $e['qois'][1]")" = False ]
	# mean_price's error is that of the two recorded files.
	run h5 exp/eval/e1-accurate.h5 "round(abs(float(h5py.File('exp/eval/e1-surrogate.h5')['mean_price'][0] - f['mean_price'][0])), 9)"
	[ "$output" = "$(json out.json "round($e['qois'][1]['error'], 9)")" ]
	[ "$(json out.json "$e['qois'] == json.load(open('exp/manifest.json'))['evaluations'][0]['qois']")" = True ]
	run --separate-stderr hml -C exp evaluate m1 "${EARGS[@]}"
	assert_success
	[ "${lines[1]%% (*}" = "quantity of interest 'price'" ]
	assert_line --index 2 --regexp "^quantity of interest 'mean_price' \(1 values\): RMSE [0-9.e+-]+, .*\[metric: rmse\]$"
}

@test "a max_error over its bound is reported failed; deploy --max-qoi-error refuses naming the data set" {
	set_qoi "$WF0" '[{"dataset": "price", "max_error": 1e9}, {"dataset": "mean_price", "max_error": 0}]'
	run --separate-stderr hml -q -C exp --json evaluate m1 "${EARGS[@]}"
	assert_success
	echo "$output" > out.json
	[[ "$stderr" =~ ^"hml: warning: quantity of interest 'mean_price' failed its bound: rmse "[0-9.e+-]+", max_error 0"$ ]]
	q='d["evaluation"]["qois"]'
	[ "$(json out.json "[(q['max_error'], q['passed']) for q in $q]")" = "[(1000000000.0, True), (0.0, False)]" ]
	run --separate-stderr hml -C exp evaluate m1 "${EARGS[@]}"
	assert_line --regexp "^quantity of interest 'price' .*\[metric: rmse, max_error 1e\+09: passed\]$"
	assert_line --regexp "^quantity of interest 'mean_price' .*\[metric: rmse, max_error 0: FAILED\]$"
	# The deployment's QoI check: the primary within --max-qoi-error, the
	# second data set over its own bound: refused, nothing recorded.
	cp exp/manifest.json before.json
	run hml -C exp deploy --max-qoi-error 1e9
	assert_failure 3
	assert_line --regexp "QoI check 1: model 'm1': price rmse [0-9.e+-]+ \(within 1e\+09\) \(within max_error 1e\+09\); mean_price rmse [0-9.e+-]+ \(over max_error 0\)$"
	assert_line --regexp "^hml: error: no model's mean_price rmse is within its max_error 0: the most accurate candidate, 'm1', gives [0-9.e+-]+ on a run with seed [0-9]+$"
	cmp before.json exp/manifest.json
	# Within every bound: deployed, each data set's error in the record.
	set_qoi "$WF0" '[{"dataset": "price"}, {"dataset": "mean_price", "max_error": 1e9}]'
	run --separate-stderr hml -C exp --json deploy --max-qoi-error 1e9
	assert_success
	echo "$output" > dep.json
	c='d["deployment"]["qoi_check"]["checks"][0]'
	[ "$(json dep.json "($c['within'], [q['dataset'] for q in $c['qois']], $c['qois'][1]['passed'])")" = "(True, ['price', 'mean_price'], True)" ]
	[ "$(json dep.json "$c['error'] == $c['qois'][0]['error']")" = True ]
}

@test "a data set the surrogate run did not write is an error naming it" {
	touch "$WF0/drop"
	cp exp/manifest.json before.json
	run --separate-stderr hml -C exp evaluate m1 "${EARGS[@]}"
	assert_failure
	[[ "$stderr" == *"hml: error: the application wrote no quantity of interest 'mean_price' to '"*"/s0.h5'"* ]]
	cmp before.json exp/manifest.json
}

@test "a bad qoi array: one line naming the key, exit 3, nothing recorded" {
	cp exp/manifest.json before.json
	for bad in '[]' '[{"dataset": "price"}, {"dataset": "price"}]' \
	           '[{"dataset": "price"}, {"dataset": "mean_price", "max_error": -1}]' \
	           '[{"dataset": "price"}, {"dataset": "mean_price", "bound": 1}]'; do
		set_qoi "$WF0" "$bad"
		run --separate-stderr hml -C exp evaluate m1 "${EARGS[@]}"
		assert_failure 3
		[ "${#stderr_lines[@]}" = 1 ]
		echo "$stderr" | grep -E "^hml: error: workflow '$WF0/workflow.json': (key 'qoi' must be an object or a non-empty array of objects|key 'qoi\[1\]\.dataset' repeats data set 'price' of qoi\[0\]|key 'qoi\[1\]\.max_error' must be a finite number >= 0|unknown key 'qoi\[1\]\.bound')$"
	done
	cmp before.json exp/manifest.json
}
