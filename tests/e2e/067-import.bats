#!/usr/bin/env bats
# hml import: a TorchScript model made in Python registered as a model of
# the experiment (shapes checked against the region, errors measured on its
# rows, card with latencies, provenance, the file copied in); deployed,
# compiled to C and evaluated like a trained one; every bad input refused
# with its message and exit code, nothing registered.

load helpers

setup_file() {
	export EXP0="$BATS_FILE_TMPDIR/exp"
	cd "$BATS_FILE_TMPDIR"
	"$HML" -q -C "$EXP0" collect binomial --args '--options 2048 --seed {seed}' >/dev/null
}

setup() {
	common_setup
	cp -r "$EXP0" "$WORK/exp"
	cd "$WORK"
	cp exp/manifest.json before.json
}

m() { json exp/manifest.json "$1"; }

# model NAME PYTHON-EXPR: torch.jit.script(EXPR).save(NAME), seeded
# (from a file: TorchScript reads the source of the classes).
model() {
	[ -f models.py ] || cat > models.py <<'PY'
import sys, torch
from torch import nn
from typing import List
torch.manual_seed(0)

class Custom(nn.Module):          # a graph hml does not compile: 2 * lin(x) + 1
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(5, 1)
    def forward(self, x):
        return 2 * self.lin(x) + 1

class Declared(nn.Module):        # declares rows of [4]; runs on [5]
    hml_input_shape: List[int]
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(5, 1)
        self.hml_input_shape = [4]
    def forward(self, x):
        return self.lin(x)

class NaNs(nn.Module):
    def forward(self, x):
        return x[:, :1] * float("nan")

torch.jit.script(eval(sys.argv[2]).eval()).save(sys.argv[1])
PY
	"$PY" models.py "$1" "$2"
}

# unchanged: the manifest as it was, and no file added to models/.
unchanged() {
	cmp before.json exp/manifest.json
	[ -z "$(ls -A exp/models)" ]
}

@test "import registers a Python nn.Sequential: errors on the region's rows, card, provenance, copy" {
	model seq.pt 'nn.Sequential(nn.Linear(5, 32), nn.ReLU(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 1))'
	run --separate-stderr hml -C exp --json import seq.pt --region binomial
	assert_success
	echo "$output" > out.json
	[ "$(json out.json 'd["model"]["id"]')" = m1 ]
	[ "$(json out.json 'd["model"]["family"]')" = imported ]
	[ "$(json out.json 'd["model"]["arch"]')" = "sequential:32x32:relu+tanh" ]
	[ "$(json out.json 'd["model"]["input_shape"]')" = "[5]" ]
	[ "$(json out.json 'd["model"]["output_shape"]')" = "[1]" ]
	[ "$(json out.json 'd["model"]["datasets"]')" = "['d1']" ]
	[ "$(json out.json 'd["model"]["import"]["origin"]')" = "$PWD/seq.pt" ]
	[ "$(json out.json 'd["model"]["import"]["sha256"]')" = "$(sha256sum seq.pt | cut -d' ' -f1)" ]
	[ "$(json out.json 'd["model"]["import"]["compilable"]')" = True ]
	[ "$(json out.json 'd["model"]["metrics"]["params"]')" = $((5 * 32 + 32 + 32 * 32 + 32 + 32 + 1)) ]
	[ "$(json out.json 'd["model"]["latency"]["torchscript"] > 0')" = True ]
	[ "$(json out.json 'd["model"]["latency"]["c"] > 0')" = True ]
	[ "$(json out.json 'd["model"]["latency"]["batch"]')" = 4096 ]
	cmp seq.pt exp/models/m1.pt
	# the card (models/m1.json) holds the record (PROVENANCE in hml-manifest(5))
	for k in import latency metrics arch; do
		[ "$(m "d['models'][0]['$k'] == json.load(open('exp/models/m1.json'))['$k']")" = True ]
	done
	# the errors are the model's on every collected row
	"$PY" - <<'PY'
import glob, json, h5py, numpy as np, torch
f = h5py.File(glob.glob("exp/data/d1.h5")[0], "r")["binomial"]
x, y = f["input"][()].astype(np.float32), f["output"][()].astype(np.float64)
p = torch.jit.load("seq.pt")(torch.from_numpy(x)).detach().numpy().astype(np.float64)
rmse = float(np.sqrt(np.mean((p - y) ** 2)))
mt = json.load(open("out.json"))["model"]["metrics"]
assert abs(mt["val_rmse"] - rmse) <= 1e-4 * rmse, (mt, rmse)
assert mt["test_rmse"] == mt["val_rmse"]
assert abs(mt["test_max_abs"] - float(np.abs(p - y).max())) <= 1e-4 * mt["test_max_abs"]
assert json.load(open("out.json"))["model"]["rows"]["evaluated"] == len(x)
PY
	# the text form
	model seq2.pt 'nn.Sequential(nn.Linear(5, 8), nn.SiLU(), nn.Linear(8, 1))'
	run --separate-stderr hml -C exp import seq2.pt --region binomial
	assert_success
	assert_line --partial "m2: imported '$PWD/seq2.pt' (sequential:8:silu) for region 'binomial' of workflow 'binomial'"
	assert_line "  compilable to C (hml deploy --target c m2)"
	assert_line --regexp '^  latency per sample at batch 4096: torchscript .* us, c .* us'
}

