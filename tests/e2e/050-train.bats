#!/usr/bin/env bats
# hml train: a registered TorchScript model with its card, options from
# the workflow and the command line, determinism, NaN/Inf handling, and
# bad input (options, data, experiments, interrupted and killed runs).

load helpers

# One small collection for the whole file; every test works on a copy.
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

m() { json exp/manifest.json "$1"; }

# Quick training settings shared by most tests.
QUICK="--epochs 3 --threads 2 --arch mlp:16x16:relu"

@test "train registers a TorchScript model, its card and provenance" {
	run --separate-stderr hml -q -C exp --json train $QUICK
	assert_success
	echo "$output" > out.json
	[ "$(json out.json 'd["schema_version"]')" = 1 ]
	[ "$(json out.json 'd["model"]["id"]')" = m1 ]
	[ "$(json out.json 'd["model"]["region"]')" = binomial ]
	[ "$(json out.json 'd["model"]["workflow"]')" = binomial ]
	[ "$(json out.json 'd["model"]["arch"]')" = mlp:16x16:relu ]
	[ "$(json out.json 'd["model"]["datasets"]')" = "['d1']" ]
	[ "$(json out.json 'd["model"]["input_shape"]')" = "[5]" ]
	[ "$(json out.json 'd["model"]["output_shape"]')" = "[1]" ]
	[ "$(json out.json 'd["model"]["files"]')" = "{'model': 'models/m1.pt', 'card': 'models/m1.json'}" ]
	# The split: 80/10/10 of 4096 rows (S, X, dt, pu, pd -> price).
	[ "$(json out.json 'sum(d["model"]["rows"][k] for k in ("train", "validation", "test"))')" = 4096 ]
	# The card's metrics, all present and sensible.
	for k in val_rmse test_rmse test_mae test_max_abs train_seconds samples_per_second \
	         latency_seconds_per_sample; do
		[ "$(json out.json "d['model']['metrics']['$k'] > 0")" = True ]
	done
	[ "$(json out.json 'd["model"]["metrics"]["params"]')" = $((5 * 16 + 16 + 16 * 16 + 16 + 16 + 1)) ]
	[ "$(json out.json 'd["model"]["metrics"]["latency_batch"]')" = 4096 ]
	[ "$(json out.json 'd["model"]["metrics"]["epochs_run"]')" = 3 ]
	# Registered: the manifest's record is the card, the hashes hold.
	[ "$(m 'd["models"][0]["id"]')" = m1 ]
	"$PY" - <<-'EOF'
	import json, hashlib
	man = json.load(open("exp/manifest.json"))
	rec = man["models"][0]
	card = json.load(open("exp/models/m1.json"))
	# The card is the record, less its own hash (which it cannot hold).
	del rec["provenance"]["sha256"]["models/m1.json"]
	assert card == rec, (card, rec)
	prov = rec["provenance"]
	assert prov["sha256"]["models/m1.pt"] == hashlib.sha256(open("exp/models/m1.pt", "rb").read()).hexdigest()
	assert prov["versions"]["libtorch"], prov
	assert "train" in prov["command"], prov
	assert rec["data_sha256"]["d1"] == man["datasets"][0]["provenance"]["sha256"]["data/d1.h5"]
	EOF
	# No temporary file is left behind.
	[ -z "$(ls -A exp/models | grep -v '^m1\.')" ]
}

@test "train loads libtorch and HDF5 in its plugins; show after it maps neither" {
	LD_DEBUG=files hml -q -C exp train $QUICK > /dev/null 2> ld.log
	assert_plugin ld.log libhml-cli-hdf5.so
	assert_plugin ld.log libhml-cli-train.so
	grep -qE 'file=[^ ]*libtorch_cpu' ld.log
	[ "$(m 'd["models"][0]["id"]')" = m1 ]
	LD_DEBUG=files "$HML" -C exp show > /dev/null 2> ld.log
	refute_heavy ld.log
}

@test "the text output names the model and its errors" {
	run hml -q -C exp train $QUICK
	assert_success
	assert_line --index 0 --regexp "^m1: mlp:16x16:relu on region 'binomial' \([0-9]+ train / [0-9]+ validation / [0-9]+ test rows\)$"
	assert_output --regexp "validation RMSE [0-9.e+-]+, test RMSE"
	assert_output --regexp "inference [0-9.e+-]+ us/sample at batch 4096"
}

