#!/usr/bin/env bats
# The bundled applications annotated with directives (workflows/APP/APP.c,
# built by hml cc) behave as the same programs written against the C API
# (APP_api.c): the same output, the same collected data in the same
# layout, the same quantities of interest, in every mode.

load helpers

setup() { common_setup; }

W="$HML_BUILD_DIR/workflows"

args() {
	case "$1" in
	binomial) echo "--options 1024 --batch 256 --seed 7" ;;
	bonds) echo "--bonds 1024 --batch 256 --seed 7" ;;
	minibude) echo "--poses 64 --batch 32 --protein 300 --ligand 20 --seed 3" ;;
	particlefilter) echo "--size 32 --frames 4 --videos 8 --seed 1000" ;;
	miniweather) echo "--nx 40 --nz 20 --steps 20 --k 10 --seed 0" ;;
	heat) echo "--n 12 --steps 8 --k 2 --seed 3" ;;
	heat-rows) echo "--n 12 --steps 4 --region rows --seed 3" ;;
	esac
}

# same_h5 A B: every data set of A and B equal (the calls' timings and the
# files' provenance aside), and the same attributes on every group.
same_h5() {
	"$PY" - "$1" "$2" <<'PY'
import sys, h5py, numpy as np
a, b = (h5py.File(p, "r") for p in sys.argv[1:3])
skip_attrs = {"created", "host", "pid", "program", "hml_version", "argv", "time"}
def walk(x, y, path):
    assert set(x.keys()) == set(y.keys()), (path, sorted(x.keys()), sorted(y.keys()))
    for k in x.attrs:
        if k in skip_attrs:
            continue
        va, vb = x.attrs[k], y.attrs.get(k)
        assert np.array_equal(np.asarray(va), np.asarray(vb)), (path, k, va, vb)
    for k in x:
        if isinstance(x[k], h5py.Group):
            walk(x[k], y[k], path + "/" + k)
        elif k == "calls":
            ca, cb = x[k][:], y[k][:]
            for f in ("input_offset", "input_rows", "output_offset", "output_rows"):
                if f in ca.dtype.names:
                    assert np.array_equal(ca[f], cb[f]), (path, f)
        else:
            assert x[k].dtype == y[k].dtype and np.array_equal(x[k][:], y[k][:], equal_nan=True), (path, k)
walk(a, b, "")
print("same")
PY
}

# same_as_api APP [NAME]: APP's directive build (NAME's arguments) and its
# C API build give the same lines, collected data and QoI, collect and off.
same_as_api() {
	local app=$1 name=${2:-$1} form
	[ -x "$W/$app/${app}_api" ]
	for form in "$app" "${app}_api"; do
		HML_MODE=collect HML_DB="$WORK/$form.h5" HML_QOI="$WORK/$form-q.h5" \
			timeout 300 "$W/$app/$form" $(args $name) > "$form.out"
		HML_QOI="$WORK/$form-off.h5" timeout 300 "$W/$app/$form" $(args $name) > "$form.off"
	done
	run same_h5 "$app.h5" "${app}_api.h5"
	assert_output same
	run same_h5 "$app-q.h5" "${app}_api-q.h5"
	assert_output same
	run same_h5 "$app-off.h5" "${app}_api-off.h5"
	assert_output same
	# The same lines, timings aside; the mode printed is the region's.
	for m in out off; do
		diff <(grep -v ' in [0-9.]* s$' "$app.$m") <(grep -v ' in [0-9.]* s$' "${app}_api.$m")
	done
	grep -q "mode collect" "$app.out"
	grep -q "mode off" "$app.off"
}

@test "directive builds: the same output, data and QoI as the C API builds, collect and off" {
	for app in binomial bonds minibude particlefilter miniweather heat; do
		same_as_api $app
	done
}

@test "directive build of heat's rows region: the same as the C API build" {
	same_as_api heat heat-rows
	[ "$(h5 heat.h5 'f["heat_rows/input"].shape')" = "(576, 5)" ]
	[ "$(h5 heat-q.h5 'f["field"].shape')" = "(12, 12)" ]
}

@test "directive build of binomial: infer, interleave and shadow as the C API build" {
	for mode in infer interleave shadow; do
		for form in binomial binomial_api; do
			HML_MODE=$mode HML_MODEL="$MODELS/mlp_f32.pt" HML_SHADOW=0.5 HML_INTERLEAVE=1 \
				HML_QOI="$WORK/$form-$mode.h5" HML_PROFILE="$WORK/$form-$mode.json" \
				timeout 300 "$W/binomial/$form" $(args binomial) > "$form-$mode.out"
		done
		run same_h5 "binomial-$mode.h5" "binomial_api-$mode.h5"
		assert_output same
		grep -q "mode $mode" "binomial-$mode.out"
		for k in calls original_calls model_calls shadow_calls fallback_calls; do
			[ "$(json binomial-$mode.json "d['regions'][0]['$k']")" = \
			  "$(json binomial_api-$mode.json "d['regions'][0]['$k']")" ]
		done
	done
}

