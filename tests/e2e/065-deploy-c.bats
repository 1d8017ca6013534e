#!/usr/bin/env bats
# hml deploy --target c: the trained model compiled to C and registered as a
# "compiled" record; its outputs match the TorchScript model's; the
# standalone source builds into an application with libc and libm alone;
# models that cannot be compiled, a missing C compiler and shapes that
# disagree fail without registering anything.

load helpers

setup_file() {
	export EXP0="$BATS_FILE_TMPDIR/exp"
	cd "$BATS_FILE_TMPDIR"
	"$HML" -q -C "$EXP0" collect binomial --args '--options 2048 --seed {seed}' >/dev/null
	"$HML" -q -C "$EXP0" train --epochs 3 --seed 1 --threads 2 >/dev/null
}

setup() {
	common_setup
	cp -r "$EXP0" "$WORK/exp"
	cd "$WORK"
}

m() { json exp/manifest.json "$1"; }

# replace_model FILE: FILE becomes models/m1.pt, its new hash recorded.
replace_model() {
	cp "$1" exp/models/m1.pt
	"$PY" - <<'EOF'
import hashlib, json
p = "exp/manifest.json"
d = json.load(open(p))
h = hashlib.sha256(open("exp/models/m1.pt", "rb").read()).hexdigest()
d["models"][0]["provenance"]["sha256"]["models/m1.pt"] = h
json.dump(d, open(p, "w"))
EOF
}

# nothing_registered: no compiled record, no deployment, no generated file.
nothing_registered() {
	[ "$(m 'len(d.get("compiled", [])) + len(d["deployments"])')" = 0 ]
	! ls exp/models | grep -v -e '^m1\.pt$' -e '^m1\.json$'
}

@test "the application runs the compiled model with no libtorch in its process" {
	run --separate-stderr hml -C exp --json deploy --target c m1
	assert_success
	so="$(cd exp && pwd)/models/c1.so"
	pt="$(cd exp && pwd)/models/m1.pt"
	# The compiled model: libhml loads the .so itself, never the plugin.
	HML_MODE=infer HML_MODEL="$so" HML_QOI=c.h5 HML_PROFILE=c.json LD_DEBUG=files \
		binomial --options 1024 --batch 256 --seed 5 > c.out 2> c.ld
	! grep -q -e 'libtorch' -e 'libhml-torch' c.ld
	grep -q 'c1.so' c.ld
	# batch 256 of the 64 x 64 MLP is its sgemm path, when it has one
	if [ "$(m 'd["compiled"][0]["compiler"]["blas"] is not None')" = True ]; then
		grep -q 'libopenblas' c.ld
		grep -q 'cblas_sgemm' exp/models/c1.c
	fi
	[ "$(json c.json 'd["regions"][0]["model_calls"]')" -gt 0 ]
	[ "$(json c.json 'd["regions"][0]["fallback_calls"]')" = 0 ]
	# The TorchScript model of the same weights gives the same prices.
	HML_MODE=infer HML_MODEL="$pt" HML_QOI=t.h5 LD_DEBUG=files \
		binomial --options 1024 --batch 256 --seed 5 > t.out 2> t.ld
	grep -q 'libhml-torch' t.ld
	"$PY" - <<'EOF2'
import h5py, numpy as np
c = h5py.File("c.h5", "r")["price"][()]
t = h5py.File("t.h5", "r")["price"][()]
scale = max(1.0, float(np.abs(t).max()))
assert np.all(np.isfinite(c)), "non-finite prices"
assert float(np.abs(c - t).max()) <= 1e-5 * scale, float(np.abs(c - t).max())
EOF2
}

@test "a foreign or corrupt shared object as HML_MODEL is refused, never run" {
	printf 'int hml_cmodel_v1;\n' > f.c
	cc -shared -fPIC -o foreign.so f.c
	HML_MODE=infer HML_MODEL=foreign.so HML_ON_ERROR=fail run binomial --options 64 --batch 64
	assert_failure
	assert_output --partial "foreign.so"
	head -c 2000 /bin/true > cut.so
	HML_MODE=infer HML_MODEL=cut.so HML_ON_ERROR=fail run binomial --options 64 --batch 64
	assert_failure
	mkfifo pipe.so
	HML_MODE=infer HML_MODEL=pipe.so HML_ON_ERROR=fail run timeout 20 "$BINOMIAL" --options 64 --batch 64
	assert_failure
	assert_output --partial "not a regular file"
}

