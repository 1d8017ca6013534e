#!/bin/bash
# bench/kill.sh - kill -9 at random moments, then check that nothing was
# lost or left half-done:
#
#  collect  N SIGKILLs of the binomial application collecting on its own
#           (HML_MODE=collect, a flush after every call): every file that
#           exists opens with h5py, its input, output and per-call records
#           agree (rows >= 512 x calls, offsets consecutive; rows past the
#           last call record, left by a kill inside a flush, are counted and
#           ignored, as lib/train/dataset.c's reader does), and its rows are
#           exactly the first rows of a full, unkilled run's file: every call
#           flushed before the kill is there, intact, and nothing else.
#  cli      N SIGKILLs of `hml collect` (with its application) or `hml
#           train`, chosen at random, all on one experiment: after each, the
#           manifest parses, `hml show` accepts it, every record's files
#           exist with the SHA-256 recorded for them, a data set of an
#           interrupted run says complete=false, and no record is there
#           twice or half-written; the next command works.
#
# usage: bench/kill.sh [-b BUILD] [-n N] [-s SEED] [-o OPTIONS] [collect|cli]...
#   -b  build directory (default build), -n kills per part (default 100),
#   -s  seed of the random delays (default: the time), -o options priced
#   by each binomial run of the collect part (default 32768; the cli
#   part's killed collections price twice as many), parts default both.
#   The end-to-end test (tests/e2e/085-kill.bats) runs a few kills of
#   smaller runs: the checks are the same at any size.
# Prints one line per part with its counts; exits 1 when any check failed.
# Each delay is drawn uniformly below the measured duration of an unkilled
# run of the same command (timed first), so that kills land while it runs;
# the exit status says where each landed, and the counts say how many
# killed a running process and how many came after it had ended (those
# test nothing and are reported, not hidden). Delays are random, so a run
# with the same seed kills at similar, not identical, moments; the checks
# hold whatever the moment.
set -u

build=build
n=100
seed=$(date +%s)
options=32768
while getopts b:n:s:o: opt; do
	case $opt in
	b) build=$OPTARG ;;
	n) n=$OPTARG ;;
	s) seed=$OPTARG ;;
	o) options=$OPTARG ;;
	*) echo "usage: $0 [-b BUILD] [-n N] [-s SEED] [-o OPTIONS] [collect|cli]..." >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
parts=${*:-collect cli}
build=$(cd "$build" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
BIN="$build/workflows/binomial/binomial"
HML="$build/cmd/hml"
PY=${HML_TEST_PYTHON:-/usr/bin/python3}
RANDOM=$seed
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMP_NUM_THREADS=1 HML_WORKFLOW_PATH=
unset HML_MODE HML_MODEL HML_DB HML_QOI HML_PROFILE HML_THREADS HML_EXPERIMENT
failed=0

# delay MAX_MS: a random sleep of 0 to MAX_MS milliseconds.
delay() {
	local ms=$(( (RANDOM * 32768 + RANDOM) % $1 ))
	sleep "$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))"
}

# timed CMD...: run CMD, set `took` to its wall time in ms (at least 1).
timed() {
	local t0 rc
	t0=$(date +%s%3N)
	"$@"
	rc=$?
	took=$(( $(date +%s%3N) - t0 ))
	[ "$took" -ge 1 ] || took=1
	return $rc
}

# landed STATUS: count where a kill landed, from the killed job's exit
# status: 137 (SIGKILL) while it ran; 0 after it had ended; else an error
# exit of its own before the kill (counted, and a failure).
landed() {
	case $1 in
	137) while_running=$((while_running + 1)) ;;
	0) after_end=$((after_end + 1)) ;;
	*) own_error=$((own_error + 1)) ;;
	esac
}

collect_part() {
	local args=(--options "$options" --batch 512 --seed 7 --quiet) i pid out
	local files=0 absent=0 calls=0 bad=0 past=0 took run_ms
	local while_running=0 after_end=0 own_error=0
	HML_MODE=collect HML_DB="$work/ref.h5" "$BIN" "${args[@]}" || { echo "kill: reference run failed"; return 1; }
	# An unkilled run as the killed ones run (a flush after every call).
	timed env HML_MODE=collect HML_DB="$work/timed.h5" HML_FLUSH_BYTES=1 "$BIN" "${args[@]}" ||
		{ echo "kill: timed run failed"; return 1; }
	run_ms=$took
	rm -f "$work/timed.h5"
	for ((i = 1; i <= n; i++)); do
		HML_MODE=collect HML_DB="$work/k$i.h5" HML_FLUSH_BYTES=1 "$BIN" "${args[@]}" &
		pid=$!
		delay "$run_ms"
		kill -9 "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		landed $?
		if [ ! -e "$work/k$i.h5" ]; then
			absent=$((absent + 1))
			continue
		fi
		if out=$("$PY" - "$work/k$i.h5" "$work/ref.h5" 2>&1 <<'EOF2'
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
ref = h5py.File(sys.argv[2], "r")["binomial"]
if "binomial" not in f:          # killed before the first call was flushed
    print(0); sys.exit(0)
g = f["binomial"]
c = g["calls"][:]
k = len(c)
# rows past the last call record (a kill inside a flush) are allowed: the
# reader (lib/train/dataset.c) reads no more rows than the calls table accounts for
assert g["input"].shape[0] >= 512 * k and g["output"].shape[0] >= 512 * k, (g["input"].shape, g["output"].shape, k)
if g["input"].shape[0] > 512 * k or g["output"].shape[0] > 512 * k:
    print(k, "past"); sys.exit(0)
assert (c["call"] == np.arange(k)).all() and (c["input_offset"] == 512 * c["call"]).all()
assert np.array_equal(g["input"][:], ref["input"][:512 * k])
assert np.array_equal(g["output"][:], ref["output"][:512 * k])
print(k)
EOF2
		); then
			files=$((files + 1))
			case $out in *past) past=$((past + 1)); out=${out% past} ;; esac
			calls=$((calls + out))
		else
			bad=$((bad + 1))
			echo "kill: collect $i: $out" >&2
			cp "$work/k$i.h5" "$work/../hml-kill-bad-$i.h5" 2>/dev/null
		fi
		rm -f "$work/k$i.h5"
	done
	echo "collect: $n kills of binomial collecting (delays below its unkilled ${run_ms} ms): $while_running while it ran, $after_end after it had ended, $own_error after an error exit of its own; $files files checked ($calls calls kept, all intact; $past with rows past the last call record, which the reader ignores), $absent killed before the file was made, $bad bad"
	[ "$bad" = 0 ] && [ "$own_error" = 0 ]
}

