#!/usr/bin/env bats
# hml evaluate: accurate and surrogate runs of the workflow, the error of the
# quantity of interest, the speedups, and a recorded report.

load helpers

setup_file() {
	export EXP0="$BATS_FILE_TMPDIR/exp"
	cd "$BATS_FILE_TMPDIR"
	"$HML" -q -C "$EXP0" collect binomial --args '--options 8192 --seed {seed}' >/dev/null
	"$HML" -q -C "$EXP0" train --epochs 30 --threads 2 >/dev/null
}

setup() {
	common_setup
	cp -r "$EXP0" "$WORK/exp"
	cd "$WORK"
}

@test "evaluate MODEL records the QoI errors and the speedups" {
	run --separate-stderr hml -C exp --json evaluate m1 --repeat 2 --args '--options 8192 --seed 42'
	assert_success
	echo "$output" > out.json
	e='d["evaluation"]'
	[ "$(json out.json "$e['id']")" = e1 ]
	[ "$(json out.json "$e['model']")" = m1 ]
	[ "$(json out.json "$e['qoi']['dataset']")" = price ]
	[ "$(json out.json "$e['qoi']['values']")" = 8192 ]
	# Prices average about 2.4; a model trained this briefly is within 0.5.
	[ "$(json out.json "0 < $e['qoi']['rmse'] < 0.5")" = True ]
	[ "$(json out.json "$e['qoi']['max_abs'] >= $e['qoi']['rmse']")" = True ]
	[ "$(json out.json "len($e['accurate']['wall_seconds']) == 2 == len($e['surrogate']['region_seconds'])")" = True ]
	[ "$(json out.json "$e['surrogate']['model_calls'] == 2 * 2 and $e['surrogate']['fallback_calls'] == 0")" = True ]
	# Each measured run's share of time waiting for a CPU (Linux says it).
	[ "$(json out.json "all(len(v) == 2 and all(0 <= x < 1 for x in v) for v in ($e['accurate']['cpu_wait_share'], $e['surrogate']['cpu_wait_share']))")" = True ]
	# The tree is ~1000x the cost of a small MLP: the region speedup is large.
	[ "$(json out.json "$e['speedup']['region']['min'] > 5")" = True ]
	[ "$(json out.json "$e['speedup']['end_to_end']['mean'] > 0")" = True ]
	# The report and the compared QoI files are registered with their hashes.
	# (The report cannot hold its own hash; the manifest's record does.)
	[ "$(json out.json "(lambda r, c: (r['provenance']['sha256'].pop('eval/e1.json'), r == c)[1])($e, json.load(open('exp/eval/e1.json')))")" = True ]
	[ "$(json out.json "$e == json.load(open('exp/manifest.json'))['evaluations'][0]")" = True ]
	for f in e1-accurate.h5 e1-surrogate.h5; do
		h=$(sha256sum "exp/eval/$f" | cut -d' ' -f1)
		[ "$(json out.json "$e['provenance']['sha256']['eval/$f']")" = "$h" ]
	done
	# The RMSE is that of the two files.
	run h5 exp/eval/e1-accurate.h5 "round(float(np.sqrt(np.mean((h5py.File('exp/eval/e1-surrogate.h5')['price'][:] - f['price'][:])**2))), 6)"
	[ "$output" = "$(json out.json "round($e['qoi']['rmse'], 6)")" ]
	# No scratch files are left behind.
	[ -z "$(ls -A exp/eval | grep -v '^e1')" ]
}

@test "without MODEL the deployed model is evaluated; human output names the errors" {
	hml -q -C exp deploy m1 >/dev/null
	run hml -C exp evaluate --repeat 1 -- --options 4096 --seed 5
	assert_success
	assert_output --partial "e1: model m1 (torchscript) on workflow binomial, 1 measured runs each"
	assert_output --regexp "quantity of interest 'price' \(4096 values\): RMSE [0-9.e-]+, MAPE"
	assert_output --partial "speedup"
}