@test "off a terminal, HML_PROGRESS_SECONDS gives a progress line at most that often; a bad value is a usage error" {
	# stderr is a file here: no bar, and at the default (60 s) no line in a short run
	run --separate-stderr hml -C exp train $QUICK
	assert_success
	[[ "$stderr" != *"hml: train: "* ]]
	# every epoch is past a 1 ms interval: a line each, with the time left, but none at the end
	HML_PROGRESS_SECONDS=0.001 run --separate-stderr hml -C exp train --epochs 4 --threads 1 --arch mlp:16x16:relu
	assert_success
	echo "$stderr"
	[[ "$stderr" == *"hml: train: 1/4 (25%), loss "*", val rmse "*" elapsed, about "*" left"* ]]
	[[ "$stderr" == *"hml: train: 3/4 (75%), "* ]]
	[[ "$stderr" != *"hml: train: 4/4"* ]]
	# -q and 0: none
	HML_PROGRESS_SECONDS=0.001 run --separate-stderr hml -q -C exp train $QUICK
	assert_success
	[ -z "$stderr" ]
	HML_PROGRESS_SECONDS=0 run --separate-stderr hml -C exp train $QUICK
	assert_success
	[[ "$stderr" != *"hml: train: "* ]]
	for bad in x -1 inf 1e999 " 5"; do
		HML_PROGRESS_SECONDS="$bad" run --separate-stderr hml -C exp train $QUICK
		[ "$status" -eq 2 ]
		[ "$stderr" = "hml: error: invalid HML_PROGRESS_SECONDS '$bad': a number of seconds >= 0 (0: no progress lines)" ]
	done
	[ "$(m 'len(d["models"])')" = 4 ]   # the four good runs only
}

@test "the model is plain TorchScript: Python loads it and it predicts the prices" {
	hml -q -C exp train --epochs 20 --threads 2 --seed 3 >/dev/null
	"$PY" - <<-'EOF'
	import json, h5py, numpy as np, torch
	m = torch.jit.load("exp/models/m1.pt")
	f = h5py.File("exp/data/d1.h5", "r")
	x = torch.from_numpy(np.asarray(f["binomial/input"][:], dtype=np.float32))
	y = np.asarray(f["binomial/output"][:], dtype=np.float64)
	p = m(x).detach().numpy().astype(np.float64)
	assert p.shape == y.shape, (p.shape, y.shape)
	rmse = float(np.sqrt(np.mean((p - y) ** 2)))
	card = json.load(open("exp/models/m1.json"))
	# The whole data set is the three splits: its RMSE is of their order.
	assert rmse < 3 * max(card["metrics"]["val_rmse"], card["metrics"]["test_rmse"]), rmse
	assert list(m.hml_input_shape) == [5] and list(m.hml_output_shape) == [1]
	EOF
}

@test "same seed and threads give the same model; another seed another" {
	hml -q -C exp train $QUICK --seed 7 >/dev/null
	hml -q -C exp train $QUICK --seed 7 >/dev/null
	hml -q -C exp train $QUICK --seed 8 >/dev/null
	[ "$(m 'd["models"][0]["metrics"]["val_rmse"] == d["models"][1]["metrics"]["val_rmse"]')" = True ]
	[ "$(m 'd["models"][0]["metrics"]["val_rmse"] != d["models"][2]["metrics"]["val_rmse"]')" = True ]
	"$PY" - <<-'EOF'
	import torch
	a, b, c = (torch.jit.load(f"exp/models/m{i}.pt") for i in (1, 2, 3))
	x = torch.rand(64, 5)
	assert torch.equal(a(x), b(x))
	assert not torch.equal(a(x), c(x))
	EOF
}

@test "the workflow's training defaults apply; the command line overrides them" {
	hml -q -C exp train --epochs 2 --threads 2 >/dev/null
	# binomial's workflow.json: arch mlp:64x64:relu, batch 256, lr 0.002.
	[ "$(m 'd["models"][0]["arch"]')" = mlp:64x64:relu ]
	[ "$(m 'd["models"][0]["options"]["lr"]')" = 0.002 ]
	[ "$(m 'd["models"][0]["options"]["batch"]')" = 256 ]
	[ "$(m 'd["models"][0]["options"]["epochs"]')" = 2 ]
	hml -q -C exp train --epochs 2 --threads 2 --lr 0.01 --batch 128 --optimizer adamw \
		--schedule cosine --arch mlp:8:tanh:dropout=0.1 >/dev/null
	[ "$(m 'd["models"][1]["arch"]')" = mlp:8:tanh:dropout=0.1 ]
	[ "$(m 'd["models"][1]["options"]["lr"]')" = 0.01 ]
	[ "$(m 'd["models"][1]["options"]["batch"]')" = 128 ]
	[ "$(m 'd["models"][1]["options"]["optimizer"]')" = adamw ]
	[ "$(m 'd["models"][1]["options"]["weight_decay"]')" = 0.01 ]
	[ "$(m 'd["models"][1]["options"]["schedule"]')" = cosine ]
}

