#!/usr/bin/env bats
# A compiled model carries its card's input statistics (ABI version 2 on):
# hml deploy --target c embeds them and records input_stats; the .so
# copied out of its experiment is guarded by naming a spec in
# HML_GUARD_<LABEL> (no guard file, no experiment), and guarded rows hold
# the original code's prices exactly; a guard file made for another model
# is refused; a spec with a TorchScript model warns and runs the original
# code. One training per file, few epochs.

load helpers

API="$HML_BUILD_DIR/workflows/binomial/binomial_api"

setup_file() {
	export EXP0="$BATS_FILE_TMPDIR/exp"
	cd "$BATS_FILE_TMPDIR"
	"$HML" -q -C "$EXP0" collect binomial-api --args '--options 2048 --seed {seed}' >/dev/null
	"$HML" -q -C "$EXP0" train --epochs 5 --threads 2 >/dev/null
	"$HML" -q -C "$EXP0" --json deploy m1 --target c --guard bounds > "$BATS_FILE_TMPDIR/dep.json"
}

setup() {
	common_setup
	unset HML_GUARD_BINOMIAL HML_DEPLOYMENT_BINOMIAL HML_MODE_BINOMIAL HML_MODEL_BINOMIAL
	cd "$WORK"
	cp "$BATS_FILE_TMPDIR/dep.json" .
}

@test "deploy --target c embeds the card's statistics and says so (deploy --json, show c1)" {
	[ "$(json dep.json 'd["compiled"]["input_stats"]')" = True ]
	# the guard file is still written and named, as for TorchScript
	g=$(json dep.json 'd["deployment"]["env"]["HML_GUARD_BINOMIAL"]')
	[ "$(json "$g" 'd["spec"]')" = "bounds:margin=0" ]
	run --separate-stderr hml -C "$EXP0" --json show c1
	assert_success
	echo "$output" > c1.json
	[ "$(json c1.json 'd["input_stats"]')" = True ]
	# the symbol's text is the card's "guard" object
	"$PY" - "$EXP0" <<'PYEOF'
import ctypes, json, sys
exp = sys.argv[1]
class Info(ctypes.Structure):
    _fields_ = [("magic", ctypes.c_uint32), ("abi_version", ctypes.c_uint32),
                ("size", ctypes.c_uint32), ("dtype", ctypes.c_uint32), ("tag", ctypes.c_char * 24),
                ("in_ndim", ctypes.c_int32), ("out_ndim", ctypes.c_int32),
                ("in_shape", ctypes.c_int64 * 8), ("out_shape", ctypes.c_int64 * 8),
                ("in_features", ctypes.c_int64), ("out_features", ctypes.c_int64),
                ("id", ctypes.c_char_p), ("hash", ctypes.c_char_p), ("arch", ctypes.c_char_p),
                ("f32", ctypes.c_void_p), ("f64", ctypes.c_void_p), ("input_stats", ctypes.c_char_p),
                ("i32", ctypes.c_void_p)]
info = Info.in_dll(ctypes.CDLL(exp + "/models/c1.so"), "hml_cmodel_v3")
assert info.abi_version == 3 and info.tag == b"hml-cmodel-abi-3", (info.abi_version, info.tag)
card = json.load(open(exp + "/models/m1.json"))["guard"]
assert json.loads(info.input_stats) == card
PYEOF
}