# check_experiment DIR: the manifest and every recorded file agree.
check_experiment() {
	"$HML" -q -C "$1" show >/dev/null || { echo "hml show refuses the experiment"; return 1; }
	"$PY" - "$1" <<'EOF2'
import hashlib, json, os, sys
d = sys.argv[1]
m = json.load(open(os.path.join(d, "manifest.json")))
for coll in ("datasets", "models", "deployments", "evaluations"):
    ids = [r["id"] for r in m.get(coll, [])]
    assert len(ids) == len(set(ids)), (coll, ids)
    for r in m.get(coll, []):
        sums = r.get("provenance", {}).get("sha256", {})
        for role, rel in r.get("files", {}).items():
            p = os.path.join(d, rel)
            assert os.path.isfile(p), (r["id"], rel, "missing")
            if rel in sums:
                h = hashlib.sha256(open(p, "rb").read()).hexdigest()
                assert h == sums[rel], (r["id"], rel, "sha256 differs")
        if coll == "datasets":
            assert isinstance(r.get("complete"), bool), (r["id"], "no complete flag")
EOF2
}

cli_part() {
	local exp="$work/exp" i pid what bad=0 ncollect=0 ntrain=0 before after partial took
	local collect_ms train_ms while_running=0 after_end=0 own_error=0
	local collect=(collect binomial --args "--options $((2 * options)) --batch 512 --seed {seed}")
	local train=(train --epochs 5 --threads 1 --arch mlp:16)
	"$HML" -q -C "$exp" collect binomial --args '--options 8192 --batch 512 --seed {seed}' >/dev/null ||
		{ echo "kill: first collect failed"; return 1; }
	# Unkilled runs of each command, timed (one more data set and model).
	timed "$HML" -q -C "$exp" "${collect[@]}" >/dev/null || { echo "kill: timed collect failed"; return 1; }
	collect_ms=$took
	timed "$HML" -q -C "$exp" "${train[@]}" >/dev/null || { echo "kill: timed train failed"; return 1; }
	train_ms=$took
	for ((i = 1; i <= n; i++)); do
		before=$("$PY" -c 'import json,sys; m=json.load(open(sys.argv[1])); print(len(m["datasets"]) + len(m["models"]))' "$exp/manifest.json")
		if ((RANDOM % 2)); then
			what=collect
			ncollect=$((ncollect + 1))
			setsid "$HML" -q -C "$exp" "${collect[@]}" >/dev/null 2>&1 &
			pid=$!
			delay "$collect_ms"
		else
			what=train
			ntrain=$((ntrain + 1))
			setsid "$HML" -q -C "$exp" "${train[@]}" >/dev/null 2>&1 &
			pid=$!
			delay "$train_ms"
		fi
		kill -9 -- "-$pid" 2>/dev/null   # hml and the application it runs
		wait "$pid" 2>/dev/null
		landed $?
		if ! msg=$(check_experiment "$exp" 2>&1); then
			bad=$((bad + 1))
			echo "kill: cli $i ($what): $msg" >&2
			cp -r "$exp" "$work/../hml-kill-bad-exp-$i" 2>/dev/null
			break
		fi
		after=$("$PY" -c 'import json,sys; m=json.load(open(sys.argv[1])); print(len(m["datasets"]) + len(m["models"]))' "$exp/manifest.json")
		if [ "$after" -lt "$before" ] || [ "$after" -gt $((before + 1)) ]; then
			bad=$((bad + 1))
			echo "kill: cli $i ($what): records went from $before to $after" >&2
		fi
	done
	partial=$("$PY" -c 'import json,sys; m=json.load(open(sys.argv[1])); print(sum(not r["complete"] for r in m["datasets"]), len(m["datasets"]), len(m["models"]))' "$exp/manifest.json")
	# The experiment still works after all that.
	if ! "$HML" -q -C "$exp" train --epochs 1 --threads 1 --arch mlp:8 >/dev/null; then
		bad=$((bad + 1))
		echo "kill: cli: hml train fails after the kills" >&2
	fi
	set -- $partial
	echo "cli: $n kills ($ncollect hml collect, delays below its unkilled ${collect_ms} ms; $ntrain hml train, below ${train_ms} ms): $while_running while it ran, $after_end after it had ended, $own_error after an error exit of its own; manifest valid after each; $2 data sets ($1 flagged incomplete), $3 models registered; $bad bad"
	[ "$bad" = 0 ] && [ "$own_error" = 0 ]
}

echo "kill: seed $seed, $n kills per part, load average $(cut -d' ' -f1-3 /proc/loadavg)"
for p in $parts; do
	case $p in
	collect) collect_part || failed=1 ;;
	cli) cli_part || failed=1 ;;
	*) echo "kill: unknown part '$p'" >&2; exit 2 ;;
	esac
done
exit $failed
