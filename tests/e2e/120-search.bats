#!/usr/bin/env bats
# hml search: a small search on binomial with two workers, its history,
# front and registered models; latency targets, constraints, progress,
# --fidelity, seeds, MPI ranks, --train-args; bad input (spaces, budgets,
# options). Faults and --resume are in 123-search-resume.bats (two files,
# so that ctest runs them side by side).

load search-helpers

@test "a search with two workers records its trials, its front and the front's models" {
	LD_DEBUG=files LD_DEBUG_OUTPUT="$WORK/ld" \
		run --separate-stderr hml -q -C exp --json search --budget 6 --workers 2 $QUICK
	assert_success
	echo "$output" > out.json
	# The coordinator loads the optimiser's plugin, the workers the training
	# one; with no MPI launcher, no process maps Open MPI.
	grep -lqE "file=$HML_BUILD_DIR/cmd/../runtime/libhml-cli-bo.so .*dynamically loaded" ld.*
	grep -lqE "file=$HML_BUILD_DIR/cmd/../runtime/libhml-cli-train.so .*dynamically loaded" ld.*
	refute_mapped 'file=[^ ]*libmpi' ld.*
	[ "$(json out.json 'd["schema_version"]')" = 1 ]
	[ "$(json out.json 'd["search"]["id"]')" = s1 ]
	[ "$(json out.json 'd["search"]["status"]')" = finished ]
	[ "$(json out.json 'd["search"]["counts"]["configs"]')" = 6 ]
	[ "$(json out.json 'd["search"]["workers"]')" = 2 ]
	[ "$(json out.json 'd["search"]["rungs"]')" = 2 ]
	[ "$(json out.json 'd["search"]["files"]["history"]')" = search/s1/trials.jsonl ]
	[ "$(json out.json 'len(d["search"]["front"]) >= 1')" = True ]
	# The coordinator's cost: the optimiser's part within its busy time,
	# the CPU time of both within the process's.
	[ "$(json out.json '(lambda s: 0 < s["coordinator_suggest_seconds"] <= s["coordinator_busy_seconds"] < s["seconds"])(d["search"])')" = True ]
	[ "$(json out.json '(lambda s: 0 < s["coordinator_suggest_cpu_seconds"] <= s["coordinator_busy_cpu_seconds"] <= s["coordinator_cpu_seconds"])(d["search"])')" = True ]
	check_history
	# Both workers trained; rung 0 trained 1 epoch, rung 1 all 3.
	[ "$(hist 'sorted({e["worker"] for e in ev if e["status"] == "running"})')" = "[0, 1]" ]
	[ "$(hist '{(e["rung"], e["epochs"]) for e in ev if e["status"] == "running"} <= {(0, 1), (1, 3)}')" = True ]
	[ "$(hist 'sum(e["status"] == "ok" and e["rung"] == 1 for e in ev) >= 1')" = True ]
	# The front's models are ordinary models, named in the history.
	"$PY" - <<-'EOF'
	import json
	d = json.load(open("out.json"))["search"]
	man = json.load(open("exp/manifest.json"))
	models = {m["id"]: m for m in man["models"]}
	ev = [json.loads(l) for l in open("exp/search/s1/trials.jsonl")]
	kept = {e["trial"]: e["model"] for e in ev if e["status"] == "kept"}
	for f in d["front"]:
	    m = models[f["model"]]
	    assert m["search"] == {"id": "s1", "trial": f["trial"], "config": f["config"]}, m
	    assert kept[f["trial"]] == f["model"]
	    assert m["metrics"]["val_rmse"] == f["val_rmse"]
	    assert m["input_shape"] == [5] and m["output_shape"] == [1]
	    # the card's latency per target, as hml train measures it
	    lat = m["latency"]
	    assert lat["batch"] >= 1 and lat["torchscript"] > 0 and "c" in lat, lat
	assert len(models) == len(d["front"])   # only the front is kept
	assert man["searches"][0]["space_sha256"] and man["searches"][0]["datasets"] == ["d1"]
	EOF
	# Other trials' model files are gone; a front model deploys.
	[ -z "$(ls exp/search/s1/*.pt 2>/dev/null)" ]
	m="$(json out.json 'd["search"]["front"][0]["model"]')"
	run hml -q -C exp deploy "$m"
	assert_success
	assert_output --partial "HML_MODEL_BINOMIAL="
}

