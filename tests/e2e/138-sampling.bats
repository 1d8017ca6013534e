#!/usr/bin/env bats
# Collections that stay small: hml collect --reservoir / --rate / --dedup
# and workflow.json's collect.sample and collect.compression on binomial.
# The file holds what the manifest says was kept; seen = kept + dropped.
# Bad settings: one line naming the option, variable or key, the
# documented exit code, nothing registered.

load helpers
bats_require_minimum_version 1.5.0

setup() { common_setup; }

ARGS=(--args '--options 4096 --batch 512 --seed {seed}')
S='d["dataset"]["regions"]["binomial"]["sampling"]'

# wf DIR PYTHON-STATEMENTS: binomial's workflow changed by the statements
# (on the dict `d`), its program the built binomial.
wf() {
	mkdir -p "$1"
	"$PY" - "$HML_BUILD_DIR/workflows/binomial/workflow.json" "$1/workflow.json" "$BINOMIAL" "$2" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
d["program"] = sys.argv[3]
exec(sys.argv[4])
json.dump(d, open(sys.argv[2], "w"), indent=2)
PYEOF
}

data_file() { json out.json 'd["dataset"]["files"]["data"]'; }

@test "collect --reservoir keeps N rows spread over the run; the manifest counts them" {
	run --separate-stderr hml -C exp --json collect binomial --reservoir 1000 "${ARGS[@]}"
	assert_success
	echo "$output" > out.json
	[ "$(json out.json 'd["dataset"]["regions"]["binomial"]["rows"]')" = 1000 ]
	[ "$(json out.json "$S['reservoir']")" = 1000 ]
	[ "$(json out.json "$S['calls_seen']")" = 8 ]
	[ "$(json out.json "$S['rows_seen']")" = 4096 ]
	[ "$(json out.json "$S['rows_kept']")" = 1000 ]
	[ "$(json out.json "$S['dropped']")" = "{'rate': 0, 'duplicate': 0, 'reservoir': 3096}" ]
	f="exp/$(data_file)"
	[ "$(h5 "$f" 'f["binomial/input"].shape[0], f["binomial/output"].shape[0], f["binomial/calls"].shape[0]')" = "(1000, 1000, 1)" ]
	[ "$(h5 "$f" 'int(f["binomial"].attrs["sample_rows_kept"])')" = 1000 ]
	# hml show reads the same record.
	run --separate-stderr hml -C exp show d1
	assert_output --partial "regions.binomial.sampling.rows_kept: 1000"
}

@test "collect --rate and --dedup: kept plus dropped is what was seen" {
	run --separate-stderr hml -C exp --json collect binomial --rate 0.5 --dedup "${ARGS[@]}"
	assert_success
	echo "$output" > out.json
	kept=$(json out.json "$S['rows_kept']")
	[ "$(json out.json "$S['rows_seen']")" = 4096 ]
	[ "$(json out.json "$S['rows_kept'] + $S['dropped']['rate'] + $S['dropped']['duplicate']")" = 4096 ]
	[ "$(json out.json "$S['dedup']")" = True ]
	[ "$(json out.json 'd["dataset"]["regions"]["binomial"]["rows"]')" = "$kept" ]
	# 2048 +- 4 sd (32)
	[ "$kept" -gt 1900 ] && [ "$kept" -lt 2200 ]
	f="exp/$(data_file)"
	[ "$(h5 "$f" 'f["binomial/input"].shape[0]')" = "$kept" ]
}

@test "workflow.json collect.sample and collect.compression reach the file" {
	wf w 'd["collect"]["sample"] = {"reservoir": 500, "seed": 3}; d["collect"]["compression"] = "shuffle+deflate:6"'
	run --separate-stderr hml -C exp --json collect ./w "${ARGS[@]}"
	assert_success
	echo "$output" > out.json
	[ "$(json out.json "$S['seed'], $S['rows_kept']")" = "(3, 500)" ]
	f="exp/$(data_file)"
	[ "$(h5 "$f" 'f["binomial/input"].compression, f["binomial/input"].compression_opts, f["binomial/input"].shuffle')" = "('gzip', 6, True)" ]
	# --reservoir on the command line wins over the workflow's.
	run --separate-stderr hml -C exp --json collect ./w --reservoir 200 "${ARGS[@]}"
	assert_success
	echo "$output" > out.json
	[ "$(json out.json "$S['rows_kept']")" = 200 ]
}

@test "bad --rate and --reservoir are usage errors (exit 2), nothing registered" {
	for bad in "--rate 0" "--rate -0.5" "--rate 1.5" "--rate half" "--reservoir 0" "--reservoir -3"; do
		run hml -C exp collect binomial $bad "${ARGS[@]}"
		[ "$status" -eq 2 ]
		[ "${#lines[@]}" -eq 1 ]
		assert_output --partial "hml: error: collect: "
		assert_output --partial "${bad%% *}"
	done
	[ ! -e exp/manifest.json ] || [ "$(json exp/manifest.json 'len(d.get("datasets", []))')" = 0 ]
}

@test "bad sampling keys in workflow.json are invalid input (exit 3) naming the key" {
	wf rate 'd["collect"]["sample"] = {"rate": 2}'
	run hml -C exp collect ./rate
	[ "$status" -eq 3 ]
	assert_output "hml: error: workflow '$WORK/rate/workflow.json': key 'collect.sample.rate' must be a number in (0, 1]"
	wf res 'd["collect"]["sample"] = {"reservoir": 0}'
	run hml -C exp collect ./res
	[ "$status" -eq 3 ]
	assert_output "hml: error: workflow '$WORK/res/workflow.json': key 'collect.sample.reservoir' must be an integer from 1 to 1000000000, not 0"
	wf z 'd["collect"]["compression"] = "lz4"'
	run hml -C exp collect ./z
	[ "$status" -eq 3 ]
	assert_output "hml: error: workflow '$WORK/z/workflow.json': key 'collect.compression' must be none, deflate:L, shuffle+deflate:L (L from 1 to 9) or szip, not 'lz4'"
	wf k 'd["collect"]["sample"] = {"fraction": 0.5}'
	run hml -C exp collect ./k
	[ "$status" -eq 3 ]
	assert_output --partial "collect.sample"
}

@test "bad HML_COLLECT_* values stop the application at region open, naming the variable" {
	for v in HML_COLLECT_RATE=0 HML_COLLECT_RATE=-1 HML_COLLECT_RATE=1.01 HML_COLLECT_RATE=x \
	         HML_COLLECT_RATE_BINOMIAL=7 HML_COLLECT_RESERVOIR=0 HML_COLLECT_RESERVOIR=-10; do
		env HML_MODE=collect HML_DB="$WORK/d.h5" "$v" "$BINOMIAL" --options 64 >out.txt 2>&1 && false
		grep -q "invalid ${v%%=*} '${v#*=}'" out.txt
		[ ! -s d.h5 ] || [ "$(h5 d.h5 'len(f.keys())')" = 0 ]
	done
}
