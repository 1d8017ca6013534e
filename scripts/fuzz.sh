#!/bin/sh
# scripts/fuzz.sh - build hml's libFuzzer targets with clang (a build
# directory of their own, -DHML_FUZZ=ON: AddressSanitizer and UBSan on
# everything) and run each for a fixed number of executions from its seed
# corpus in tests/fuzz/corpus/ (copied: the tree is never written).
#
# usage: scripts/fuzz.sh [-b FUZZ_BUILD] [-s BUILD] [-n RUNS] [-t SECONDS] [-S SEED] [TARGET...]
#        scripts/fuzz.sh [-b FUZZ_BUILD] -c TARGET FILE...
#   -b  the clang build directory (default build-fuzz; configured if needed)
#   -s  a normal build directory whose binomial makes the seed of the
#       collected-data reader (default build; skipped when absent)
#   -n  executions per target (default 10000; at least that many: fork mode
#       fuzzes in jobs and stops after the one that reaches it)
#   -t  stop a target after SECONDS of wall time even if it has not made
#       its RUNS (libFuzzer's -max_total_time; default: no limit); the
#       line printed says how many executions it made
#   -S  libFuzzer's random seed (default: a new one each run); a fixed seed
#       makes a run of one build repeat exactly (ctest's fuzz.smoke uses 1)
#   -c  replay each FILE alone through TARGET and print "FILE: CLASS" (the
#       classification below: hdf5, hml or not reproduced); no fuzzing
# Prints one line per target: executions, new corpus entries, and the faults
# found (crashes, leaks, hangs, out-of-memory), each run once more alone and
# classified: inside libhdf5 (HDF5's own defects on corrupt files, counted
# and kept, see tests/fuzz/hdf5-defects/README) or elsewhere. Exits 1 when
# any fault is not inside libhdf5 (reproducers and reports kept in
# FUZZ_BUILD/fuzz-crashes/).
set -eu

src=$(cd "$(dirname "$0")/.." && pwd)
fbuild=build-fuzz
sbuild=build
runs=10000
seconds=0
seed=0
replay=
while getopts b:s:n:t:S:c: opt; do
	case $opt in
	b) fbuild=$OPTARG ;;
	s) sbuild=$OPTARG ;;
	n) runs=$OPTARG ;;
	t) seconds=$OPTARG ;;
	S) seed=$OPTARG ;;
	c) replay=$OPTARG ;;
	*) echo "usage: $0 [-b FUZZ_BUILD] [-s BUILD] [-n RUNS] [-t SECONDS] [-S SEED] [TARGET...]" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
if [ -n "$replay" ]; then
	files=$*
	set -- "$replay"
fi
targets=${*:-fuzz_functor fuzz_workflow fuzz_manifest fuzz_dataset fuzz_arch fuzz_space fuzz_history fuzz_archive fuzz_cmodel_elf fuzz_directive}

if [ ! -f "$fbuild/CMakeCache.txt" ]; then
	cmake -S "$src" -B "$fbuild" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
	      -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHML_FUZZ=ON -DHML_BUILD_TESTS=OFF \
	      -DHML_BUILD_WORKFLOWS=OFF -DHML_BUILD_BENCH=OFF >/dev/null
fi
# shellcheck disable=SC2086
cmake --build "$fbuild" -j"$(nproc)" --target $targets >/dev/null

# allocator_may_return_null: an impossible request (HDF5 asks for 8 EB when
# a corrupt length reaches H5C_protect) gets NULL, as from glibc, and HDF5
# reports an error; one that would succeed but exceeds -malloc_limit_mb
# still stops the input as out-of-memory. tests/fuzz/lsan.supp: HDF5's own
# leaks on corrupt files, each entry with its reason.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}allocator_may_return_null=1"
LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$src/tests/fuzz/lsan.supp:print_suppressions=0"
export ASAN_OPTIONS LSAN_OPTIONS

# classify LOG: whose fault a sanitizer or libFuzzer report shows -- "hdf5"
# when the first stack frame outside the sanitizer runtime, libFuzzer and
# libc is in libhdf5 (HDF5 1.10.8 crashes, hangs or over-allocates on some
# corrupt files; see tests/fuzz/hdf5-defects/README), "hml" when it is
# anywhere else, "not reproduced" when the input ran clean alone.
classify() {
	awk '
	/^ *#[0-9]+ 0x/ {
		seen = 1
		if ($0 ~ /__interceptor_|__asan|__sanitizer|__lsan|__ubsan|fuzzer::|libFuzzer|libc\.so|sysdeps|in (malloc|calloc|realloc|free|strdup|memcpy|memmove) /) next
		print ($0 ~ /libhdf5/ ? "hdf5" : "hml"); found = 1; exit
	}
	END { if (!found) print (seen ? "hml" : "not reproduced") }' "$1"
}

work=$(mktemp -d)
# the targets' files go to $work/tmp (tests/fuzz/fuzz_files.h), removed with
# $work: never another run's
trap 'rm -rf "$work"' EXIT
mkdir "$work/tmp"
opts="-rss_limit_mb=2048 -malloc_limit_mb=1024 -timeout=20 -max_len=65536"