@test "deploy --target c registers the compiled model and points HML_MODEL at it" {
	run --separate-stderr hml -C exp --json deploy --target c m1
	assert_success
	echo "$output" > out.json
	[ "$(json out.json 'd["deployment"]["target"]')" = c ]
	[ "$(json out.json 'd["deployment"]["compiled"]')" = c1 ]
	[ "$(json out.json 'd["deployment"]["env"]["HML_MODEL_BINOMIAL"]')" = "$(cd exp && pwd)/models/c1.so" ]
	[ "$(json out.json 'd["compiled"]["model"]')" = m1 ]
	[ "$(json out.json 'sorted(d["compiled"]["files"].values())')" = \
	  "['models/c1.c', 'models/c1.h', 'models/c1.so']" ]
	[ "$(json out.json '"-fopenmp" in d["compiled"]["compiler"]["flags"]')" = True ]
	# With OpenBLAS (the sgemm path), its define and library are in the flags.
	[ "$(json out.json '(lambda c: (c["blas"] is None and "-DHML_CMODEL_CBLAS" not in c["flags"]) or ("-DHML_CMODEL_CBLAS" in c["flags"] and c["blas"] in c["flags"]))(d["compiled"]["compiler"])')" = True ]
	[ "$(json out.json 'len(d["compiled"]["compiler"]["version"]) > 0')" = True ]
	[ "$(json out.json 'd["compiled"]["agreement"]["max_abs_diff"] <= 1e-5 * d["compiled"]["agreement"]["scale"]')" = True ]
	[ "$(json out.json 'sorted(d["compiled"]["provenance"]["sha256"])')" = \
	  "['models/c1.c', 'models/c1.h', 'models/c1.so']" ]
	[ "$(m 'd["compiled"][0] == json.load(open("out.json"))["compiled"]')" = True ]
	# --march native is recorded; the text form prints the environment
	run --separate-stderr hml -C exp deploy --target c --march native --best
	assert_success
	assert_line "export HML_MODEL_BINOMIAL='$(cd exp && pwd)/models/c2.so'"
	[ "$(m '"-march=native" in d["compiled"][1]["compiler"]["flags"]')" = True ]
	# built for one CPU: no load-time AVX2 copies of the kernels
	[ "$(m '"-DHML_CMODEL_NO_CLONES" in d["compiled"][1]["compiler"]["flags"]')" = True ]
	[ "$(m '"-DHML_CMODEL_NO_CLONES" in d["compiled"][0]["compiler"]["flags"]')" = False ]
}

@test "a model with no sgemm layer is built without OpenBLAS: nothing loaded for nothing" {
	"$HML" -q -C exp train --epochs 1 --seed 2 --threads 2 --arch mlp:8:relu >/dev/null
	run --separate-stderr hml -C exp --json deploy --target c m2
	assert_success
	echo "$output" > out.json
	[ "$(json out.json 'd["compiled"]["compiler"]["blas"]')" = None ]
	[ "$(json out.json '"-DHML_CMODEL_CBLAS" in d["compiled"]["compiler"]["flags"]')" = False ]
	! grep -q cblas_sgemm exp/models/c1.c
	! ldd exp/models/c1.so | grep -q openblas
}

