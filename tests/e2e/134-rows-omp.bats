#!/usr/bin/env bats
# A directive inside the body of an OpenMP parallel loop, the loop left as
# written (hml-cc(1), OPENMP LOOPS): values computed in locals, one row per
# iteration from every thread. Collection keeps each row exactly once with
# its output (the threads' last, short chunks included); inference runs per
# row (a test model, then a model trained here and compiled to C); data
# lost at exit under HML_ON_ERROR=fail is exit status 1; a length that
# changes between calls is an error.

load helpers

setup() {
	common_setup
	export OMP_NUM_THREADS=4
	cp "$HML_SOURCE_DIR/tests/directive/rows-omp.c" app.c
	hml cc gcc -O2 -Wall -Wextra -Werror -fopenmp -o app app.c
}

N=5003   # prime: every thread's last chunk is short

@test "collect from 4 threads: every row once, exact, beside its output; the program's results unchanged" {
	run ./app $N
	assert_success
	plain=$output
	HML_MODE=collect HML_DB="$WORK/d.h5" run ./app $N
	assert_success
	[ "$output" = "$plain" ]
	"$PY" - $N <<'PY'
import sys, h5py, numpy as np
n = int(sys.argv[1])
f = h5py.File("d.h5", "r")
for g in ("cell", "pair"):
    assert f[g]["input"].shape[0] == n and f[g]["output"].shape[0] == n, (g, f[g]["input"].shape)
    assert int(f[g]["calls"]["ncalls"].sum()) == n, g
x, y = f["cell"]["input"][:], f["cell"]["output"][:]
i = np.rint(x[:, 0] * n).astype(int)
assert sorted(i) == list(range(n))
assert np.allclose(x[:, 1], 1 - x[:, 0] ** 2, rtol=0, atol=1e-15)
assert (y[:, 0] == x[:, 0] * x[:, 1] + 0.5).all()
x, y = f["pair"]["input"][:], f["pair"]["output"][:]
assert sorted(x[:, 1].astype(int)) == list(range(n))
assert (y[:, 0] == x[:, 0] + 1).all() and (y[:, 1] == 2 * x[:, 1]).all()
PY
}

@test "inference per row from 4 threads: the identity model writes each iteration's local array" {
	model="$HML_TEST_MODELS/identity.pt"
	[ -r "$model" ] || skip "no $model (a build without libtorch)"
	HML_MODE_PAIR=infer HML_MODEL_PAIR="$model" HML_ON_ERROR=fail HML_PROFILE="$WORK/p.json" run ./app $N
	assert_success
	# q = p = (i/n, i): the sum of i/n + i, where the code would give i/n + 1 + 2i
	want=$("$PY" -c "n=$N; print('%.6f' % sum(i / n + i for i in range(n)))")
	[ "$(echo "$output" | grep '^pair ')" = "pair $want" ]
	[ "$(json p.json '[r["model_calls"] for r in d["regions"] if r["label"] == "pair"][0]')" = $N ]
	[ "$(json p.json '[r["fallback_calls"] for r in d["regions"] if r["label"] == "pair"][0]')" = 0 ]
}

@test "collect, train and deploy --target c through hml: the compiled model infers every row" {
	mkdir prog
	cp app prog/app
	"$PY" - <<'PY'
import json
json.dump({"schema_version": 1, "name": "cell", "program": "app",
           "collect": {"args": ["3001", "{seed}"], "runs": 1, "seed": 1},
           "evaluate": {"args": ["3001", "7"], "repeat": 1},
           "regions": [{"label": "cell", "batch": 1,
                        "model": {"family": "mlp", "arch": "mlp:16x16:tanh",
                                  "train": {"epochs": 40, "batch": 64, "lr": 0.01}}}],
           "qoi": {"dataset": "cell", "metric": "rmse"}},
          open("prog/workflow.json", "w"))
PY
	run ./app 3001
	exact=$(echo "$output" | grep '^cell ' | cut -d' ' -f2)
	run --separate-stderr hml -C exp --json collect prog/workflow.json
	assert_success
	echo "$output" > collect.json
	[ "$(json collect.json 'd["dataset"]["regions"]["cell"]["rows"]')" = 3001 ]
	run --separate-stderr hml -C exp train --region cell --threads 2 --seed 1
	assert_success
	run --separate-stderr hml -C exp --json deploy --force --target c m1
	assert_success
	echo "$output" > c.json
	so=$(json c.json 'd["deployment"]["env"]["HML_MODEL_CELL"]')
	[[ "$so" == *.so ]]
	HML_MODE_CELL=infer HML_MODEL_CELL="$so" HML_ON_ERROR=fail HML_PROFILE="$WORK/c.json" run ./app 3001
	assert_success
	[ "$(json c.json '[r["model_calls"] for r in d["regions"] if r["label"] == "cell"][0]')" = 3001 ]
	[ "$(json c.json '[r["fallback_calls"] for r in d["regions"] if r["label"] == "cell"][0]')" = 0 ]
	got=$(echo "$output" | grep '^cell ' | cut -d' ' -f2)
	# the compiled model runs on the threads at once (no lock): each row as on one thread
	OMP_NUM_THREADS=1 HML_MODE_CELL=infer HML_MODEL_CELL="$so" run ./app 3001
	[ "$(echo "$output" | grep '^cell ' | cut -d' ' -f2)" = "$got" ]
	# a*b + 0.5 on [0, 1): a small MLP is within a few per cent of the sum
	"$PY" -c "import sys; sys.exit(0 if abs($got - $exact) <= 0.03 * $exact else 1)"
	[ "$got" != "$exact" ]
}

@test "collected data lost at exit: exit 1 and one line per region under HML_ON_ERROR=fail, exit 0 and warnings under fallback" {
	HML_MODE=collect HML_DB="$WORK/d.h5" HML_ON_ERROR=fail run --separate-stderr ./app 1000 lose
	[ "$status" -eq 1 ]
	[ "$(echo "$output" | grep -c '^cell ')" = 1 ]   # the program's output is not lost
	[ "$(echo "$stderr" | wc -l)" = 2 ]
	[[ "$stderr" == *"hml: error: app.c:"*": region 'cell': collected data lost at exit: cannot write '$WORK/d.h5': not a regular file"* ]]
	[[ "$stderr" == *"region 'pair': collected data lost at exit"* ]]
	rmdir d.h5
	HML_MODE=collect HML_DB="$WORK/d.h5" run --separate-stderr ./app 1000 lose
	assert_success
	[[ "$stderr" == *"hml: warning: region 'cell': collected data lost at exit"* ]]
	[[ "$stderr" != *"hml: error"* ]]
}

@test "a section whose length changes between calls of a directive in a loop body: one-line error, exit 1" {
	cat > len.c <<'C'
#include <stdio.h>
int main(int argc, char **argv)
{
	double x[4] = { 1, 2, 3, 4 }, y = 0;
	(void)argv;
	for (int k = 1; k <= 2 + argc; k++) {
#pragma approx ml(offline) in(x[0:k]) out(y) label("len")
		y = x[0] * k;
	}
	printf("%g\n", y);
	return 0;
}
C
	hml cc gcc -O2 -Wall -Wextra -Werror -o len len.c
	HML_MODE=collect HML_DB="$WORK/l.h5" run --separate-stderr ./len
	[ "$status" -eq 1 ]
	[ "$stderr" = "hml: error: len.c:7: region 'len': a length of a directive inside a loop body changed between calls (1, then 2): keep it, or give each length its own label() (hml-cc(1))" ]
	# run as written, off mode reads no length
	HML_MODE=off run ./len
	assert_success
	[ "$output" = 3 ]
}