@test "--max-seconds stops early and keeps the best epoch" {
	run --separate-stderr hml -q -C exp --json train --epochs 100000 --patience 0 --threads 2 --arch mlp:8 --max-seconds 1
	assert_success
	echo "$output" > out.json
	[ "$(json out.json 'd["model"]["metrics"]["out_of_time"]')" = True ]
	[ "$(json out.json 'd["model"]["metrics"]["epochs_run"] < 100000')" = True ]
}

@test "--data and --region choose the data; several data sets are concatenated" {
	hml -q -C exp collect binomial --args '--options 1024 --seed {seed}' >/dev/null
	hml -q -C exp train $QUICK --data d2 --region binomial >/dev/null
	[ "$(m 'd["models"][0]["datasets"]')" = "['d2']" ]
	[ "$(m 'sum(d["models"][0]["rows"][k] for k in ("train", "validation", "test"))')" = 1024 ]
	hml -q -C exp train $QUICK >/dev/null
	[ "$(m 'd["models"][1]["datasets"]')" = "['d1', 'd2']" ]
	[ "$(m 'sum(d["models"][1]["rows"][k] for k in ("train", "validation", "test"))')" = 5120 ]
}

@test "several regions: --region chooses, without it a clear error" {
	# A second region in d1, as an application with two regions writes it.
	"$PY" - <<-'EOF'
	import json, hashlib, h5py
	with h5py.File("exp/data/d1.h5", "r+") as f:
	    f.copy("binomial", "other")
	man = json.load(open("exp/manifest.json"))
	d = man["datasets"][0]
	d["regions"]["other"] = dict(d["regions"]["binomial"])
	d["provenance"]["sha256"]["data/d1.h5"] = hashlib.sha256(open("exp/data/d1.h5", "rb").read()).hexdigest()
	json.dump(man, open("exp/manifest.json", "w"), indent=2)
	EOF
	run hml -C exp train $QUICK
	assert_failure 3
	assert_output "hml: error: the data sets hold several regions (binomial, other): choose one with --region"
	run hml -C exp train $QUICK --region other
	assert_success
	[ "$(m 'd["models"][0]["region"]')" = other ]
}

# nan_rows N: put NaN in the inputs of N rows of d1 and re-record its hash,
# as if the application had produced them.
nan_rows() {
	"$PY" - "$1" <<-'EOF'
	import sys, json, hashlib, h5py, numpy as np
	n = int(sys.argv[1])
	with h5py.File("exp/data/d1.h5", "r+") as f:
	    x = f["binomial/input"]
	    for i in range(n):
	        row = x[10 * i]
	        row[1] = np.nan if i % 2 == 0 else np.inf
	        x[10 * i] = row
	man = json.load(open("exp/manifest.json"))
	sha = hashlib.sha256(open("exp/data/d1.h5", "rb").read()).hexdigest()
	man["datasets"][0]["provenance"]["sha256"]["data/d1.h5"] = sha
	json.dump(man, open("exp/manifest.json", "w"), indent=2)
	EOF
}

@test "rows with NaN or Inf are dropped with their counts, or refused with --nonfinite error" {
	nan_rows 6
	run hml -C exp train $QUICK
	assert_success
	assert_output --partial "hml: warning: region 'binomial': dropped 6 of 4096 rows holding NaN or Inf (6 values)"
	[ "$(m 'd["models"][0]["rows"]["dropped_nonfinite"]')" = 6 ]
	[ "$(m 'sum(d["models"][0]["rows"][k] for k in ("train", "validation", "test"))')" = 4090 ]
	cp exp/manifest.json before.json
	run hml -C exp train $QUICK --nonfinite error
	assert_failure 3
	assert_output --regexp "^hml: error: region 'binomial': 6 rows hold NaN or Inf \(6 values\) in '.*d1.h5'"
	cmp exp/manifest.json before.json
}

