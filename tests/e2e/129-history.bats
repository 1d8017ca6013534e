#!/usr/bin/env bats
# An experiment is untrusted input: a search's trial history is checked
# against the search and the manifest before hml search --resume replays
# any of it (a point outside the space, an unknown key, a coordinate out
# of the unit cube, a kept model that is not the search's, an id not by
# the grammar), every refusal names the file and the line, a missing or
# emptied history is an error rather than a new search, and a refused
# history leaves the manifest as it was. A manifest's ids follow one
# grammar too.

load helpers

setup_file() {
	export EXP0="$BATS_FILE_TMPDIR/exp"
	cd "$BATS_FILE_TMPDIR"
	"$HML" -q -C "$EXP0" collect binomial --args '--options 4096 --seed {seed}' >/dev/null
	"$HML" -q -C "$EXP0" search --budget 4 --workers 1 --max-epochs 3 --seed 3 --threads 1 \
		--target torchscript >/dev/null
	# a model of hml train: not the search's
	"$HML" -q -C "$EXP0" --json train --epochs 1 > "$BATS_FILE_TMPDIR/train.json"
}

setup() {
	common_setup
	cp -r "$EXP0" "$WORK/exp"
	cd "$WORK"
	H=exp/search/s1/trials.jsonl
	TRAINED="$(json "$BATS_FILE_TMPDIR/train.json" 'd["model"]["id"]')"
	sha256sum exp/manifest.json > manifest.sum
}

# edit EXPR: rewrite the history's events `ev` (a list of dicts) in place by
# the Python statement EXPR.
edit() {
	"$PY" - "$H" "$1" <<-'EOF'
	import json, sys
	ev = [json.loads(l) for l in open(sys.argv[1])]
	exec(sys.argv[2])
	open(sys.argv[1], "w").write("".join(json.dumps(e) + "\n" for e in ev))
	EOF
}

# line N where the first event matching the Python condition COND is (1-based)
line_of() {
	"$PY" -c 'import json,sys; ev=[json.loads(l) for l in open(sys.argv[1])]; print(next(i + 1 for i, e in enumerate(ev) if eval(sys.argv[2])))' "$H" "$1"
}

# the manifest is as it was before the refused resume
manifest_unchanged() {
	sha256sum -c --quiet manifest.sum
}

@test "the fixture: a finished search with kept models, and a model of hml train" {
	[ "$(json exp/manifest.json 'd["searches"][0]["status"]')" = finished ]
	[ "$(json exp/manifest.json '[m for m in d["models"] if m["id"] == "'"$TRAINED"'"][0].get("search")')" = None ]
	grep -q '"status": *"kept"' "$H"
	# resumed as it is, a finished search runs nothing and succeeds
	run --separate-stderr hml -q -C exp search --resume
	assert_success
}

@test "a kept line naming a model that is not the search's is refused; deploy --best never takes it" {
	n="$(line_of 'e["status"] == "kept"')"
	edit 'k = next(e for e in ev if e["status"] == "kept"); k["model"] = "'"$TRAINED"'"'
	run --separate-stderr hml -q -C exp search --resume --budget 6
	assert_failure 3
	[[ "$stderr" == "hml: error: trial history '"*"exp/search/s1/trials.jsonl' line $n: trial "*": kept model '$TRAINED' is not a model of search s1" ]]
	manifest_unchanged
	run --separate-stderr hml -q -C exp --json deploy --search s1 --best
	assert_success
	[ "$(echo "$output" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["deployment"]["model"])')" != "$TRAINED" ]
}

@test "a kept id that is not a model id (../../../../etc/passwd) is refused" {
	n="$(line_of 'e["status"] == "kept"')"
	edit 'next(e for e in ev if e["status"] == "kept")["model"] = "../../../../etc/passwd"'
	run --separate-stderr hml -q -C exp search --resume --budget 6
	assert_failure 3
	[[ "$stderr" == *"trials.jsonl' line $n: 'model': '../../../../etc/passwd' is not a model id (m1, m2, ...)" ]]
	manifest_unchanged
}

