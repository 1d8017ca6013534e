#!/bin/sh
# bench/cli-startup.sh - how the hml command starts (issue 24, item 7): wall
# time and peak resident memory of `hml --version`, `hml CMD --help` for
# every command, and `hml show`, `hml ls`, `hml show --json`, `hml deploy
# --best` on a small real experiment, against a C program that only prints
# a version, built in this run with the system compiler (cc -O2).
# Goal: every one within 20 ms and 10 MB of that program (PASS/FAIL).
#
# None of these commands trains or reads a TorchScript file, so none needs
# libtorch, HDF5, LAPACKE/NLopt or MPI, which the CLI loads as plugins when
# a command does (runtime/loader/loader.h). For information, `hml train`
# on the same data (--epochs 20 --threads 1 --seed 7, OMP_NUM_THREADS=1):
# it loads libtorch and must not get slower.
#
# --before HML measures a second hml executable the same way (e.g.
# /work/base-build/cmd/hml, built before the plugins), side by side, trains
# with it on the same collected data and says whether the two models are
# byte-identical.
#
# Time: hyperfine without a shell, 5 warm-up runs, the median of RUNS runs
# (default 100), the C program's measured in the same call as each
# command's. Memory: /usr/bin/time's maximum resident set size, the median
# of 9 runs. `hml train`: TRAIN_RUNS runs (default 5) of each build in
# turn after one unmeasured pair, /usr/bin/time's wall time and peak RSS.
# The experiment is made by the build's own hml (collect binomial, 4096
# rows; train); deploy --best registers a deployment, so the manifest is
# restored before every run of it. Nothing here is a test: a shared
# machine's timings vary (the load average is printed first).
#
# usage: bench/cli-startup.sh [-b BUILD_DIR] [-r RUNS] [-t TRAIN_RUNS] [--before HML]
set -eu

build=build
runs=100
train_runs=5
before=
while [ $# -gt 0 ]; do
	case $1 in
	-b) build=$2; shift 2 ;;
	-r) runs=$2; shift 2 ;;
	-t) train_runs=$2; shift 2 ;;
	--before) before=$2; shift 2 ;;
	*) echo "usage: $0 [-b BUILD_DIR] [-r RUNS] [-t TRAIN_RUNS] [--before HML]" >&2; exit 2 ;;
	esac
done
py=/usr/bin/python3
hml=$(cd "$build/cmd" && pwd)/hml
[ -x "$hml" ] || { echo "bench/cli-startup.sh: no $hml (build first)" >&2; exit 1; }
command -v hyperfine >/dev/null || { echo "bench/cli-startup.sh needs hyperfine" >&2; exit 1; }
if [ -n "$before" ]; then
	before=$(cd "$(dirname "$before")" && pwd)/$(basename "$before")
	[ -x "$before" ] || { echo "bench/cli-startup.sh: --before $before is not executable" >&2; exit 1; }
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export OMP_NUM_THREADS=1 HML_WORKFLOW_PATH=
unset HML_EXPERIMENT HML_MODE HML_MODEL HML_DB HML_PROFILE HML_QOI
cd "$tmp"

# The yardstick: a C program that prints a version and exits.
cat > version.c <<'EOF'
#include <stdio.h>

int main(void)
{
	printf("hml 0.1.0\n");
	return ferror(stdout) != 0;
}
EOF
cc -O2 -o version version.c

# A small real experiment: one collection, one model.
"$hml" -q -C exp collect binomial --args '--options 4096 --seed {seed}' >/dev/null
"$hml" -q -C exp train --epochs 5 --threads 1 --seed 7 --arch mlp:32x32:relu >/dev/null
cp exp/manifest.json manifest.orig
cp -r exp exp0

# wall ARGS...: the median wall times in seconds of the C program and of
# ARGS, one hyperfine call without a shell for both (the C program's runs
# just before those of ARGS, so that both see the same machine: its load
# changes over a run of this script); PREPARE, a shell command line
# without single quotes, when set, runs before each run of either.
wall() {
	if [ -n "${PREPARE:-}" ]; then
		hyperfine -N --warmup 5 --runs "$runs" --prepare "sh -c '$PREPARE'" \
			--export-json h.json --style none ./version "$*" >/dev/null 2>&1
	else
		hyperfine -N --warmup 5 --runs "$runs" --export-json h.json --style none \
			./version "$*" >/dev/null 2>&1
	fi
	"$py" -c 'import json, sys; r = json.load(open(sys.argv[1]))["results"]; print(r[0]["median"], r[1]["median"])' h.json
}

# rss ARGS...: median peak RSS in KB of ARGS over 9 runs; PREPARE, when
# set, runs before each run.
rss() {
	for _ in 1 2 3 4 5 6 7 8 9; do
		[ -z "${PREPARE:-}" ] || sh -c "$PREPARE"
		/usr/bin/time -f "%M" -o t "$@" >/dev/null 2>&1 || true
		cat t
	done | sort -n | sed -n 5p
}

