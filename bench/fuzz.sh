#!/bin/sh
# bench/fuzz.sh - the long fuzzing run: every libFuzzer target for RUNS
# executions (default 10 million), with the clang build in FUZZ_BUILD.
# Prints the execution counts and whether anything crashed; CI runs the
# same targets for a few thousand executions (ctest's fuzz.smoke).
#
# usage: bench/fuzz.sh [BUILD] [RUNS] [FUZZ_BUILD] [SECONDS] [TARGET...]
#   SECONDS: wall-time limit per target (default 0: none); a target stopped
#   by it reports the executions it made.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build}
runs=${2:-10000000}
fbuild=${3:-build-fuzz}
seconds=${4:-0}
[ $# -gt 4 ] && shift 4 || shift $#
start=$(date +%s)
"$here/../scripts/fuzz.sh" -b "$fbuild" -s "$build" -n "$runs" -t "$seconds" "$@"
echo "all targets: up to $runs executions each, $(( $(date +%s) - start )) s"
