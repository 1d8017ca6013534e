#!/usr/bin/env bats
# Learning from new rows (issue #28, part 2): hml train --from MODEL
# continues MODEL (its arch, loss, weights and normalisation) on its data
# sets plus the region's newer ones, as a new model that records its
# parent; hml search --from ID tries the configurations on search ID's
# front first. Bad parents and sources are refused with one line and their
# exit code, registering nothing. The region is tests/e2e/swap-app.c's.

load helpers

APP="$HML_BUILD_DIR/tests/swap-app"

setup_file() {
	export EXP0="$BATS_FILE_TMPDIR/exp" WF0="$BATS_FILE_TMPDIR/wf"
	stepper_workflow "$WF0" 400
	cd "$BATS_FILE_TMPDIR"
	"$HML" -q -C "$EXP0" collect "$WF0" >/dev/null
	"$HML" -q -C "$EXP0" train --seed 1 --threads 2 >/dev/null
	# new rows, from other inputs, after the model was trained
	"$HML" -q -C "$EXP0" collect "$WF0" --args '--rows 1024 --seed 7 --work 400' >/dev/null
}

setup() {
	common_setup
	cp -r "$EXP0" "$WORK/exp"
	cd "$WORK"
}

m() { json exp/manifest.json "$1"; }

# mean_of MODEL-FILE: the mean output of the application's rows on a model.
mean_of() {
	HML_MODE=infer HML_MODEL="$1" timeout 120 "$APP" --rows 256 --log one.log >/dev/null 2>&1 &&
		awk '{print $4}' one.log
}

@test "train --from records the parent and trains on the parent's data and the new rows" {
	[ "$(m '[d["id"] for d in d["datasets"]]')" = "['d1', 'd2']" ]
	[ "$(m 'd["models"][0]["datasets"]')" = "['d1']" ]
	run --separate-stderr hml -C exp --json train --from m1 --epochs 2 --threads 2
	assert_success
	echo "$output" >out.json
	[ "$(json out.json 'd["model"]["id"]')" = m2 ]
	[ "$(json out.json 'd["model"]["parent"]')" = m1 ]
	[ "$(json out.json 'd["model"]["datasets"]')" = "['d1', 'd2']" ]
	[ "$(json out.json 'd["model"]["arch"]')" = "$(m 'd["models"][0]["arch"]')" ]
	# 2048 + 1024 rows, split
	[ "$(json out.json 'sum(d["model"]["rows"][k] for k in ("train", "validation", "test"))')" = 3072 ]
	[ "$(m 'd["models"][1]["parent"]')" = m1 ]
	[ "$(json exp/models/m2.json 'd["parent"]')" = m1 ]
	run hml -C exp show m2
	assert_success
	assert_line "parent: m1"
	# the text form says so
	run --separate-stderr hml -C exp train --from m1 --epochs 1 --threads 2
	assert_success
	assert_output --partial "continued from model 'm1' (its 1 data set, and 1 more)"
}

@test "train --from starts from the parent's weights and normalisation" {
	a=$(mean_of "$PWD/exp/models/m1.pt")
	# a learning rate too small to move anything: the parent's function
	run --separate-stderr hml -C exp train --from m1 --epochs 1 --lr 1e-12 --threads 2
	assert_success
	b=$(mean_of "$PWD/exp/models/m2.pt")
	"$PY" -c 'import sys; a, b = map(float, sys.argv[1:]); assert abs(a - b) <= 1e-6 * max(1, abs(a)), (a, b)' "$a" "$b"
	# the same from scratch is another function
	run --separate-stderr hml -C exp train --arch "$(m 'd["models"][0]["arch"]')" --epochs 1 \
		--lr 1e-12 --seed 1 --threads 2
	assert_success
	c=$(mean_of "$PWD/exp/models/m3.pt")
	"$PY" -c 'import sys; a, c = map(float, sys.argv[1:]); assert abs(a - c) > 1e-3, (a, c)' "$a" "$c"
}

@test "train --from with --data: the parent's data sets first, each once" {
	run --separate-stderr hml -C exp --json train --from m1 --data d2 --data d1 --epochs 1 --threads 2
	assert_success
	echo "$output" >out.json
	[ "$(json out.json 'd["model"]["datasets"]')" = "['d1', 'd2']" ]
	run --separate-stderr hml -C exp --json train --from m1 --data d1 --epochs 1 --threads 2
	assert_success
	echo "$output" >out.json
	[ "$(json out.json 'd["model"]["datasets"]')" = "['d1']" ]
}

