#!/usr/bin/env bats
# hml collect: running a workflow's application in collect mode and
# registering its data; workflows by name and by path; several runs and
# seeds; bad workflows; applications that crash, fail or are interrupted
# (their completed calls are kept); an experiment that cannot be created;
# a corrupt manifest. Every failure: message, exit code, and nothing lost.
# No test depends on how long anything takes.

load helpers
bats_require_minimum_version 1.5.0

setup() { common_setup; }

SMALL=(--args '--options 4096 --seed {seed}')
TINY=(--args '--options 1024 --batch 1024 --seed {seed}')

m() { json exp/manifest.json "$1"; }

# wf DIR PROGRAM [PYTHON-STATEMENTS]: a copy of the binomial workflow in DIR
# whose program is PROGRAM, changed by the statements (on the dict `d`).
wf() {
	mkdir -p "$1"
	"$PY" - "$HML_BUILD_DIR/workflows/binomial/workflow.json" "$1/workflow.json" "$2" "${3:-pass}" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
d["program"] = sys.argv[3]
exec(sys.argv[4])
json.dump(d, open(sys.argv[2], "w"), indent=2)
EOF
}

# app DIR BODY: an executable shell script DIR/app.sh (the test's own
# "application"; hml itself never uses a shell).
app() {
	mkdir -p "$1"
	printf '#!/bin/sh\n%s\n' "$2" > "$1/app.sh"
	chmod +x "$1/app.sh"
}

# wait_for FILE PID: until FILE exists, or the process PID has ended (no
# fixed time limit: a loaded machine only makes it slower; the test's own
# timeout is the backstop).
wait_for() {
	while [ ! -e "$1" ] && kill -0 "$2" 2>/dev/null; do sleep 0.1; done
	[ -e "$1" ]
}

# No temporary file was left in the experiment.
no_tmp() {
	run ls -A exp/data
	refute_output --partial ".tmp-"
}

@test "collect binomial registers the data set with its record, files and provenance" {
	run --separate-stderr hml -C exp --json collect binomial --args '--options 8192 --seed {seed}'
	assert_success
	echo "$output" > out.json
	[ "$(json out.json 'd["schema_version"]')" = 1 ]
	[ "$(json out.json 'd["dataset"]["id"]')" = d1 ]
	[ "$(json out.json 'd["dataset"]["complete"]')" = True ]
	[ "$(json out.json 'd["dataset"]["workflow"]["name"]')" = binomial ]
	[ "$(json out.json 'd["dataset"]["workflow"]["path"]')" = "$HML_BUILD_DIR/workflows/binomial/workflow.json" ]
	[ "$(json out.json 'd["dataset"]["workflow"]["sha256"]')" = \
	  "$(sha256sum "$HML_BUILD_DIR/workflows/binomial/workflow.json" | cut -d' ' -f1)" ]
	r='d["dataset"]["regions"]["binomial"]'
	[ "$(json out.json "list(d['dataset']['regions'])")" = "['binomial']" ]
	[ "$(json out.json "$r['rows']")" = 8192 ]
	[ "$(json out.json "$r['calls']")" = 2 ]
	[ "$(json out.json "$r['input_shape']")" = "[5]" ]
	[ "$(json out.json "$r['output_shape']")" = "[1]" ]
	[ "$(json out.json "$r['input_dtype']")" = double ]
	[ "$(json out.json "$r['output_dtype']")" = double ]
	[ "$(json out.json "$r['input_functor']")" = "[i, 0:5] = ([i], [i], [i], [i], [i])" ]
	[ "$(json out.json "$r['output_functor']")" = "[i, 0:1] = ([i])" ]
	# One run, seed 1 (the workflow's), argv without a shell.
	[ "$(json out.json 'len(d["dataset"]["runs"])')" = 1 ]
	[ "$(json out.json 'd["dataset"]["runs"][0]["seed"]')" = 1 ]
	[ "$(json out.json 'd["dataset"]["runs"][0]["argv"]')" = \
	  "['$HML_BUILD_DIR/workflows/binomial/binomial', '--options', '8192', '--seed', '1']" ]
	[ "$(json out.json 'd["dataset"]["runs"][0]["status"]')" = "exit 0" ]
	[ "$(json out.json 'd["dataset"]["runs"][0]["exit_code"]')" = 0 ]
	[ "$(json out.json 'd["dataset"]["runs"][0]["wall_seconds"] > 0')" = True ]
	# Files, renamed to their ids, with the SHA-256 sha256sum computes.
	[ "$(json out.json 'd["dataset"]["files"]')" = "{'data': 'data/d1.h5', 'log': 'data/d1.log'}" ]
	[ -f exp/data/d1.h5 ] && [ -f exp/data/d1.log ]
	[ "$(json out.json 'd["dataset"]["provenance"]["sha256"]["data/d1.h5"]')" = \
	  "$(sha256sum exp/data/d1.h5 | cut -d' ' -f1)" ]
	[ "$(json out.json 'd["dataset"]["provenance"]["sha256"]["data/d1.log"]')" = \
	  "$(sha256sum exp/data/d1.log | cut -d' ' -f1)" ]
	for k in time host command versions; do
		[ "$(json out.json "'$k' in d['dataset']['provenance']")" = True ]
	done
	[ "$(json out.json '"collect" in d["dataset"]["provenance"]["command"]')" = True ]
	[ "$(json out.json 'd["dataset"]["provenance"]["versions"]["hml"]')" = 0.1.0 ]
	# The printed record is the registered one (times printed to 10 digits).
	[ "$(json out.json '(lambda a, b: {k: v for k, v in a.items() if k != "runs"} == {k: v for k, v in b.items() if k != "runs"} and abs(a["runs"][0]["wall_seconds"] - b["runs"][0]["wall_seconds"]) < 1e-6)(d["dataset"], json.load(open("exp/manifest.json"))["datasets"][0])')" = True ]
	# h5py reads the data, and it is the application's.
	[ "$(h5 exp/data/d1.h5 'f["binomial/input"].shape')" = "(8192, 5)" ]
	[ "$(h5 exp/data/d1.h5 'f["binomial/output"].shape')" = "(8192, 1)" ]
	[ "$(h5 exp/data/d1.h5 'bool((f["binomial/output"][:] > 0).any())')" = True ]
	# The log holds the application's output.
	grep -q "binomial: options 8192, batch 4096, seed 1, mode collect" exp/data/d1.log
	no_tmp
}