@test "a .so copied out of the experiment, HML_GUARD_BINOMIAL=bounds: guarded rows are the original code's" {
	mkdir copy && cp "$EXP0/models/c1.so" copy/m.so
	args=(--options 2048 --seed 9 --spot-range 5:60 --quiet)
	HML_QOI=acc.h5 HML_MODE=off "$API" "${args[@]}"
	HML_MODE_BINOMIAL=infer HML_MODEL_BINOMIAL="$PWD/copy/m.so" HML_GUARD_BINOMIAL=bounds \
		HML_ON_ERROR=fail HML_PROFILE=prof.json HML_QOI=sur.h5 "$API" "${args[@]}" 2> err.txt
	[ ! -s err.txt ]
	run h5 acc.h5 "int(np.sum(f['price'][:] == h5py.File('sur.h5')['price'][:]))"
	same=$output
	[ "$(json prof.json 'd["regions"][0]["guarded_rows"]')" = "$same" ]
	[ "$(json prof.json 'd["regions"][0]["checked_rows"]')" = 2048 ]
	[ "$(json prof.json 'd["regions"][0]["guard"]')" = "bounds:margin=0" ]
	[ "$(json prof.json 'd["regions"][0]["model_calls"] == 1 and d["regions"][0]["guard_whole_calls"] == 0')" = True ]
	# about 30/55 of the spots lie above the largest trained
	[ "$same" -gt 900 ] && [ "$same" -lt 1350 ]
	# the guard file hml deploy wrote guards the same rows
	g=$(json dep.json 'd["deployment"]["env"]["HML_GUARD_BINOMIAL"]')
	HML_MODE_BINOMIAL=infer HML_MODEL_BINOMIAL="$PWD/copy/m.so" HML_GUARD_BINOMIAL="$g" \
		HML_ON_ERROR=fail HML_QOI=file.h5 "$API" "${args[@]}"
	[ "$(h5 sur.h5 "bool(np.array_equal(f['price'][:], h5py.File('file.h5')['price'][:]))")" = True ]
}

@test "a guard file made for another model, a spec the model cannot serve: one warning, the original code" {
	mkdir copy && cp "$EXP0/models/c1.so" copy/m.so
	g=$(json dep.json 'd["deployment"]["env"]["HML_GUARD_BINOMIAL"]')
	# another model's statistics: its spot range reaches 40
	"$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); d["stats"]["max"][0] = 40.0; json.dump(d, open("other.json", "w"))' "$g"
	HML_QOI=acc.h5 HML_MODE=off "$API" --options 256 --seed 3 --quiet
	run --separate-stderr env HML_MODE_BINOMIAL=infer HML_MODEL_BINOMIAL="$PWD/copy/m.so" \
		HML_GUARD_BINOMIAL="$PWD/other.json" HML_QOI=sur.h5 HML_PROFILE=prof.json \
		"$API" --options 256 --seed 3 --quiet
	assert_success
	[[ "$stderr" == *"guard file '$PWD/other.json' was made for another model"*"running the original code" ]]
	[ "$(echo "$stderr" | wc -l)" -eq 1 ]
	[ "$(json prof.json 'd["regions"][0]["model_calls"]')" = 0 ]
	[ "$(h5 acc.h5 "bool(np.array_equal(f['price'][:], h5py.File('sur.h5')['price'][:]))")" = True ]
	run --separate-stderr env HML_MODE_BINOMIAL=infer HML_MODEL_BINOMIAL="$PWD/copy/m.so" \
		HML_GUARD_BINOMIAL="$PWD/other.json" HML_ON_ERROR=fail "$API" --options 256 --quiet
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"was made for another model"* ]]
	# a spec with the TorchScript model: nothing to resolve it against
	run --separate-stderr env HML_MODE_BINOMIAL=infer HML_MODEL_BINOMIAL="$EXP0/models/m1.pt" \
		HML_GUARD_BINOMIAL=bounds HML_PROFILE=prof.json "$API" --options 256 --quiet
	assert_success
	[[ "$stderr" == *"guard 'bounds': a TorchScript model carries no input statistics"*"running the original code" ]]
	[ "$(echo "$stderr" | wc -l)" -eq 1 ]
	[ "$(json prof.json 'd["regions"][0]["model_calls"]')" = 0 ]
	# ensemble and a malformed spec: refused the same way, exit 1 under fail
	for bad in ensemble bounds:margin=-1 guard.json; do
		run --separate-stderr env HML_MODE_BINOMIAL=infer HML_MODEL_BINOMIAL="$PWD/copy/m.so" \
			HML_GUARD_BINOMIAL="$bad" HML_ON_ERROR=fail "$API" --options 64 --quiet
		[ "$status" -eq 1 ]
		[[ "$stderr" == *"guard"* ]]
	done
}