@test "the imported model deploys, compiles to C and evaluates like a trained one" {
	model seq.pt 'nn.Sequential(nn.Linear(5, 16), nn.GELU(), nn.Linear(16, 1))'
	hml -q -C exp import seq.pt --region binomial >/dev/null
	run --separate-stderr hml -C exp --json deploy --target c m1
	assert_success
	echo "$output" > dep.json
	[ "$(json dep.json 'd["compiled"]["model"]')" = m1 ]
	[ "$(json dep.json 'd["compiled"]["arch"]')" = "sequential:16:gelu" ]
	[ "$(json dep.json 'd["compiled"]["agreement"]["max_abs_diff"] <= 1e-5 * d["compiled"]["agreement"]["scale"]')" = True ]
	run --separate-stderr hml -C exp --json evaluate --repeat 1 -- --options 1024 --batch 256
	assert_success
	echo "$output" > ev.json
	[ "$(json ev.json 'd["evaluation"]["model"]')" = m1 ]
	[ "$(json ev.json 'd["evaluation"]["target"]')" = c ]
	[ "$(json ev.json 'd["evaluation"]["surrogate"]["model_calls"] > 0')" = True ]
	[ "$(json ev.json 'd["evaluation"]["surrogate"]["fallback_calls"]')" = 0 ]
	run --separate-stderr hml -C exp --json deploy --best --target auto
	assert_success
}

@test "a graph hml cannot compile is registered with the reason, and deploy --target c refuses it" {
	model custom.pt 'Custom()'
	run --separate-stderr hml -C exp --json import custom.pt --region binomial
	assert_success
	echo "$output" > out.json
	[ "$(json out.json 'd["model"]["import"]["compilable"]')" = False ]
	[ "$(json out.json '"neither an hml model" in d["model"]["import"]["not_compilable"]')" = True ]
	[ "$(json out.json 'd["model"]["latency"]["c"]')" = None ]
	[ "$(json out.json '"cannot compile model" in d["model"]["latency"]["unavailable"]["c"]')" = True ]
	[ "$(json out.json 'd["model"]["arch"]')" = torchscript ]
	cp exp/manifest.json before2.json
	run --separate-stderr hml -C exp deploy --target c m1
	assert_failure 3
	[[ "$stderr" == *"to C: it is neither an hml model (no hml_arch attribute) nor a torch.nn.Sequential"* ]]
	cmp before2.json exp/manifest.json
	# as TorchScript it deploys
	run --separate-stderr hml -C exp deploy m1
	assert_success
	assert_line "export HML_MODEL_BINOMIAL='$(cd exp && pwd)/models/m1.pt'"
}