@test "the human output is one line; progress goes to stderr" {
	run --separate-stderr hml -C exp collect binomial "${SMALL[@]}"
	assert_success
	assert_output "d1: 4096 rows of region 'binomial' (1 run, 1 call) -> data/d1.h5"
	[[ "$stderr" == *"run 1 of 1 (seed 1)"* ]]
	# -q: nothing on stderr.
	run --separate-stderr hml -q -C exp collect binomial "${SMALL[@]}"
	assert_success
	assert_output "d2: 4096 rows of region 'binomial' (1 run, 1 call) -> data/d2.h5"
	[ -z "$stderr" ]
}

@test "CPU-wait: the runs' CPU and CPU-wait seconds are recorded over every run; runs that waited for a CPU are said to (not with -q)" {
	# Busy loops, more than twice the CPUs, hold the CPUs while the
	# application runs: its threads wait for one most of their time.
	busy=()
	for _ in $(seq $(( 2 * $(nproc) + 1 ))); do
		sh -c 'while :; do :; done' &
		busy+=($!)
	done
	run --separate-stderr hml -C exp --json collect binomial --runs 2 "${SMALL[@]}"
	loud_status=$status loud_stderr=$stderr
	echo "$output" > d1.json
	run --separate-stderr hml -q -C exp collect binomial "${SMALL[@]}"
	quiet_status=$status quiet_stderr=$stderr
	hml -q -C exp train --epochs 1 &&
		hml -C exp --json deploy --best --force > p.json 2> p.err &&
		run --separate-stderr hml -C exp --json evaluate --repeat 1 --args '--options 4096 --seed 42'
	kill "${busy[@]}"
	grep -q "^hml: p1: the original code's cost was collected while its threads waited for a CPU [0-9]*% of their time (other work on the machine): it, and so the predicted speedups, are too high$" p.err
	assert_success
	[[ "$stderr" == *"hml: the measured runs' threads waited for a CPU up to "*"% of their time (other work on this machine): the times and speedups measured are not the application's alone"* ]]
	[ "$loud_status" -eq 0 ] && [ "$quiet_status" -eq 0 ] && [ -z "$quiet_stderr" ]
	[[ "$loud_stderr" == *"hml: the application's threads waited for a CPU "*"% of their time while it ran (other work on this machine): the cost of the original code recorded, and the speedups hml predicts from it, are too high; collect on an idle machine to trust them"* ]]
	"$PY" - d1.json p.json <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))["dataset"]["regions"]["binomial"]
run, wait = r["cpu_run_seconds"], r["cpu_wait_seconds"]
# both runs summed, and the floor of waiting (0.1 s) per process summed
assert r["cpu_processes"] == 2, r
assert run > 0 and wait >= 0.2 * (run + wait) and wait >= 0.2, (run, wait)
# deploy records the share (both data sets) and says it
share = json.load(open(sys.argv[2]))["deployment"]["predicted"]["cpu_wait_share"]
assert 0.2 <= share < 1, share
EOF
}

