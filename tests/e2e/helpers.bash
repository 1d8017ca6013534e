# Shared set-up for the end-to-end tests. ctest sets HML_BUILD_DIR,
# HML_SOURCE_DIR, HML_TEST_PYTHON and HML_TEST_MODELS.

# `run --separate-stderr` keeps --json stdout apart from diagnostics.
bats_require_minimum_version 1.5.0

load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

: "${HML_BUILD_DIR:?run the end-to-end tests through ctest}"
BINOMIAL="$HML_BUILD_DIR/workflows/binomial/binomial"
HML="$HML_BUILD_DIR/cmd/hml"
PY="${HML_TEST_PYTHON:-/usr/bin/python3}"
MODELS="$HML_TEST_MODELS"

common_setup() {
	WORK="$BATS_TEST_TMPDIR"
	cd "$WORK" || return 1
	# Each test chooses its own settings.
	unset HML_MODE HML_MODEL HML_DB HML_QOI HML_PROFILE HML_INTERLEAVE \
	      HML_SHADOW HML_ON_ERROR HML_THREADS HML_FLUSH_SECONDS HML_FLUSH_BYTES HML_GUARD \
	      HML_EXPERIMENT HML_WORKFLOW_PATH HML_LOCK_TIMEOUT
	export OMP_NUM_THREADS=2
}

# binomial ARGS...: the workflow under a time limit.
binomial() {
	timeout 300 "$BINOMIAL" "$@"
}

# hml ARGS...: the command line under a time limit.
hml() {
	timeout 600 "$HML" "$@"
}

# json FILE EXPR: evaluate a Python expression over the parsed JSON `d`.
json() {
	"$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

# wrap_workflow DIR: DIR/workflow.json, binomial's workflow whose program
# is DIR/wrap (a script the caller writes, e.g. one that runs $BINOMIAL).
wrap_workflow() {
	"$PY" -c 'import json,sys; w=json.load(open(sys.argv[1])); w["program"]="wrap"; json.dump(w, open(sys.argv[2]+"/workflow.json","w"))' \
		"$HML_SOURCE_DIR/workflows/binomial/workflow.json" "$1"
}

# h5 FILE EXPR: evaluate a Python expression over the open h5py file `f`
# (numpy as np).
h5() {
	"$PY" -c 'import sys, h5py, numpy as np; f=h5py.File(sys.argv[1], "r"); print(eval(sys.argv[2]))' "$1" "$2"
}

# interrupt_when_running CMD...: run CMD in the background, send it SIGINT
# once it has started a child (a background job inherits SIGINT ignored
# until hml installs its handler, so a signal sent while a loaded machine
# is still starting hml would be lost), and set $status to its exit status.
interrupt_when_running() {
	local pid
	"$@" &
	pid=$!
	for _ in $(seq 600); do
		pgrep -P "$pid" >/dev/null && break
		sleep 0.1
	done
	kill -INT "$pid"
	status=0
	wait "$pid" || status=$?
}

# What only some commands need, in the CLI's plugins (runtime/loader/loader.h):
# the objects of libtorch, HDF5, LAPACKE/OpenBLAS, NLopt, OpenMP and Open MPI,
# as LD_DEBUG=files names them ("file=/usr/lib/.../libtorch_cpu.so.1.13 [0]; ...").
HEAVY_LIBS='file=[^ ]*(libtorch|libc10|libhdf5|liblapack|libopenblas|libblas|libnlopt|libgomp|libmpi)'

# refute_heavy LOG...: the LD_DEBUG=files logs LOG name none of them.
refute_heavy() {
	refute_mapped "$HEAVY_LIBS" "$@"
}

# refute_mapped REGEX LOG...: no line of the logs LOG matches REGEX.
refute_mapped() {
	local re=$1
	shift
	if grep -E "$re" "$@"; then
		echo "mapped (above)"
		return 1
	fi
}

# assert_plugin LOG NAME: the LD_DEBUG=files log LOG shows the plugin NAME
# (libhml-cli-train.so) loaded from the build tree.
assert_plugin() {
	grep -qE "file=$HML_BUILD_DIR/cmd/../runtime/$2 .*dynamically loaded" "$1" ||
		{ echo "$1 shows no $2 loaded:"; grep 'file=.*libhml' "$1"; return 1; }
}

# stepper_workflow DIR [WORK]: DIR/workflow.json of tests/e2e/swap-app.c
# (region "step", rows (a, b) -> sin(3a) + b^2), its collection computing
# each row WORK times (default 1; 400 makes a surrogate pay, for search).
stepper_workflow() {
	mkdir -p "$1"
	"$PY" - "$1" "$HML_BUILD_DIR/tests/swap-app" "${2:-1}" <<-'PYEOF'
	import json, sys
	w = {"schema_version": 1, "name": "stepper", "program": sys.argv[2],
	     "collect": {"args": ["--rows", "2048", "--seed", "{seed}", "--work", sys.argv[3]],
	                 "runs": 1, "seed": 1},
	     "evaluate": {"args": ["--rows", "2048", "--seed", "99"], "repeat": 1},
	     "regions": [{"label": "step", "batch": 2048,
	                  "model": {"family": "mlp", "arch": "mlp:16:tanh",
	                            "train": {"epochs": 4, "batch": 128, "lr": 0.003}}}],
	     "qoi": {"dataset": "y", "metric": "rmse"}}
	json.dump(w, open(sys.argv[1] + "/workflow.json", "w"))
	PYEOF
}

# An application started in the background ($APP_PID) that logs a line a
# step to steps.log (the hot-swap and guard-loop tests).
# steps: how many steps it has logged.
steps() {
	[ -f steps.log ] && wc -l <steps.log || echo 0
}

# wait_steps N: until it has logged N steps (it stops by itself after
# 300 s at most, and this wait with it).
wait_steps() {
	while [ "$(steps)" -lt "$1" ]; do
		kill -0 "$APP_PID" 2>/dev/null || return 1
		sleep 0.05
	done
}
