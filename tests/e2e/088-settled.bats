#!/usr/bin/env bats
# Behaviours #26 found unclear, as settled (each in its man page): time
# limits and signals in evaluate and the QoI checks, an accurate run that
# gives NaN, an application that reads its terminal, HML_DEVICE misspelt,
# deploy --target auto without a compiler, a search with nothing on its
# front, search workers capped, interrupted, and under mpirun -n 1.

load helpers

# The application of every test: binomial behind a wrapper that, when a
# marker file exists in $M, hangs ignoring SIGINT and SIGTERM (hang: every
# run; hang-surrogate: runs with a model), overwrites an accurate run's
# QoI with NaN (nan), or reads its standard input first (read).
setup_file() {
	export M="$BATS_FILE_TMPDIR/markers" EXP0="$BATS_FILE_TMPDIR/exp"
	mkdir -p "$M" "$BATS_FILE_TMPDIR/wf"
	cd "$BATS_FILE_TMPDIR"
	cat > wf/wrap <<EOF2
#!/bin/sh
hang() { echo \$\$ > "$M/app.pid"; trap '' INT TERM; sleep 300 & wait; exit 0; }
[ -e "$M/hang" ] && hang
[ -e "$M/hang-surrogate" ] && [ "\${HML_MODE_BINOMIAL:-}" = infer ] && hang
[ -e "$M/read" ] && { read -r line; echo "read: \$?"; }
"$BINOMIAL" "\$@" || exit \$?
if [ -e "$M/nan" ] && [ "\${HML_MODE_BINOMIAL:-}" != infer ] && [ -n "\${HML_QOI:-}" ]; then
	"$PY" -c 'import h5py, numpy as np, sys; f = h5py.File(sys.argv[1], "r+"); f["price"][...] = np.nan' "\$HML_QOI"
fi
EOF2
	chmod +x wf/wrap
	wrap_workflow wf
	# 512 options: a run in well under a second, the QoI checks' included
	"$PY" -c 'import json,sys; p=sys.argv[1]; w=json.load(open(p)); w["collect"]["args"][1]="512"; w["evaluate"]["args"][1]="512"; json.dump(w, open(p,"w"))' wf/workflow.json
	"$HML" -q -C "$EXP0" collect wf/workflow.json >/dev/null
	"$HML" -q -C "$EXP0" train --epochs 3 --threads 2 >/dev/null
}

