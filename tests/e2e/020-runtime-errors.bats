#!/usr/bin/env bats
# Bad input to the runtime: each gives one clear line, a defined outcome,
# and never corrupts the application's results or existing files.

load helpers

setup() { common_setup; }

ARGS=(--options 512 --batch 256 --seed 3)

accurate_qoi() {
	HML_QOI="$WORK/accurate.h5" binomial "${ARGS[@]}" >/dev/null
}

# The run's prices are exactly those of the accurate run.
same_as_accurate() {
	[ "$(h5 q.h5 'bool((f["price"][:] == __import__("h5py").File("accurate.h5","r")["price"][:]).all())')" = True ]
}

@test "an unknown mode is rejected with the variable named" {
	HML_MODE=bogus run binomial "${ARGS[@]}"
	assert_failure 1
	assert_output --partial "unknown mode 'bogus' in HML_MODE (expected off, collect, infer, interleave or shadow)"
}

@test "malformed numeric settings are rejected" {
	HML_MODE=interleave HML_MODEL=x.pt HML_INTERLEAVE=zero run binomial "${ARGS[@]}"
	assert_failure 1
	assert_output --partial "invalid HML_INTERLEAVE 'zero'"
	HML_MODE=shadow HML_MODEL=x.pt HML_SHADOW=1.5 run binomial "${ARGS[@]}"
	assert_failure 1
	assert_output --partial "invalid HML_SHADOW '1.5'"
	HML_ON_ERROR=maybe run binomial "${ARGS[@]}"
	assert_failure 1
	assert_output --partial "invalid HML_ON_ERROR 'maybe'"
}

@test "infer mode without a model says how to give one" {
	HML_MODE=infer run binomial "${ARGS[@]}"
	assert_failure 1
	assert_output --partial "mode 'infer' needs a model: set HML_MODEL"
}

@test "a missing model warns once and falls back to the original code" {
	accurate_qoi
	HML_MODE=infer HML_MODEL=/nonexistent/m.pt HML_QOI="$WORK/q.h5" \
		HML_PROFILE="$WORK/p.json" run binomial "${ARGS[@]}"
	assert_success
	assert_output --partial "hml: warning: region 'binomial': cannot open model '/nonexistent/m.pt': no such file; running the original code"
	[ "$(grep -c 'hml: warning' <<<"$output")" = 1 ]
	[ "$(json p.json 'd["regions"][0]["fallback_calls"]')" = 2 ]
	same_as_accurate
}

@test "with HML_ON_ERROR=fail a missing model stops the application" {
	HML_MODE=infer HML_MODEL=/nonexistent/m.pt HML_ON_ERROR=fail run binomial "${ARGS[@]}"
	assert_failure 1
	assert_output --partial "cannot open model '/nonexistent/m.pt': no such file"
}

@test "a file that is not TorchScript is refused" {
	accurate_qoi
	HML_MODE=infer HML_MODEL="$MODELS/not_a_model.pt" HML_QOI="$WORK/q.h5" run binomial "${ARGS[@]}"
	assert_success
	assert_output --partial "not a TorchScript archive"
	same_as_accurate
	HML_MODE=infer HML_MODEL="$MODELS/not_a_model.pt" HML_ON_ERROR=fail run binomial "${ARGS[@]}"
	assert_failure 1
	assert_output --partial "not a TorchScript archive"
}

@test "a model file past the archive limits falls back like any model error, never a crash" {
	# 32 MiB of newlines in the code file made libtorch's parser overflow
	# its stack (SIGSEGV) in the application under the default policy.
	accurate_qoi
	"$PY" "$HML_SOURCE_DIR/tests/e2e/badmodel.py" newlines "$MODELS/affine.pt" newlines.pt
	HML_MODE=infer HML_MODEL=newlines.pt HML_QOI="$WORK/q.h5" run timeout 60 "$BINOMIAL" "${ARGS[@]}"
	assert_success
	assert_output --partial "hml: warning: region 'binomial': cannot open model 'newlines.pt': code file 'affine/code/__torch__.py' is larger than 8388608 bytes; running the original code"
	same_as_accurate
	"$PY" "$HML_SOURCE_DIR/tests/e2e/badmodel.py" nesting "$MODELS/affine.pt" nesting.pt
	HML_MODE=infer HML_MODEL=nesting.pt HML_ON_ERROR=fail run timeout 60 "$BINOMIAL" "${ARGS[@]}"
	assert_failure 1
	assert_output --partial "cannot open model 'nesting.pt': code file 'affine/code/__torch__.py' nests brackets deeper than 200"
}