@test "the latency of the form evaluated: the card's, or measured when the card has none" {
	run --separate-stderr hml -C exp --json evaluate m1 --repeat 1 --args '--options 4096 --seed 3'
	assert_success
	echo "$output" > card.json
	[ "$(json card.json 'd["evaluation"]["card_latency"]["source"]')" = card ]
	[ "$(json card.json 'd["evaluation"]["card_latency"]["seconds_per_sample"] == json.load(open("exp/manifest.json"))["models"][0]["latency"]["torchscript"]')" = True ]
	# A card without latency (a model registered before cards had one).
	"$PY" - <<'EOF2'
import json
p = "exp/manifest.json"
d = json.load(open(p))
del d["models"][0]["latency"]
json.dump(d, open(p, "w"))
EOF2
	run --separate-stderr hml -C exp --json evaluate m1 --repeat 1 --args '--options 4096 --seed 3'
	assert_success
	echo "$output" > measured.json
	[ "$(json measured.json 'd["evaluation"]["card_latency"]["source"]')" = measured ]
	[ "$(json measured.json 'd["evaluation"]["card_latency"]["seconds_per_sample"] > 0')" = True ]
	[ "$(json measured.json 'd["evaluation"]["card_latency"]["batch"]')" = "$(json exp/manifest.json 'd["models"][0]["metrics"]["latency_batch"]')" ]
	[[ "$stderr" == *"card has no torchscript latency: measuring it"* ]]
	# The card is not changed by an evaluation.
	[ "$(json exp/manifest.json '"latency" in d["models"][0]')" = False ]
	# Text output says it was measured.
	run hml -C exp evaluate m1 --repeat 1 --args '--options 4096 --seed 3'
	assert_success
	assert_output --regexp "latency: +torchscript [0-9.e+-]+ us per sample at batch"
}

# verify_workflow DIR [PYTHON]: binomial wrapped so that it verifies itself as
# some real codes do: "Verification: PASSED" from an accurate run, "FAILED"
# and exit status 1 from a surrogate run; the workflow declares status 1 a
# success and the verification's pattern, changed by the statements PYTHON.
verify_workflow() {
	mkdir -p "$1"
	cat > "$1/wrap" <<EOF2
#!/bin/sh
"$BINOMIAL" "\$@" || exit 9
if [ -n "\$HML_MODEL_BINOMIAL" ]; then echo "Verification: FAILED"; exit 1; fi
echo "Verification: PASSED"
EOF2
	chmod +x "$1/wrap"
	wrap_workflow "$1"
	"$PY" - "$1/workflow.json" "${2:-pass}" <<'EOF2'
import json, sys
d = json.load(open(sys.argv[1]))
d["success_exit_codes"] = [0, 1]
d["verify"] = {"pattern": "^Verification: PASSED$"}
exec(sys.argv[2])
json.dump(d, open(sys.argv[1], "w"))
EOF2
}

@test "a declared exit status is success; the program's own verification is reported, not a crash" {
	verify_workflow wf
	hml -q -C exp2 collect wf/workflow.json --args '--options 2048 --batch 512 --seed {seed}' >/dev/null
	hml -q -C exp2 train --epochs 1 --threads 1 --arch mlp:8 >/dev/null
	EARGS=(--repeat 1 --args '--options 2048 --batch 512 --seed 9')
	run --separate-stderr hml -q -C exp2 --json evaluate m1 "${EARGS[@]}"
	assert_success
	[ "$stderr" = "hml: warning: the surrogate runs failed the program's own verification ('^Verification: PASSED\$')" ]
	echo "$output" > out.json
	v='d["evaluation"]["verification"]'
	[ "$(json out.json "$v['pattern']")" = '^Verification: PASSED$' ]
	[ "$(json out.json "$v['accurate']")" = "{'passed': True, 'runs': 2, 'failed_runs': 0}" ]
	[ "$(json out.json "$v['surrogate']")" = "{'passed': False, 'runs': 2, 'failed_runs': 2}" ]
	[ "$(json out.json "$v == json.load(open('exp2/manifest.json'))['evaluations'][0]['verification']")" = True ]
	[ "$(json out.json 'd["evaluation"]["qoi"]["values"]')" = 2048 ]
	run --separate-stderr hml -C exp2 evaluate m1 "${EARGS[@]}"
	assert_success
	assert_line "verification:    accurate passed, surrogate FAILED (2 of 2 runs)  [pattern: ^Verification: PASSED\$]"
	# A workflow without a pattern records none.
	verify_workflow wf 'del d["verify"]'
	run --separate-stderr hml -q -C exp2 --json evaluate m1 "${EARGS[@]}"
	assert_success
	[ -z "$stderr" ]
	echo "$output" > none.json
	[ "$(json none.json '"verification" in d["evaluation"]')" = False ]
	# Status 1 undeclared: the surrogate run failed, as before; nothing recorded.
	verify_workflow wf 'del d["success_exit_codes"]'
	cp exp2/manifest.json before.json
	run hml -C exp2 evaluate m1 "${EARGS[@]}"
	[ "$status" -eq 1 ]
	assert_output --partial "Verification: FAILED"
	assert_output --partial "hml: error: surrogate run of '$WORK/wf/wrap' failed: exit 1"
	cmp before.json exp2/manifest.json
	# hml deploy's QoI check runs take a declared status as success too.
	verify_workflow wf
	run --separate-stderr hml -q -C exp2 --json deploy --max-qoi-error 1e9
	assert_success
	echo "$output" > dep.json
	[ "$(json dep.json '[("failed" in c, c["within"]) for c in d["deployment"]["qoi_check"]["checks"]]')" = "[(False, True)]" ]
}