@test "bad options are usage errors (exit 2) naming the option" {
	cp exp/manifest.json before.json
	run hml -C exp train --arch mlp:64:foo
	assert_failure 2
	assert_output --partial "unknown activation 'foo'"
	run hml -C exp train --arch rnn:8
	assert_failure 2
	assert_output --partial "rnn"
	run hml -C exp train --arch mlp:8:residual
	assert_failure 2
	assert_output "hml: error: train: arch 'mlp:8:residual': residual is an option of the cnn family only (mlp does not take it)"
	run hml -C exp train --arch cnn:8:residual:residual
	assert_failure 2
	assert_output "hml: error: train: arch 'cnn:8:residual:residual' gives residual twice"
	run hml -C exp train --epochs 0
	assert_failure 2
	assert_output --partial "epochs"
	run hml -C exp train --lr -1
	assert_failure 2
	assert_output "hml: error: train: option '--lr' must be more than 0, not -1"
	run hml -C exp train --val-fraction 0.6 --test-fraction 0.5
	assert_failure 2
	assert_output --partial "leave no rows for training"
	run hml -C exp train --nonfinite keep
	assert_failure 2
	assert_output "hml: error: train: --nonfinite must be 'drop' or 'error', not 'keep'"
	run hml -C exp train --seed -1
	assert_failure 2
	run hml -C exp train --epochs 99999999999
	assert_failure 2
	assert_output "hml: error: train: option '--epochs' must be from 1 to 2147483647, not 99999999999"
	run hml -C exp train extra
	assert_failure 2
	cmp exp/manifest.json before.json
}

@test "--device: cpu and auto are recorded; cuda trains on a GPU or is refused before anything is registered" {
	hml -q -C exp train $QUICK --device cpu >/dev/null
	[ "$(m 'd["models"][0]["metrics"]["device"]')" = cpu ]
	hml -q -C exp train $QUICK --device auto >/dev/null
	case "$(m 'd["models"][1]["metrics"]["device"]')" in cpu | cuda) ;; *) false ;; esac
	cp exp/manifest.json before.json
	run hml -C exp train $QUICK --device cuda
	if [ "$status" -eq 0 ]; then   # a CUDA build on a machine with a GPU
		[ "$(m 'd["models"][2]["metrics"]["device"]')" = cuda ]
	else
		assert_failure 3
		assert_line --regexp '^hml: error: training device cuda: (this hml was built without CUDA|no CUDA device is visible)'
		cmp exp/manifest.json before.json
		[ ! -e exp/models/m3.pt ]
	fi
	run hml -C exp train --device gpu
	assert_failure 2
	assert_output "hml: error: train: unknown training device 'gpu' (known: cpu, cuda, auto)"
}

@test "zero or unbounded values that used to mean something else are usage errors" {
	cp exp/manifest.json before.json
	run hml -C exp train --max-seconds 0
	assert_failure 2
	assert_output "hml: error: train: option '--max-seconds' must be more than 0, not 0"
	run hml -C exp train --infer-batch 0
	assert_failure 2
	assert_output "hml: error: train: option '--infer-batch' must be at least 1, not 0"
	max=$((16 * $(getconf _NPROCESSORS_ONLN)))
	# 100000 threads hung training and ignored SIGTERM: refused at once.
	run timeout 20 "$HML" -C exp train --threads 100000
	assert_failure 2
	assert_output "hml: error: train: threads must be from 0 (libtorch's default) to $max (16 per online core), not 100000"
	HML_THREADS=100000 run timeout 20 "$HML" -C exp train
	assert_failure 2
	assert_output "hml: error: train: invalid HML_THREADS '100000': expected an integer from 0 to $max (16 per online core)"
	HML_THREADS=" 2" run timeout 20 "$HML" -C exp train
	assert_failure 2
	assert_output --partial "invalid HML_THREADS ' 2'"
	cmp exp/manifest.json before.json
}

@test "out of memory while measuring the latency: the cause is named and the model kept" {
	run --separate-stderr hml -C exp --json train --epochs 1 --threads 1 --arch mlp:8 --infer-batch 100000000000
	assert_success
	[[ "$stderr" == *"hml: warning: the inference latency was not measured (out of memory at batch 100000000000); the model is kept, its latency recorded as null"* ]]
	echo "$output" > out.json
	[ "$(json out.json 'd["model"]["metrics"]["latency_seconds_per_sample"]')" = None ]
	[ "$(m '[r["id"] for r in d["models"]]')" = "['m1']" ]
	[ -s exp/models/m1.pt ]
}

@test "HML_THREADS is the default of --threads" {
	HML_THREADS=1 hml -q -C exp train --epochs 1 --arch mlp:8 >/dev/null
	HML_THREADS=1 hml -q -C exp train --epochs 1 --arch mlp:8 --threads 2 >/dev/null
	[ "$(m '[r["options"]["threads"] for r in d["models"]]')" = "[1, 2]" ]
}