@test "a running trial's point changed to 32 layers x 16384 wide is refused, nothing trained" {
	edit 'ev[0]["params"]["layers"] = 32; ev[0]["params"]["width"] = 16384; ev[:] = [e for e in ev if e["trial"] != 0 or e["status"] == "running"]'
	run --separate-stderr hml -q -C exp search --resume --budget 6
	assert_failure 3
	[[ "$stderr" == *"trials.jsonl' line 1: trial 0: its point is not in the search space: "*"'layers'"* ]]
	manifest_unchanged
	[ -z "$(ls exp/search/s1/*.pt 2>/dev/null)" ]
	# nothing was appended: no "rerun" line
	! grep -q '"rerun"' "$H"
}

@test "parameters that disagree with their point are refused" {
	edit 'ev[0]["params"]["layers"] = 1 if ev[0]["params"]["layers"] != 1 else 2'
	run --separate-stderr hml -q -C exp search --resume --budget 6
	assert_failure 3
	[[ "$stderr" == *"trials.jsonl' line 1: trial 0: its parameters are not those of its point 'u'" ]]
}

@test "an unknown key is refused" {
	edit 'ev[2]["layers_override"] = 32'
	run --separate-stderr hml -q -C exp search --resume --budget 6
	assert_failure 3
	[[ "$stderr" == *"trials.jsonl' line 3: unknown key 'layers_override'" ]]
	manifest_unchanged
}

@test "coordinates of 1e308 are refused" {
	edit 'ev[0]["u"][0] = 1e308'
	run --separate-stderr hml -q -C exp search --resume --budget 6
	assert_failure 3
	[[ "$stderr" == *"trials.jsonl' line 1: 'u' holds a value that is not a number in [0, 1]" ]]
	edit 'ev[0]["u"][0] = 0.5; ev[0]["params"]["lr"] = 1e308'
	run --separate-stderr hml -q -C exp search --resume --budget 6
	assert_failure 3
	[[ "$stderr" == *"trials.jsonl' line 1: trial 0: its point is not in the search space: "* ]]
}

@test "a deleted history is an error, not a new search" {
	rm "$H"
	run --separate-stderr hml -q -C exp search --resume --budget 6
	assert_failure 3
	[[ "$stderr" == "hml: error: trial history '"*"exp/search/s1/trials.jsonl' is missing: search s1 cannot be resumed without it; start a new search" ]]
	[ ! -e "$H" ]
	manifest_unchanged
}

@test "an emptied or shortened history is an error, not a restart from trial 0" {
	trials="$(json exp/manifest.json 'd["searches"][0]["counts"]["trials"]')"
	: > "$H"
	run --separate-stderr hml -q -C exp search --resume --budget 6
	assert_failure 3
	[[ "$stderr" == *"trials.jsonl' holds 0 trials, but the record of search s1 counts $trials: the history was cut short or emptied; start a new search" ]]
	[ ! -s "$H" ]
	manifest_unchanged
	cp "$EXP0/search/s1/trials.jsonl" "$H"
	edit 'last = max(e["trial"] for e in ev); ev[:] = [e for e in ev if e["trial"] != last]'
	run --separate-stderr hml -q -C exp search --resume --budget 6
	assert_failure 3
	[[ "$stderr" == *"trials.jsonl' holds $((trials - 1)) trials, but "* ]]
	manifest_unchanged
}

@test "a manifest whose ids break the grammar is corrupt (exit 3)" {
	"$PY" - <<-'EOF'
	import json
	m = json.load(open("exp/manifest.json"))
	m["models"][0]["id"] = "../../../../etc/passwd"
	json.dump(m, open("exp/manifest.json", "w"))
	EOF
	run --separate-stderr hml -C exp show
	assert_failure 3
	[[ "$stderr" == *"is corrupt: models[0].id '../../../../etc/passwd' is not a model id (m1, m2, ...)" ]]
	cp "$EXP0/manifest.json" exp/manifest.json
	"$PY" - <<-'EOF'
	import json
	m = json.load(open("exp/manifest.json"))
	m["searches"][0]["front"][0]["model"] = "m01"
	json.dump(m, open("exp/manifest.json", "w"))
	EOF
	run --separate-stderr hml -C exp show
	assert_failure 3
	[[ "$stderr" == *"is corrupt: searches[0].front[0].model 'm01' is not a model id"* ]]
}
