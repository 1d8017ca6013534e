#!/bin/sh
# bench/startup.sh - what linking hml costs a program that does not use a
# model: start-up wall time and peak resident memory of `binomial
# --options 1` in off mode (HML_MODE=off) against binomial_baseline, the
# same program built without hml, measured in this run (#13; goal: <= 5 ms
# and <= 5 MB more). libhml links no libtorch; the libtorch plugin is
# loaded only when a region opens a TorchScript model, which the last line
# shows for reference (infer mode, one option, a tiny model).
#
# Time: hyperfine (no shell, warm-up runs, the mean of RUNS runs each).
# Memory: /usr/bin/time's maximum resident set size, the median of 5 runs.
#
# usage: bench/startup.sh [BUILD_DIR] [RUNS]
set -eu

build=${1:-build}
runs=${2:-50}
py=/usr/bin/python3
bin="$build/workflows/binomial/binomial"
base="$build/workflows/binomial/binomial_baseline"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export OMP_NUM_THREADS=1
unset HML_MODEL HML_DB HML_PROFILE

command -v hyperfine >/dev/null || { echo "bench/startup.sh needs hyperfine" >&2; exit 1; }

# Mean wall time in seconds of the command in "$@" (environment first).
wall() {
	hyperfine -N --warmup 3 --runs "$runs" --export-json "$tmp/h.json" \
		--style none "$*" >/dev/null 2>&1
	"$py" -c 'import json, sys; print(json.load(open(sys.argv[1]))["results"][0]["mean"])' "$tmp/h.json"
}

# Median peak RSS in KB of "$@" over 5 runs.
rss() {
	for _ in 1 2 3 4 5; do
		/usr/bin/time -f "%M" -o "$tmp/t" "$@" >/dev/null
		cat "$tmp/t"
	done | sort -n | sed -n 3p
}

echo "start-up of binomial --options 1 (OMP_NUM_THREADS=1, $runs runs)"
t_base=$(wall "$base" --options 1 --quiet)
t_off=$(wall env HML_MODE=off "$bin" --options 1 --quiet)
t_env=$(wall env HML_MODE=off "$base" --options 1 --quiet)
m_base=$(rss "$base" --options 1 --quiet)
m_off=$(rss env HML_MODE=off "$bin" --options 1 --quiet)

"$py" -c 'import torch, sys
m = torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
torch.jit.script(m).save(sys.argv[1])' "$tmp/m.pt"
m_inf=$(rss env HML_MODE=infer HML_MODEL="$tmp/m.pt" "$bin" --options 1 --batch 1 --quiet)
t_inf=$(wall env HML_MODE=infer HML_MODEL="$tmp/m.pt" "$bin" --options 1 --batch 1 --quiet)

"$py" - "$t_base" "$t_off" "$t_env" "$m_base" "$m_off" "$t_inf" "$m_inf" <<'PY'
import sys
tb, to, te, mb, mo, ti, mi = map(float, sys.argv[1:])
# `env` itself is an exec more; its cost is taken off the off-mode time.
tenv = te - tb
dt = (to - tenv - tb) * 1e3
dm = (mo - mb) / 1024
print(f"  no-hml build          {tb * 1e3:8.2f} ms  {mb / 1024:7.1f} MB")
print(f"  hml, off mode         {(to - tenv) * 1e3:8.2f} ms  {mo / 1024:7.1f} MB"
      f"   (+{dt:.2f} ms, {(to - tenv) / tb:.2f}x; +{dm:.1f} MB)  goal <= +5 ms, <= +5 MB:"
      f" {'met' if dt <= 5 and dm <= 5 else 'NOT met'}")
print(f"  hml, infer (plugin)   {(ti - tenv) * 1e3:8.2f} ms  {mi / 1024:7.1f} MB"
      f"   (loads libtorch: the cost moved to the first model load)")
PY
