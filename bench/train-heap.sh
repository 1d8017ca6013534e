#!/bin/sh
# bench/train-heap.sh - glibc's malloc in `hml train` on large samples:
# hml's setting (cmd_keep_heap, cmd/cmd.h: every block from the heap, up
# to 1 GiB of freed heap kept) against glibc's default (each block of 32
# MiB or more a fresh mmap, unmapped when freed), in the same binary:
# hml leaves malloc as it is when GLIBC_TUNABLES is set, and the baseline
# runs set it to glibc's own default (glibc.malloc.mmap_max=65536).
#
# The data: the particle filter at benchmark size (bench/sizes.sh: 4 runs
# of 96 videos of 10 frames of 128 x 128), its spatial cnnvec, 2
# epochs at the workflow's batch (a batch of 256 videos is 168 MB of
# floats), --threads 2, one seed; the two settings alternated REPEAT
# times. Prints each run's wall, user and system seconds, peak resident
# memory and the samples a second the model card records; then the
# medians and the ratios default / hml. The load average first.
#
# usage: bench/train-heap.sh [BUILD_DIR] [REPEAT]
#   defaults: build 2 (about 5 minutes here)
set -eu
build=${1:-build}
repeat=${2:-2}
hml=$(cd "$build" && pwd)/cmd/hml
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=bench/sizes.sh
. "$here/sizes.sh"
bench_sizes particlefilter bench
# shellcheck disable=SC2154 # runs, cargs, arch: set by bench_sizes
"$hml" -q -C "$tmp/exp" collect particlefilter --runs "$runs" --args "$cargs" >/dev/null
# shellcheck disable=SC2154
echo "load average $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores;" \
     "$runs runs of $cargs; $arch"
r=1
while [ "$r" -le "$repeat" ]; do
	for how in default hml; do
		rm -rf "$tmp/e" && cp -r "$tmp/exp" "$tmp/e"
		if [ "$how" = default ]; then
			tun=glibc.malloc.mmap_max=65536
		else
			tun=
		fi
		# shellcheck disable=SC2154
		env ${tun:+GLIBC_TUNABLES=$tun} /usr/bin/time -f "%e %U %S %M" -o "$tmp/t" \
			"$hml" -q -C "$tmp/e" train --threads 2 --epochs 2 --patience 0 --seed 1 \
			--arch "$arch" >/dev/null
		sps=$(/usr/bin/python3 -c 'import json, sys
m = json.load(open(sys.argv[1]))["models"][-1]["metrics"]
print("%.1f" % m["samples_per_second"])' "$tmp/e/manifest.json")
		echo "$how $(cat "$tmp/t") $sps" >> "$tmp/times"
		# shellcheck disable=SC2046 # the four numbers as $1 to $4
		set -- $(cat "$tmp/t")
		echo "  run $r $how: wall $1 s, user $2 s, system $3 s, peak RSS $(($4 / 1024)) MiB," \
		     "$sps samples/s"
	done
	r=$((r + 1))
done
/usr/bin/python3 - "$tmp/times" <<'PY'
import statistics, sys
t = {}
for l in open(sys.argv[1]):
    k, *v = l.split()
    t.setdefault(k, []).append([float(x) for x in v])
med = {k: [statistics.median(r[i] for r in v) for i in range(5)] for k, v in t.items()}
d, h = med["default"], med["hml"]
print("medians: default: wall %.1f s, system %.1f s, %.0f MiB, %.1f samples/s;"
      " hml: wall %.1f s, system %.1f s, %.0f MiB, %.1f samples/s"
      % (d[0], d[2], d[3] / 1024, d[4], h[0], h[2], h[3] / 1024, h[4]))
print("default / hml: wall %.2f, samples/s %.2f (hml / default), peak RSS %.2f"
      % (d[0] / h[0], h[4] / d[4], d[3] / h[3]))
PY