# replay TARGET FILE LOG: run FILE alone through TARGET, its report to LOG.
# A report of the RSS limit lists the stacks of the live heap, not of the
# allocation that grew the process (a large one in flight is not among
# them), so it says nothing of whose fault it is: such an input runs once
# more with a higher RSS limit, and the 1-GB malloc limit then stops the
# large allocation where it is made.
replay_one() {
	# shellcheck disable=SC2086
	TMPDIR="$work/tmp" timeout -s KILL 120 "$fbuild/tests/fuzz/$1" $opts "$2" > "$3" 2>&1 || true
	if grep -q 'ERROR: libFuzzer: out-of-memory (used:' "$3"; then
		# shellcheck disable=SC2086
		TMPDIR="$work/tmp" timeout -s KILL 120 "$fbuild/tests/fuzz/$1" $opts \
			-rss_limit_mb=8192 "$2" > "$3" 2>&1 || true
	fi
}

if [ -n "$replay" ]; then
	for f in $files; do
		replay_one "$replay" "$f" "$work/replay.log"
		echo "$f: $(classify "$work/replay.log")"
	done
	exit 0
fi
failed=0
for t in $targets; do
	mkdir -p "$work/$t" "$work/$t.crash"
	if [ -d "$src/tests/fuzz/corpus/$t" ]; then
		cp "$src/tests/fuzz/corpus/$t"/* "$work/$t"/
	fi
	if [ "$t" = fuzz_dataset ] && [ -x "$sbuild/workflows/binomial/binomial" ]; then
		# A collected file holds whole chunks (1.6 MB for 64 rows), past
		# -max_len: cut to 64 KiB it is refused at once and the fuzzer never
		# reaches the reader's valid paths (coverage 29 against 103). The
		# seeds are the same file re-chunked and compressed by h5repack
		# (hdf5-tools), about 20 KB each.
		HML_MODE=collect HML_DB="$work/binomial.h5" OMP_NUM_THREADS=1 \
			"$sbuild/workflows/binomial/binomial" --options 64 --batch 16 >/dev/null
		chunks="-l /binomial/input:CHUNK=64x5 -l /binomial/output:CHUNK=64x1 -l /binomial/calls:CHUNK=16"
		# shellcheck disable=SC2086
		h5repack $chunks "$work/binomial.h5" "$work/$t/binomial-rechunked.h5"
		# shellcheck disable=SC2086
		h5repack $chunks -f GZIP=9 "$work/binomial.h5" "$work/$t/binomial-gzip.h5"
	fi
	seeds=$(ls "$work/$t" | wc -l)
	bin="$fbuild/tests/fuzz/$t"
	# Fork mode: a crash, timeout or out-of-memory is saved and fuzzing goes
	# on, so that one run counts them all; each is then classified.
	# shellcheck disable=SC2086
	TMPDIR="$work/tmp" "$bin" -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
		-runs="$runs" -max_total_time="$seconds" -seed="$seed" $opts \
		-artifact_prefix="$work/$t.crash/" -print_final_stats=1 "$work/$t" \
		> "$work/$t.log" 2>&1 || true
	done_runs=$(sed -n 's/^INFO: fuzzed for \([0-9]*\) iterations.*/\1/p' "$work/$t.log" | tail -n 1)
	[ -n "$done_runs" ] ||
		done_runs=$(sed -n 's/^#\([0-9]*\): cov:.*/\1/p' "$work/$t.log" | tail -n 1)
	# Each saved input, run once more alone: where its report says the
	# fault is decides whose it is (classify above).
	nh=0 nx=0
	for a in "$work/$t.crash"/*; do
		[ -f "$a" ] || continue
		replay_one "$t" "$a" "$a.log"
		case $(classify "$a.log") in
		hdf5) nh=$((nh + 1)); echo "$t: $(basename "$a"): inside libhdf5 (an HDF5 defect)" >&2 ;;
		*) nx=$((nx + 1)); echo "$t: $(basename "$a"): $(classify "$a.log")" >&2
		   grep -E 'ERROR|SUMMARY|#[0-9]+ ' "$a.log" | head -n 8 >&2 ;;
		esac
	done
	[ -n "$done_runs" ] && grep -q '^INFO: fuzzed for\|^#[0-9]*: cov' "$work/$t.log" || nx=$((nx + 1))
	status=ok
	[ "$nx" -eq 0 ] || { status=FAILED; failed=1; }
	after=$(ls "$work/$t" | wc -l)
	printf '%-14s %s executions, %d seeds -> %d corpus entries, %d faults inside HDF5, %d others: %s\n' \
	       "$t" "${done_runs:-?}" "$seeds" "$after" "$nh" "$nx" "$status"
	if [ "$nh" -gt 0 ] || [ "$nx" -gt 0 ]; then
		mkdir -p "$fbuild/fuzz-crashes"
		cp "$work/$t.crash"/* "$fbuild/fuzz-crashes/" 2>/dev/null || true
		echo "reproducer(s) and their reports kept in $fbuild/fuzz-crashes/" >&2
	fi
done
exit $failed
