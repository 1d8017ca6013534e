#!/bin/sh
# bench/runtime.sh - the runtime's overheads on the binomial workflow, as
# ratios measured in one run of this script:
#   off-mode overhead     binomial (hml, HML_MODE=off) / binomial built without hml
#   collection overhead   collect-mode time / off-mode time
#   runtime overhead      (region time - forward time) / region time, infer mode
#   gather/scatter        memcpy time / gather (scatter) time   (bench_gather)
#   compression           bench/compression.sh: MB/s written and compression
#                         ratio per HML_COLLECT_COMPRESSION, against none
# Off, baseline and collect runs alternate REPEAT times; medians are quoted.
# Like with like: both binomial executables are built from the same source
# with the same flags, functions and loops aligned to 64 bytes
# (workflows/CMakeLists.txt, ALIGNED), so the priced loop's code sits the
# same way in both; same OMP_NUM_THREADS; the timed part is the priced loop
# as the program reports it (start-up is bench/startup.sh's business).
#
# usage: bench/runtime.sh [BUILD_DIR] [OPTIONS] [REPEAT] [COMPRESSION_OPTIONS]
# OPTIONS should be a multiple of the batch (4096): a shorter last batch
# takes the original path, which the overhead formula subtracts anyway.
set -eu

build=${1:-build}
options=${2:-98304}
repeat=${3:-3}
zoptions=${4:-16384}
py=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bin="$build/workflows/binomial/binomial"
base="$build/workflows/binomial/binomial_baseline"
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-$(nproc)}"
export HML_THREADS="${HML_THREADS:-$OMP_NUM_THREADS}"

# Wall time of the priced loop, as the program prints it.
priced() { sed -n 's/^binomial: priced in \([0-9.]*\) s$/\1/p'; }

# flags TARGET: the C compile flags of binomial target TARGET in this
# build tree (Makefile generators), without defines and include paths.
flags() {
	f="$build/workflows/binomial/CMakeFiles/$1.dir/flags.make"
	[ -f "$f" ] && sed -n 's/^C_FLAGS = //p' "$f" || echo "(unknown: no $f)"
}

echo "binomial, $options options, batch 4096, $OMP_NUM_THREADS threads, $repeat repeats"
echo "controlled: same source, same threads, runs alternated, priced-loop time only"
echo "  (no start-up), medians; compile flags of both builds:"
fb=$(flags binomial_baseline)
fh=$(flags binomial)
echo "  no-hml: $fb"
if [ "$fb" = "$fh" ]; then
	echo "  hml:    the same"
else
	echo "  hml:    DIFFERENT: $fh"
fi
case "$fb $fh" in
*-falign-loops=64*-falign-loops=64*) ;;
*) echo "  (warning: not both built with -falign-functions=64 -falign-loops=64: the priced loop" \
	"may sit across a 64-byte boundary in one build only)" ;;
esac
: > "$tmp/times"
i=0
while [ "$i" -lt "$repeat" ]; do
	b=$("$base" --options "$options" | priced)
	o=$(HML_MODE=off "$bin" --options "$options" | priced)
	rm -f "$tmp/d.h5"
	c=$(HML_MODE=collect HML_DB="$tmp/d.h5" "$bin" --options "$options" | priced)
	echo "$b $o $c" >> "$tmp/times"
	echo "  run $((i + 1)): baseline $b s, off $o s, collect $c s"
	i=$((i + 1))
done

# Any 5-64-64-1 MLP serves to measure the runtime around the forward pass.
"$py" -c 'import torch, sys
torch.manual_seed(0)
m = torch.nn.Sequential(torch.nn.Linear(5, 64), torch.nn.Tanh(), torch.nn.Linear(64, 64),
                        torch.nn.Tanh(), torch.nn.Linear(64, 1))
torch.jit.script(m).save(sys.argv[1])' "$tmp/m.pt"
HML_MODE=infer HML_MODEL="$tmp/m.pt" HML_PROFILE="$tmp/p.json" \
	"$bin" --options "$options" >/dev/null

"$py" - "$tmp/times" "$tmp/p.json" <<'PY'
import json, statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1])]
off = statistics.median(r[1] / r[0] for r in rows)
col = statistics.median(r[2] / r[1] for r in rows)
p = json.load(open(sys.argv[2]))["regions"][0]
model_region = p["region_s"] - p["original_s"]
ovh = (model_region - p["forward_s"]) / model_region
print(f"off-mode overhead      {off:.4f}x  (off / no-hml build; goal <= 1.01)")
print(f"collection overhead    {col:.4f}x  (collect / off; goal <= 1.05)")
print(f"infer runtime overhead {100 * ovh:.2f}%  ((region - forward) / region, model calls; goal <= 2%)"
      f"  [{p['model_calls']} calls: gather {p['gather_s']:.4f} s, forward {p['forward_s']:.4f} s,"
      f" scatter {p['scatter_s']:.4f} s, region {p['region_s']:.4f} s]")
PY
echo "gather/scatter against memcpy of the same bytes (goal >= 0.5x):"
"$build/bench/bench_gather" 1048576 20

# What compressing the collection costs (HML_COLLECT_COMPRESSION).
"$(dirname "$0")/compression.sh" "$build" "$zoptions"
