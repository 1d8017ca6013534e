#!/usr/bin/env bats
# hml search, faults and --resume: kill -9 of the search or of a worker
# and --resume with no trial lost or run twice; crashing and hanging
# trials; SIGTERM and two searches at once; resume refused when the space
# or the data changed; --deterministic across kill -9 and --resume.
# (Split from 120-search.bats, so that ctest runs the two side by side.)

load search-helpers

@test "kill -9 of the search, then --resume: same budget, no trial lost or run twice" {
	# 8 configurations: killed after 3 trials ended, the rest left for --resume.
	"$HML" -q -C exp search --budget 8 --workers 2 $QUICK > /dev/null 2>&1 &
	pid=$!
	for i in $(seq 600); do
		[ -f exp/search/s1/trials.jsonl ] &&
			[ "$(grep -c '"status":"ok"' exp/search/s1/trials.jsonl)" -ge 3 ] && break
		sleep 0.1
	done
	# While its coordinator lives, the search shows as running.
	hml -C exp --json show s1 > live.json
	[ "$(json live.json 'd["search"]["status"]')" = running ]
	kill -9 "$pid"
	wait "$pid" || true
	# Killed, it could not record its end: show says interrupted (resumable).
	[ "$(json exp/manifest.json 'd["searches"][0]["status"]')" = running ]
	hml -C exp --json show s1 > dead.json
	[ "$(json dead.json 'd["search"]["status"]')" = interrupted ]
	hml -C exp --json show > all.json
	[ "$(json all.json 'd["searches"][0]["status"]')" = interrupted ]
	run hml -C exp show s1
	assert_line "search s1: region 'binomial', status interrupted"
	assert_line "interrupted: no search is running it; continue it with 'hml search --resume s1'"
	run hml -C exp show
	assert_output --regexp "s1  binomial .* interrupted"
	running="$(hist 'len({e["trial"] for e in ev if e["status"] == "running"} - {e["trial"] for e in ev if e["status"] in ("ok","failed","timeout","crashed")})')"
	before="$(hist 'len(ev)')"
	# The workers died with the search: the lock is free.
	run --separate-stderr hml -q -C exp --json search --resume $QUICK
	assert_success
	echo "$output" > out.json
	[ "$(json out.json 'd["search"]["status"]')" = finished ]
	[ "$(json out.json 'd["search"]["counts"]["configs"]')" = 8 ]
	[ "$(json out.json 'd["search"]["counts"]["reruns"]')" = "$running" ]
	[ "$(hist 'sum(e["status"] == "rerun" for e in ev)')" = "$running" ]
	check_history
	[ "$(hist 'len(ev) > '"$before")" = True ]
	[ "$(json exp/manifest.json 'd["searches"][0]["status"]')" = finished ]
	# Resuming a finished search runs nothing more.
	n="$(hist 'len(ev)')"
	run --separate-stderr hml -q -C exp --json search --resume s1
	assert_success
	[ "$(hist 'len(ev)')" = "$n" ]
}

@test "kill -9 of a worker: its trial is recorded as crashed, a new worker goes on" {
	# Trial 1 hangs, so its worker is still running it when it is killed.
	HML_SEARCH_TEST_HANG=1 "$HML" -q -C exp --json search --budget 4 --workers 2 $QUICK > out.json 2> err &
	pid=$!
	for i in $(seq 300); do
		grep -q '"trial":1,' exp/search/s1/trials.jsonl 2>/dev/null && break
		sleep 0.1
	done
	w="$(hist '[e["worker"] for e in ev if e["trial"] == 1][0]')"
	# Workers 0 and 1 were started in this order.
	wpid="$(ps --ppid "$pid" -o pid= | sort -n | sed -n "$((w + 1))p")"
	[ -n "$wpid" ]
	# Workers run under SCHED_BATCH (they do not preempt the coordinator
	# that wakes them); the coordinator stays SCHED_OTHER.
	[[ "$(chrt -p "$wpid")" == *"policy: SCHED_BATCH"* ]]
	[[ "$(chrt -p "$pid")" == *"policy: SCHED_OTHER"* ]]
	kill -9 "$wpid"
	wait "$pid"
	[ "$(json out.json 'd["search"]["counts"]["configs"]')" = 4 ]
	[ "$(json out.json 'd["search"]["counts"]["failed"]')" = 1 ]
	[ "$(hist '[e["status"] for e in ev if e["trial"] == 1]')" = "['running', 'crashed']" ]
	[ "$(hist '[e.get("error") for e in ev if e["trial"] == 1][-1]')" = "worker $w killed by SIGKILL" ]
	check_history
}