@test "a model that is a FIFO or a directory is refused at once" {
	accurate_qoi
	mkfifo fifo.pt
	HML_MODE=infer HML_MODEL=fifo.pt HML_QOI="$WORK/q.h5" run timeout 20 "$BINOMIAL" "${ARGS[@]}"
	assert_success
	assert_output --partial "hml: warning: region 'binomial': cannot open model 'fifo.pt': not a regular file; running the original code"
	same_as_accurate
	HML_MODE=infer HML_MODEL=fifo.pt HML_ON_ERROR=fail run timeout 20 "$BINOMIAL" "${ARGS[@]}"
	assert_failure 1
	assert_output --partial "cannot open model 'fifo.pt': not a regular file"
	[ -p fifo.pt ]
	mkdir dir.pt
	HML_MODE=infer HML_MODEL=dir.pt HML_ON_ERROR=fail run timeout 20 "$BINOMIAL" "${ARGS[@]}"
	assert_failure 1
	assert_output --partial "cannot open model 'dir.pt': is a directory"
}

@test "a model path of thousands of characters: the message keeps the reason" {
	long="/nonexistent$(printf '/abcdefghij%.0s' {1..300})/m.pt"
	HML_MODE=infer HML_MODEL="$long" HML_ON_ERROR=fail run binomial "${ARGS[@]}"
	assert_failure 1
	assert_output --partial "cannot open model '/nonexistent/abcdefghij/"
	assert_output --partial "..."
	assert_output --partial "abcdefghij/m.pt': no such file"
}

@test "blanks around a number or a keyword are refused in every variable" {
	for v in "HML_THREADS= 2" "HML_INTERLEAVE=2 " "HML_SHADOW= 0.5" "HML_FLUSH_BYTES= 100"; do
		env HML_MODE=interleave HML_MODEL="$MODELS/mlp_f32.pt" "$v" "$BINOMIAL" "${ARGS[@]}" >out.txt 2>&1 && false
		grep -q "invalid ${v%%=*} '${v#*=}'" out.txt
	done
	HML_MODE=" infer" run binomial "${ARGS[@]}"
	assert_failure 1
	assert_output --partial "unknown mode ' infer' in HML_MODE"
}

@test "a model of the wrong shape names both shapes and changes no result" {
	accurate_qoi
	# declared.pt declares 5 inputs and 1 output but field_cnn wants images.
	HML_MODE=infer HML_MODEL="$MODELS/field_cnn.pt" HML_QOI="$WORK/q.h5" run binomial "${ARGS[@]}"
	assert_success
	assert_output --partial "[256, 5]"
	same_as_accurate
	HML_MODE=infer HML_MODEL="$MODELS/field_cnn.pt" HML_ON_ERROR=fail run binomial "${ARGS[@]}"
	assert_failure 1
	assert_output --partial "[256, 5]"
}

@test "a model returning NaN or Inf: original code for that call, or an error under fail" {
	accurate_qoi
	# nonfinite.pt returns NaN in a batch's first row, +Inf in its last.
	HML_MODE=infer HML_MODEL="$MODELS/nonfinite.pt" HML_QOI="$WORK/q.h5" \
		HML_PROFILE="$WORK/p.json" run binomial "${ARGS[@]}"
	assert_success
	assert_output --partial "hml: warning: region 'binomial': model '$MODELS/nonfinite.pt' returned 2 non-finite output values (NaN or Inf) in call 1; running the original code for such calls"
	[ "$(grep -c 'hml: warning' <<<"$output")" = 1 ]
	[ "$(json p.json '[d["regions"][0][k] for k in ("nonfinite_calls", "fallback_calls", "model_calls")]')" = "[2, 2, 0]" ]
	same_as_accurate
	HML_MODE=interleave HML_INTERLEAVE=1 HML_MODEL="$MODELS/nonfinite.pt" HML_QOI="$WORK/q.h5" \
		HML_PROFILE="$WORK/p.json" run binomial "${ARGS[@]}"
	assert_success
	[ "$(json p.json '[d["regions"][0][k] for k in ("nonfinite_calls", "fallback_calls", "original_calls")]')" = "[1, 1, 2]" ]
	same_as_accurate
	rm q.h5
	HML_MODE=infer HML_MODEL="$MODELS/nonfinite.pt" HML_ON_ERROR=fail HML_QOI="$WORK/q.h5" \
		run binomial "${ARGS[@]}"
	assert_failure 1
	assert_output --partial "returned 2 non-finite output values (NaN or Inf) in call 1"
	[ ! -e q.h5 ]
}