@test "libtorch's threads wait passively unless OMP_WAIT_POLICY says otherwise" {
	# libgomp prints its settings when it starts (OMP_DISPLAY_ENV)
	OMP_DISPLAY_ENV=true run --separate-stderr hml -q -C exp train $QUICK
	assert_success
	[[ "$stderr" == *"OMP_WAIT_POLICY = 'PASSIVE'"* ]]
	OMP_WAIT_POLICY=active OMP_DISPLAY_ENV=true run --separate-stderr hml -q -C exp train $QUICK
	assert_success
	[[ "$stderr" == *"OMP_WAIT_POLICY = 'ACTIVE'"* ]]
}

@test "missing experiment, data set or region: one-line errors, exit 3" {
	run hml -C nowhere train
	assert_failure 3
	assert_output "hml: error: no experiment at 'nowhere' (run 'hml collect' first)"
	run hml -C exp train --data d9
	assert_failure 3
	assert_output "hml: error: no data set 'd9' in experiment 'exp'"
	run hml -C exp train --region nosuch
	assert_failure 3
	assert_output "hml: error: no data set of experiment 'exp' holds region 'nosuch' (collect it first: hml collect)"
	[ "$(m 'len(d["models"])')" = 0 ]
}

@test "an experiment without data: a clear error" {
	mkdir empty
	"$PY" -c 'import json; json.dump({"schema_version": 1, "datasets": [], "models": [], "deployments": [], "evaluations": []}, open("empty/manifest.json", "w"))'
	run hml -C empty train
	assert_failure 3
	assert_output "hml: error: experiment 'empty' has no collected rows to train on (run 'hml collect')"
}

@test "a CNN on row data is refused before training" {
	run hml -C exp train --arch cnn:8:relu --epochs 1
	assert_failure 3
	assert_output --partial "cnn"
	[ "$(m 'len(d["models"])')" = 0 ]
}

@test "a data file changed since collection is refused" {
	printf 'x' >> exp/data/d1.h5
	run hml -C exp train $QUICK
	assert_failure 3
	assert_output --partial "d1.h5' changed since it was collected (SHA-256 differs)"
	rm exp/data/d1.h5
	run hml -C exp train $QUICK
	assert_failure 3
	assert_output --regexp "^hml: error: data file '.*d1.h5' of data set 'd1' is missing$"
}

@test "a corrupt manifest is reported and left untouched" {
	head -c 100 exp/manifest.json > cut.json
	cp cut.json exp/manifest.json
	run hml -C exp train $QUICK
	assert_failure 3
	assert_output --regexp "^hml: error: manifest '.*manifest.json' is corrupt: "
	cmp exp/manifest.json cut.json
}

@test "a locked experiment: exit 1, nothing recorded, the trained model kept" {
	cp exp/manifest.json before.json
	# Another process holds the experiment's lock for the whole test.
	"$PY" -c 'import fcntl, sys, time
f = open(sys.argv[1], "a"); fcntl.flock(f, fcntl.LOCK_EX)
open(sys.argv[2], "w").close(); time.sleep(120)' exp/.lock held >/dev/null 2>&1 &
	holder=$!
	while [ ! -e held ]; do sleep 0.1; done
	HML_LOCK_TIMEOUT=1 run hml -q -C exp train $QUICK
	kill "$holder"
	assert_failure 1
	assert_line --index 0 --partial "hml: error: experiment 'exp' is locked by another"
	assert_output --regexp "hml: error: the trained model is kept in '.*/models/\.tmp-[^']*\.pt'"
	cmp exp/manifest.json before.json
	kept=$(ls exp/models/.tmp-*.pt)
	"$PY" -c 'import sys, torch; torch.jit.load(sys.argv[1])' "$kept"
}

@test "SIGINT stops training: exit 130, nothing recorded, no file left" {
	cp exp/manifest.json before.json
	"$HML" -q -C exp train --epochs 100000 --patience 0 --threads 2 --arch mlp:8 &
	pid=$!
	# Long enough to be in the epoch loop (an earlier signal is handled
	# the same way: checked before and after training starts).
	sleep 3
	kill -INT "$pid"
	status=0
	wait "$pid" || status=$?
	[ "$status" -eq 130 ]
	cmp exp/manifest.json before.json
	[ -z "$(ls -A exp/models)" ]
}

@test "a killed hml train leaves the manifest valid and the next train works" {
	cp exp/manifest.json before.json
	"$HML" -q -C exp train --epochs 100000 --patience 0 --threads 2 --arch mlp:8 &
	pid=$!
	sleep 3
	kill -KILL "$pid"
	wait "$pid" || true
	cmp exp/manifest.json before.json
	run hml -C exp show
	assert_success
	hml -q -C exp train $QUICK >/dev/null
	[ "$(m '[r["id"] for r in d["models"]]')" = "['m1']" ]
}
