#!/bin/sh
# bench/train-wait.sh - libgomp's wait policy in `hml train` on a shared
# machine: the same training (binomial, 4096 options, mlp:64x64:relu, 5
# epochs, --threads THREADS, one seed) with OMP_WAIT_POLICY=active
# (libgomp's default when the variable is unset) and passive (hml's
# default since it loads libtorch with it, hml-train(1) ENVIRONMENT),
# alternated REPEAT times, while LOAD busy loops (`yes`) share the cores
# the way other jobs of a shared node do. Prints each run's wall seconds,
# the medians and the ratio active / passive; the load average first.
#
# usage: bench/train-wait.sh [BUILD_DIR] [REPEAT] [LOAD] [THREADS]
#   defaults: build 3, LOAD = the cores, THREADS 2
set -eu
build=${1:-build}
repeat=${2:-3}
load=${3:-$(nproc)}
threads=${4:-2}
hml=$(cd "$build" && pwd)/cmd/hml
tmp=$(mktemp -d)
pids=
cleanup() {
	[ -z "$pids" ] || kill $pids 2>/dev/null || :
	rm -rf "$tmp"
}
trap cleanup EXIT
"$hml" -q -C "$tmp/exp" collect binomial --args '--options 4096 --seed {seed}' >/dev/null
i=0
while [ "$i" -lt "$load" ]; do
	yes >/dev/null &
	pids="$pids $!"
	i=$((i + 1))
done
echo "load: $load busy loops on $(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg)"
r=1
while [ "$r" -le "$repeat" ]; do
	for pol in active passive; do
		rm -rf "$tmp/e" && cp -r "$tmp/exp" "$tmp/e"
		s=$(date +%s.%N)
		OMP_WAIT_POLICY=$pol "$hml" -q -C "$tmp/e" train --threads "$threads" --epochs 5 \
			--arch mlp:64x64:relu --seed 1 >/dev/null
		e=$(date +%s.%N)
		echo "$pol $(echo "$e - $s" | bc)" >> "$tmp/times"
		echo "  run $r $pol: $(tail -1 "$tmp/times" | cut -d' ' -f2) s"
	done
	r=$((r + 1))
done
/usr/bin/python3 - "$tmp/times" <<'PY'
import statistics, sys
t = {}
for l in open(sys.argv[1]):
    k, v = l.split()
    t.setdefault(k, []).append(float(v))
a, p = statistics.median(t["active"]), statistics.median(t["passive"])
print("median wall seconds: active %.2f, passive %.2f; active / passive %.2f" % (a, p, a / p))
PY