@test "an unwritable collection file is reported" {
	HML_MODE=collect HML_DB=/proc/hml-cannot-write.h5 HML_ON_ERROR=fail run binomial "${ARGS[@]}"
	assert_failure 1
	assert_output --partial "cannot write '/proc/hml-cannot-write.h5'"
	HML_MODE=collect HML_DB=/nonexistent-dir/d.h5 run binomial "${ARGS[@]}"
	assert_success
	assert_output --partial "hml: warning: region 'binomial': cannot write '/nonexistent-dir/d.h5'"
	assert_output --partial "not collecting"
}

@test "without its HDF5 plugin, collecting and recording the QoI fail with the plugin named" {
	# A libhml with no plugin beside it (LD_LIBRARY_PATH wins over RUNPATH).
	mkdir lib
	cp -L "$HML_BUILD_DIR/runtime/libhml.so.0" lib/
	export LD_LIBRARY_PATH="$WORK/lib"
	HML_MODE=collect HML_DB="$WORK/d.h5" run binomial "${ARGS[@]}"
	assert_success
	assert_output --partial "hml: warning: region 'binomial': the HDF5 plugin cannot be loaded:"
	assert_output --partial "libhml-hdf5.so"
	assert_output --partial "not collecting"
	[ ! -e d.h5 ]
	HML_MODE=collect HML_DB="$WORK/d.h5" HML_ON_ERROR=fail run binomial "${ARGS[@]}"
	assert_failure 1
	assert_output --partial "the HDF5 plugin cannot be loaded"
	HML_QOI="$WORK/q.h5" run binomial "${ARGS[@]}"
	assert_failure 1
	assert_output --partial "cannot record the quantity of interest: the HDF5 plugin cannot be loaded"
	# Off mode needs no plugin.
	HML_MODE=off run binomial "${ARGS[@]}"
	assert_success
}

@test "a collection file that is not HDF5 is left untouched" {
	printf 'precious results\n' > d.h5
	cp d.h5 before
	HML_MODE=collect HML_DB="$WORK/d.h5" HML_ON_ERROR=fail run binomial "${ARGS[@]}"
	assert_failure 1
	assert_output --partial "is not an HDF5 file"
	cmp d.h5 before
}

@test "a truncated HDF5 collection file is left untouched" {
	HML_MODE=collect HML_DB="$WORK/d.h5" binomial "${ARGS[@]}" >/dev/null
	head -c 3000 d.h5 > t.h5
	cp t.h5 before
	HML_MODE=collect HML_DB="$WORK/t.h5" HML_ON_ERROR=fail run binomial "${ARGS[@]}"
	assert_failure 1
	assert_output --partial "t.h5"
	cmp t.h5 before
}

@test "collecting into a file made with another shape is refused" {
	HML_MODE=collect HML_DB="$WORK/d.h5" binomial "${ARGS[@]}" >/dev/null
	"$PY" -c 'import h5py
f = h5py.File("d.h5", "a"); g = f["binomial"]
for k in ("input", "output", "calls"): del g[k]
g.create_dataset("input", shape=(0, 6), maxshape=(None, 6), dtype="f8", chunks=(64, 6))
g.create_dataset("output", shape=(0, 1), maxshape=(None, 1), dtype="f8", chunks=(64, 1))'
	cp d.h5 before
	HML_MODE=collect HML_DB="$WORK/d.h5" HML_ON_ERROR=fail run binomial "${ARGS[@]}"
	assert_failure 1
	assert_output --partial "region 'binomial'"
	cmp d.h5 before
}