@test "the standalone source runs with libc and libm alone and matches TorchScript" {
	hml -q -C exp deploy --target c m1 >/dev/null
	cat > app.c <<'EOF'
#include <stdio.h>
#include "c1.h"
/* rows of HML_M1_IN_FEATURES numbers on stdin; one output row per line */
int main(void)
{
	float x[HML_M1_IN_FEATURES], y[HML_M1_OUT_FEATURES];

	for (;;) {
		for (int i = 0; i < HML_M1_IN_FEATURES; i++)
			if (scanf("%f", &x[i]) != 1)
				return 0;
		if (hml_m1_forward_f32(x, y, 1) != 0)
			return 1;
		for (int j = 0; j < HML_M1_OUT_FEATURES; j++)
			printf("%.9g%c", y[j], j + 1 < HML_M1_OUT_FEATURES ? ' ' : '\n');
	}
}
EOF
	cp exp/models/c1.c exp/models/c1.h .
	run cc -std=c11 -O2 -Wall -Wextra -pedantic -Werror -o app app.c c1.c -lm
	assert_success
	run sh -c "ldd ./app | grep -v -e libc.so -e libm.so -e ld-linux -e linux-vdso"
	assert_output ""
	# rows of the collected data, through the app and through libtorch
	"$PY" - <<'EOF'
import glob, h5py, numpy as np
x = h5py.File(sorted(glob.glob("exp/data/*.h5"))[0], "r")["binomial/input"][:300]
np.savetxt("rows.txt", x.reshape(len(x), -1).astype(np.float32), fmt="%.9g")
EOF
	./app < rows.txt > c.txt
	run "$PY" - <<'EOF'
import numpy as np, torch
x = np.loadtxt("rows.txt", dtype=np.float32)
want = torch.jit.load("exp/models/m1.pt")(torch.from_numpy(x)).detach().numpy().reshape(len(x), -1)
got = np.loadtxt("c.txt", dtype=np.float64).reshape(len(x), -1)
diff, scale = np.abs(got - want).max(), max(1.0, np.abs(want).max())
print(f"rows {len(x)} diff {diff:.3g} scale {scale:.3g}")
assert diff <= 1e-5 * scale, (diff, scale)
EOF
	assert_success
	assert_output --partial "rows 300"
}

@test "a compiled model whose shapes are not the region's is refused before it runs" {
	hml -q -C exp deploy --target c m1 >/dev/null
	# The same generated source, declaring rows of [4] (another region's
	# model, by the ABI); and one declaring outputs of [2].
	sed 's/^\t1, 1, { 5 }, { 1 }, 5, 1,$/\t1, 1, { 4 }, { 1 }, 4, 1,/' exp/models/c1.c > in4.c
	sed 's/^\t1, 1, { 5 }, { 1 }, 5, 1,$/\t1, 1, { 5 }, { 2 }, 5, 2,/' exp/models/c1.c > out2.c
	! cmp -s in4.c exp/models/c1.c
	! cmp -s out2.c exp/models/c1.c
	cp exp/models/c1.h .
	cc -std=c11 -O1 -shared -fPIC -o in4.so in4.c -lm
	cc -std=c11 -O1 -shared -fPIC -o out2.so out2.c -lm
	HML_MODE=infer HML_MODEL="$PWD/in4.so" HML_ON_ERROR=fail run binomial --options 64 --batch 64
	assert_failure 1
	assert_output --partial "model '$PWD/in4.so' expects input rows [4] but region 'binomial' gives [64, 5]"
	HML_MODE=infer HML_MODEL="$PWD/out2.so" HML_ON_ERROR=fail run binomial --options 64 --batch 64
	assert_failure 1
	assert_output --partial "model '$PWD/out2.so' returns [64, 2] but region 'binomial' needs outputs [64, 1]"
	# By default the region warns and runs its original code: the prices are right.
	HML_MODE=infer HML_MODEL="$PWD/in4.so" HML_PROFILE=p.json HML_QOI=q.h5 \
		run binomial --options 64 --batch 64 --seed 3
	assert_success
	assert_output --partial "running the original code"
	[ "$(json p.json 'd["regions"][0]["model_calls"]')" = 0 ]
	[ "$(json p.json 'd["regions"][0]["fallback_calls"]')" = 1 ]
	HML_MODE=off HML_QOI=ref.h5 binomial --options 64 --batch 64 --seed 3 >/dev/null
	[ "$(h5 q.h5 'bool((f["price"][()] == h5py.File("ref.h5", "r")["price"][()]).all())')" = True ]
}