@test "evaluate on the inputs the data was collected on: one warning line" {
	# The very command line of d1's run (setup_file: seed 1).
	run --separate-stderr hml -q -C exp --json evaluate m1 --repeat 1 --args '--options 8192 --seed 1'
	assert_success
	[ "$stderr" = "hml: warning: evaluate runs the inputs the data was collected on (data set d1 ran the same command line): the QoI error measures memorisation" ]
	# Another seed: no warning.
	run --separate-stderr hml -q -C exp --json evaluate m1 --repeat 1 --args '--options 8192 --seed 2'
	assert_success
	[ -z "$stderr" ]
	# A workflow whose collect args have no {seed} and are its evaluate args.
	mkdir wf
	printf '#!/bin/sh\nexec "%s" "$@"\n' "$BINOMIAL" > wf/wrap
	chmod +x wf/wrap
	wrap_workflow wf
	"$PY" -c 'import json; p="wf/workflow.json"; d=json.load(open(p)); d["collect"]["args"] = d["evaluate"]["args"] = ["--options", "1024", "--batch", "512"]; json.dump(d, open(p, "w"))'
	hml -q -C exp2 collect wf/workflow.json --args '--options 1024 --batch 512 --seed {seed}' 2>/dev/null >/dev/null
	hml -q -C exp2 train --epochs 1 --threads 1 --arch mlp:8 >/dev/null
	run --separate-stderr hml -q -C exp2 --json evaluate m1 --repeat 1
	assert_success
	[ "$stderr" = "hml: warning: evaluate runs the inputs the data was collected on (the collect arguments have no {seed} and are evaluate's): the QoI error measures memorisation" ]
}

@test "--device: the surrogate runs' HML_DEVICE, recorded; a bad value is a usage error" {
	run --separate-stderr hml -C exp --json evaluate m1 --repeat 1 --device cpu --args '--options 2048 --seed 42'
	assert_success
	echo "$output" > out.json
	[ "$(json out.json "d['evaluation']['device']")" = cpu ]
	# cuda reaches the application: where this build has no CUDA (CI), its
	# model cannot open and the surrogate run fails with the runtime's line.
	run hml -C exp evaluate m1 --repeat 1 --device cuda --args '--options 2048 --seed 42'
	if [ "$status" -ne 0 ]; then
		[ "$status" -eq 1 ]
		assert_output --partial "HML_DEVICE=cuda: this hml was built without CUDA"
		[ ! -e exp/eval/e2.json ]
	fi
	run hml -C exp evaluate m1 --device gpu
	[ "$status" -eq 2 ]
	assert_output "hml: error: evaluate: option '--device' must be auto, cpu or cuda, not 'gpu'"
	run hml -C exp evaluate m1 --device ''
	[ "$status" -eq 2 ]
}