@test "--target c: the objective is the compiled model's latency, measured once per architecture (twice only when two of its trials run side by side)" {
	command -v cc >/dev/null || skip "no C compiler"
	cat > space.json <<-'EOF'
	{"layers": {"type": "int", "low": 1, "high": 2},
	 "width": {"type": "choice", "values": [16, 32]},
	 "lr": {"type": "float", "low": 0.001, "high": 0.01, "log": true}}
	EOF
	run --separate-stderr hml -q -C exp --json search --budget 5 --workers 2 --space space.json --max-epochs 3 --seed 3 --threads 1 --target c
	assert_success
	echo "$output" > out.json
	[ "$(json out.json 'd["search"]["latency_target"]')" = c ]
	"$PY" - <<-'EOF'
	import json
	d = json.load(open("out.json"))["search"]
	ev = [json.loads(l) for l in open("exp/search/s1/trials.jsonl")]
	ok = {e["trial"]: e for e in ev if e["status"] == "ok"}
	assert ok
	# measured with the application's threads as collected, not --threads 1
	app = json.load(open("exp/manifest.json"))["datasets"][0]["regions"]["binomial"]["threads"]
	# The coordinator looks the architecture up when it starts a trial, so
	# a trial is measured unless a measurement of its architecture had
	# ended (its line written) before the trial's start line; two trials of
	# one architecture running side by side are both measured.
	known = {}
	for e in ev:
	    if e["status"] == "running" and e["trial"] in ok:
	        o = ok[e["trial"]]
	        m = o["metrics"]
	        assert m["latency_target"] == "c" and m["latency_threads"] == app, (m, app)
	        key = (o["arch"], m["latency_batch"])
	        if m["latency_cached"]:
	            # an architecture measured before: its figure, at no cost
	            assert key in known and m["latency_seconds_per_sample"] == known[key], (o, known)
	            assert m["latency_cost_seconds"] == 0
	        else:
	            # measured: compiled and timed, as nothing was known
	            assert key not in known, (o, known)
	    elif e["status"] == "ok" and not e["metrics"]["latency_cached"]:
	        m = e["metrics"]
	        assert m["latency_cost_seconds"] > 0 and m["latency_seconds_per_sample"] > 0
	        known.setdefault((e["arch"], m["latency_batch"]), m["latency_seconds_per_sample"])
	# 4 architectures at most, so some trials reuse a measurement (the
	# promoted ones at least); the front ranks by the C latencies
	assert any(e["metrics"]["latency_cached"] for e in ok.values())
	lat = {t: e["metrics"]["latency_seconds_per_sample"] for t, e in ok.items()}
	for f in d["front"]:   # (the manifest keeps 15 digits)
	    assert abs(f["latency_seconds_per_sample"] / lat[f["trial"]] - 1) < 1e-12, (f, lat)
	EOF
	# Resuming with another target is refused; nothing is appended.
	n="$(hist 'len(ev)')"
	run --separate-stderr hml -q -C exp search --resume --target torchscript
	assert_failure 3
	assert_equal "$stderr" "hml: error: cannot resume search 's1' with --target torchscript: it was started with c"
	[ "$(hist 'len(ev)')" = "$n" ]
}