@test "a bundled workflow is also found by the path of its workflow.json or directory" {
	bundled="$HML_BUILD_DIR/workflows/binomial/workflow.json"
	run hml -q -C exp collect "$bundled" "${TINY[@]}"
	assert_success
	assert_output "d1: 1024 rows of region 'binomial' (1 run, 1 call) -> data/d1.h5"
	run hml -q -C exp collect "$HML_BUILD_DIR/workflows/binomial" "${TINY[@]}"
	assert_success
	assert_output "d2: 1024 rows of region 'binomial' (1 run, 1 call) -> data/d2.h5"
	# A relative path, recorded absolute; by name it is the same file.
	cd "$HML_BUILD_DIR/workflows"
	run hml -q -C "$WORK/exp" collect binomial/workflow.json "${TINY[@]}"
	assert_success
	cd "$WORK"
	run hml -q -C exp collect binomial "${TINY[@]}"
	assert_success
	[ "$(m '[r["workflow"]["path"] for r in d["datasets"]]')" = "['$bundled', '$bundled', '$bundled', '$bundled']" ]
	[ "$(m 'len(set(r["workflow"]["sha256"] for r in d["datasets"]))')" = 1 ]
}

@test "the workflow's collect.runs and collect.seed are the defaults of --runs and --seed" {
	app own 'exec '"$BINOMIAL"' "$@"'
	wf own app.sh 'd["name"] = "own"; d["collect"] = {"args": ["--options", "1024", "--batch", "512", "--seed", "{seed}"], "runs": 2, "seed": 10}'
	run --separate-stderr hml -C exp --json collect ./own
	assert_success
	echo "$output" > out.json
	[ "$(json out.json '[r["seed"] for r in d["dataset"]["runs"]]')" = "[10, 11]" ]
	[ "$(json out.json '[r["argv"][1:] for r in d["dataset"]["runs"]]')" = \
	  "[['--options', '1024', '--batch', '512', '--seed', '10'], ['--options', '1024', '--batch', '512', '--seed', '11']]" ]
	[ "$(json out.json 'd["dataset"]["regions"]["binomial"]["rows"]')" = 2048 ]
	[ "$(json out.json 'd["dataset"]["regions"]["binomial"]["calls"]')" = 4 ]
	[ "$(json out.json 'd["dataset"]["complete"]')" = True ]
	# --runs and --seed win over the workflow.
	run --separate-stderr hml -C exp --json collect ./own --runs 1 --seed 0
	assert_success
	echo "$output" > out.json
	[ "$(json out.json '[r["argv"][-1] for r in d["dataset"]["runs"]]')" = "['0']" ]
}

@test "--runs 2 runs twice with consecutive seeds into one data set" {
	run --separate-stderr hml -C exp --json collect binomial --runs 2 --seed 5 "${SMALL[@]}"
	assert_success
	echo "$output" > out.json
	[ "$(json out.json '[r["seed"] for r in d["dataset"]["runs"]]')" = "[5, 6]" ]
	[ "$(json out.json '[r["argv"][-1] for r in d["dataset"]["runs"]]')" = "['5', '6']" ]
	[ "$(json out.json 'd["dataset"]["regions"]["binomial"]["rows"]')" = 8192 ]
	[ "$(json out.json 'd["dataset"]["regions"]["binomial"]["calls"]')" = 2 ]
	[ "$(h5 exp/data/d1.h5 'f["binomial/input"].shape')" = "(8192, 5)" ]
	[ "$(h5 exp/data/d1.h5 'sorted(set(f["binomial/calls"]["run"].tolist()))')" = "[0, 1]" ]
	# Different seeds: different options.
	[ "$(h5 exp/data/d1.h5 'bool((f["binomial/input"][:4096] != f["binomial/input"][4096:]).any())')" = True ]
	[ "$(grep -c '^==> run [12] of 2, seed [56] <==$' exp/data/d1.log)" = 2 ]
}

@test "a second collect adds d2 and leaves d1 as it was" {
	hml -q -C exp collect binomial "${SMALL[@]}" >/dev/null
	sum1=$(sha256sum exp/data/d1.h5 exp/data/d1.log)
	rec1=$(m 'd["datasets"][0]')
	run hml -q -C exp collect binomial --args '--options 4096 --seed 2'
	assert_success
	assert_output "d2: 4096 rows of region 'binomial' (1 run, 1 call) -> data/d2.h5"
	[ "$(m '[r["id"] for r in d["datasets"]]')" = "['d1', 'd2']" ]
	[ "$(sha256sum exp/data/d1.h5 exp/data/d1.log)" = "$sum1" ]
	[ "$(m 'd["datasets"][0]')" = "$rec1" ]
	[ "$(m 'd["datasets"][1]["runs"][0]["argv"][-1]')" = 2 ]
}