@test "a crashing trial is recorded as crashed and the search goes on" {
	HML_SEARCH_TEST_CRASH=2 run --separate-stderr hml -q -C exp --json search --budget 5 --workers 2 $QUICK
	assert_success
	echo "$output" > out.json
	[ "$(json out.json 'd["search"]["counts"]["failed"]')" = 1 ]
	[ "$(json out.json 'd["search"]["counts"]["configs"]')" = 5 ]
	[ "$(hist '[e["status"] for e in ev if e["trial"] == 2][-1]')" = crashed ]
	[ "$(hist '[e.get("error") for e in ev if e["trial"] == 2][-1]')" = "worker $(hist '[e["worker"] for e in ev if e["trial"] == 2][0]') killed by SIGABRT" ]
	[[ "$stderr" == *"trial 2 crashed"* ]]
	check_history
}

@test "a hanging trial is killed at --trial-timeout and recorded as timed out" {
	# 15 s: a worker's libtorch start-up alone took more than 3 s on a
	# loaded 2-core machine, and every trial timed out.
	HML_SEARCH_TEST_HANG=1 run --separate-stderr hml -q -C exp --json search --budget 4 --workers 2 --trial-timeout 15 $QUICK
	assert_success
	echo "$output" > out.json
	[ "$(json out.json 'd["search"]["counts"]["failed"]')" = 1 ]
	[ "$(hist '[e["status"] for e in ev if e["trial"] == 1][-1]')" = timeout ]
	[[ "$(hist '[e.get("error") for e in ev if e["trial"] == 1][-1]')" == *"--trial-timeout 15 s"* ]]
	check_history
}

@test "SIGTERM stops a search (exit 143); a second search meanwhile is refused" {
	HML_SEARCH_TEST_HANG=0 "$HML" -q -C exp search --budget 2 $QUICK > /dev/null 2> err &
	pid=$!
	for i in $(seq 300); do
		[ -f exp/search/s1/trials.jsonl ] && grep -q '"trial":0' exp/search/s1/trials.jsonl && break
		sleep 0.1
	done
	run --separate-stderr hml -q -C exp search --budget 4 $QUICK
	assert_failure 1
	[[ "$stderr" == "hml: error: a search is already running in experiment 'exp' (pid $pid)" ]]
	[ "$(json exp/manifest.json 'len(d["searches"])')" = 1 ]
	kill -TERM "$pid"
	wait "$pid" && code=0 || code=$?
	[ "$code" = 143 ]
	grep -q "continue it with 'hml search --resume s1'" err
	[ "$(json exp/manifest.json 'd["searches"][0]["status"]')" = interrupted ]
	# The trial that was running is run again on resume, once.
	run --separate-stderr hml -q -C exp --json search --resume
	assert_success
	[ "$(hist '[e["status"] for e in ev if e["trial"] == 0]')" = "['running', 'rerun', 'ok']" ]
	check_history
}

