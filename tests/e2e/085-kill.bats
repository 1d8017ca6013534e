#!/usr/bin/env bats
# kill -9 at random moments loses nothing: the small version of
# bench/kill.sh (which runs 100 kills per part). The delays come from a
# fixed seed; the checks hold at whatever moment a kill lands.

load helpers

setup() { common_setup; }

@test "binomial killed while collecting: every file readable, its calls intact" {
	run "$HML_SOURCE_DIR/bench/kill.sh" -b "$HML_BUILD_DIR" -n 3 -s 11 collect
	assert_success
	assert_output --partial "collect: 3 kills of binomial collecting:"
	assert_output --partial ", 0 bad"
}

@test "hml collect and hml train killed: the manifest stays valid, nothing half-registered" {
	run "$HML_SOURCE_DIR/bench/kill.sh" -b "$HML_BUILD_DIR" -n 4 -s 5 cli
	assert_success
	assert_output --partial "cli: 4 kills ("
	assert_output --partial "manifest valid after each"
	assert_output --partial "; 0 bad"
}