: > rows
# row WHO NAME ARGS...: one measured line (who, name, the C program's and
# ARGS's median s, ARGS's RSS KB).
row() {
	who=$1 name=$2
	shift 2
	t=$(wall "$@")
	m=$(rss "$@")
	printf '%s\t%s\t%s\t%s\t%s\n' "$who" "$name" "${t% *}" "${t#* }" "$m" >> rows
}

# measure WHO HML: every command of the goal, run by the executable HML.
measure() {
	who=$1 x=$2
	row "$who" "--version" "$x" --version
	for c in $("$x" --json --version | "$py" -c 'import json, sys; print(" ".join(json.load(sys.stdin)["commands"]))') \
	         search-worker; do
		row "$who" "$c --help" "$x" "$c" --help
	done
	row "$who" "show" "$x" -C exp show
	row "$who" "ls" "$x" -C exp ls
	row "$who" "show --json" "$x" -C exp show --json
	(PREPARE="cp manifest.orig exp/manifest.json"; row "$who" "deploy --best" "$x" -C exp deploy --best)
	cp manifest.orig exp/manifest.json
}

echo "hml start-up: median of $runs runs (time), of 9 (peak RSS); OMP_NUM_THREADS=1;" \
	"load average $(cut -d' ' -f1-3 /proc/loadavg), $(getconf _NPROCESSORS_ONLN) cores"
echo "measured: $hml"
[ -z "$before" ] || echo "before:   $before"
base_rss=$(rss ./version)
measure after "$hml"
[ -z "$before" ] || measure before "$before"

# hml train on fresh copies of the same collected data, after and before
# in turn (A B A B ...: a pair sees the same machine), one unmeasured pair
# first: wall time, peak RSS and the model's hash of each run.
train="train --epochs 20 --threads 1 --seed 7 --arch mlp:32x32:relu"
: > train
i=0
while [ $i -le "$train_runs" ]; do
	for who in after before; do
		case $who in
		after) x=$hml ;;
		before) [ -n "$before" ] || continue; x=$before ;;
		esac
		rm -rf expt && cp -r exp0 expt
		# shellcheck disable=SC2086
		/usr/bin/time -f "%e %M" -o t "$x" -q -C expt $train >/dev/null
		[ $i -eq 0 ] || printf '%s\t%s\t%s\n' "$who" "$(cat t)" \
			"$(sha256sum < expt/models/m1.pt | cut -c1-16)" >> train
	done
	i=$((i + 1))
done

"$py" - rows train "$base_rss" "$train" <<'PY'
import statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
mb = float(sys.argv[3])
print(f"\n  {'':8s} {'command':22s} {'time':>9s} {'C':>7s} {'vs C':>9s} {'ratio':>6s}"
      f" {'max RSS':>8s} {'vs C':>8s} {'ratio':>6s}")
fails = {}
for who, name, tb, t, m in rows:
    tb, t, m = float(tb), float(t), float(m)
    dt, dm = (t - tb) * 1e3, (m - mb) / 1024
    ok = dt <= 20 and dm <= 10
    fails.setdefault(who, [])
    if not ok:
        fails[who].append(name)
    print(f"  {who:8s} {name:22s} {t * 1e3:6.2f} ms {tb * 1e3:4.2f} ms {dt:+6.2f} ms {t / tb:5.1f}x"
          f" {m / 1024:5.1f} MB {dm:+5.1f} MB {m / mb:5.1f}x  {'PASS' if ok else 'FAIL'}")
print(f"\n  C: the C program printing a version, timed in the same hyperfine call as the row;"
      f" its peak RSS {mb / 1024:.1f} MB")
for who, f in fails.items():
    print(f"  {who}: {'PASS: every command' if not f else 'FAIL: ' + ', '.join(f)}"
          " within 20 ms and 10 MB of the C program")
runs = {}
for who, tm, h in (l.rstrip("\n").split("\t") for l in open(sys.argv[2])):
    t, m = tm.split()
    runs.setdefault(who, []).append((float(t), float(m), h))
print(f"\n  hml {sys.argv[4]} (4096 rows, OMP_NUM_THREADS=1),"
      f" {len(runs['after'])} runs each: median wall time, median peak RSS, the models' sha256:")
for who, r in runs.items():
    print(f"  {who:8s} {statistics.median(x[0] for x in r):7.2f} s"
          f" {statistics.median(x[1] for x in r) / 1024:7.1f} MB  {' '.join(sorted({x[2] for x in r}))}")
if "before" in runs:
    a, b = runs["after"], runs["before"]
    tr = statistics.median(x[0] / y[0] for x, y in zip(a, b))
    mr = statistics.median(x[1] / y[1] for x, y in zip(a, b))
    same = {x[2] for x in a} == {y[2] for y in b} and len({x[2] for x in a}) == 1
    print(f"  after/before, median of the pairs: time {tr:.3f}x, peak RSS {mr:.3f}x;"
          f" models {'byte-identical' if same else 'DIFFER'}")
PY