@test "without WORKFLOW the experiment's workflow is used; with none it is a usage error" {
	run hml -q -C exp collect
	[ "$status" -eq 2 ]
	assert_output "hml: error: collect: no workflow given, and there is no experiment at 'exp' (usage: hml collect WORKFLOW)"
	[ ! -e exp ]
	hml -q -C exp collect binomial "${SMALL[@]}" >/dev/null
	run hml -q -C exp collect -- --options 4096 --seed 3
	assert_success
	assert_output "d2: 4096 rows of region 'binomial' (1 run, 1 call) -> data/d2.h5"
	[ "$(m 'd["datasets"][1]["workflow"]["name"]')" = binomial ]
	[ "$(m 'd["datasets"][1]["runs"][0]["argv"][1:]')" = "['--options', '4096', '--seed', '3']" ]
	# Data sets of two workflows: the choice is the user's.
	app other 'exec '"$BINOMIAL"' "$@"'
	wf other app.sh 'd["name"] = "other"'
	hml -q -C exp collect other/workflow.json "${SMALL[@]}" >/dev/null
	cp exp/manifest.json before.json
	run hml -q -C exp collect
	[ "$status" -eq 2 ]
	assert_output --partial "has data sets of several workflows ('binomial', 'other', ...): name one"
	cmp before.json exp/manifest.json
}

@test "arguments after -- replace the workflow's; bad options are usage errors" {
	run --separate-stderr hml -C exp --json collect binomial -- --options 4096 --batch 2048 --seed '{seed}'
	assert_success
	echo "$output" > out.json
	[ "$(json out.json 'd["dataset"]["runs"][0]["argv"][1:]')" = "['--options', '4096', '--batch', '2048', '--seed', '1']" ]
	[ "$(json out.json 'd["dataset"]["regions"]["binomial"]["calls"]')" = 2 ]
	cp exp/manifest.json before.json
	run hml -C exp collect binomial --args '--options 4096' -- --seed 1
	[ "$status" -eq 2 ]
	assert_output "hml: error: collect: give the application's arguments with --args or after '--', not both"
	run hml -C exp collect binomial --runs 0
	[ "$status" -eq 2 ]
	assert_output "hml: error: collect: option '--runs' must be from 1 to 1000000, not 0"
	run hml -C exp collect binomial --seed -4
	[ "$status" -eq 2 ]
	assert_output "hml: error: collect: option '--seed' must be from 0 to 4611686018427387903, not -4"
	run hml -C exp collect binomial --seed 4611686018427387904
	[ "$status" -eq 2 ]
	assert_output --partial "option '--seed' must be from 0 to 4611686018427387903, not 4611686018427387904"
	# The first seed is in range but the second run's is not.
	run hml -C exp collect binomial --runs 2 --seed 4611686018427387903
	[ "$status" -eq 2 ]
	assert_output "hml: error: collect: the seeds of 2 runs from 4611686018427387903 go past 4611686018427387903, the largest seed"
	run hml -C exp collect binomial --runs two
	[ "$status" -eq 2 ]
	assert_output "hml: error: collect: option '--runs' needs an integer, not 'two'"
	run hml -C exp collect binomial other
	[ "$status" -eq 2 ]
	assert_output --partial "unexpected argument 'other'"
	cmp before.json exp/manifest.json
	no_tmp
}

@test "an unknown workflow is invalid input (exit 3) and creates nothing" {
	run hml -C exp collect binomal
	[ "$status" -eq 3 ]
	assert_output "hml: error: unknown workflow 'binomal' (looked in: $HML_BUILD_DIR/workflows, $HML_BUILD_DIR/libexec/hml/workflows)"
	[ ! -e exp ]
	HML_WORKFLOW_PATH="$WORK/a:$WORK/b" run hml -C exp collect binomal
	[ "$status" -eq 3 ]
	assert_output --partial "(looked in: $WORK/a, $WORK/b, $HML_BUILD_DIR/workflows"
	run hml -C exp collect 'no such'
	[ "$status" -eq 3 ]
	assert_output --partial "invalid workflow name 'no such'"
	run hml -C exp collect ./missing/workflow.json
	[ "$status" -eq 3 ]
	assert_output "hml: error: cannot read workflow './missing/workflow.json': No such file or directory"
	[ ! -e exp ]
}

@test "a name that is not a workflow but ./NAME/workflow.json exists: the error suggests ./NAME" {
	app foo 'exec '"$BINOMIAL"' "$@"'
	wf foo app.sh 'd["name"] = "foo"'
	run hml -C exp collect foo "${TINY[@]}"
	[ "$status" -eq 3 ]
	assert_output "hml: error: unknown workflow 'foo'; did you mean ./foo? (looked in: $HML_BUILD_DIR/workflows, $HML_BUILD_DIR/libexec/hml/workflows)"
	[ ! -e exp ]
	run hml -q -C exp collect ./foo "${TINY[@]}"
	assert_success
}