@test "resume is refused when the search space or the data changed" {
	cat > space.json <<-'EOF'
	{"layers": {"type": "int", "low": 1, "high": 2},
	 "width": {"type": "int", "low": 4, "high": 16}}
	EOF
	run hml -q -C exp search --budget 3 --space space.json $QUICK
	assert_success
	n="$(hist 'len(ev)')"
	sed -i 's/"high": 16/"high": 32/' space.json
	run --separate-stderr hml -q -C exp search --resume --budget 5
	assert_failure 3
	[ "$stderr" = "hml: error: cannot resume search 's1': its search space changed since it started (SHA-256 differs); start a new search" ]
	[ "$(hist 'len(ev)')" = "$n" ]
	sed -i 's/"high": 32/"high": 16/' space.json
	hml -q -C exp collect binomial --args '--options 1024 --seed {seed}' > /dev/null
	run --separate-stderr hml -q -C exp search --resume --budget 5
	assert_failure 3
	[[ "$stderr" == *"cannot resume search 's1': its data changed since it started"* ]]
	[ "$(hist 'len(ev)')" = "$n" ]
	run --separate-stderr hml -q -C exp search --resume s7
	assert_failure 3
	assert_equal "$stderr" "hml: error: no search 's7' in experiment 'exp'"
	run --separate-stderr hml -q -C exp search --resume --seed 9
	assert_failure 3
	[[ "$stderr" == *"cannot resume search 's1' with --seed 9: it was started with 3"* ]]
}

@test "--deterministic: the same seed and workers choose the same trials in the same order, also across kill -9 and --resume" {
	# A two-parameter space (6 initial points, then BO) and a noiseless
	# latency (test hook: 1e-9 s per parameter), so that only the order in
	# which trials end could make two searches differ.
	printf '{"width": {"type": "int", "low": 4, "high": 32, "log": true}, "lr": {"type": "float", "low": 0.001, "high": 0.01, "log": true}}' > sp.json
	cp -r exp exp2
	cp -r exp exp3
	export HML_SEARCH_TEST_LATENCY_PARAMS=1
	DET="--space sp.json --budget 10 --workers 2 --max-epochs 3 --seed 4 --threads 1 --target torchscript --deterministic"
	for e in exp exp2; do
		run hml -q -C "$e" search $DET
		assert_success
	done
	starts() {
		"$PY" -c 'import json,sys; print([(e["trial"], e["config"], e["rung"], e["counted"], json.dumps(e.get("params"), sort_keys=True)) for e in map(json.loads, open(sys.argv[1])) if e["status"] == "running"])' "$1/search/s1/trials.jsonl"
	}
	[ "$(starts exp)" = "$(starts exp2)" ]
	[ "$(json exp/manifest.json 'd["searches"][0]["deterministic"]')" = True ]
	run hml -C exp show s1
	assert_line "seed 4, 2 workers, deterministic (trials chosen in lockstep with their results)"
	# Lockstep with 2 workers: trial k was chosen with the ends of trials
	# 0 .. k-2 counted, and more only where the scheduler had to wait.
	"$PY" - exp/search/s1/trials.jsonl <<-'EOF'
	import json, sys
	c = [e["counted"] for e in map(json.loads, open(sys.argv[1])) if e["status"] == "running"]
	assert len(c) > 10 and all(c[k] >= max(0, k - 1) for k in range(len(c))), c
	assert c == sorted(c), c
	EOF
	# Killed while trial 6 runs, then resumed: the same trials, two of them re-run.
	setsid "$HML" -q -C exp3 search $DET >/dev/null 2>&1 &
	pid=$!
	for i in $(seq 600); do
		grep -q '"trial":6,' exp3/search/s1/trials.jsonl 2>/dev/null && break
		sleep 0.05
	done
	kill -9 -- "-$pid"
	wait "$pid" || true
	run hml -q -C exp3 search --resume
	assert_success
	[ "$(starts exp3)" = "$(starts exp)" ]
	[ "$(grep -c '"status":"rerun"' exp3/search/s1/trials.jsonl)" -ge 1 ]
	# A search started without it cannot be resumed with it.
	run hml -q -C exp3 search --budget 3 --workers 2 --max-epochs 1 --threads 1 --target torchscript
	assert_success
	run --separate-stderr hml -q -C exp3 search --resume s2 --deterministic
	assert_failure
	[[ "$stderr" == *"cannot resume search 's2' with --deterministic: it was started without it"* ]]
}
