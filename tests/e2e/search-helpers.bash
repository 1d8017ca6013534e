# Shared set-up of the search tests (120-search, 121-search-time-limit):
# one binomial data set collected once per file and copied for each test,
# quick search settings, and readers of search s1's history.

load helpers

setup_file() {
	export EXP0="$BATS_FILE_TMPDIR/exp"
	cd "$BATS_FILE_TMPDIR"
	"$HML" -q -C "$EXP0" collect binomial --args '--options 4096 --seed {seed}' >/dev/null
}

setup() {
	common_setup
	cp -r "$EXP0" "$WORK/exp"
	cd "$WORK"
}

# Quick settings: 2 rungs (1 and 3 epochs), one thread per worker, the
# TorchScript latency (no compiler run per trial; --target c has its test).
QUICK="--max-epochs 3 --seed 3 --threads 1 --target torchscript"

# hist EXPR: a Python expression over the history's events `ev` (search s1).
hist() {
	"$PY" -c 'import json,sys; ev=[json.loads(l) for l in open(sys.argv[1]) if l.endswith("\n")]; print(eval(sys.argv[2]))' \
		exp/search/s1/trials.jsonl "$1"
}

# Every trial started once and ended once (ok, failed, timeout, crashed),
# the trials numbered from 0 without a gap.
check_history() {
	"$PY" - exp/search/s1/trials.jsonl <<-'EOF'
	import json, sys, collections
	ev = [json.loads(l) for l in open(sys.argv[1])]
	starts = collections.Counter(e["trial"] for e in ev if e["status"] == "running")
	ends = collections.Counter(e["trial"] for e in ev
	                           if e["status"] in ("ok", "failed", "timeout", "crashed"))
	assert set(starts.values()) == {1}, starts
	assert starts.keys() == ends.keys() and set(ends.values()) == {1}, (starts, ends)
	assert sorted(starts) == list(range(len(starts))), sorted(starts)
	EOF
}
