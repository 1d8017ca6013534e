#!/bin/sh
# bench/iterative.sh - miniWeather's steps per model call (k) and
# interleave ratio searched with the model (lib/search/iterative.h), the
# best found evaluated end to end, and its error over time.
#
#   bench/iterative.sh [BUDGET [MAX_EPOCHS]]     default 12 configurations, 30 epochs
#
# Collects the workflow's collect runs at each declared k (5, 10, 20: its
# search_args), searches BUDGET configurations (their objective: the error
# of the final state after the whole 200-step run, at the trial's k and
# interleave), deploys the front's most accurate model and runs
# `hml evaluate --k K --interleave N` on it: the speedup is the accurate
# runs' wall time over the surrogate runs', both measured in that one
# command, alternating. Prints the search's front, the evaluation and the
# error-over-time table; then what `hml deploy --best` picks and its
# evaluation. Environment: HML (the hml binary, default
# build/cmd/hml), WORK (a scratch directory, default a new one in /tmp).
set -eu

BUDGET=${1:-12}
EPOCHS=${2:-30}
HML=${HML:-$(cd "$(dirname "$0")/.." && pwd)/build/cmd/hml}
WORK=${WORK:-$(mktemp -d /tmp/hml-iterative.XXXXXX)}
cd "$WORK"
echo "bench/iterative.sh: budget $BUDGET, $EPOCHS epochs, in $WORK"

for k in 5 10 20; do
	"$HML" -q collect miniweather --runs 4 \
		--args "--nx 40 --nz 20 --steps 200 --k $k --seed {seed}" >/dev/null
done
t0=$(date +%s)
"$HML" -q search --budget "$BUDGET" --max-epochs "$EPOCHS" --deterministic --target torchscript
t1=$(date +%s)
echo "search wall time: $((t1 - t0)) s"
"$HML" --json show > show.json
set -- $(python3 - <<'PY'
import json
s = json.load(open("show.json"))["searches"][-1]
f = min(s["front"], key=lambda e: e["qoi_error"])
print(f["model"], f["k"], f["interleave"], f["qoi_error"])
PY
)
model=$1 k=$2 il=$3 qerr=$4
echo "best of the front: model $model at k $k, interleave $il (search's QoI error $qerr)"
"$HML" -q deploy "$model" --force >/dev/null
"$HML" evaluate --repeat 3 --k "$k" --interleave "$il" "$model"
# What `hml deploy --best` picks among every model of the region (by the
# QoI error the search recorded, lib/store/select.h), evaluated at the k
# and interleave its card records: its QoI error and end-to-end speedup.
"$HML" --json deploy --best --force > best.json
python3 - <<'PY'
import json
d = json.load(open("best.json"))["deployment"]
c = d.get("chosen_by", {})
print("deploy --best: model %s chosen by %s %s; predicted end to end %s, model share %s"
      % (d["model"], c.get("metric"), c.get("value"), d["predicted"]["end_to_end"],
         d["predicted"].get("model_share")))
PY
best=$(python3 -c 'import json; print(json.load(open("best.json"))["deployment"]["model"])')
"$HML" --json evaluate --repeat 3 "$best" > best-eval.json
python3 - <<'PY'
import json
e = json.load(open("best-eval.json"))
e = e.get("evaluation", e)
q = e["qoi"]
print("deploy --best's model %s evaluated: QoI %s %s %.4g, end to end %.3gx (predicted %s)"
      % (e["model"], q["dataset"], q["metric"], q[q["metric"]],
         e["speedup"]["end_to_end"]["mean"], e["predicted"]["end_to_end"]))
PY