@test "train --from refuses an unknown, imported or other-region parent and --arch with it" {
	before=$(m 'len(d["models"])')
	run --separate-stderr hml -C exp train --from m9
	assert_failure 3
	[ "$stderr" = "hml: error: no model 'm9' in experiment 'exp'" ]
	run --separate-stderr hml -C exp train --from m1 --arch mlp:4:relu
	assert_failure 2
	[[ "$stderr" == *"--from MODEL trains MODEL's architecture, loss and categorical features; --arch cannot be given with it"* ]]
	run --separate-stderr hml -C exp train --from m1 --region other
	assert_failure 3
	[ "$stderr" = "hml: error: model 'm1' is of region 'step', not 'other'" ]
	"$PY" -c 'import torch, sys
m = torch.nn.Sequential(torch.nn.Linear(2, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
torch.jit.script(m).save(sys.argv[1])' seq.pt
	hml -q -C exp import seq.pt --region step >/dev/null 2>&1
	imported=$(m 'd["models"][-1]["id"]')
	[ "$(m 'd["models"][-1]["family"]')" = imported ]
	after_import=$(m 'len(d["models"])')
	run --separate-stderr hml -C exp train --from "$imported" --threads 2
	assert_failure 3
	[[ "$stderr" == *"model '$imported' was not trained by hml (it was imported)"* ]]
	[ "$(m 'len(d["models"])')" = "$after_import" ]
	[ "$after_import" = $((before + 1)) ]
}

# search ARGS...: a test-size search of the region.
search() {
	hml -C exp search --budget 3 --max-epochs 2 --workers 1 --threads 1 \
		--target torchscript "$@"
}

@test "search --from tries the front's configurations first and records them" {
	run --separate-stderr search --seed 3
	assert_success
	nfront=$(m 'len(d["searches"][0]["front"])')
	[ "$nfront" -ge 1 ]
	run --separate-stderr search --json --seed 5 --from s1
	assert_success
	[[ "$stderr" == *"search 's1': the $nfront configurations on its front are tried first"* ]]
	[ "$(m 'd["searches"][1]["from"]["search"]')" = s1 ]
	[ "$(m 'len(d["searches"][1]["from"]["configs"])')" = "$nfront" ]
	# s2's first configurations are s1's front's, in front order
	"$PY" - <<-'PYEOF'
	import json
	m = json.load(open("exp/manifest.json"))
	def samples(sid):
	    out = {}
	    for l in open("exp/search/%s/trials.jsonl" % sid):
	        e = json.loads(l)
	        if e["status"] == "running" and e["config"] not in out:
	            out[e["config"]] = e["params"]
	    return out
	def same(a, b):   # the manifest keeps 15 significant digits
	    return a.keys() == b.keys() and all(
	        abs(a[k] - b[k]) <= 1e-12 * abs(a[k]) if isinstance(a[k], float) else a[k] == b[k]
	        for k in a)
	s1, s2 = samples("s1"), samples("s2")
	front = [s1[f["config"]] for f in m["searches"][0]["front"]]
	assert all(same(s2[k], front[k]) for k in range(len(front))), (front, s2)
	assert all(same(a, b) for a, b in zip(m["searches"][1]["from"]["configs"], front))
	PYEOF
}

@test "search --from refuses an unknown search, an empty front and --resume" {
	before=$(m 'len(d["searches"])')
	run --separate-stderr search --from s9
	assert_failure 3
	[[ "$stderr" == *"hml: error: no search 's9' in experiment 'exp'"* ]]
	[ "$(m 'len(d["searches"])')" = "$before" ]
	run --separate-stderr search --from s1 --resume
	assert_failure 2
	[[ "$stderr" == *"--from seeds a new search; a resumed one keeps its seeds"* ]]
	# no model can be as fast as this: nothing on the front
	run --separate-stderr search --seed 3 --max-latency 1e-15
	[ "$(m 'len(d["searches"][-1]["front"])')" = 0 ]
	empty=$(m 'd["searches"][-1]["id"]')
	n=$(m 'len(d["searches"])')
	run --separate-stderr search --from "$empty"
	assert_failure 3
	[[ "$stderr" == *"search '$empty' has nothing on its front"* ]]
	[ "$(m 'len(d["searches"])')" = "$n" ]
}