@test "files that are not TorchScript models are refused, nothing registered" {
	echo "not a model" > text.pt
	run --separate-stderr hml -C exp import text.pt --region binomial
	assert_failure 3
	[[ "$stderr" == "hml: error: cannot open model 'text.pt': not a TorchScript archive"* ]]
	unchanged
	"$PY" -c 'import torch; torch.save(torch.nn.Linear(5, 1).state_dict(), "state.pt")'
	run --separate-stderr hml -C exp import state.pt --region binomial
	assert_failure 3
	[[ "$stderr" == *"cannot open model 'state.pt'"* ]]
	unchanged
	printf 'int x;\n' > f.c
	cc -shared -fPIC -o foreign.so f.c
	run --separate-stderr hml -C exp import foreign.so --region binomial
	assert_failure 3
	[[ "$stderr" == *"cannot import 'foreign.so': it is a shared object, not a TorchScript file"* ]]
	unchanged
	run --separate-stderr hml -C exp import missing.pt --region binomial
	assert_failure 3
	[[ "$stderr" == "hml: error: cannot import 'missing.pt': No such file or directory" ]]
	unchanged
}

@test "a FIFO, a directory or a device is refused at once, nothing registered" {
	mkfifo fifo.pt
	mkdir dir.pt
	for f in fifo.pt dir.pt /dev/zero; do
		# timeout: a regression blocks on the FIFO instead of failing
		run --separate-stderr timeout 10 "$HML" -C exp import "$f" --region binomial
		assert_failure 3
		[[ "$stderr" == "hml: error: cannot open model '$f': "* ]]
		[ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ]
		unchanged
	done
	[[ "$stderr" == *"': not a regular file" ]]
	[ -p fifo.pt ]
}

@test "shapes that are not the region's are refused, nothing registered" {
	model in4.pt 'nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))'
	run --separate-stderr hml -C exp import in4.pt --region binomial
	assert_failure 3
	[[ "$stderr" == *"model 'in4.pt' does not run on the rows of region 'binomial' ([5]): "* ]]
	unchanged
	model out2.pt 'nn.Sequential(nn.Linear(5, 2))'
	run --separate-stderr hml -C exp import out2.pt --region binomial
	assert_failure 3
	[[ "$stderr" == *"model 'out2.pt' gives 2 values per row, but region 'binomial' has output rows of [1]"* ]]
	unchanged
	model declared.pt 'Declared()'
	run --separate-stderr hml -C exp import declared.pt --region binomial
	assert_failure 3
	[[ "$stderr" == *"model 'declared.pt' declares input rows of [4], but region 'binomial' has [5]"* ]]
	unchanged
	model nans.pt 'NaNs()'
	run --separate-stderr hml -C exp import nans.pt --region binomial
	assert_failure 3
	[[ "$stderr" == *"model gives NaN or Inf for 2048 of 2048 values of region 'binomial'"* ]]
	unchanged
}

@test "a missing region, workflow or experiment, and usage errors" {
	model seq.pt 'nn.Sequential(nn.Linear(5, 1))'
	run --separate-stderr hml -C exp import seq.pt --region nope
	assert_failure 3
	[[ "$stderr" == *"no data set of experiment 'exp' holds region 'nope' (collect it first: hml collect)"* ]]
	run --separate-stderr hml -C exp import seq.pt --region binomial --workflow heat
	assert_failure 3
	[[ "$stderr" == *"no data set of workflow 'heat' in experiment 'exp' has rows of region 'binomial'"* ]]
	unchanged
	run --separate-stderr hml -C nowhere import seq.pt --region binomial
	assert_failure 3
	[[ "$stderr" == *"no experiment at 'nowhere'"* ]]
	[ ! -e nowhere ]
	run --separate-stderr hml -C exp import seq.pt
	assert_failure 2
	[[ "$stderr" == *"--region R is required"* ]]
	run --separate-stderr hml -C exp import --region binomial
	assert_failure 2
	run --separate-stderr hml -C exp import seq.pt --region binomial --batch 0
	assert_failure 2
	# -1 is no alias of the default (it used to be): refused like 0 (#26)
	run --separate-stderr hml -C exp import seq.pt --region binomial --batch -1
	assert_failure 2
	assert_equal "$stderr" "hml: error: import: option '--batch' must be from 1 to 16777216, not -1"
	run --separate-stderr hml -C exp import seq.pt --region binomial --threads -1
	assert_failure 2
	unchanged
}