@test "HML_WORKFLOW_PATH finds a workflow by name before the bundled ones" {
	app wfs/binomial 'echo "from the path" >&2; exec '"$BINOMIAL"' "$@"'
	wf wfs/binomial app.sh
	HML_WORKFLOW_PATH="$WORK/wfs" run hml -q -C exp collect binomial "${SMALL[@]}"
	assert_success
	[ "$(m 'd["datasets"][0]["workflow"]["path"]')" = "$WORK/wfs/binomial/workflow.json" ]
	grep -q "from the path" exp/data/d1.log
}

@test "a malformed workflow.json is invalid input (exit 3), the message names the key" {
	hml -q -C exp collect binomial "${SMALL[@]}" >/dev/null
	cp exp/manifest.json before.json
	bin="$HML_BUILD_DIR/workflows/binomial/binomial"

	mkdir syntax
	printf '{\n  "schema_version": 1,\n  "name": "x"\n  "program": "p"\n}\n' > syntax/workflow.json
	run hml -C exp collect ./syntax
	[ "$status" -eq 3 ]
	assert_output --regexp "^hml: error: workflow '$WORK/syntax/workflow.json': invalid JSON: .* \(line 4, column [0-9]+\)$"

	wf missing "$bin" 'del d["collect"]["args"]'
	run hml -C exp collect missing/workflow.json
	[ "$status" -eq 3 ]
	assert_output "hml: error: workflow '$WORK/missing/workflow.json': key 'collect.args' is missing"

	wf type "$bin" 'd["regions"][0]["label"] = 5'
	run hml -C exp collect ./type
	[ "$status" -eq 3 ]
	assert_output "hml: error: workflow '$WORK/type/workflow.json': key 'regions[0].label' must be a string"

	wf args "$bin" 'd["collect"]["args"] = "--options 10"'
	run hml -C exp collect ./args
	[ "$status" -eq 3 ]
	assert_output "hml: error: workflow '$WORK/args/workflow.json': key 'collect.args' must be an array of strings"

	wf unknown "$bin" 'd["colect"] = d.pop("collect")'
	run hml -C exp collect ./unknown
	[ "$status" -eq 3 ]
	assert_output "hml: error: workflow '$WORK/unknown/workflow.json': unknown key 'colect'"

	wf nested "$bin" 'd["regions"][0]["model"]["train"]["epoch"] = 3'
	run hml -C exp collect ./nested
	[ "$status" -eq 3 ]
	assert_output "hml: error: workflow '$WORK/nested/workflow.json': unknown key 'regions[0].model.train.epoch'"

	wf metric "$bin" 'd["qoi"]["metric"] = "mse"'
	run hml -C exp collect ./metric
	[ "$status" -eq 3 ]
	assert_output --partial "key 'qoi.metric' must be \"rmse\", \"mape\" or \"max_abs\", not 'mse'"

	wf newer "$bin" 'd["schema_version"] = 2'
	run hml -C exp collect ./newer
	[ "$status" -eq 3 ]
	assert_output --partial "schema_version 2 is newer than this hml understands (1)"

	# Nothing changed in the experiment.
	cmp before.json exp/manifest.json
	[ "$(ls exp/data)" = "$(printf 'd1.h5\nd1.log')" ]
}

@test "a missing or non-executable program is invalid input (exit 3)" {
	wf gone nope
	run hml -C exp collect ./gone
	[ "$status" -eq 3 ]
	assert_output "hml: error: workflow '$WORK/gone/workflow.json': program '$WORK/gone/nope' not found"
	[ ! -e exp ]
	wf noexec app.sh
	printf '#!/bin/sh\n' > noexec/app.sh
	chmod 0644 noexec/app.sh
	run hml -C exp collect ./noexec
	[ "$status" -eq 3 ]
	assert_output "hml: error: workflow '$WORK/noexec/workflow.json': program '$WORK/noexec/app.sh' is not executable"
	[ ! -e exp ]
}

@test "an application that crashes keeps its completed calls as an incomplete data set (exit 1)" {
	app crash "$BINOMIAL"' "$@"
echo "crashing now" >&2
kill -SEGV $$'
	wf crash app.sh 'd["name"] = "crash"'
	run --separate-stderr hml -C exp --json collect ./crash --runs 3 "${SMALL[@]}"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"hml: error: application 'crash' was killed by SIGSEGV (run 1 of 3); kept 4096 rows of region 'binomial' as incomplete data set d1"* ]]
	# The end of the application's output is shown.
	[[ "$stderr" == *"  crashing now"* ]]
	echo "$output" > out.json
	[ "$(json out.json 'd["dataset"]["complete"]')" = False ]
	[ "$(json out.json 'len(d["dataset"]["runs"])')" = 1 ]
	[ "$(json out.json 'd["dataset"]["runs"][0]["status"]')" = "killed by SIGSEGV" ]
	[ "$(json out.json 'd["dataset"]["runs"][0]["exit_code"]')" = None ]
	[ "$(json out.json 'd["dataset"]["runs"][0]["signal"]')" = 11 ]
	[ "$(m 'd["datasets"][0]["complete"]')" = False ]
	[ "$(m 'd["datasets"][0]["regions"]["binomial"]["rows"]')" = 4096 ]
	[ "$(h5 exp/data/d1.h5 'f["binomial/input"].shape')" = "(4096, 5)" ]
	grep -q "crashing now" exp/data/d1.log
	grep -q "^==> killed by SIGSEGV after" exp/data/d1.log
	no_tmp
}