@test "directive builds: a short last batch is collected with its exact row count" {
	# The C API programs leave a last, shorter batch outside the region;
	# the directive programs bind the region anew for it.
	HML_MODE=collect HML_DB="$WORK/d.h5" HML_QOI="$WORK/q.h5" \
		timeout 300 "$W/binomial/binomial" --options 1000 --batch 256 --seed 7 >/dev/null
	[ "$(h5 d.h5 'f["binomial/input"].shape')" = "(1000, 5)" ]
	[ "$(h5 d.h5 'list(f["binomial/calls"]["input_rows"])')" = "[256, 256, 256, 232]" ]
	run "$PY" -c 'import h5py, numpy as np
d = h5py.File("d.h5", "r")["binomial"]; q = h5py.File("q.h5", "r")["price"][:]
assert np.array_equal(d["output"][:, 0], q); print("ok")'
	assert_output ok
}

@test "directive builds: an error of the runtime names the directive's line and exits 1" {
	HML_MODE=bogus run --separate-stderr "$W/bonds/bonds" $(args bonds)
	[ "$status" -eq 1 ]
	[[ "$stderr" == "hml: error: "*"bonds.c:"*": region 'bonds': unknown mode 'bogus' in HML_MODE"* ]]
	mkfifo fifo
	HML_QOI="$WORK/fifo" run --separate-stderr timeout 60 "$W/particlefilter/particlefilter" $(args particlefilter)
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"particlefilter.c:"*": cannot record the quantity of interest: "* ]]
}

@test "what the workflows use: over() seeks to the loop's start, qoi in several dimensions" {
	printf 'void f(double *S, double *p, long off, long n) {\n  long i;\n#pragma hml ml in(S) out(p) over(i)\n  for (i = off; i < off + n; i++) p[i] = S[i];\n}\n' > o.c
	run --separate-stderr hml translate o.c
	assert_success
	[[ "$output" == *'{ "hml__0", (int64_t)(off + n) - (int64_t)(off) }'* ]]
	[[ "$output" == *'"0:hml__0"'* ]]
	[[ "$output" == *'hml__sym, 1, (int64_t)(off))'* ]]
	printf 'void f(double *S, double *p, long n) {\n  long i;\n#pragma hml ml in(S) out(p) over(i) seek(n)\n  for (i = 0; i < n; i++) p[i] = S[i];\n}\n' > o2.c
	run --separate-stderr hml translate o2.c
	[ "$status" -eq 3 ]
	[ "$stderr" = "hml: error: o2.c:3:29: over() seeks to the loop's start itself: leave seek() out: 'over'" ]
	# A slice that does not start at 0 needs the array's row length.
	printf 'void f(double *q, long n) {\n#pragma hml qoi(q[0:n, 1:3])\n}\n' > q.c
	run --separate-stderr hml translate q.c
	[ "$status" -eq 3 ]
	[ "$stderr" = "hml: error: q.c:2:17: the row length of this array is not known (a slice is no shape): declare it as an array (T q[N][M]) or by '#pragma hml declare shape(q[N][M])': 'q'" ]
	printf 'void f(double *q, long n) {\n#pragma hml qoi(q[0:n, 0:2]) name("pos")\n}\n' > q2.c
	run --separate-stderr hml translate q2.c
	assert_success
	[[ "$output" == *'hml__dir_ck(hml_dir_qoi("q2.c:2", ("pos"), &(q)[0], HML__DIR_DT(&(q)[0]), 2, (int64_t)(n), (int64_t)(2), (int64_t)(0), (int64_t)(0)));'* ]]
}

@test "what the workflows use: qoi of a slice (the interior of a field with halos), and one outside its array" {
	cat > s.c <<'C'
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
	long nz = 3, nx = 4, h = nz + 4, w = nx + 4, hi = nx + 2 + (argc > 1 ? atol(argv[1]) : 0);
	double *s = malloc(sizeof(double) * (size_t)(2 * h * w));
	for (long i = 0; i < 2 * h * w; i++)
		s[i] = (double)i;
#pragma hml declare shape(s[2][h][w])
#pragma hml qoi(s[0:2, 2:nz+2, 2:hi]) name("interior")
	free(s);
	return 0;
}
C
	hml cc cc -std=c11 -Wall -Wextra -Werror -o s s.c
	HML_QOI="$WORK/q.h5" ./s
	run "$PY" -c 'import h5py, numpy as np
s = np.arange(2 * 7 * 8, dtype=float).reshape(2, 7, 8)
q = h5py.File("q.h5", "r")["interior"][:]
assert q.shape == (2, 3, 4) and np.array_equal(q, s[:, 2:5, 2:6]), q; print("ok")'
	assert_output ok
	HML_QOI="$WORK/q2.h5" run --separate-stderr ./s 3
	[ "$status" -eq 1 ]
	[ "$stderr" = "hml: error: s.c:10: quantity of interest 'interior': the slice 2:9 of dimension 2 is not inside the array's extent 8" ]
	[ ! -e q2.h5 ]
}
