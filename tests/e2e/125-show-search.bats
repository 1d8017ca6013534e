#!/usr/bin/env bats
# Searches as `hml show` sees them: the listing, one search (its front
# table, its results in JSON), and its plots drawn by gnuplot with
# --plot (PNG and SVG, registered in the record). The searches are written
# by the store and the history writer (tests/e2e/mksearch.c), as `hml
# search` writes them, without training.

load helpers

MKSEARCH="$HML_BUILD_DIR/tests/mksearch"

setup() { common_setup; }

# two_rung_search DIR: a finished search of 2 rungs with a bound on the
# error and on the parameters: 6 results, 2 failures, a front of 2.
two_rung_search() {
	"$MKSEARCH" "$1" binomial 10 2 '{"max_error": 0.5, "max_latency": null, "max_params": 1000}' <<-'EOF'
	0 0 0 running
	0 0 0 ok 0.4 1e-6 100
	1 1 0 running
	1 1 0 failed
	2 0 1 ok 0.2 2e-6 100
	3 2 1 ok 0.1 1e-5 500
	4 3 1 ok 0.3 5e-6 100
	5 4 1 ok 0.05 1e-7 5000
	6 5 1 ok 0.6 1e-7 10
	2 0 1 kept m1
	7 6 0 timeout
	8 7 0 running
	EOF
}

# snapshot DIR: every path below DIR with its size and checksum.
snapshot() {
	(cd "$1" && find . -printf '%p %y %s\n' | sort && find . -type f -exec cksum {} + | sort)
}

# magic FILE: the first bytes of FILE as hex.
magic() {
	head -c "$2" "$1" | od -An -tx1 | tr -d ' \n'
}

@test "the listing has a row per search, computed from its history" {
	two_rung_search exp
	"$MKSEARCH" exp bonds 5 1 '{}' </dev/null
	run hml -C exp show
	assert_success
	assert_line "searches:"
	assert_output --partial "ID  REGION    CONFIGS  TRIALS  FAILED  FRONT  METRIC  BEST ERROR  STATUS"
	assert_output --partial "s1  binomial  8/10     8       2       2      rmse    0.1         finished"
	assert_output --partial "s2  bonds     0/5      0       0       0      rmse    -           finished"
	hml -C exp show --json >out.json
	"$PY" - <<-'EOF'
	import json
	out = json.load(open("out.json"))
	man = json.load(open("exp/manifest.json"))
	assert out["searches"] == man["searches"]
	assert [s["id"] for s in out["searches"]] == ["s1", "s2"]
	EOF
}

@test "show SEARCH_ID prints the front table, the history and where the plots are" {
	two_rung_search exp
	run hml -C exp show s1
	assert_success
	assert_line "search s1: region 'binomial', status finished"
	assert_line "configurations started: 8 of a budget of 10; trials ended: 8, failed: 2"
	assert_line "constraints: max error 0.5 max params 1000"
	assert_line "  VAL RMSE  LATENCY/SAMPLE  PARAMS  MODEL  TRIAL  ARCH"
	assert_line "  0.1       10 us           500     -      3      mlp:16x16:relu"
	assert_line "  0.2       2 us            100     m1     2      mlp:16x16:relu"
	assert_line "history: exp/search/s1/trials.jsonl"
	assert_line "plots: none (draw them with 'hml show s1 --plot')"
}