@test "a collecting process killed mid-run leaves a readable file with its flushed calls" {
	HML_MODE=collect HML_DB="$WORK/d.h5" HML_FLUSH_SECONDS=0.05 \
		"$BINOMIAL" --options 400000 --batch 512 --quiet &
	pid=$!
	# About 0.1 s per call here: let a few dozen calls be flushed (the test
	# does not open the file meanwhile, so no lock gets in the way).
	sleep 4
	kill -9 "$pid"
	wait "$pid" || true
	run "$PY" -c 'import h5py
g = h5py.File("d.h5", "r")["binomial"]
c = g["calls"][:]
assert len(c) >= 1, len(c)
assert g["input"].shape[0] == g["output"].shape[0] == 512 * len(c)
assert (c["input_offset"] == 512 * c["call"]).all()
assert (g["output"][:] > -1e-9).all()
print("ok", len(c))'
	assert_success
	assert_output --partial "ok"
}

@test "HML_DEVICE: cpu runs as the default does; cuda without CUDA and unknown devices are refused" {
	HML_MODE=infer HML_MODEL="$MODELS/mlp_f32.pt" HML_QOI="$WORK/auto.h5" binomial "${ARGS[@]}" >/dev/null
	HML_MODE=infer HML_MODEL="$MODELS/mlp_f32.pt" HML_QOI="$WORK/q.h5" HML_DEVICE=cpu run binomial "${ARGS[@]}"
	assert_success
	refute_output --partial "warning"
	[ "$(h5 q.h5 'bool((f["price"][:] == __import__("h5py").File("auto.h5","r")["price"][:]).all())')" = True ]
	# A build without CUDA (CI's); with CUDA and no visible GPU the message is
	# "HML_DEVICE=cuda: no CUDA device is visible to libtorch".
	if ! grep -q '^HML_WITH_CUDA:BOOL=ON' "$HML_BUILD_DIR/CMakeCache.txt"; then
		accurate_qoi
		HML_MODE=infer HML_MODEL="$MODELS/mlp_f32.pt" HML_QOI="$WORK/q.h5" HML_DEVICE=cuda run binomial "${ARGS[@]}"
		assert_success
		assert_output --partial "HML_DEVICE=cuda: this hml was built without CUDA (configure with -DHML_WITH_CUDA=ON"
		assert_output --partial "running the original code"
		same_as_accurate
	fi
	HML_MODE=infer HML_MODEL="$MODELS/mlp_f32.pt" HML_DEVICE=gpu HML_ON_ERROR=fail run binomial "${ARGS[@]}"
	assert_failure 1
	assert_output --partial "HML_DEVICE='gpu' is not auto, cpu or cuda"
	HML_MODE=infer HML_MODEL="$MODELS/mlp_f32.pt" HML_DEVICE=" cpu" HML_ON_ERROR=fail run binomial "${ARGS[@]}"
	assert_failure 1
	assert_output --partial "HML_DEVICE=' cpu' is not auto, cpu or cuda"
}

# refused_untouched OUT: the run's output warns about $WORK/fifo or
# $WORK/link (not a regular file), the FIFO is still one, and the link
# still links to an untouched target.
refused_untouched() {
	[[ "$1" == *"cannot write '$WORK/fifo': not a regular file (a FIFO)"* ||
	   "$1" == *"cannot write '$WORK/link': not a regular file (a symbolic link)"* ]]
	[ -p fifo ] && [ -L link ]
	[ "$(cat target)" = kept ]
}

@test "HML_PROFILE, HML_DB and HML_QOI naming a FIFO or a symbolic link: left as they are, no blocking" {
	mkfifo fifo
	echo kept > target
	ln -s target link
	for p in fifo link; do
		# timeout: a regression blocks on the FIFO instead of failing
		HML_MODE=collect HML_DB="$WORK/d.h5" HML_PROFILE="$WORK/$p" run timeout 60 "$BINOMIAL" "${ARGS[@]}"
		assert_success
		assert_output --partial "hml: warning: "
		refused_untouched "$output"
		HML_MODE=collect HML_DB="$WORK/$p" run timeout 60 "$BINOMIAL" "${ARGS[@]}"
		assert_success
		assert_output --partial "not collecting"
		refused_untouched "$output"
		HML_QOI="$WORK/$p" run timeout 60 "$BINOMIAL" "${ARGS[@]}"
		assert_failure 1
		assert_output --partial "cannot record the quantity of interest"
		refused_untouched "$output"
	done
}