@test "--target auto chooses c with a compiler, torchscript without; c without one is refused" {
	command -v cc >/dev/null || skip "no C compiler"
	cp -r exp exp2
	run --separate-stderr hml -q -C exp --json search --budget 1 --max-epochs 1 --seed 3 --threads 1
	assert_success
	echo "$output" > out.json
	[ "$(json out.json 'd["search"]["latency_target"]')" = c ]
	[ "$(hist '[e["metrics"]["latency_target"] for e in ev if e["status"] == "ok"]')" = "['c']" ]
	# No cc on PATH (hml and timeout are found by absolute path).
	run --separate-stderr /usr/bin/timeout 600 env PATH=/nonexistent "$HML" -C exp2 --json search --budget 1 --max-epochs 1 --seed 3 --threads 1 --target auto
	assert_success
	echo "$output" > out2.json
	[ "$(json out2.json 'd["search"]["latency_target"]')" = torchscript ]
	[[ "$stderr" == *"latency objective: torchscript (no C compiler: 'cc' is not on PATH"* ]]
	run --separate-stderr /usr/bin/timeout 600 env PATH=/nonexistent "$HML" -q -C exp2 search --budget 1 --max-epochs 1 --target c
	assert_failure 3
	assert_equal "$stderr" "hml: error: --target c: the latency target is c, but no C compiler: 'cc' is not on PATH (--target c compiles the model with it)"
	[ "$(json exp2/manifest.json 'len(d["searches"])')" = 1 ]
	run --separate-stderr hml -q -C exp search --target gpu
	assert_failure 2
	assert_equal "$stderr" "hml: error: search: --target must be 'c', 'torchscript' or 'auto', not 'gpu'"
}

@test "constraints keep infeasible trials in the history and off the front" {
	run --separate-stderr hml -q -C exp --json search --budget 5 --workers 2 --max-params 3000 $QUICK
	assert_success
	echo "$output" > out.json
	[ "$(json out.json 'd["search"]["constraints"]')" = "{'max_latency': None, 'max_params': 3000.0, 'max_error': None}" ]
	[ "$(json out.json 'all(f["params"] <= 3000 for f in d["search"]["front"])')" = True ]
	# Every ended trial is in the history, feasible or not.
	[ "$(hist 'sum(e["status"] == "ok" for e in ev)')" = "$(json out.json 'd["search"]["counts"]["ok"]')" ]
	check_history
	run --separate-stderr hml -q -C exp search --resume --max-params 5000
	assert_failure 3
	[[ "$stderr" == *"cannot resume search 's1' with --max-params 5000: it was started with 3000"* ]]
	run --separate-stderr hml -q -C exp search --resume --max-error 0.5
	assert_failure 3
	[[ "$stderr" == *"with --max-error 0.5: it was started without it"* ]]
}

@test "on a terminal a progress line shows every field; not when stderr is no terminal" {
	command -v script >/dev/null || skip "no script(1) (bsdutils)"
	# A pseudo-terminal from script(1); trial 1 crashes, so 'failed' moves.
	HML_SEARCH_TEST_CRASH=1 run timeout 600 script -qec "'$HML' -C exp --json search --budget 4 --workers 2 $QUICK" /dev/null < /dev/null
	assert_success
	printf '%s' "$output" > tty.out
	"$PY" - <<-'EOF'
	import json, re
	t = open("tty.out").read()
	rec = json.load(open("exp/manifest.json"))["searches"][0]
	pat = re.compile(r"search \[([#.]{30})\] +(\d+)% (\d+)/(\d+) done, (\d+) running, "
	                 r"(\d+) failed, best (\S+), front (\d+), (\d+) s, ETA (\?|\d+ s)")
	lines = [m for m in map(pat.search, re.split(r"[\r\n]", t.replace("\x1b[K", ""))) if m]
	assert len(lines) >= 2, t[:2000]
	done = [int(m[3]) for m in lines]
	assert all(int(m[4]) == 4 for m in lines)                      # of the budget
	assert done == sorted(done) and done[-1] == 4, done            # done/budget
	assert all(m[1].count("#") == int(int(m[3]) / 4 * 30 + 0.5) for m in lines)
	assert 1 <= max(int(m[5]) for m in lines) <= 2                 # running
	assert int(lines[-1][5]) == 0
	failed = [int(m[6]) for m in lines]
	assert failed == sorted(failed) and failed[-1] == 1, failed    # failed
	secs = [int(m[9]) for m in lines]
	assert secs == sorted(secs) and secs[-1] <= rec["seconds"] + 1  # elapsed
	assert lines[0][10] == "?" and lines[-1][10] == "0 s"           # remaining
	assert all(m[10] != "?" for m in lines if int(m[3]) > 0)
	front = rec["front"]
	assert int(lines[-1][8]) == len(front) >= 1                     # front size
	best = min(f["val_rmse"] for f in front)                         # best error
	assert float(lines[-1][7]) == float("%.3g" % best), (lines[-1][7], best)
	assert all(m[7] == "-" for m in lines if int(m[8]) == 0)
	EOF
	# Not a terminal: no progress line, only the information lines.
	rm -rf exp && cp -r "$EXP0" exp
	run --separate-stderr hml -C exp --json search --budget 2 $QUICK
	assert_success
	[[ "$stderr" != *"done,"* && "$stderr" != *$'\r'* ]]
	[[ "$stderr" == *"search s1: region 'binomial'"* ]]
}

