#!/usr/bin/env bats
# hml search --time-limit: the search stops starting trials in time, stops
# those still running at the limit, registers its front and is left
# resumable ("stopped"); --resume finishes it. Bad durations are usage
# errors. When stderr is no terminal, a plain progress line per finished
# configuration.

load search-helpers

# check_front_kept OUT CARD: the front's models (search OUT) are
# registered, each named in a "kept" line, with a latency card (CARD 1)
# or without (0: kept at the time limit).
check_front_kept() {
	"$PY" - "$1" "$2" <<-'EOF2'
	import json, sys
	d = json.load(open(sys.argv[1]))["search"]
	card = sys.argv[2] == "1"
	models = {m["id"]: m for m in json.load(open("exp/manifest.json")).get("models", [])}
	ev = [json.loads(l) for l in open("exp/search/s1/trials.jsonl")]
	kept = {e["trial"]: e["model"] for e in ev if e["status"] == "kept"}
	for f in d["front"]:
	    assert f["model"] in models and kept[f["trial"]] == f["model"], (f, kept)
	    assert models[f["model"]]["search"]["trial"] == f["trial"]
	    assert ("latency" in models[f["model"]]) == card, (f, models[f["model"]])
	EOF2
}

@test "--time-limit stops a trial running at the limit; the search is left stopped with its front; --resume finishes it" {
	# Trial 1 never ends, so the limit, not the budget, ends the search.
	t0="$(date +%s.%N)"
	HML_SEARCH_TEST_HANG=1 run --separate-stderr hml -C exp --json search --budget 4 --workers 2 --time-limit 15s $QUICK
	t1="$(date +%s.%N)"
	assert_success
	echo "$output" > out.json
	# It ended, well before three times the limit (no tight timing).
	"$PY" -c "import sys; sys.exit(not ($t1 - $t0 < 45))"
	[ "$(json out.json 'd["search"]["status"]')" = stopped ]
	[ "$(json out.json 'd["search"]["stopped"]')" = time_limit ]
	[ "$(json out.json 'd["search"]["time_limit"]')" = 15.0 ]
	configs="$(json out.json 'd["search"]["counts"]["configs"]')"
	[ "$configs" -le 4 ]
	[[ "$stderr" == *"search s1: region 'binomial', budget 4 configurations"*", time limit 15s"* ]]
	assert_equal "$(printf '%s\n' "$stderr" | grep 'stopped at')" \
		"hml: search s1 stopped at the time limit (15s) after $configs configurations; resume with: hml search --resume s1"
	# The hanging trial was stopped and stays running in the history.
	[ "$(hist '[e["status"] for e in ev if e["trial"] == 1]')" = "['running']" ]
	[ "$(json exp/manifest.json 'd["searches"][0]["status"]')" = stopped ]
	check_front_kept out.json 0
	run hml -C exp show s1
	assert_success
	assert_line "search s1: region 'binomial', status stopped"
	assert_line "stopped at the time limit (15s): continue it with 'hml search --resume s1'"
	hml -C exp --json show s1 > shown.json
	[ "$(json shown.json 'd["search"]["status"]')" = stopped ]
	# Resumed with a new limit it finishes: trial 1 runs once more.
	run --separate-stderr hml -q -C exp --json search --resume --time-limit 10m
	assert_success
	echo "$output" > out2.json
	[ "$(json out2.json 'd["search"]["status"]')" = finished ]
	[ "$(json out2.json 'd["search"]["stopped"]')" = None ]
	[ "$(json out2.json 'd["search"]["time_limit"]')" = 600.0 ]
	[ "$(json out2.json 'd["search"]["counts"]["configs"]')" = 4 ]
	[ "$(json out2.json 'len(d["search"]["front"]) >= 1')" = True ]
	[ "$(hist '[e["status"] for e in ev if e["trial"] == 1 and e["status"] != "kept"]')" = "['running', 'rerun', 'ok']" ]
	check_history
	check_front_kept out2.json 1   # (the cards measured now)
	[ "$(json exp/manifest.json 'd["searches"][0]["status"]')" = finished ]
}

