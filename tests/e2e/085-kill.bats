#!/usr/bin/env bats
# kill -9 at random moments loses nothing: the small version of
# bench/kill.sh (which runs 100 kills per part of runs four times as
# long). The delays come from a fixed seed; the checks hold at whatever
# moment a kill lands.

load helpers

setup() { common_setup; }

@test "binomial killed while collecting: every file readable, its calls intact" {
	run "$HML_SOURCE_DIR/bench/kill.sh" -b "$HML_BUILD_DIR" -n 3 -s 11 -o 8192 collect
	assert_success
	assert_output --partial "collect: 3 kills of binomial collecting (delays below its unkilled "
	# delays are drawn below an unkilled run's duration: kills land while it runs
	assert_output --regexp "ms\): [1-3] while it ran, [0-2] after it had ended, 0 after an error exit"
	assert_output --partial ", 0 bad"
}

@test "hml collect and hml train killed: the manifest stays valid, nothing half-registered" {
	run "$HML_SOURCE_DIR/bench/kill.sh" -b "$HML_BUILD_DIR" -n 4 -s 5 -o 8192 cli
	assert_success
	assert_output --partial "cli: 4 kills ("
	assert_output --regexp "ms\): [1-4] while it ran, [0-3] after it had ended, 0 after an error exit"
	assert_output --partial "manifest valid after each"
	assert_output --partial "; 0 bad"
}

@test "hml train killed while it builds the C form's latency: the next measurement reclaims its directory" {
	hml -q -C exp collect binomial --args '--options 1024 --seed {seed}' >/dev/null
	mkdir tmp bin
	# A cc that stops until released, its pid in cc.pid, so that the kill
	# lands while the build directory exists, whatever the machine's load.
	real_cc=$(command -v cc)
	cat > bin/cc <<EOF2
#!/bin/sh
case "\$*" in *--version*) exec "$real_cc" "\$@" ;; esac
echo \$\$ > "$WORK/cc.pid"
while [ ! -e "$WORK/release" ]; do sleep 0.1; done
exec "$real_cc" "\$@"
EOF2
	chmod +x bin/cc
	TMPDIR="$WORK/tmp" PATH="$WORK/bin:$PATH" "$HML" -q -C exp train --epochs 1 --threads 1 &
	pid=$!
	for _ in $(seq 600); do [ -s cc.pid ] && break; sleep 0.1; done
	[ -s cc.pid ]
	dir=$(ls tmp)
	[ "$dir" = "hml-latency-$pid-${dir##*-}" ]
	kill -9 "$pid"
	wait "$pid" || true
	kill "$(cat cc.pid)"
	[ -d "tmp/$dir" ]
	# The next training measures with the real cc: the directory is gone,
	# and its own was removed when it was done.
	touch release
	TMPDIR="$WORK/tmp" hml -q -C exp train --epochs 1 --threads 1 >/dev/null
	[ -z "$(ls -A tmp)" ]
	[ "$(json exp/manifest.json 'd["models"][-1]["latency"]["c"] > 0')" = True ]
}
