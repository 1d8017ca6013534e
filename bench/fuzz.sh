#!/bin/sh
# bench/fuzz.sh - the long fuzzing run: every libFuzzer target for RUNS
# executions (default 10 million), with the clang build in FUZZ_BUILD.
# Prints the execution counts and whether anything crashed; CI runs the
# same targets for a few thousand executions (ctest's fuzz.smoke).
#
# usage: bench/fuzz.sh [BUILD] [RUNS] [FUZZ_BUILD]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build}
runs=${2:-10000000}
fbuild=${3:-build-fuzz}
start=$(date +%s)
"$here/../scripts/fuzz.sh" -b "$fbuild" -s "$build" -n "$runs"
echo "all targets: $runs executions each, $(( $(date +%s) - start )) s"