@test "--fidelity rows: lower rungs train all epochs on fewer rows; recorded and kept on resume" {
	run --separate-stderr hml -q -C exp search --budget 4 --fidelity rows $QUICK
	assert_success
	[ "$(json exp/manifest.json 'd["searches"][0]["fidelity"]')" = rows ]
	# every trial trained 3 epochs (a rung-0 trial on a third of the rows)
	[ "$(hist 'sorted({e["epochs"] for e in ev if e["status"] == "ok"})')" = "[3]" ]
	[ "$(hist 'sum(e["status"] == "ok" and e["rung"] == 0 for e in ev)')" -ge 4 ]
	check_history
	run --separate-stderr hml -q -C exp search --resume --budget 5 --fidelity both
	assert_failure 3
	assert_equal "$stderr" "hml: error: cannot resume search 's1' with --fidelity both: it was started with rows"
	run --separate-stderr hml -q -C exp search --resume --budget 5
	assert_success
	[ "$(hist 'len({e["config"] for e in ev})')" = 5 ]
	run --separate-stderr hml -q -C exp search --fidelity layers
	assert_failure 2
	assert_equal "$stderr" "hml: error: search: --fidelity must be 'epochs', 'rows' or 'both', not 'layers'"
}

@test "the same seed proposes the same configurations; another seed others" {
	cp -r exp exp2
	cp -r exp exp3
	# The TorchScript latency: no compiler run per trial (the proposals
	# do not depend on the latency target; --target auto has its test).
	for e in exp exp2; do
		run hml -q -C "$e" search --budget 3 --workers 2 --max-epochs 1 --seed 5 --threads 1 --target torchscript
		assert_success
	done
	run hml -q -C exp3 search --budget 3 --workers 2 --max-epochs 1 --seed 6 --threads 1 --target torchscript
	assert_success
	cfgs() {
		"$PY" -c 'import json,sys; print(sorted(json.dumps(e["params"], sort_keys=True) for e in map(json.loads, open(sys.argv[1])) if e["status"] == "running"))' "$1/search/s1/trials.jsonl"
	}
	[ "$(cfgs exp)" = "$(cfgs exp2)" ]
	[ "$(cfgs exp)" != "$(cfgs exp3)" ]
}

@test "mpirun -n 3: rank 0 coordinates, ranks 1 and 2 train; records as with --workers 2" {
	grep -q '^HML_WITH_MPI:BOOL=ON' "$HML_BUILD_DIR/CMakeCache.txt" ||
		skip "hml is built without MPI (-DHML_WITH_MPI=ON)"
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
	cp -r exp exp2
	run --separate-stderr timeout 300 mpirun -n 3 "$HML" -q -C exp --json search --budget 3 $QUICK
	assert_success
	echo "$output" > out.json
	[ "$(json out.json 'd["search"]["status"]')" = finished ]
	[ "$(json out.json 'd["search"]["transport"]')" = mpi ]
	[ "$(json out.json 'd["search"]["workers"]')" = 2 ]
	[ "$(json out.json 'd["search"]["counts"]["configs"]')" = 3 ]
	[ "$(hist 'sorted({e["worker"] for e in ev if e["status"] == "running"})')" = "[0, 1]" ]
	check_history
	# The same search with worker processes: records with the same fields.
	run --separate-stderr hml -q -C exp2 --json search --budget 3 --workers 2 $QUICK
	assert_success
	echo "$output" > out2.json
	"$PY" - <<-'EOF'
	import json
	a = json.load(open("out.json"))["search"]
	b = json.load(open("out2.json"))["search"]
	assert a.keys() == b.keys(), (a.keys() ^ b.keys())
	ea = [json.loads(l) for l in open("exp/search/s1/trials.jsonl")]
	eb = [json.loads(l) for l in open("exp2/search/s1/trials.jsonl")]
	for st in ("running", "ok"):
	    ka = {k for e in ea if e["status"] == st for k in e}
	    kb = {k for e in eb if e["status"] == st for k in e}
	    assert ka == kb, (st, ka ^ kb)
	EOF
}