@test "a failing second run stops the collection and keeps the first run's rows" {
	# Exits 3 when given seed 2, after collecting.
	app fail "$BINOMIAL"' "$@"
for a in "$@"; do [ "$a" = 2 ] && exit 3; done
exit 0'
	wf fail app.sh 'd["name"] = "fail"'
	run --separate-stderr hml -C exp collect ./fail --runs 3 "${SMALL[@]}"
	[ "$status" -eq 1 ]
	assert_output "d1: 8192 rows of region 'binomial' (2 runs, 2 calls) -> data/d1.h5 (incomplete)"
	[[ "$stderr" == *"hml: error: application 'fail' exited with status 3 (run 2 of 3); kept 8192 rows of region 'binomial' as incomplete data set d1" ]]
	[ "$(m '[r["status"] for r in d["datasets"][0]["runs"]]')" = "['exit 0', 'exit 3']" ]
	[ "$(m 'd["datasets"][0]["complete"]')" = False ]
	[ "$(h5 exp/data/d1.h5 'f["binomial/input"].shape')" = "(8192, 5)" ]
}

@test "an exit status the workflow declares success (success_exit_codes) is a successful run" {
	# Exits 1 after collecting, as programs that report a result by status do.
	app one "$BINOMIAL"' "$@" || exit 9
exit 1'
	wf one app.sh 'd["name"] = "one"; d["success_exit_codes"] = [0, 1]'
	run --separate-stderr hml -C exp --json collect ./one --runs 2 "${TINY[@]}"
	assert_success
	echo "$output" > out.json
	[ "$(json out.json 'd["dataset"]["complete"]')" = True ]
	[ "$(json out.json '[r["exit_code"] for r in d["dataset"]["runs"]]')" = "[1, 1]" ]
	[ "$(json out.json '[r["succeeded"] for r in d["dataset"]["runs"]]')" = "[True, True]" ]
	run hml -C exp show
	assert_line --regexp "^ +d1 +one +yes +binomial \(2048\) +2$"   # no run counted failed
	# Undeclared, the same status is a failed run: the data is kept incomplete.
	wf one app.sh 'd["name"] = "one"'
	run --separate-stderr hml -C exp collect ./one "${TINY[@]}"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"hml: error: application 'one' exited with status 1 (run 1 of 1); kept 1024 rows of region 'binomial' as incomplete data set d2" ]]
	[ "$(json exp/manifest.json '[r["succeeded"] for r in d["datasets"][1]["runs"]]')" = "[False]" ]
	run hml -C exp show
	assert_line --regexp "^ +d2 +one +no +binomial \(1024\) +1 \(1 failed\)$"
	# A bad declaration is invalid input naming the key; nothing runs.
	wf one app.sh 'd["success_exit_codes"] = [0, 300]'
	cp exp/manifest.json before.json
	run hml -C exp collect ./one "${TINY[@]}"
	[ "$status" -eq 3 ]
	assert_output "hml: error: workflow '$WORK/one/workflow.json': key 'success_exit_codes' must be an array of exit statuses from 0 to 255 (item 1 is not)"
	wf one app.sh 'd["verify"] = {"pattern": "PASSED ("}'
	run hml -C exp collect ./one "${TINY[@]}"
	[ "$status" -eq 3 ]
	assert_output --partial "hml: error: workflow '$WORK/one/workflow.json': key 'verify.pattern' is not a POSIX extended regular expression: "
	[ "${#lines[@]}" -eq 1 ]
	cmp before.json exp/manifest.json
}

