#!/usr/bin/env bats
# The binomial workflow in every execution mode, checked through its
# quantity of interest, the collected HDF5 data and the JSON profile.

load helpers

setup() { common_setup; }

# A small run: 4 region calls of 256 options.
ARGS=(--options 1024 --batch 256 --seed 7)

accurate_qoi() {
	HML_QOI="$WORK/accurate.h5" binomial "${ARGS[@]}" >/dev/null
}

@test "off mode runs the original code and records the quantity of interest" {
	HML_QOI="$WORK/q.h5" HML_PROFILE="$WORK/p.json" run binomial "${ARGS[@]}"
	assert_success
	assert_output --partial "mode off"
	[ "$(json p.json 'd["regions"][0]["calls"]')" = 4 ]
	[ "$(json p.json 'd["regions"][0]["original_calls"]')" = 4 ]
	# Profiling times the region even in off mode (hml evaluate relies on it).
	[ "$(json p.json 'd["regions"][0]["region_s"] > 0')" = True ]
	[ "$(json p.json 'd["regions"][0]["original_s"] <= d["regions"][0]["region_s"]')" = True ]
	# The prices are those of closed-form Black-Scholes to tree accuracy.
	[ "$(h5 q.h5 'f["price"].shape')" = "(1024,)" ]
	run h5 q.h5 'float(np.abs(f["price"][:]).max() > 0)'
	assert_output "1.0"
}

@test "collect mode stores every call's inputs and outputs, equal to what the application computed" {
	HML_MODE=collect HML_DB="$WORK/d.h5" HML_QOI="$WORK/q.h5" run binomial "${ARGS[@]}"
	assert_success
	assert_output --partial "mode collect"
	[ "$(h5 d.h5 'f["binomial/input"].shape')" = "(1024, 5)" ]
	[ "$(h5 d.h5 'f["binomial/output"].shape')" = "(1024, 1)" ]
	[ "$(h5 d.h5 'len(f["binomial/calls"])')" = 4 ]
	[ "$(h5 d.h5 'f["binomial"].attrs["input_functor"]')" = "[i, 0:5] = ([i], [i], [i], [i], [i])" ]
	[ "$(h5 d.h5 'f["binomial"].attrs["input_arrays"]')" = "S, X, vdt, pu, pd" ]
	# Collected outputs are exactly the prices the application reported.
	run "$PY" -c 'import h5py, numpy as np
d = h5py.File("d.h5", "r")["binomial"]; q = h5py.File("q.h5", "r")["price"][:]
assert np.array_equal(d["output"][:, 0], q), "outputs differ from the QoI"
x = d["input"][:]
assert (x[:, 0] >= 5).all() and (x[:, 0] <= 30).all(), "S out of range"
assert (x[:, 1] >= 1).all() and (x[:, 1] <= 100).all(), "X out of range"
c = d["calls"][:]
assert list(c["input_offset"]) == [0, 256, 512, 768] and (c["input_rows"] == 256).all()
assert (c["original_seconds"] > 0).all()
print("ok")'
	assert_success
	assert_output "ok"
}

@test "off mode maps neither HDF5 nor libtorch; collect loads the HDF5 plugin beside libhml" {
	# LD_DEBUG=files lists every object the dynamic loader maps.
	HML_MODE=off LD_DEBUG=files binomial "${ARGS[@]}" --quiet 2> off.ld
	grep -q 'file=.*libhml\.so' off.ld
	! grep -q -e 'hdf5' -e 'torch' -e 'c10' off.ld
	HML_MODE=collect HML_DB="$WORK/d.h5" LD_DEBUG=files binomial "${ARGS[@]}" --quiet 2> c.ld
	grep -q 'file=.*runtime/libhml-hdf5\.so' c.ld
	! grep -q 'torch' c.ld
	[ "$(h5 d.h5 'f["binomial/input"].shape')" = "(1024, 5)" ]
}

