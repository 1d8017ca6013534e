#!/bin/sh
# scripts/fuzz.sh - build hml's libFuzzer targets with clang (a build
# directory of their own, -DHML_FUZZ=ON: AddressSanitizer and UBSan on
# everything) and run each for a fixed number of executions from its seed
# corpus in tests/fuzz/corpus/ (copied: the tree is never written).
#
# usage: scripts/fuzz.sh [-b FUZZ_BUILD] [-s BUILD] [-n RUNS] [-t SECONDS] [TARGET...]
#   -b  the clang build directory (default build-fuzz; configured if needed)
#   -s  a normal build directory whose binomial makes the seed of the
#       collected-data reader (default build; skipped when absent)
#   -n  executions per target (default 10000)
#   -t  stop a target after SECONDS of wall time even if it has not made
#       its RUNS (libFuzzer's -max_total_time; default: no limit); the
#       line printed says how many executions it made
# Prints one line per target: executions, new corpus entries, crashes; exits
# 1 when a target crashed, leaked, hung or ran out of memory (the
# reproducer is kept and named).
set -eu

src=$(cd "$(dirname "$0")/.." && pwd)
fbuild=build-fuzz
sbuild=build
runs=10000
seconds=0
while getopts b:s:n:t: opt; do
	case $opt in
	b) fbuild=$OPTARG ;;
	s) sbuild=$OPTARG ;;
	n) runs=$OPTARG ;;
	t) seconds=$OPTARG ;;
	*) echo "usage: $0 [-b FUZZ_BUILD] [-s BUILD] [-n RUNS] [-t SECONDS] [TARGET...]" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
targets=${*:-fuzz_functor fuzz_workflow fuzz_manifest fuzz_dataset fuzz_arch fuzz_space}

if [ ! -f "$fbuild/CMakeCache.txt" ]; then
	cmake -S "$src" -B "$fbuild" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
	      -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHML_FUZZ=ON -DHML_BUILD_TESTS=OFF \
	      -DHML_BUILD_WORKFLOWS=OFF -DHML_BUILD_BENCH=OFF >/dev/null
fi
# shellcheck disable=SC2086
cmake --build "$fbuild" -j"$(nproc)" --target $targets >/dev/null

work=$(mktemp -d)
# the targets' files go to $work/tmp (tests/fuzz/fuzz_files.h), removed with
# $work: never another run's
trap 'rm -rf "$work"' EXIT
mkdir "$work/tmp"
failed=0
for t in $targets; do
	mkdir -p "$work/$t" "$work/$t.crash"
	if [ -d "$src/tests/fuzz/corpus/$t" ]; then
		cp "$src/tests/fuzz/corpus/$t"/* "$work/$t"/
	fi
	if [ "$t" = fuzz_dataset ] && [ -x "$sbuild/workflows/binomial/binomial" ]; then
		HML_MODE=collect HML_DB="$work/$t/binomial.h5" OMP_NUM_THREADS=1 \
			"$sbuild/workflows/binomial/binomial" --options 64 --batch 16 >/dev/null
	fi
	seeds=$(ls "$work/$t" | wc -l)
	if TMPDIR="$work/tmp" "$fbuild/tests/fuzz/$t" -runs="$runs" -max_total_time="$seconds" -rss_limit_mb=2048 -malloc_limit_mb=1024 \
	     -timeout=20 -max_len=65536 -artifact_prefix="$work/$t.crash/" \
	     -print_final_stats=1 "$work/$t" > "$work/$t.log" 2>&1; then
		status=ok
	else
		status=FAILED
		failed=1
	fi
	done_runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$t.log" | tail -n 1)
	after=$(ls "$work/$t" | wc -l)
	printf '%-14s %s executions, %d seeds -> %d corpus entries, %s\n' "$t" \
	       "${done_runs:-?}" "$seeds" "$after" "$status"
	if [ "$status" = FAILED ]; then
		mkdir -p "$fbuild/fuzz-crashes"
		cp "$work/$t.crash"/* "$fbuild/fuzz-crashes/" 2>/dev/null || true
		grep -E 'ERROR|SUMMARY|==[0-9]+==' "$work/$t.log" | head -n 5 >&2
		echo "reproducer(s) kept in $fbuild/fuzz-crashes/" >&2
	fi
done
exit $failed
