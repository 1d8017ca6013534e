#!/usr/bin/env bats
# The experiment store as `hml show` / `hml ls` sees it: listings, one
# record, --json, and bad experiments (missing, corrupt, truncated, newer),
# each with its exit code and message, and nothing created or changed.

load helpers

setup() { common_setup; }

# empty_experiment DIR: the manifest a fresh experiment has.
empty_experiment() {
	mkdir -p "$1/data" "$1/models" "$1/eval"
	cat >"$1/manifest.json" <<-'EOF'
	{
	  "schema_version": 1,
	  "hml_version": "0.1.0",
	  "created": "2026-11-23T14:05:09Z",
	  "datasets": [],
	  "models": [],
	  "deployments": [],
	  "evaluations": []
	}
	EOF
}

# full_experiment DIR: one record of each kind, as the commands write them.
full_experiment() {
	mkdir -p "$1/data" "$1/models" "$1/eval"
	"$PY" - "$1" <<-'EOF'
	import json, sys
	prov = {"time": "2026-11-23T14:05:09Z", "host": "h", "user": "u",
	        "command": ["hml", "collect", "binomial"], "cwd": "/w",
	        "versions": {"hml": "0.1.0", "hdf5": "1.10.8", "jansson": "2.14"},
	        "sha256": {}}
	m = {"schema_version": 1, "hml_version": "0.1.0", "created": "2026-11-23T14:05:09Z",
	     "datasets": [{"id": "d1",
	                   "workflow": {"name": "binomial", "path": "/abs/workflow.json", "sha256": "00"},
	                   "complete": False,
	                   "runs": [{"seed": 1, "argv": ["/abs/binomial", "--seed", "1"], "status": "exit 0",
	                             "exit_code": 0, "wall_seconds": 3.2},
	                            {"seed": 2, "argv": ["/abs/binomial", "--seed", "2"],
	                             "status": "killed by SIGSEGV", "exit_code": None, "wall_seconds": 1.0}],
	                   "regions": {"binomial": {"rows": 16384, "calls": 4, "input_shape": [5],
	                                            "output_shape": [1]}},
	                   "files": {"data": "data/d1.h5"}, "provenance": prov}],
	     "models": [{"id": "m1", "region": "binomial", "workflow": "binomial", "datasets": ["d1"],
	                 "family": "mlp", "arch": "mlp:64x64:relu", "input_shape": [5], "output_shape": [1],
	                 "hyper": {"epochs": 100, "lr": 0.001},
	                 "metrics": {"val_rmse": 0.0123456, "test_rmse": 0.0125, "params": 4545,
	                             "latency_seconds_per_sample": 4.1e-07},
	                 "files": {"model": "models/m1.pt", "card": "models/m1.json"}, "provenance": prov},
	                {"id": "m2", "region": "binomial"}],
	     "deployments": [{"id": "p1", "model": "m1", "region": "binomial", "selection": "max-error",
	                      "max_error": 0.05,
	                      "env": {"HML_MODE_BINOMIAL": "infer",
	                              "HML_MODEL_BINOMIAL": "/abs/exp/models/m1.pt"},
	                      "files": {}, "provenance": prov},
	                     {"id": "p2", "model": "m2", "selection": "id", "env": {}}],
	     "evaluations": [{"id": "e1", "model": "m1", "workflow": "binomial", "repeat": 3,
	                      "qoi": {"dataset": "price", "metric": "rmse", "rmse": 0.0021, "mape": 0.5,
	                              "max_abs": 0.01, "values": 16384},
	                      "speedup": {"end_to_end": {"mean": 3.456, "min": 3.1, "max": 3.9, "stdev": 0.2}},
	                      "files": {"card": "eval/e1.json"}, "provenance": prov}]}
	json.dump(m, open(sys.argv[1] + "/manifest.json", "w"), indent=2)
	EOF
}

# snapshot DIR: every path below DIR with its size and checksum.
snapshot() {
	(cd "$1" && find . -printf '%p %y %s\n' | sort && find . -type f -exec cksum {} + | sort)
}