@test "a later collect run appends to the same file" {
	HML_MODE=collect HML_DB="$WORK/d.h5" binomial "${ARGS[@]}" >/dev/null
	HML_MODE=collect HML_DB="$WORK/d.h5" binomial --options 512 --batch 256 --seed 8 >/dev/null
	[ "$(h5 d.h5 'f["binomial/input"].shape')" = "(1536, 5)" ]
	[ "$(h5 d.h5 'int(f["binomial"].attrs["runs"])')" = 2 ]
	[ "$(h5 d.h5 'sorted(set(f["binomial/calls"]["run"].tolist()))')" = "[0, 1]" ]
}

@test "infer mode replaces every full batch by the model" {
	HML_MODE=infer HML_MODEL="$MODELS/mlp_f32.pt" HML_PROFILE="$WORK/p.json" \
		HML_QOI="$WORK/q.h5" run binomial "${ARGS[@]}"
	assert_success
	assert_output --partial "mode infer"
	[ "$(json p.json 'd["regions"][0]["model_calls"]')" = 4 ]
	[ "$(json p.json 'd["regions"][0]["original_calls"]')" = 0 ]
	[ "$(json p.json 'd["regions"][0]["fallback_calls"]')" = 0 ]
	# The prices are the model's: compare with the model run in Python on
	# the same inputs.
	HML_MODE=collect HML_DB="$WORK/d.h5" binomial "${ARGS[@]}" >/dev/null
	run "$PY" -c 'import h5py, numpy as np, torch, sys
x = torch.from_numpy(h5py.File("d.h5", "r")["binomial/input"][:]).float()
m = torch.jit.load(sys.argv[1])
want = m(x)[:, 0].detach().double().numpy()
got = h5py.File("q.h5", "r")["price"][:]
assert np.allclose(got, want, rtol=1e-5, atol=1e-5), (got[:4], want[:4])
print("ok")' "$MODELS/mlp_f32.pt"
	assert_success
	assert_output "ok"
}

@test "interleave mode runs the original code every K+1-th call" {
	HML_MODE=interleave HML_INTERLEAVE=1 HML_MODEL="$MODELS/mlp_f32.pt" \
		HML_PROFILE="$WORK/p.json" run binomial "${ARGS[@]}"
	assert_success
	[ "$(json p.json 'd["regions"][0]["model_calls"]')" = 2 ]
	[ "$(json p.json 'd["regions"][0]["original_calls"]')" = 2 ]
}

@test "shadow mode keeps the original results and measures the model's error" {
	accurate_qoi
	HML_MODE=shadow HML_SHADOW=0.5 HML_MODEL="$MODELS/mlp_f32.pt" \
		HML_PROFILE="$WORK/p.json" HML_QOI="$WORK/q.h5" run binomial "${ARGS[@]}"
	assert_success
	[ "$(json p.json 'd["regions"][0]["shadow_calls"]')" = 2 ]
	[ "$(json p.json 'd["regions"][0]["original_calls"]')" = 4 ]
	[ "$(json p.json 'd["regions"][0]["shadow_rmse"] > 0')" = True ]
	[ "$(h5 q.h5 'bool((f["price"][:] == __import__("h5py").File("accurate.h5","r")["price"][:]).all())')" = True ]
}

@test "a per-region variable overrides the global mode" {
	HML_MODE=collect HML_MODE_BINOMIAL=off HML_DB="$WORK/d.h5" run binomial "${ARGS[@]}"
	assert_success
	assert_output --partial "mode off"
	[ ! -e d.h5 ]
}

@test "HML_PROFILE=1 prints the per-region timings on stderr" {
	HML_MODE=infer HML_MODEL="$MODELS/mlp_f32.pt" HML_PROFILE=1 run binomial "${ARGS[@]}"
	assert_success
	assert_output --regexp "hml: profile: binomial +infer +4 +0 +4"
}