@test "no C compiler on PATH: a clear message, nothing registered" {
	run --separate-stderr env PATH=/nonexistent "$HML" -C exp deploy --target c m1
	assert_failure 1
	[[ "$stderr" == *"no C compiler: 'cc' is not on PATH"* ]]
	nothing_registered
}

@test "a model that is not an hml MLP or CNN is refused with the reason" {
	replace_model "$MODELS/affine.pt"
	run --separate-stderr hml -C exp deploy --target c m1
	assert_failure 3
	[[ "$stderr" == *"cannot compile model"*"to C: it is neither an hml model (no hml_arch attribute) nor a torch.nn.Sequential of Linear layers and activations"* ]]
	nothing_registered
}

@test "a model whose graph is not the family's is refused" {
	cat > changed.py <<'EOF'
# The parameters and attributes of an hml MLP, with another forward (tanh).
import sys, torch
from typing import List

class Changed(torch.nn.Module):
    hml_input_shape: List[int]
    hml_output_shape: List[int]
    hml_arch: str

    def __init__(self, src):
        super().__init__()
        for n, p in src.named_parameters():
            self.register_parameter(n, torch.nn.Parameter(p.detach().clone()))
        for n, b in src.named_buffers():
            self.register_buffer(n, b.clone())
        self.hml_input_shape = list(src.hml_input_shape)
        self.hml_output_shape = list(src.hml_output_shape)
        self.hml_arch = src.hml_arch

    def forward(self, x):
        h = (x - self.in_mean) / self.in_std
        h = torch.tanh(torch.nn.functional.linear(h, self.w0, self.b0))
        h = torch.tanh(torch.nn.functional.linear(h, self.w1, self.b1))
        return torch.nn.functional.linear(h, self.w_out, self.b_out) * self.out_std + self.out_mean

torch.jit.script(Changed(torch.jit.load(sys.argv[1]))).save(sys.argv[2])
EOF
	"$PY" changed.py exp/models/m1.pt changed.pt
	replace_model changed.pt
	run --separate-stderr hml -C exp deploy --target c m1
	assert_failure 3
	[[ "$stderr" == *"its forward does not compute the MLP its parameters describe"* ]]
	nothing_registered
}

@test "a model whose shapes are not its region's is refused" {
	"$PY" -c '
import torch
m = torch.jit.load("exp/models/m1.pt")
m.hml_input_shape = [5, 1]
m.save("shape.pt")'
	replace_model shape.pt
	run --separate-stderr hml -C exp deploy --target c m1
	assert_failure 3
	[[ "$stderr" == *"model 'm1' maps rows of [5,1] to [1], but its record (the region's data) has [5] to [1]"* ]]
	nothing_registered
}

@test "bad --target and --march are usage errors" {
	run --separate-stderr hml -C exp deploy --target wasm m1
	assert_failure 2
	[[ "$stderr" == *"unknown --target 'wasm'"* ]]
	run --separate-stderr hml -C exp deploy --march native m1
	assert_failure 2
	[[ "$stderr" == *"--march needs --target c"* ]]
	nothing_registered
}

@test "evaluate runs the latest deployment as deployed: the compiled model" {
	run --separate-stderr hml -C exp deploy --target c m1
	assert_success
	run --separate-stderr hml -C exp --json evaluate --repeat 1 -- --options 2048 --batch 256
	assert_success
	echo "$output" > ev.json
	[ "$(json ev.json 'd["evaluation"]["target"]')" = c ]
	[ "$(json ev.json 'd["evaluation"]["surrogate"]["model_calls"] > 0')" = True ]
	[ "$(json ev.json 'd["evaluation"]["surrogate"]["fallback_calls"]')" = 0 ]
	[ "$(json ev.json 'd["evaluation"]["qoi"]["rmse"] is not None and d["evaluation"]["qoi"]["rmse"] > 0')" = True ]
	# Named, the model is its TorchScript form.
	run --separate-stderr hml -C exp --json evaluate --repeat 1 m1 -- --options 2048 --batch 256
	assert_success
	echo "$output" > ev2.json
	[ "$(json ev2.json 'd["evaluation"]["target"]')" = torchscript ]
}