@test "--time-limit alone stops starting trials: a large budget ends by the limit, resumable" {
	t0="$(date +%s.%N)"
	run --separate-stderr hml -q -C exp --json search --budget 200 --workers 2 --time-limit 6 $QUICK
	t1="$(date +%s.%N)"
	assert_success
	echo "$output" > out.json
	"$PY" -c "import sys; sys.exit(not ($t1 - $t0 < 18))"
	[ "$(json out.json 'd["search"]["status"]')" = stopped ]
	[ "$(json out.json 'd["search"]["counts"]["configs"] < 200')" = True ]
	# Nothing was lost: every trial started has ended, or is run on resume.
	[ "$(json exp/manifest.json 'd["searches"][0]["stopped"]')" = time_limit ]
	check_front_kept out.json 0
}

@test "bad --time-limit values are usage errors (exit 2), nothing written" {
	for v in 0 0s 0.0h -5 abc 5x inf nan 1e3 '' ' 5' 9000h 99999999999999999999999999999999999h; do
		run --separate-stderr hml -q -C exp search --time-limit="$v"
		assert_failure 2
		[[ "$stderr" == "hml: error: search: --time-limit: "* ]]
		[ "$(printf '%s\n' "$stderr" | wc -l)" = 1 ]
	done
	run --separate-stderr hml -q -C exp search --time-limit 5x
	assert_failure 2
	assert_equal "$stderr" "hml: error: search: --time-limit: '5x' is not a duration (a number of seconds, or with s, m or h: 90, 90s, 45m, 1.5h)"
	run --separate-stderr hml -q -C exp search --time-limit 0
	assert_equal "$stderr" "hml: error: search: --time-limit: duration '0' must be positive"
	run --separate-stderr hml -q -C exp search --time-limit 9000h
	assert_equal "$stderr" "hml: error: search: --time-limit: duration '9000h' is longer than a year"
	[ "$(json exp/manifest.json 'len(d.get("searches", []))')" = 0 ]
	[ ! -e exp/search/s1 ]
}

@test "stderr no terminal: a plain progress line per finished configuration; none with -q" {
	run --separate-stderr hml -C exp --json search --budget 3 --workers 2 $QUICK
	assert_success
	echo "$output" > out.json
	printf '%s\n' "$stderr" > err
	"$PY" - <<-'EOF2'
	import json, re
	rec = json.load(open("out.json"))["search"]
	err = open("err").read()
	assert "\r" not in err and "\x1b" not in err
	pat = re.compile(r"^hml: search s1: (\d+)/3 configurations, (\d+) trials, best val_rmse (\S+), "
	                 r"(\d+(?:\.\d+)?s|\d+m(?:\d\ds)?|\d+h(?:\d\dm)?) elapsed"
	                 r"(?:, about (\S+) left|, (\S+) left to the time limit)?$")
	lines = [pat.match(l) for l in err.splitlines() if re.match(r"hml: search s1: \d+/", l)]
	assert lines and all(lines), err
	done = [int(m[1]) for m in lines]
	trials = [int(m[2]) for m in lines]
	assert done == sorted(done) and trials == sorted(trials), (done, trials)
	assert done[-1] == 3 and trials[-1] == rec["counts"]["trials"], (lines[-1][0], rec["counts"])
	# a line when a configuration's first trial or a top-rung trial ended
	# (two ending together share one), never twice for the same counts
	assert len(lines) <= rec["counts"]["trials"], err
	assert len(set(zip(done, trials))) == len(lines), err
	best = min(f["val_rmse"] for f in rec["front"])
	assert float(lines[-1][3]) == float("%.3g" % best), (lines[-1][3], best)
	assert not lines[-1][6]   # no time limit
	EOF2
	# -q: none.
	rm -rf exp && cp -r "$EXP0" exp
	run --separate-stderr hml -q -C exp --json search --budget 2 $QUICK
	assert_success
	[[ "$stderr" != *"configurations,"* ]]
}
