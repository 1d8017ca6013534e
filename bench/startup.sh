#!/bin/sh
# bench/startup.sh - what linking hml costs a program: wall time and peak
# resident memory of `binomial --options 1` (start-up, one option, exit)
# against binomial_baseline, the same program built without hml, measured
# in this run (#13; goal for off mode: <= 5 ms and <= 5 MB more).
#
# Like with like: both executables are built from the same source with the
# same compiler flags, functions and loops aligned to 64 bytes
# (workflows/CMakeLists.txt, ALIGNED; this script prints both compile
# lines' flags and says whether they agree), run with the same environment
# (the HML_* settings are in hyperfine's environment, so no `env` exec is
# timed; the baseline ignores them), OMP_NUM_THREADS=1.
# Time: hyperfine without a shell, 3 warm-up runs, the median of RUNS runs
# (10 at most for TorchScript, whose runs take about half a second each).
# Memory: /usr/bin/time's maximum resident set size, the median of 9 runs.
#
# Off mode is the figure the goal is about. For information: collect mode
# (loads the HDF5 plugin, writes a collection file), infer with the model
# compiled to C (hml deploy --target c: loads the .so, no libtorch) and
# infer with the same model in TorchScript (loads the libtorch plugin), a
# 5-64-64-1 MLP trained for one epoch by the real CLI on 256 collected rows.
#
# usage: bench/startup.sh [BUILD_DIR] [RUNS]
set -eu

build=${1:-build}
runs=${2:-100}
py=/usr/bin/python3
bin="$build/workflows/binomial/binomial"
base="$build/workflows/binomial/binomial_baseline"
hml="$build/cmd/hml"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export OMP_NUM_THREADS=1 HML_WORKFLOW_PATH=
unset HML_MODE HML_MODEL HML_DB HML_PROFILE HML_QOI

command -v hyperfine >/dev/null || { echo "bench/startup.sh needs hyperfine" >&2; exit 1; }

# flags TARGET: the compile flags of the binomial target TARGET in this
# build tree (Makefile generators), without defines and include paths.
flags() {
	f="$build/workflows/binomial/CMakeFiles/$1.dir/flags.make"
	[ -f "$f" ] && sed -n 's/^C_FLAGS = //p' "$f" || echo "(unknown: no $f)"
}

# wall ARGS...: median wall time in seconds of the program ARGS (run with
# this shell's environment), hyperfine without a shell.
wall() {
	hyperfine -N --warmup 3 --runs "$runs" --export-json "$tmp/h.json" \
		--style none "$*" >/dev/null 2>&1
	"$py" -c 'import json, sys; print(json.load(open(sys.argv[1]))["results"][0]["median"])' "$tmp/h.json"
}

# rss ARGS...: median peak RSS in KB of ARGS over 9 runs.
rss() {
	for _ in 1 2 3 4 5 6 7 8 9; do
		/usr/bin/time -f "%M" -o "$tmp/t" "$@" >/dev/null
		cat "$tmp/t"
	done | sort -n | sed -n 5p
}

echo "start-up of binomial --options 1: median of $runs runs (time), of 9 (peak RSS);" \
	"OMP_NUM_THREADS=1; load average $(cut -d' ' -f1-3 /proc/loadavg), $(getconf _NPROCESSORS_ONLN) cores"
fb=$(flags binomial_baseline)
fh=$(flags binomial)
echo "controlled: same source; compile flags of the no-hml build: $fb"
if [ "$fb" = "$fh" ]; then
	echo "            the hml build's are the same"
else
	echo "            the hml build's DIFFER: $fh"
fi

: > "$tmp/rows"
# row NAME ARGS...: one measured line (name, median s, RSS KB) into rows.
row() {
	name=$1
	shift
	t=$(wall "$@")
	m=$(rss "$@")
	echo "$name	$t	$m" >> "$tmp/rows"
}

row "no-hml build" "$base" --options 1 --quiet
(export HML_MODE=off; row "hml, off mode" "$bin" --options 1 --quiet)
(export HML_MODE=collect HML_DB="$tmp/d.h5"; row "hml, collect" "$bin" --options 1 --quiet)

# A real model of the region, by the real CLI (needs libtorch to train).
if "$hml" -q -C "$tmp/exp" collect binomial --args '--options 256 --batch 256 --seed {seed}' \
	>/dev/null 2>"$tmp/err" &&
   "$hml" -q -C "$tmp/exp" train --epochs 1 --threads 1 >/dev/null 2>>"$tmp/err" &&
   "$hml" -q -C "$tmp/exp" deploy --target c m1 >/dev/null 2>>"$tmp/err"; then
	(export HML_MODE=infer HML_MODEL="$tmp/exp/models/c1.so"
	 row "hml, infer (C model)" "$bin" --options 1 --batch 1 --quiet)
	# About half a second a run: 10 runs at most.
	(export HML_MODE=infer HML_MODEL="$tmp/exp/models/m1.pt"
	 [ "$runs" -le 10 ] || runs=10
	 row "hml, infer (TorchScript)" "$bin" --options 1 --batch 1 --quiet)
else
	echo "(no model: infer rows skipped: $(tail -n 1 "$tmp/err"))"
fi

"$py" - "$tmp/rows" <<'PY'
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
tb, mb = float(rows[0][1]), float(rows[0][2])
for name, t, m in rows:
    t, m = float(t), float(m)
    line = f"  {name:25s} {t * 1e3:9.2f} ms {m / 1024:7.1f} MB"
    if name != rows[0][0]:
        line += f"   {(t - tb) * 1e3:+9.2f} ms {(m - mb) / 1024:+7.1f} MB ({t / tb:.2f}x)"
    if name == "hml, off mode":
        dt, dm = (t - tb) * 1e3, (m - mb) / 1024
        line += (f"   goal <= +5 ms, <= +5 MB: {'met' if dt <= 5 and dm <= 5 else 'NOT met'}")
    print(line)
PY