setup() {
	common_setup
	rm -f "$M"/*
	cp -r "$EXP0" "$WORK/exp"
	cd "$WORK"
	WF="$BATS_FILE_TMPDIR/wf/workflow.json"
}

teardown() {
	rm -f "$M"/*
}

# signal_when_started SIG CMD...: run CMD in the background, send SIG once
# the application has written its pid; $status.
signal_when_started() {
	local sig=$1 pid
	shift
	timeout -s KILL 120 "$@" &
	pid=$!
	for _ in $(seq 900); do [ -s "$M/app.pid" ] && break; sleep 0.1; done
	[ -s "$M/app.pid" ]
	kill "-$sig" "$pid"
	status=0
	wait "$pid" || status=$?
}

# no_survivor: nothing of the application's process group is alive (10 s).
no_survivor() {
	local pgid live
	pgid=$(cat "$M/app.pid")
	for _ in $(seq 100); do
		live=$(ps -eo pid=,pgid=,stat=,args= | awk -v g="$pgid" '$2 == g && $3 !~ /^Z/')
		[ -z "$live" ] && return 0
		sleep 0.1
	done
	echo "left in group $pgid: $live"
	return 1
}

@test "an application that hangs in evaluate hits --run-timeout (accurate and surrogate runs)" {
	touch "$M/hang"
	run --separate-stderr timeout 120 "$HML" -C exp evaluate m1 --repeat 1 --run-timeout 1
	assert_failure 1
	[[ "$stderr" == *"timed out after its limit of 1 s"* ]]
	no_survivor
	rm "$M/hang" "$M/app.pid"
	# The accurate runs pass within 5 s; the surrogate run hangs.
	touch "$M/hang-surrogate"
	HML_RUN_TIMEOUT=5 run --separate-stderr timeout 120 "$HML" -C exp evaluate m1 --repeat 1
	assert_failure 1
	[[ "$stderr" == *"surrogate run of "*" failed: timed out after its limit of 5 s"* ]]
	no_survivor
	[ "$(json exp/manifest.json 'len(d.get("evaluations", []))')" = 0 ]
}

@test "an application that hangs in a QoI check hits its time limit" {
	touch "$M/hang"
	run --separate-stderr timeout 120 "$HML" -C exp deploy --max-qoi-error 10 --run-timeout 1
	assert_failure 1
	[[ "$stderr" == *"timed out after its limit of 1 s"* ]]
	no_survivor
	[ "$(json exp/manifest.json 'len(d.get("deployments", []))')" = 0 ]
	rm "$M/hang" "$M/app.pid"
	touch "$M/hang-surrogate"
	HML_RUN_TIMEOUT=5 run --separate-stderr timeout 120 "$HML" -C exp deploy --max-qoi-error 10
	assert_failure 3
	[[ "$stderr" == *"QoI check of model 'm1': "*"timed out after its limit of 5 s"* ]]
	no_survivor
}

@test "SIGTERM to hml evaluate and to a QoI check ends the application: exit 143, no survivor" {
	touch "$M/hang"
	signal_when_started TERM "$HML" -q -C exp evaluate m1 --repeat 1
	[ "$status" -eq 143 ]
	no_survivor
	rm "$M/app.pid"
	signal_when_started TERM "$HML" -q -C exp deploy --max-qoi-error 10
	[ "$status" -eq 143 ]
	no_survivor
	rm "$M/app.pid"
	signal_when_started INT "$HML" -q -C exp search --budget 1 --max-epochs 1 --threads 1 \
		--target torchscript --qoi-check 1
	[ "$status" -eq 130 ]
	no_survivor
	[ "$(json exp/manifest.json 'len(d.get("deployments", [])) + len(d.get("evaluations", []))')" = 0 ]
}

@test "an accurate run whose QoI is NaN is blamed, not the model: QoI check exit 1, evaluate warns" {
	touch "$M/nan"
	run --separate-stderr timeout 300 "$HML" -C exp deploy --max-qoi-error 10
	assert_failure 1
	[[ "$stderr" == *"hml: error: the accurate run (seed "*") gave 512 of 512 values of quantity of interest 'price' as NaN or Inf: no model can be judged against it"* ]]
	[[ "$stderr" != *"model 'm1'"* ]]
	[ "$(json exp/manifest.json 'len(d.get("deployments", []))')" = 0 ]
	run --separate-stderr timeout 300 "$HML" -C exp evaluate m1 --repeat 1
	assert_success
	[[ "$stderr" == *"hml: warning: the accurate run (the warm-up) gave 512 of 512 values of quantity of interest 'price' as NaN or Inf"* ]]
}

@test "an application that reads its terminal is not stopped: its standard input is /dev/null" {
	command -v script >/dev/null || skip "no script(1) (bsdutils)"
	touch "$M/read"
	# On a pseudo-terminal from script(1), a read from it by the application's
	# process group (not the foreground one) would stop it (SIGTTIN) for good.
	run timeout 120 script -qec "'$HML' -C exp evaluate m1 --repeat 1 --keep-runs" /dev/null < /dev/null
	assert_success
	grep -q "read: 1" exp/eval/e1-runs/a0.log
	# Not a terminal: standard input passes on as it is.
	echo hello | timeout 120 "$HML" -q -C exp collect "$WF" --runs 1 --seed 99 >/dev/null
}

@test "HML_DEVICE misspelt is refused whatever HML_ON_ERROR says" {
	HML_MODE=infer HML_MODEL="$WORK/exp/models/m1.pt" HML_DEVICE=gpu HML_ON_ERROR=fallback \
		run --separate-stderr timeout 120 "$BINOMIAL" --options 64 --seed 1
	assert_failure
	[[ "$stderr" == *"HML_DEVICE='gpu' is not auto, cpu or cuda"* ]]
	HML_MODE=infer HML_MODEL="$WORK/exp/models/m1.pt" HML_DEVICE=cpu \
		run --separate-stderr timeout 120 "$BINOMIAL" --options 64 --seed 1
	assert_success
}

@test "deploy --target auto without a C compiler deploys TorchScript, as search's auto does" {
	# The card measured C (cc was found at training); now there is none.
	[ "$(json exp/models/m1.json '(d.get("latency") or {}).get("c") is not None')" = True ] ||
		skip "no C latency on the card (no cc at training)"
	run --separate-stderr env PATH=/nonexistent "$HML" -C exp --json deploy m1 --target auto --force
	assert_success
	echo "$output" > out.json
	[ "$(json out.json 'd["deployment"]["target"]')" = torchscript ]
	[[ "$stderr" == *"--target auto: torchscript only (no C compiler: 'cc' is not on PATH"* ]]
	run --separate-stderr env PATH=/nonexistent "$HML" -C exp --json deploy --best --target auto --force
	assert_success
	[ "$(echo "$output" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["deployment"]["target"])')" = torchscript ]
}

@test "a search with nothing on its front fails (exit 1); deploy --best then says its model is not of it" {
	# One configuration; its top-rung trial (trial 1) hangs past --trial-timeout.
	HML_SEARCH_TEST_HANG=1 run --separate-stderr timeout 300 "$HML" -C exp --json search --budget 1 \
		--max-epochs 3 --threads 1 --target torchscript --trial-timeout 15
	assert_failure 1
	[[ "$stderr" == *"hml: error: search 's1' has nothing on its front: none of its 1 configurations finished a top-rung (full-fidelity) trial, 1 trials failed or timed out"* ]]
	[ "$(json exp/manifest.json 'd["searches"][0]["status"]')" = failed ]
	[ "$(json exp/manifest.json 'd["searches"][0]["front"]')" = "[]" ]
	[ "$(json exp/manifest.json 'len(d["models"])')" = 1 ]
	# not the warning of a front empty because no model pays
	[[ "$stderr" != *"a surrogate does not pay here"* ]]
	run --separate-stderr "$HML" -C exp deploy --best --force
	assert_success
	[[ "$stderr" == *"hml: warning: p1: the newest search of region 'binomial', 's1' (failed), has nothing on its front: model 'm1' (trained by hml train) was chosen among every model of the region"* ]]
	run --separate-stderr "$HML" -C exp deploy --best --search s1
	assert_failure 3
}

@test "--workers is capped at the budget and the online cores, said and recorded" {
	run --separate-stderr timeout 300 "$HML" -C exp --json search --budget 2 --workers 64 \
		--max-epochs 1 --threads 1 --target torchscript
	assert_success
	echo "$output" > out.json
	cores=$(getconf _NPROCESSORS_ONLN)
	want=$(( cores < 2 ? cores : 2 ))
	[ "$(json out.json 'd["search"]["workers"]')" = "$want" ]
	[ "$(json out.json 'd["search"]["workers_requested"]')" = 64 ]
	[[ "$stderr" == *"64 workers capped at $want: "* ]]
	# Within the cap: nothing said, nothing recorded.
	run --separate-stderr timeout 300 "$HML" -C exp --json search --budget 2 --workers 1 \
		--max-epochs 1 --threads 1 --target torchscript
	assert_success
	[ "$(echo "$output" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["search"]["workers_requested"])')" = None ]
	[[ "$stderr" != *"capped"* ]]
}

@test "SIGTERM to hml search ends its workers: exit 143, none left" {
	HML_SEARCH_TEST_HANG=1 timeout -s KILL 120 "$HML" -q -C exp search --budget 4 --workers 2 \
		--max-epochs 3 --threads 1 --target torchscript &
	pid=$!
	for _ in $(seq 600); do
		grep -q '"trial":1,' exp/search/s1/trials.jsonl 2>/dev/null && break
		sleep 0.1
	done
	workers=$(ps --ppid "$pid" -o pid= | tr '\n' ' ')
	[ -n "$workers" ]
	kill -TERM "$pid"
	status=0
	wait "$pid" || status=$?
	[ "$status" -eq 143 ]
	for _ in $(seq 100); do
		left=$(for w in $workers; do ps -o pid=,stat= -p "$w" | awk '$2 !~ /^Z/'; done)
		[ -z "$left" ] && break
		sleep 0.1
	done
	[ -z "$left" ] || { echo "workers left: $left"; return 1; }
	[ "$(json exp/manifest.json 'd["searches"][0]["status"]')" = interrupted ]
}

@test "mpirun -n 1 runs worker processes, said; a resume under mpirun -n 3 records mpi" {
	grep -q '^HML_WITH_MPI:BOOL=ON' "$HML_BUILD_DIR/CMakeCache.txt" ||
		skip "hml is built without MPI (-DHML_WITH_MPI=ON)"
	command -v mpirun >/dev/null || skip "no mpirun"
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
	run --separate-stderr timeout 300 mpirun -n 1 "$HML" -C exp --json search --budget 2 \
		--max-epochs 1 --threads 1 --target torchscript
	assert_success
	echo "$output" > out.json
	[ "$(json out.json 'd["search"]["transport"]')" = processes ]
	[[ "$stderr" == *"started as a single MPI rank: its workers are local processes"* ]]
	run --separate-stderr timeout 300 mpirun -n 3 "$HML" -q -C exp --json search --resume s1 --budget 4 \
		--target torchscript
	assert_success
	echo "$output" > out.json
	[ "$(json out.json 'd["search"]["transport"]')" = mpi ]
	[ "$(json out.json 'd["search"]["workers"]')" = 2 ]
	[ "$(json out.json 'd["search"]["counts"]["configs"]')" = 4 ]
}
