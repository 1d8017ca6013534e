#!/usr/bin/env bats
# hml deploy --target c for every convolutional family: the compiled CNNs
# (direct layers of several widths and kernels, and layers on the im2col +
# sgemm path) and cnnvec (conv layers, pooling, a dense head) give the
# TorchScript model's outputs within 1e-4 on their application's own data,
# built as deployed (with OpenBLAS where hml has it) and from the same
# source without it (bench/noblas.py: every conv layer direct), for one
# sample per call (the blocks of a layer of 2^25 multiply-adds or more
# spread over the threads: the 128-channel model) and for several (the
# samples spread over the threads), in float and in double.

load helpers

# Each application's data is collected once for the file; every test
# trains on a copy.
setup_file() {
	cd "$BATS_FILE_TMPDIR"
	for app in heat miniweather particlefilter; do
		"$HML" -q -C "$app" collect "$app" >/dev/null
	done
}

setup() {
	common_setup
}

# agree APP ARCH SGEMM: train ARCH one epoch on APP's data, compile it;
# SGEMM: how many conv layers the generated source puts on the sgemm path.
# Batch 2: an epoch makes at least 64 optimiser steps (hml-train(1)), so
# the smallest batch trains the fewest samples; any weights will do here.
agree() {
	cp -r "$BATS_FILE_TMPDIR/$1" exp
	hml -q -C exp train --epochs 1 --seed 1 --threads 2 --batch 2 --arch "$2" >/dev/null
	hml -q -C exp deploy --force --target c m1 >/dev/null
	[ "$(grep -c 'sgemm \*/' exp/models/c1.c)" = "$3" ]
	"$PY" "$HML_SOURCE_DIR/bench/noblas.py" exp direct
	run "$PY" - "$1" <<'EOF'
import ctypes, glob, sys, h5py, numpy as np, torch
app = sys.argv[1]

class Info(ctypes.Structure):
    _fields_ = [("magic", ctypes.c_uint32), ("abi_version", ctypes.c_uint32),
                ("size", ctypes.c_uint32), ("dtype", ctypes.c_uint32), ("tag", ctypes.c_char * 24),
                ("in_ndim", ctypes.c_int32), ("out_ndim", ctypes.c_int32),
                ("in_shape", ctypes.c_int64 * 8), ("out_shape", ctypes.c_int64 * 8),
                ("in_features", ctypes.c_int64), ("out_features", ctypes.c_int64),
                ("id", ctypes.c_char_p), ("hash", ctypes.c_char_p), ("arch", ctypes.c_char_p),
                ("f32", ctypes.c_void_p), ("f64", ctypes.c_void_p), ("input_stats", ctypes.c_char_p),
                ("i32", ctypes.c_void_p)]

f = h5py.File(sorted(glob.glob("exp/data/*.h5"))[0], "r")
x = f[list(f.keys())[0]]["input"][:7]
want = torch.jit.load("exp/models/m1.pt")(torch.from_numpy(x.astype(np.float32))).detach().numpy()
want = want.reshape(len(x), -1).astype(np.float64)
scale = max(1.0, np.abs(want).max())
for so in ("c1.so", "c1-direct.so"):
    info = Info.in_dll(ctypes.CDLL("exp/models/" + so), "hml_cmodel_v3")
    for dt, fn, ct in ((np.float32, info.f32, ctypes.c_float), (np.float64, info.f64, ctypes.c_double)):
        fwd = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ct), ctypes.POINTER(ct), ctypes.c_int64)(fn)
        for rows in (1, len(x)):
            xi = np.ascontiguousarray(x[:rows].reshape(rows, -1), dtype=dt)
            y = np.zeros((rows, info.out_features), dtype=dt)
            assert fwd(xi.ctypes.data_as(ctypes.POINTER(ct)), y.ctypes.data_as(ctypes.POINTER(ct)), rows) == 0
            diff = np.abs(y - want[:rows]).max()
            assert diff <= 1e-4 * scale, (so, dt.__name__, rows, diff, scale)
            print(f"{so} {dt.__name__} rows {rows} diff {diff:.2g} scale {scale:.3g}")
    # int32 rows (the fields rounded) give what their float32 copy gives
    f32 = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_float), ctypes.POINTER(ctypes.c_float), ctypes.c_int64)(info.f32)
    i32 = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_int32), ctypes.POINTER(ctypes.c_float), ctypes.c_int64)(info.i32)
    xi = np.ascontiguousarray(np.rint(x.reshape(len(x), -1) * 10), dtype=np.int32)
    xf = xi.astype(np.float32)
    yf = np.zeros((len(x), info.out_features), dtype=np.float32)
    yi = np.zeros_like(yf)
    assert f32(xf.ctypes.data_as(ctypes.POINTER(ctypes.c_float)), yf.ctypes.data_as(ctypes.POINTER(ctypes.c_float)), len(x)) == 0
    assert i32(xi.ctypes.data_as(ctypes.POINTER(ctypes.c_int32)), yi.ctypes.data_as(ctypes.POINTER(ctypes.c_float)), len(x)) == 0
    assert np.array_equal(yf, yi), (so, np.abs(yf - yi).max())
    print(f"{so} int32 rows {len(x)}: as float32")
EOF
	assert_success
	assert_line --partial "c1.so float32 rows 7"
	assert_line --partial "c1-direct.so float64 rows 7"
	assert_line "c1-direct.so int32 rows 7: as float32"
}

@test "cnn: heat's default, 1 -> 8 -> 1 channels, 5x5, direct, match TorchScript within 1e-4" {
	agree heat cnn:8:tanh:kernel=5 0
}

@test "cnn: residual (the input added to the network's output), 1 -> 8 -> 1 channels, matches TorchScript" {
	agree heat cnn:8:tanh:kernel=5:residual 0
	[ "$(grep -c 'y\[q\] += x\[q\]' exp/models/c1.c)" = 1 ]
	[ "$(json exp/manifest.json 'd["models"][0]["arch"]')" = cnn:8:tanh:kernel=5:residual ]
}

@test "cnn: 3 layers, 3x3, 16 channels match TorchScript" {
	agree heat cnn:16x16:gelu:kernel=3 0
}

@test "cnn: 128 -> 128 channels, 3x3 (the middle layer on the sgemm path) match TorchScript" {
	agree heat cnn:128x128:relu:kernel=3 1
}

@test "cnn: 7x7, 5 and 6 channels (blocks of channels that do not divide them) match TorchScript" {
	agree heat cnn:5x6:silu:kernel=7 0
}

@test "cnn: miniWeather's default, 4 -> 16 -> 16 -> 4 channels, 5x5 on 24 x 44, match TorchScript" {
	agree miniweather cnn:16x16:tanh:kernel=5 0
}

@test "cnnvec: the particle filter's former default (8 frames, 3x3, pool 2, head 64) matches TorchScript" {
	agree particlefilter cnnvec:8x8:relu:kernel=3:pool=2:head=64 0
}

@test "cnnvec: 5x5, pool 4, no hidden head layer, matches TorchScript" {
	agree particlefilter cnnvec:3x12:tanh:kernel=5:pool=4:head=0 0
}

@test "cnnvec spatial: heatmaps of 1x1 and 3x3 layers, pooled before or not, read by their soft-argmax, match TorchScript" {
	agree particlefilter cnnvec:8:relu:kernel=1:pool=1:head=0:spatial 0
	agree particlefilter cnnvec:6x8:gelu:kernel=3:pool=4:head=16:spatial 0
}