@test "a build without MPI refuses to run under an MPI launcher" {
	! grep -q '^HML_WITH_MPI:BOOL=ON' "$HML_BUILD_DIR/CMakeCache.txt" ||
		skip "hml is built with MPI"
	OMPI_COMM_WORLD_SIZE=3 run --separate-stderr hml -q -C exp search --budget 2 $QUICK
	assert_failure 3
	assert_equal "$stderr" "hml: error: search: started by an MPI launcher, but hml was built without MPI (-DHML_WITH_MPI=ON)"
}

@test "a launcher's size that is not a number: one line, exit 3 (the library's rank rule)" {
	PMI_SIZE=x run --separate-stderr hml -q -C exp search --budget 2 $QUICK
	assert_failure 3
	assert_equal "$stderr" "hml: error: environment variable 'PMI_SIZE' is not a size: 'x'"
	[ ! -e exp/search ] || [ -z "$(ls exp/search)" ]
}

@test "bad search spaces are refused naming the key (exit 3)" {
	printf '{"lr": {"type": "real", "low": 0.001, "high": 0.1}}' > bad.json
	run --separate-stderr hml -q -C exp search --space bad.json --budget 2
	assert_failure 3
	[[ "$stderr" == *"key 'lr.type': unknown type 'real'"* ]]
	printf '{}' > empty.json
	run --separate-stderr hml -q -C exp search --space empty.json --budget 2
	assert_failure 3
	[[ "$stderr" == *"search space 'empty.json'"*"no parameters"* ]]
	printf '{"layers": {"type": "int", "low": 1, "high": 3}, "width_2": {"type": "int", "low": 4, "high": 8, "when": {"parent": "layrs", "min": 2}}}' > parent.json
	run --separate-stderr hml -q -C exp search --space parent.json --budget 2
	assert_failure 3
	[[ "$stderr" == *"key 'width_2.when.parent': unknown parent 'layrs'"* ]]
	printf '{"momentum": {"type": "float", "low": 0, "high": 0.9}}' > unknown.json
	run --separate-stderr hml -q -C exp search --space unknown.json --budget 2
	assert_failure 3
	[[ "$stderr" == *"parameter 'momentum' is not an option of model family 'mlp'"* ]]
	printf '{"lr": ' > torn.json
	run --separate-stderr hml -q -C exp search --space torn.json --budget 2
	assert_failure 3
	[[ "$stderr" == *"search space 'torn.json': invalid JSON"* ]]
	run --separate-stderr hml -q -C exp search --space missing.json --budget 2
	assert_failure
	[[ "$stderr" == *"missing.json"* ]]
	# Nothing was registered or started.
	[ "$(json exp/manifest.json 'len(d.get("searches", []))')" = 0 ]
}