@test "show SEARCH_ID --json: the record, the results and the convergence" {
	two_rung_search exp
	hml -C exp --json show s1 >out.json
	"$PY" - <<-'EOF'
	import json, math
	out = json.load(open("out.json"))
	man = json.load(open("exp/manifest.json"))
	assert list(out) == ["schema_version", "search", "results", "plots"], list(out)
	assert out["search"] == man["searches"][0]
	r = out["results"]
	assert (r["configs"], r["ended"], r["failed"], r["top_rung"], r["front_size"]) == (8, 8, 2, 1, 2)
	assert [(f["trial"], f["model"], f["val_rmse"]) for f in r["front"]] == [(3, None, 0.1), (2, "m1", 0.2)]
	assert [t["trial"] for t in r["trials"]] == [0, 2, 3, 4, 5, 6]
	assert [t["feasible"] for t in r["trials"]] == [True, True, True, True, False, False]
	assert [t["ended"] for t in r["trials"]] == [1, 3, 4, 5, 6, 7]
	c = r["convergence"]
	assert [x["ended"] for x in c] == list(range(1, 9))
	assert [x["best_error"] for x in c] == [None, None, 0.2, 0.1, 0.1, 0.1, 0.1, 0.1]
	# the hypervolume (decades) of the front so far, against the reference
	ref = r["hypervolume_reference"]
	assert abs(ref[0] - (math.log10(0.6) + 0.1)) < 1e-12 and abs(ref[1] - (-5 + 0.1)) < 1e-12
	xb, yb = math.log10(0.2), math.log10(2e-6)
	assert abs(c[2]["hypervolume"] - (ref[0] - xb) * (ref[1] - yb)) < 1e-12
	assert c[0]["hypervolume"] == 0 and c[7]["hypervolume"] > c[2]["hypervolume"]
	assert out["plots"] == {}
	EOF
}

@test "--plot draws the front and the convergence as PNG and SVG and registers them" {
	command -v gnuplot >/dev/null || skip "gnuplot is not installed"
	two_rung_search exp
	run hml -C exp show s1 --plot
	assert_success
	for f in front convergence; do
		[ "$(magic "exp/search/s1/$f.png" 8)" = 89504e470d0a1a0a ]
		head -c 200 "exp/search/s1/$f.svg" | grep -q '<svg'
		assert_line "plot ${f}_png: exp/search/s1/$f.png"
		assert_line "plot ${f}_svg: exp/search/s1/$f.svg"
	done
	# the bounds of the search are drawn, the temporary directory is gone
	grep -q 'max error' exp/search/s1/front.svg
	! grep -q 'max latency' exp/search/s1/front.svg
	[ -z "$(find exp/search/s1 -name '.plot-*')" ]
	[ "$(json exp/manifest.json 'd["searches"][0]["files"]')" = "{'history': 'search/s1/trials.jsonl', 'front_png': 'search/s1/front.png', 'front_svg': 'search/s1/front.svg', 'convergence_png': 'search/s1/convergence.png', 'convergence_svg': 'search/s1/convergence.svg'}" ]
	hml -C exp --json show s1 >out.json
	[ "$(json out.json 'sorted(d["plots"])')" = "['convergence_png', 'convergence_svg', 'front_png', 'front_svg']" ]
	[ "$(json out.json 'd["plots"]["front_png"]')" = "$WORK/exp/search/s1/front.png" ]
	# drawn again, replaced whole
	hml -C exp show s1 --plot --json >/dev/null
	[ "$(magic exp/search/s1/front.png 8)" = 89504e470d0a1a0a ]
}

@test "--plot without gnuplot: exit 1 naming it, the earlier plots and the record kept" {
	command -v gnuplot >/dev/null || skip "gnuplot is not installed"
	two_rung_search exp
	hml -C exp show s1 --plot >/dev/null
	before=$(snapshot exp)
	run env PATH=/nonexistent "$HML" -C exp show s1 --plot
	assert_failure 1
	assert_output "hml: error: gnuplot is not installed (no 'gnuplot' on PATH)"
	[ "$(snapshot exp)" = "$before" ]
	# a gnuplot that fails: its last message is quoted
	mkdir bin
	printf '#!/bin/sh\necho "plot.gp line 2: no such terminal" >&2\nexit 1\n' >bin/gnuplot
	chmod +x bin/gnuplot
	run env PATH="$WORK/bin:/usr/bin:/bin" "$HML" -C exp show s1 --plot
	assert_failure 1
	assert_output "hml: error: gnuplot failed (exit 1): plot.gp line 2: no such terminal"
	[ "$(snapshot exp)" = "$before" ]
}