@test "collect on evaluate's inputs (no {seed} in the arguments, or a run of evaluate's command line): one warning" {
	wf same "$BINOMIAL" 'd["collect"]["args"] = d["evaluate"]["args"] = ["--options", "1024", "--batch", "1024"]'
	run --separate-stderr hml -q -C exp collect ./same
	assert_success
	[ "$stderr" = "hml: warning: evaluate runs the inputs the data was collected on (the collect arguments have no {seed} and are evaluate's): the QoI error measures memorisation" ]
	run --separate-stderr hml -q -C exp3 collect ./same --args '--options 1024 --batch 1024 --seed {seed}'
	assert_success
	[ -z "$stderr" ]
	# In exp, d1 ran evaluate's command line: d2 is warned about, whatever its seeds.
	run --separate-stderr hml -q -C exp collect ./same --args '--options 1024 --batch 1024 --seed {seed}'
	assert_success
	[ "$stderr" = "hml: warning: evaluate runs the inputs the data was collected on (data set d1 ran the same command line): the QoI error measures memorisation" ]
	# A seeded run that is evaluate's command line (binomial's: seed 42).
	run --separate-stderr hml -q -C exp2 collect binomial --seed 42
	assert_success
	[ "$stderr" = "hml: warning: evaluate runs the inputs the data was collected on (data set d1 ran the same command line): the QoI error measures memorisation" ]
}

@test "an application that fails before collecting registers nothing (exit 1)" {
	app early 'echo "binomial: error: no licence" >&2; exit 3'
	wf early app.sh 'd["name"] = "early"'
	run --separate-stderr hml -C exp collect ./early
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	[[ "$stderr" == *"  binomial: error: no licence"* ]]
	[[ "$stderr" == *"hml: error: application 'early' exited with status 3 (run 1 of 1); no data was collected, nothing was registered" ]]
	[ "$(m 'len(d["datasets"])')" = 0 ]
	[ -z "$(ls -A exp/data)" ]
	# -q: only the error line.
	run --separate-stderr hml -q -C exp collect ./early
	[ "$status" -eq 1 ]
	[ "$stderr" = "hml: error: application 'early' exited with status 3 (run 1 of 1); no data was collected, nothing was registered" ]
	# An application that succeeds but writes no rows.
	app none 'exit 0'
	wf none app.sh 'd["name"] = "none"'
	run hml -C exp collect ./none
	[ "$status" -eq 1 ]
	assert_output --partial "hml: error: application 'none' ran but collected no data"
	[ "$(m 'len(d["datasets"])')" = 0 ]
	[ -z "$(ls -A exp/data)" ]
}

@test "an interrupted collection keeps the completed calls and exits 130" {
	# The application collects, says so, then waits to be interrupted.
	app slow "$BINOMIAL"' "$@"
touch '"$WORK"'/ready
exec sleep 60'
	wf slow app.sh 'd["name"] = "slow"'
	"$HML" -C exp collect ./slow --runs 3 "${TINY[@]}" > out.txt 2> err.txt &
	pid=$!
	wait_for ready "$pid"
	kill -INT "$pid"
	status=0
	wait "$pid" || status=$?
	cat err.txt
	[ "$status" -eq 130 ]
	grep -q "hml: error: application 'slow' was interrupted (run 1 of 3); kept 1024 rows of region 'binomial' as incomplete data set d1" err.txt
	grep -q "(incomplete)" out.txt
	[ "$(m 'd["datasets"][0]["runs"][0]["status"]')" = interrupted ]
	[ "$(m 'len(d["datasets"][0]["runs"])')" = 1 ]
	[ "$(m 'd["datasets"][0]["complete"]')" = False ]
	[ "$(h5 exp/data/d1.h5 'f["binomial/input"].shape')" = "(1024, 5)" ]
	no_tmp
}

@test "an application that ignores SIGINT is waited for; no further run starts (exit 130)" {
	app stubborn 'trap "" INT
'"$BINOMIAL"' "$@"
touch '"$WORK"'/ready
while [ ! -e '"$WORK"'/go ]; do sleep 0.1; done
exit 0'
	wf stubborn app.sh 'd["name"] = "stubborn"'
	"$HML" -C exp --json collect ./stubborn --runs 3 "${TINY[@]}" > out.json 2> err.txt &
	pid=$!
	wait_for ready "$pid"
	kill -INT "$pid"
	# hml is still waiting for its application.
	kill -0 "$pid"
	touch go
	status=0
	wait "$pid" || status=$?
	cat err.txt
	[ "$status" -eq 130 ]
	[ "$(tail -n 1 err.txt)" = "hml: error: application 'stubborn' was interrupted (run 1 of 3); kept 1024 rows of region 'binomial' as incomplete data set d1" ]
	[ "$(json out.json 'len(d["dataset"]["runs"])')" = 1 ]
	[ "$(json out.json 'd["dataset"]["runs"][0]["status"]')" = interrupted ]
	[ "$(json out.json 'd["dataset"]["runs"][0]["exit_code"]')" = 0 ]
	[ "$(json out.json 'd["dataset"]["complete"]')" = False ]
	[ "$(m 'd["datasets"][0]["regions"]["binomial"]["rows"]')" = 1024 ]
	no_tmp
}