@test "--train-args prints the hml train arguments of a point; hml train trains exactly them" {
	run --separate-stderr hml -q -C exp --json search --max-epochs 2 \
		--train-args '{"layers": 3, "width": 16, "activation": "tanh", "lr": 0.004, "batch": 128}'
	assert_success
	echo "$output" > args.json
	[ "$(json args.json 'd["schema_version"]')" = 1 ]
	[ "$(json args.json 'd["train_args"][:5]')" = "['train', '--region', 'binomial', '--arch', 'mlp:16x16x16:tanh']" ]
	[ "$(json args.json 'd["point"]["width"]')" = 16 ]
	"$PY" - <<-'EOF'
	import json
	a = json.load(open("args.json"))["train_args"]
	o = dict(zip(a[1::2], a[2::2]))
	assert len(a) % 2 == 1 and "--threads" not in o, a
	assert o["--epochs"] == "2" and o["--lr"] == "0.004" and o["--batch"] == "128", o
	assert o["--optimizer"] == "adam" and o["--seed"] == "42" and o["--patience"] == "10", o
	assert o["--loss"] == "mse", o   # binomial is judged by RMSE
	EOF
	# hml train takes them as they are and records those very options.
	run --separate-stderr hml -q -C exp --json $(json args.json '" ".join(d["train_args"])') --threads 1
	assert_success
	echo "$output" > m.json
	"$PY" - <<-'EOF'
	import json
	a = json.load(open("args.json"))["train_args"]
	o = dict(zip(a[1::2], a[2::2]))
	m = json.load(open("m.json"))["model"]
	assert m["arch"] == o["--arch"] and m["region"] == o["--region"], m
	keys = {"--epochs": "epochs", "--batch": "batch", "--lr": "lr", "--optimizer": "optimizer",
	        "--schedule": "schedule", "--patience": "patience", "--clip": "clip",
	        "--seed": "seed", "--val-fraction": "val_fraction",
	        "--test-fraction": "test_fraction", "--weight-decay": "weight_decay",
	        "--loss": "loss"}
	assert set(o) - {"--region", "--arch", "--infer-batch"} <= set(keys), o
	assert m["metrics"]["latency_batch"] == int(o["--infer-batch"]) == 4096, m["metrics"]
	for flag, value in o.items():
	    if flag in keys:
	        got = m["options"][keys[flag]]
	        assert (got == value if isinstance(got, str) else got == float(value)), (flag, got, value)
	EOF
	# Without --json: the command line; the workflow's model.arch and epochs fill in.
	run --separate-stderr hml -q -C exp search --train-args '{"layers": 1}'
	assert_success
	[[ "$output" == "hml train --region binomial --arch mlp:64:relu --epochs 300 --batch 256 --lr 0.002 "* ]]
	# A point that is no JSON object is a usage error; one hml cannot map, invalid input.
	for p in '{"layers": 1' '[1]'; do
		run --separate-stderr hml -q -C exp search --train-args "$p"
		assert_failure 2
		[[ "$stderr" == "hml: error: search: --train-args takes a JSON object of search-space parameters ("*")" ]]
	done
	run --separate-stderr hml -q -C exp search --train-args '{"momentum": 0.9}'
	assert_failure 3
	assert_equal "$stderr" "hml: error: --train-args: parameter 'momentum' is not in the search space of region 'binomial'"
	run --separate-stderr hml -q -C exp search --train-args '{"batch": 0}'
	assert_failure 3
	assert_equal "$stderr" "hml: error: trial parameter 'batch' must be an integer of at least 1"
	run --separate-stderr hml -q -C exp search --resume --train-args '{}'
	assert_failure 2
	# Nothing of a search was written.
	[ "$(json exp/manifest.json 'len(d.get("searches", []))')" = 0 ]
	[ ! -e exp/search/s1 ]
}

@test "bad budgets and options are usage errors (exit 2)" {
	for b in 0 -3; do
		run --separate-stderr hml -q -C exp search --budget "$b"
		assert_failure 2
		assert_equal "$stderr" "hml: error: search: option '--budget' must be from 1 to 1000000, not $b"
	done
	run --separate-stderr hml -q -C exp search --workers 0
	assert_failure 2
	run --separate-stderr hml -q -C exp search --trial-timeout 0
	assert_failure 2
	run --separate-stderr hml -q -C exp search --max-latency -1
	assert_failure 2
	run --separate-stderr hml -q -C exp search --keep-models some
	assert_failure 2
	assert_equal "$stderr" "hml: error: search: --keep-models must be 'all' or 'front', not 'some'"
	run --separate-stderr hml -q -C exp search s1
	assert_failure 2
	run --separate-stderr hml -q -C nowhere search --budget 2
	assert_failure 3
	[[ "$stderr" == *"no experiment at 'nowhere'"* ]]
	[ "$(json exp/manifest.json 'len(d.get("searches", []))')" = 0 ]
}
