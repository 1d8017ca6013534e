#!/usr/bin/env bats
# Signals and time limits (hml(1), hml-collect(1)): SIGINT, SIGTERM and
# SIGHUP reach the application's process group as themselves, a group
# that ignores them is killed after the grace period (5 s), hml exits
# 128 + the signal, and nothing of the group survives; a run past its
# time limit is ended the same way and reported with its limit.

load helpers

setup() {
	common_setup
	mkdir wf
	# An application that ignores SIGINT and SIGTERM, with a child of its
	# own, and says where it is before it hangs.
	cat > wf/wrap <<EOF2
#!/bin/sh
trap '' INT TERM
echo \$\$ > "$WORK/app.pid"
sleep 300 &
wait
EOF2
	chmod +x wf/wrap
	wrap_workflow wf
}

# signal_when_started SIG CMD...: run CMD in the background, send SIG to
# it once the application has written its pid; $status, $elapsed (s).
signal_when_started() {
	local sig=$1 pid t0
	shift
	timeout -s KILL 60 "$@" &   # a regression fails (137) instead of hanging
	pid=$!
	for _ in $(seq 600); do [ -s app.pid ] && break; sleep 0.1; done
	[ -s app.pid ]
	t0=$(date +%s)
	kill "-$sig" "$pid"
	status=0
	wait "$pid" || status=$?
	elapsed=$(( $(date +%s) - t0 ))
}

# no_survivor: no live process is left in the application's group (a
# killed one may stay a zombie until init reaps it), within 10 s.
no_survivor() {
	local pgid live
	pgid=$(cat app.pid)
	# SIGKILL ends a process asynchronously: allow a loaded machine 10 s
	for _ in $(seq 100); do
		live=$(ps -eo pid=,pgid=,stat=,args= | awk -v g="$pgid" '$2 == g && $3 !~ /^Z/')
		[ -z "$live" ] && return 0
		sleep 0.1
	done
	echo "left in group $pgid: $live"
	return 1
}

@test "SIGTERM to hml collect: forwarded, the group killed after the grace period, exit 143" {
	signal_when_started TERM "$HML" -q -C exp collect wf/workflow.json --runs 1
	[ "$status" -eq 143 ]
	[ "$elapsed" -ge 4 ] && [ "$elapsed" -le 30 ]
	no_survivor
	# nothing registered
	[ ! -e exp/manifest.json ] || [ "$(json exp/manifest.json 'len(d.get("datasets", []))')" = 0 ]
}

@test "SIGINT and SIGHUP to hml collect: exits 130 and 129, no survivor" {
	signal_when_started INT "$HML" -q -C exp collect wf/workflow.json --runs 1
	[ "$status" -eq 130 ]
	no_survivor
	rm app.pid
	signal_when_started HUP "$HML" -q -C exp collect wf/workflow.json --runs 1
	[ "$status" -eq 129 ]
	no_survivor
}

@test "a run past --run-timeout or HML_RUN_TIMEOUT is killed and reported with its limit, exit 1" {
	run --separate-stderr timeout 60 "$HML" -C exp collect wf/workflow.json --runs 1 --run-timeout 1
	assert_failure 1
	[[ "$stderr" == *"application 'binomial' was timed out after its limit of 1 s (--run-timeout, HML_RUN_TIMEOUT) (run 1 of 1)"* ]]
	no_survivor
	rm app.pid
	HML_RUN_TIMEOUT=0.5 run --separate-stderr timeout 60 "$HML" -C exp collect wf/workflow.json --runs 1
	assert_failure 1
	[[ "$stderr" == *"timed out after its limit of 0.5 s"* ]]
	no_survivor
	HML_RUN_TIMEOUT=soon run --separate-stderr timeout 60 "$HML" -C exp collect wf/workflow.json --runs 1
	assert_failure
	[[ "$stderr" == *"invalid HML_RUN_TIMEOUT 'soon'"* ]]
}
