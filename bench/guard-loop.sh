#!/bin/sh
# bench/guard-loop.sh - issue #28's closing loop, measured in one run, on
# binomial's API form (workflow binomial-api; per-row fallback):
#
#   1. collect at the default spot range (5:30) and train m1;
#   2. in-distribution QoI error: m1, unguarded, one round at 5:30 (RMSE of
#      the prices against the accurate tree's, the application's own
#      measure: binomial_api --rounds prints it per round);
#   3. a long-running application (binomial_api --until stop) prices the
#      same options round after round with spots up to twice the largest
#      trained (--spot-range 5:60), m1 deployed with a bounds guard, and
#      watching its deployment file (HML_DEPLOYMENT_BINOMIAL);
#   4. meanwhile: hml collect --guarded (another seed: the guarded rows
#      alone), hml train --from m1 (old plus new rows), hml deploy m2
#      --guard bounds; the application swaps model and guard, not restarted;
#   5. per round, before and after the swap: the QoI RMSE and the rows
#      guarded; and each model unguarded out of distribution. Ratios are to
#      the in-distribution RMSE (goal: the out-of-distribution error within
#      1.5x of it after one round, with m2's guard).
#
# usage: bench/guard-loop.sh [BUILD_DIR] [OPTIONS] [EPOCHS] [ROUNDS_AFTER]
set -eu

build=$(cd "${1:-build}" && pwd)
options=${2:-4096}
epochs=${3:-60}
after=${4:-3}
hml="$build/cmd/hml"
api="$build/workflows/binomial/binomial_api"
tmp=$(mktemp -d)
app_pid=
trap '[ -n "$app_pid" ] && kill "$app_pid" 2>/dev/null; rm -rf "$tmp"' EXIT
cd "$tmp"
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-$(nproc)}"

echo "binomial-api: trained on spots 5:30 ($options options, $epochs epochs); the application"
echo "prices $options options (seed 42) at 5:60 round after round; $OMP_NUM_THREADS threads"
"$hml" -q -C exp collect binomial-api --args "--options $options --seed {seed}" >/dev/null
"$hml" -q -C exp train --epochs "$epochs" >/dev/null

# rmse_of MODEL RANGE: one round on MODEL, unguarded, at spots RANGE
rmse_of() {
	env -u HML_MODE_BINOMIAL -u HML_MODEL_BINOMIAL -u HML_GUARD_BINOMIAL \
		-u HML_DEPLOYMENT_BINOMIAL HML_MODE=infer HML_MODEL="exp/models/$1.pt" "$api" --options "$options" --seed 42 \
		--spot-range "$2" --rounds 2 --quiet | awk '/round 1 / { print $5 }'
}
in1=$(rmse_of m1 5:30)
ood1=$(rmse_of m1 5:60)

eval "$("$hml" -C exp deploy --force m1 --guard bounds 2>/dev/null)"
export HML_SWAP_INTERVAL=100
"$api" --options "$options" --seed 42 --spot-range 5:60 --until stop --quiet \
	>rounds.log 2>app.err &
app_pid=$!
rounds() { grep -c ' round ' rounds.log || true; }
wait_rounds() {
	while [ "$(rounds)" -lt "$1" ]; do
		kill -0 "$app_pid" 2>/dev/null || { cat app.err >&2; exit 1; }
		sleep 0.2
	done
}
wait_rounds 2
"$hml" -q -C exp collect binomial-api --guarded \
	--args "--options $options --seed 7 --spot-range 5:60" >/dev/null
"$hml" -q -C exp train --from m1 --epochs "$epochs" >/dev/null
"$hml" -q -C exp deploy --force m2 --guard bounds >/dev/null 2>&1
while ! grep -q "now running model 'm2'" app.err; do
	kill -0 "$app_pid" 2>/dev/null || { cat app.err >&2; exit 1; }
	sleep 0.2
done
n=$(rounds)
wait_rounds $((n + after + 1))
touch stop
wait "$app_pid"
app_pid=
ood2=$(rmse_of m2 5:60)
in2=$(rmse_of m2 5:30)
rows=$(/usr/bin/python3 -c '
import json
d = json.load(open("exp/manifest.json"))
print(sum(r["rows"] for r in d["datasets"][-1]["regions"].values()))')

# Rounds wholly before the swap and wholly after it (binomial_api: a round
# is options / batch region calls, the batch min(4096, options)).
/usr/bin/python3 - "$in1" "$ood1" "$ood2" "$in2" "$rows" "$options" <<'PY'
import re, sys
in1, ood1, ood2, in2 = (float(v) for v in sys.argv[1:5])
options = int(sys.argv[6])
cpr = options // min(4096, options)
rounds = [tuple(float(v) for v in re.findall(r"round (\d+) rmse (\S+) guarded (\d+)", l)[0])
          for l in open("rounds.log") if " round " in l]
err = open("app.err").read()
m = re.search(r"now running model 'm2' \(deployment \S+\), after (\d+) calls", err)
calls = int(m.group(1))
b = [r for r in rounds if (r[0] + 1) * cpr <= calls]
a = [r for r in rounds if r[0] * cpr >= calls]
mean = lambda xs: sum(xs) / len(xs) if xs else float("nan")
print("rounds: %d before the swap, %d after (the swap after %d calls; no restart)" %
      (len(b), len(a), calls))
print("%-44s %12s %10s %14s" % ("", "QoI RMSE", "x in-dist", "rows guarded"))
print("%-44s %12.4g %10s %14s" % ("in distribution, m1 (5:30)", in1, "1.00", "-"))
print("%-44s %12.4g %10.2f %14s" % ("OOD, m1 unguarded (5:60)", ood1, ood1 / in1, "-"))
print("%-44s %12.4g %10.2f %14.0f" % ("OOD, running app, m1 + its guard (per round)",
      mean([r[1] for r in b]), mean([r[1] for r in b]) / in1, mean([r[2] for r in b])))
print("%-44s %12.4g %10.2f %14.0f" % ("OOD, running app, m2 + its guard (per round)",
      mean([r[1] for r in a]), mean([r[1] for r in a]) / in1, mean([r[2] for r in a])))
print("%-44s %12.4g %10.2f %14s" % ("OOD, m2 unguarded (5:60)", ood2, ood2 / in1, "-"))
print("%-44s %12.4g %10.2f %14s" % ("in distribution, m2 (5:30)", in2, in2 / in1, "-"))
print("guarded rows collected (hml collect --guarded): %s" % sys.argv[5])
ok = a and mean([r[1] for r in a]) <= 1.5 * in1
print("goal: OOD RMSE within 1.5x of in-distribution after one round: %s" % ("met" if ok else "NOT met"))
PY