@test "no experiment: exit 3, the store's message, and nothing is created" {
	run hml -C nonexistent show
	assert_failure 3
	assert_output "hml: error: no experiment at 'nonexistent' (run 'hml collect' first)"
	[ ! -e nonexistent ]
	run hml ls --json
	assert_failure 3
	assert_output --partial "no experiment at 'hml-experiment'"
	[ ! -e hml-experiment ]
	# HML_EXPERIMENT names the default; -C wins over it.
	HML_EXPERIMENT=elsewhere run hml show
	assert_failure 3
	assert_output --partial "no experiment at 'elsewhere'"
	[ ! -e elsewhere ]
	# A directory without a manifest is no experiment either.
	mkdir bare
	run hml -C bare show
	assert_failure 3
	assert_output --partial "no experiment at 'bare'"
	[ -z "$(ls -A bare)" ]
}

@test "an empty experiment lists five empty sections" {
	empty_experiment exp
	run hml -C exp show
	assert_success
	assert_output --partial "experiment '$WORK/exp'"
	[ "$(grep -c '^  (none)$' <<<"$output")" = 5 ]
	for section in "data sets:" "models:" "deployments:" "evaluations:" "searches:"; do
		grep -qx "$section" <<<"$output"
	done
	hml -C exp show --json >out.json
	[ "$(json out.json 'sorted(d)')" = "['datasets', 'deployments', 'evaluations', 'experiment', 'models', 'schema_version', 'searches']" ]
	[ "$(json out.json 'd["schema_version"]')" = 1 ]
	[ "$(json out.json 'd["experiment"]')" = "$WORK/exp" ]
	[ "$(json out.json '[len(d[k]) for k in ("datasets", "models", "deployments", "evaluations", "searches")]')" = "[0, 0, 0, 0, 0]" ]
}

@test "a listing shows one row per record, '-' for what a record lacks" {
	full_experiment exp
	run hml -C exp ls
	assert_success
	assert_output --partial "ID  WORKFLOW  COMPLETE  REGIONS (ROWS)    RUNS"
	assert_output --partial "d1  binomial  no        binomial (16384)  2 (1 failed)"
	assert_output --partial "ID  REGION    ARCH            VAL RMSE  TEST RMSE  TS LATENCY  C LATENCY  PARAMS"
	assert_output --partial "m1  binomial  mlp:64x64:relu  0.01235   0.0125     410 ns      -          4545"
	assert_output --partial "m2  binomial  -               -         -          -           -          -"
	assert_output --partial "p1  m1     max-error 0.05  no      HML_MODE_BINOMIAL=infer HML_MODEL_BINOMIAL=/abs/exp/models/m1.pt"
	assert_output --partial "p2  m2     id              yes     -"
	assert_output --partial "e1  m1     price rmse  0.0021  3.5x"
}

@test "--json lists the records exactly as the manifest stores them" {
	full_experiment exp
	hml -C exp show --json >out.json
	"$PY" - <<-'EOF'
	import json
	out = json.load(open("out.json"))
	man = json.load(open("exp/manifest.json"))
	assert list(out)[0] == "schema_version", list(out)
	for k in ("datasets", "models", "deployments", "evaluations"):
	    assert out[k] == man[k], k
	assert [r["id"] for r in out["models"]] == ["m1", "m2"]
	EOF
	# global options work before the command too
	hml --json -C exp show >out2.json
	cmp out.json out2.json
}

@test "show ID prints one record: key: value lines, or the record in JSON" {
	full_experiment exp
	run hml -C exp show m1
	assert_success
	assert_line "id: m1"
	assert_line "arch: mlp:64x64:relu"
	assert_line "metrics.val_rmse: 0.0123456"
	assert_line "metrics.params: 4545"
	assert_line "input_shape: [5]"
	assert_line "datasets: [\"d1\"]"
	assert_line "files.model: models/m1.pt"
	assert_line "provenance.versions.hdf5: 1.10.8"
	assert_line "provenance.command: [\"hml\",\"collect\",\"binomial\"]"
	run hml -C exp show d1
	assert_success
	assert_line "runs[1].status: killed by SIGSEGV"
	assert_line "runs[1].exit_code: -"
	assert_line "regions.binomial.rows: 16384"
	for id in d1 m1 m2 p1 p2 e1; do
		hml -C exp show --json "$id" >rec.json
		"$PY" - "$id" <<-'EOF'
		import json, sys
		rec = json.load(open("rec.json"))
		man = json.load(open("exp/manifest.json"))
		coll = {"d": "datasets", "m": "models", "p": "deployments", "e": "evaluations"}[sys.argv[1][0]]
		want = [r for r in man[coll] if r["id"] == sys.argv[1]][0]
		assert rec.pop("schema_version") == 1
		assert rec == want, (rec, want)
		EOF
	done
}

