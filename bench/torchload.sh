#!/bin/sh
# bench/torchload.sh - where the fixed cost of running a TorchScript model
# goes, per process (#13): why `hml evaluate` of a TorchScript deployment
# reports a far smaller end-to-end speedup than the compiled-C one although
# the region itself is as fast.
#
# Prints, in one run: how many shared objects and symbol relocations the
# libtorch plugin brings into a process (ldd, LD_DEBUG=statistics); the
# medians over RUNS processes of bench_torchload's phases (dlopen of the
# plugin, model load, first and next forward of ROWS rows, free); the
# process's wall and CPU time, whose remainder is exec and exit (libtorch's
# destructors, unmapping); the forward call on 1 and on 2 intra-op threads;
# and, for comparison, the same binomial process
# in infer mode with the model compiled to C, when MODEL.so is given.
#
# The model: MODEL.pt if given, else a 5-64-64-1 MLP scripted by PyTorch.
#
# usage: bench/torchload.sh [BUILD_DIR] [RUNS] [ROWS] [MODEL.pt [MODEL.so]]
set -eu

build=${1:-build}
runs=${2:-5}
rows=${3:-4096}
model=${4:-}
cmodel=${5:-}
py=/usr/bin/python3
plugin="$build/runtime/libhml-torch.so"
prog="$build/bench/bench_torchload"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export OMP_NUM_THREADS=1

[ -x "$prog" ] && [ -f "$plugin" ] ||
	{ echo "bench/torchload.sh: no $prog or $plugin (a build with libtorch)" >&2; exit 1; }
if [ -z "$model" ]; then
	model="$tmp/m.pt"
	"$py" -c 'import torch, sys
m = torch.nn.Sequential(torch.nn.Linear(5, 64), torch.nn.ReLU(), torch.nn.Linear(64, 64),
                        torch.nn.ReLU(), torch.nn.Linear(64, 1))
torch.jit.script(m).save(sys.argv[1])' "$model"
fi

echo "load average $(cut -d' ' -f1-3 /proc/loadavg), $(getconf _NPROCESSORS_ONLN) cores;" \
	"OMP_NUM_THREADS=1; medians of $runs processes"
objs=$(ldd "$plugin" | wc -l)
relocs=$(LD_DEBUG=statistics "$prog" "$plugin" "$model" 1 2 2>&1 >/dev/null |
	sed -n 's/.*final number of relocations: *\([0-9]*\).*/\1/p' | tail -n 1)
echo "the plugin brings $objs shared objects and ${relocs:-?} symbol relocations into the process"

: > "$tmp/phases"
i=0
while [ "$i" -lt "$runs" ]; do
	/usr/bin/time -f "%e %U %S" -o "$tmp/t" "$prog" "$plugin" "$model" "$rows" 5 > "$tmp/p"
	echo "$(cat "$tmp/p") process $(cat "$tmp/t")" >> "$tmp/phases"
	i=$((i + 1))
done

"$py" - "$tmp/phases" "$rows" <<'PY'
import statistics, sys
runs = []
for line in open(sys.argv[1]):
    w = line.split()
    d = {w[i]: float(w[i + 1]) for i in range(0, 12, 2)}
    d["wall"], d["user"], d["sys"] = (float(v) * 1e3 for v in w[13:16])
    runs.append(d)
med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
inproc = sum(med[k] for k in ("dlopen", "entry", "load", "first_forward", "free")) + 4 * med["next_forward"]
print(f"  dlopen of the plugin (libtorch)  {med['dlopen']:8.1f} ms")
print(f"  model load (torch::jit::load)    {med['load']:8.1f} ms")
print(f"  first forward, {sys.argv[2]} rows       {med['first_forward']:8.2f} ms  (next: {med['next_forward']:.2f} ms)")
print(f"  free                             {med['free']:8.2f} ms")
print(f"  process wall time                {med['wall']:8.1f} ms  (CPU {med['user'] + med['sys']:.0f} ms;"
      f" exec + exit beyond the phases: {med['wall'] - inproc:.0f} ms)")
PY

# The forward calls again on 2 intra-op threads (what HML_THREADS=2 asks):
# on a loaded machine every operator's OpenMP region waits for a thread
# that is not running, and the calls can be many times slower than on one.
: > "$tmp/t2"
i=0
while [ "$i" -lt "$runs" ]; do
	OMP_NUM_THREADS=2 "$prog" "$plugin" "$model" "$rows" 5 2 >> "$tmp/t2"
	i=$((i + 1))
done
"$py" - "$tmp/phases" "$tmp/t2" "$rows" <<'PY'
import statistics, sys
def med(path, key):
    v = []
    for line in open(path):
        w = line.split()
        v.append(float(w[w.index(key) + 1]))
    return statistics.median(v)
one, two = med(sys.argv[1], "next_forward"), med(sys.argv[2], "next_forward")
print(f"  forward of {sys.argv[3]} rows on 1 thread {one:.2f} ms, on 2 threads {two:.2f} ms"
      f" ({one / two:.2f}x the speed of 1)")
PY

if [ -n "$cmodel" ]; then
	bin="$build/workflows/binomial/binomial"
	for m in "$model" "$cmodel"; do
		t0=$(date +%s%N)
		HML_MODE=infer HML_MODEL="$m" "$bin" --options 1 --batch 1 --quiet
		t1=$(date +%s%N)
		echo "  binomial --options 1, infer with $(basename "$m"): $(((t1 - t0) / 1000000)) ms wall"
	done
fi