@test "SIGTERM before the application collected anything registers nothing (exit 143)" {
	app idle 'touch '"$WORK"'/ready
exec sleep 60'
	wf idle app.sh 'd["name"] = "idle"'
	"$HML" -C exp collect ./idle --runs 2 > out.txt 2> err.txt &
	pid=$!
	wait_for ready "$pid"
	kill -TERM "$pid"
	status=0
	wait "$pid" || status=$?
	cat err.txt
	[ "$status" -eq 143 ]
	[ ! -s out.txt ]
	[ "$(tail -n 1 err.txt)" = "hml: error: application 'idle' was interrupted (run 1 of 2); no data was collected, nothing was registered" ]
	[ "$(m 'd["datasets"]')" = "[]" ]
	[ -z "$(ls -A exp/data)" ]
}

@test "a corrupt or truncated manifest is invalid input (exit 3), left byte for byte, and nothing runs" {
	hml -q -C exp collect binomial "${TINY[@]}" >/dev/null
	cp exp/manifest.json good.json
	app marker 'touch '"$WORK"'/ran; exec '"$BINOMIAL"' "$@"'
	wf marker app.sh 'd["name"] = "marker"'
	check() { # check CONTENT-FILE REASON
		cp "$1" exp/manifest.json
		sum=$(sha256sum exp/manifest.json)
		run hml -C exp collect ./marker "${TINY[@]}"
		[ "$status" -eq 3 ]
		[ "${#lines[@]}" -eq 1 ]
		assert_output --partial "hml: error: manifest 'exp/manifest.json' is corrupt: $2"
		# Without WORKFLOW the manifest is read first: the same.
		run hml -C exp collect
		[ "$status" -eq 3 ]
		[ "${#lines[@]}" -eq 1 ]
		assert_output --partial "hml: error: manifest 'exp/manifest.json' is corrupt: $2"
		[ "$(sha256sum exp/manifest.json)" = "$sum" ]
		[ ! -e ran ]
		[ "$(ls -A exp/data)" = "$(printf 'd1.h5\nd1.log')" ]
	}
	head -c "$(( $(wc -c < good.json) / 2 ))" good.json > half.json
	check half.json "line "
	: > empty.json
	check empty.json "the file is empty"
	echo '[]' > array.json
	check array.json "the top level is not a JSON object"
	"$PY" -c 'import json; d = json.load(open("good.json")); d["datasets"] = {}; json.dump(d, open("sets.json", "w"))'
	check sets.json '"datasets" is not an array'
	# The good manifest still works.
	cp good.json exp/manifest.json
	run hml -q -C exp collect ./marker "${TINY[@]}"
	assert_success
	assert_output "d2: 1024 rows of region 'binomial' (1 run, 1 call) -> data/d2.h5"
}

@test "the application's hml settings are collect's, whatever the shell exported" {
	export HML_MODE_BINOMIAL=infer HML_MODEL_BINOMIAL="$WORK/none.pt" HML_MODEL="$WORK/none.pt"
	export HML_QOI="$WORK/q.h5" HML_PROFILE="$WORK/p.json" HML_DB="$WORK/elsewhere.h5"
	run hml -q -C exp collect binomial "${SMALL[@]}"
	assert_success
	[ "$(m 'd["datasets"][0]["regions"]["binomial"]["rows"]')" = 4096 ]
	grep -q "mode collect" exp/data/d1.log
	[ ! -e q.h5 ] && [ ! -e p.json ] && [ ! -e elsewhere.h5 ]
}

@test "an experiment that cannot be created fails (exit 1) without collecting" {
	touch afile
	run hml -C afile/exp collect binomial "${SMALL[@]}"
	[ "$status" -eq 1 ]
	assert_output "hml: error: cannot create experiment 'afile/exp': Not a directory"
	[ ! -s afile ]
	if [ "$(id -u)" != 0 ]; then
		mkdir ro && chmod 0555 ro
		run hml -C ro/exp collect binomial "${SMALL[@]}"
		[ "$status" -eq 1 ]
		assert_output "hml: error: cannot create experiment 'ro/exp': Permission denied"
		[ -z "$(ls -A ro)" ]
	fi
}

@test "collect --help and help collect" {
	run hml collect --help
	assert_success
	assert_line "usage: hml collect [options] [WORKFLOW] [-- ARGS...]"
	assert_output --partial "--runs N"
	assert_output --partial "--args 'A B C'"
	assert_output --partial "See hml-collect(1)."
	run hml help collect
	assert_success
	assert_line "usage: hml collect [options] [WORKFLOW] [-- ARGS...]"
	MANWIDTH=80 run man --warnings -l "$HML_SOURCE_DIR/man/hml-collect.1"
	assert_success
	MANWIDTH=80 run man --warnings -l "$HML_SOURCE_DIR/man/hml-workflow.5"
	assert_success
	assert_output --partial "HML_WORKFLOW_PATH"
}