@test "an unknown id: exit 3 naming the id and the experiment" {
	full_experiment exp
	run hml -C exp show m9
	assert_failure 3
	assert_output "hml: error: no record 'm9' in experiment 'exp'"
	run hml -C exp show --json bogus
	assert_failure 3
	assert_output "hml: error: no record 'bogus' in experiment 'exp'"
	run hml -C exp show d1 m1
	assert_failure 2
	assert_output --partial "unexpected argument 'm1'"
	run hml -C exp show --frobnicate
	assert_failure 2
	assert_output --partial "unknown option '--frobnicate'"
}

@test "corrupt, truncated or newer manifests: exit 3, the file named, left untouched" {
	full_experiment exp
	cp exp/manifest.json good.json

	head -c 300 good.json >exp/manifest.json   # truncated mid-object
	cp exp/manifest.json before.json
	run hml -C exp show
	assert_failure 3
	assert_output --partial "hml: error: manifest 'exp/manifest.json' is corrupt: line "
	assert_output --partial "expected near end of file"
	cmp exp/manifest.json before.json

	printf 'not json at all\n' >exp/manifest.json
	cp exp/manifest.json before.json
	run hml -C exp show m1
	assert_failure 3
	assert_output --partial "manifest 'exp/manifest.json' is corrupt: line 1:"
	cmp exp/manifest.json before.json

	printf '[]\n' >exp/manifest.json
	run hml -C exp ls --json
	assert_failure 3
	assert_output "hml: error: manifest 'exp/manifest.json' is corrupt: the top level is not a JSON object"
	[ "$(cat exp/manifest.json)" = "[]" ]

	printf '{"schema_version": 1, "models": {}}\n' >exp/manifest.json
	run hml -C exp show
	assert_failure 3
	assert_output "hml: error: manifest 'exp/manifest.json' is corrupt: \"models\" is not an array"

	printf '{"datasets": []}\n' >exp/manifest.json
	run hml -C exp show
	assert_failure 3
	assert_output --partial "\"schema_version\" is missing"

	: >exp/manifest.json
	run hml -C exp show
	assert_failure 3
	assert_output --partial "is corrupt: the file is empty"
	[ ! -s exp/manifest.json ]

	printf '{"schema_version": 7, "datasets": []}\n' >exp/manifest.json
	cp exp/manifest.json before.json
	run hml -C exp show
	assert_failure 3
	assert_output "hml: error: manifest 'exp/manifest.json' has schema_version 7; this hml reads 1"
	cmp exp/manifest.json before.json
}

@test "show changes nothing in the experiment, not even a lock file" {
	full_experiment exp
	touch exp/data/d1.h5
	before=$(snapshot exp)
	hml -C exp show >/dev/null
	hml -C exp show --json >/dev/null
	hml -C exp ls m1 >/dev/null
	run hml -C exp show m9
	[ "$(snapshot exp)" = "$before" ]
	[ ! -e exp/.lock ]
}

@test "an output that cannot be written is a failure, not a silent success" {
	full_experiment exp
	# (run captures stdout itself: the redirection goes in a shell)
	run bash -c '"$1" -C exp show >/dev/full' _ "$HML"
	assert_failure 1
	assert_output "hml: error: cannot write the output: No space left on device"
	run bash -c '"$1" -C exp show --json m1 >/dev/full' _ "$HML"
	assert_failure 1
	assert_output --partial "cannot write the output"
}

@test "show, ls and show --json map no libtorch, HDF5, LAPACKE, NLopt, OpenMP or MPI" {
	full_experiment exp
	for args in show ls "show --json" "show m1"; do
		LD_DEBUG=files "$HML" -C exp $args > /dev/null 2> ld.log
		refute_heavy ld.log
		refute_mapped 'file=.*libhml-' ld.log
	done
}

@test "show --help, ls --help and help show" {
	run hml show --help
	assert_success
	assert_line --index 0 "usage: hml show [options] [ID]"
	assert_output --partial "See hml-show(1)."
	run hml help show
	assert_success
	assert_line --index 0 "usage: hml show [options] [ID]"
	run hml ls -h
	assert_success
	assert_line --index 0 "usage: hml ls [options] [ID]"
	assert_output --partial "See hml-ls(1)."
}