@test "no deployment and no model named: exit 3" {
	run hml -C exp evaluate
	[ "$status" -eq 3 ]
	assert_output "hml: error: no model is deployed in experiment 'exp': run 'hml deploy' or name a model"
	run hml -C exp evaluate m7
	[ "$status" -eq 3 ]
	run hml -C exp evaluate --repeat 0 m1
	[ "$status" -eq 2 ]
	# -1 is no alias of the default (it used to be): refused like 0 (#26)
	run hml -C exp evaluate --repeat -1 m1
	[ "$status" -eq 2 ]
	assert_output "hml: error: evaluate: option '--repeat' must be from 1 to 1000000, not -1"
	run hml -C exp evaluate --run-timeout -1 m1
	[ "$status" -eq 2 ]
	assert_output "hml: error: evaluate: option '--run-timeout' must be at least 0, not -1"
}

@test "an application run that fails: exit 1 with its log, nothing recorded" {
	cp exp/manifest.json before.json
	run hml -C exp evaluate m1 --repeat 1 --args '--options 8192 --bogus'
	[ "$status" -eq 1 ]
	assert_output --partial "binomial: error: unknown argument '--bogus'"
	assert_output --partial "hml: error: accurate run of"
	assert_output --partial "failed: exit"
	cmp before.json exp/manifest.json
	[ -z "$(ls -A exp/eval)" ]
}

@test "a model that returns NaN records no speedup: exit 1, nothing recorded" {
	# m1's file replaced by a model with NaN outputs, its hash updated.
	cp "$MODELS/nonfinite.pt" exp/models/m1.pt
	"$PY" - <<'EOF2'
import hashlib, json
m = json.load(open("exp/manifest.json"))
m["models"][0]["provenance"]["sha256"]["models/m1.pt"] = hashlib.sha256(open("exp/models/m1.pt", "rb").read()).hexdigest()
json.dump(m, open("exp/manifest.json", "w"))
EOF2
	cp exp/manifest.json before.json
	run hml -C exp evaluate m1 --repeat 1 --args '--options 8192 --seed 4'
	[ "$status" -eq 1 ]
	assert_output --partial "non-finite output values (NaN or Inf)"
	assert_output --partial "hml: error: surrogate run of"
	cmp before.json exp/manifest.json
	[ -z "$(ls -A exp/eval)" ]
}

@test "an interrupted evaluation exits 130 and records nothing" {
	cp exp/manifest.json before.json
	interrupt_when_running "$HML" -q -C exp evaluate m1 --repeat 5 --args '--options 65536 --seed 1'
	[ "$status" -eq 130 ]
	cmp before.json exp/manifest.json
	[ -z "$(ls -A exp/eval)" ]
}

@test "a profile that is not a regular file or too large: exit 1, nothing recorded" {
	# A workflow whose program runs binomial, then puts a FIFO (which would
	# block a reader) or a sparse 9 MiB file (over the 8 MiB bound) where
	# the runtime wrote its profile.
	mkdir wf
	cat > wf/wrap <<EOF2
#!/bin/sh
"$BINOMIAL" "\$@" || exit \$?
[ -n "\$HML_PROFILE" ] || exit 0
case \$(cat "$WORK/wf/mode" 2>/dev/null) in
fifo) rm -f "\$HML_PROFILE"; mkfifo "\$HML_PROFILE" ;;
huge) truncate -s 9M "\$HML_PROFILE" ;;
esac
EOF2
	chmod +x wf/wrap
	wrap_workflow wf
	hml -q -C exp2 collect wf/workflow.json --args '--options 2048 --batch 512 --seed {seed}' >/dev/null
	hml -q -C exp2 train --epochs 1 --threads 1 --arch mlp:8 >/dev/null
	cp exp2/manifest.json before.json
	for mode in fifo huge; do
		echo "$mode" > wf/mode
		run timeout -s KILL 120 "$HML" -q -C exp2 evaluate m1 --repeat 1 --args '--options 2048 --batch 512 --seed 2'
		[ "$status" -eq 1 ]
		assert_output --regexp "^hml: error: cannot read profile '[^']*/a0.json': (not a regular file|it is larger than 8388608 bytes)$"
		cmp before.json exp2/manifest.json
		[ -z "$(ls -A exp2/eval)" ]
	done
}