# bad KIND: a hostile archive made from a valid model (tests/e2e/badmodel.py).
bad() { "$PY" "$HML_SOURCE_DIR/tests/e2e/badmodel.py" "$1" "$MODELS/affine.pt" "$1.pt"; }

@test "archives past the limits are refused before libtorch reads them, exit 3, nothing registered" {
	# newlines: 32 MiB of newlines in a 40 KB file (SIGSEGV in libtorch's
	# parser); bomb: 2 GiB of newlines deflated to 2 MB (hml import grew past
	# 7.9 GB); too many entries; brackets nested 5000 deep; a truncated
	# archive; a file that is no zip at all.
	local kind want
	for kind in newlines bomb entries nesting truncated notzip; do
		bad "$kind"
		case $kind in
		newlines) want="code file 'affine/code/__torch__.py' is larger than 8388608 bytes" ;;
		bomb) want="compressed entry 'affine/code/__torch__.py' is larger than 268435456 bytes uncompressed" ;;
		entries) want="it has more than 65536 entries" ;;
		nesting) want="code file 'affine/code/__torch__.py' nests brackets deeper than 200 (line 8)" ;;
		*) want="not a TorchScript archive (no end of central directory record" ;;
		esac
		# timeout: a regression parses or inflates the file instead
		run --separate-stderr timeout 60 "$HML" -C exp import "$kind.pt" --region binomial
		assert_failure 3
		[[ "$stderr" == "hml: error: cannot open model '$kind.pt': $want"* ]]
		[ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ]
		unchanged
	done
}

@test "the model is loaded first in a child under memory and time limits" {
	model seq.pt 'nn.Sequential(nn.Linear(5, 1))'
	# Too little memory: the child fails, hml says which limit.
	HML_MODEL_LOAD_MEMORY=1 run --separate-stderr hml -C exp import seq.pt --region binomial
	assert_failure 3
	[[ "$stderr" == "hml: error: cannot open model 'seq.pt': "*"1 MiB beyond libtorch's own, HML_MODEL_LOAD_MEMORY"* ]]
	unchanged
	# A load that never ends (the test hook: the child ignores SIGTERM and
	# sleeps) is ended at the time limit.
	HML_MODEL_CHECK_TEST_HANG=1 HML_MODEL_LOAD_TIMEOUT=1 run --separate-stderr timeout 60 "$HML" -C exp import seq.pt --region binomial
	assert_failure 3
	[[ "$stderr" == "hml: error: cannot open model 'seq.pt': loading it took longer than 1 s (HML_MODEL_LOAD_TIMEOUT)" ]]
	unchanged
	for v in 0 -1 abc; do
		HML_MODEL_LOAD_TIMEOUT=$v run --separate-stderr hml -C exp import seq.pt --region binomial
		assert_failure 3
		[[ "$stderr" == *"HML_MODEL_LOAD_TIMEOUT must be a positive integer, not '$v'"* ]]
	done
	unchanged
	# Within the limits it imports as before.
	HML_MODEL_LOAD_TIMEOUT=300 HML_MODEL_LOAD_MEMORY=2048 run hml -C exp import seq.pt --region binomial
	assert_success
}

@test "SIGTERM to hml while the child loads the model ends both, exit 143" {
	model seq.pt 'nn.Sequential(nn.Linear(5, 1))'
	HML_MODEL_CHECK_TEST_HANG=1 "$HML" -C exp import seq.pt --region binomial 2> err.txt &
	local pid=$! child="" i
	for i in $(seq 1 300); do
		child=$(ps -o pid= --ppid "$pid" | tr -d ' ' | head -1)
		[ -n "$child" ] && grep -q model-check "/proc/$child/cmdline" 2>/dev/null && break
		sleep 0.1
	done
	[ -n "$child" ]
	kill -TERM "$pid"
	# The child ignores SIGTERM: hml escalates to SIGKILL after its grace.
	local rc=0
	wait "$pid" || rc=$?
	[ "$rc" -eq 143 ]
	for i in $(seq 1 100); do kill -0 "$child" 2>/dev/null || break; sleep 0.1; done
	! kill -0 "$child" 2>/dev/null
	unchanged
}