@test "--plot: no ID is a usage error, another record or an empty search invalid" {
	two_rung_search exp
	"$MKSEARCH" exp binomial 5 1 '{}' <<-'EOF'
	0 0 0 running
	0 0 0 crashed
	EOF
	run hml -C exp show --plot
	assert_failure 2
	assert_output "hml: error: show: --plot needs the ID of a search (s1, ...)"
	run hml -C exp show s2 --plot
	assert_failure 3
	assert_output "hml: error: search 's2' has no successful trial to plot"
	[ -z "$(find exp/search/s2 -name '*.png' -o -name '.plot-*')" ]
	run hml -C exp show s9 --plot
	assert_failure 3
	assert_output "hml: error: no record 's9' in experiment 'exp'"
}

@test "a damaged history: show SEARCH_ID names the line, the listing warns and goes on" {
	two_rung_search exp
	printf 'not json\n' >>exp/search/s1/trials.jsonl
	run hml -C exp show s1
	assert_failure 3
	assert_output --partial "hml: error: trial history '"
	assert_output --partial "trials.jsonl' line 13: "
	run hml -C exp show
	assert_success
	assert_output --partial "hml: warning: search 's1': trial history '"
	assert_output --partial "s1  binomial  -        -       -       -      rmse    -           finished"
	# a torn last line (a writer killed mid-line) is no damage
	sed -i '$d' exp/search/s1/trials.jsonl
	printf '{"trial": 9, "conf' >>exp/search/s1/trials.jsonl
	run hml -C exp show s1
	assert_success
}

@test "show of a search changes nothing in the experiment" {
	two_rung_search exp
	before=$(snapshot exp)
	hml -C exp show >/dev/null
	hml -C exp show s1 >/dev/null
	hml -C exp --json show s1 >/dev/null
	[ "$(snapshot exp)" = "$before" ]
}

@test "hml search draws its plots when it finishes; without gnuplot it warns and succeeds" {
	command -v gnuplot >/dev/null || skip "gnuplot is not installed"
	hml -q -C exp collect binomial --args '--options 1024 --seed {seed}' >/dev/null
	run --separate-stderr hml -q -C exp --json search --budget 3 --max-epochs 1 --seed 5 --threads 1
	assert_success
	echo "$output" >out.json
	[ "$(json out.json 'sorted(d["search"]["files"])')" = "['convergence_png', 'convergence_svg', 'front_png', 'front_svg', 'history']" ]
	for f in front convergence; do
		[ "$(magic "exp/search/s1/$f.png" 8)" = 89504e470d0a1a0a ]
		head -c 200 "exp/search/s1/$f.svg" | grep -q '<svg'
	done
	# the front hml show computes from the history is the one the search recorded
	hml -C exp --json show s1 >show.json
	"$PY" - <<-'EOF2'
	import json
	rec = json.load(open("out.json"))["search"]
	res = json.load(open("show.json"))["results"]
	key = lambda f: (f["trial"], f["model"], f["val_rmse"], f["latency_seconds_per_sample"])
	assert [key(f) for f in res["front"]] == [key(f) for f in rec["front"]], (res["front"], rec["front"])
	EOF2
	run --separate-stderr env PATH=/nonexistent "$HML" -q -C exp --json search --budget 2 --max-epochs 1 --seed 6 --threads 1
	assert_success
	[ "$stderr" = "hml: warning: search 's2' succeeded, but its plots were not drawn: gnuplot is not installed (no 'gnuplot' on PATH)" ]
	echo "$output" >out2.json
	[ "$(json out2.json 'd["search"]["status"], sorted(d["search"]["files"])')" = "('finished', ['history'])" ]
	[ -z "$(find exp/search/s2 -name '*.png' -o -name '*.svg' -o -name '.plot-*')" ]
}
