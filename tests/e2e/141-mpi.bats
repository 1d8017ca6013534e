#!/usr/bin/env bats
# hml collect of an MPI workflow ("launcher" and "ranks", hml-workflow(5)):
# each rank collects into its own file, the files are registered as one
# data set through an HDF5 virtual data set, and hml train reads it like
# any other. A rank killed before or during collection is left out with a
# warning, the others' data registered;
# a launcher that is missing, and --ranks for a workflow without one, are
# refused with their exit codes. The application is binomial run by
# mpirun as N independent ranks (each rank's runtime finds its rank in
# Open MPI's environment). Skipped where mpirun is absent.

load helpers
bats_require_minimum_version 1.5.0

setup() {
	common_setup
	command -v mpirun >/dev/null || skip "mpirun is not installed"
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
	       OMPI_MCA_rmaps_base_oversubscribe=1 OMP_NUM_THREADS=1
}

# mpi_workflow DIR PROGRAM [LAUNCHER-JSON]: binomial's workflow run by
# PROGRAM under mpirun with 3 ranks, small.
mpi_workflow() {
	local launcher='["mpirun", "-n", "{ranks}"]'
	mkdir -p "$1"
	"$PY" - "$HML_SOURCE_DIR/workflows/binomial/workflow.json" "$1/workflow.json" "$2" \
		"${3:-$launcher}" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
d["program"] = sys.argv[3]
d["launcher"] = json.loads(sys.argv[4])
d["ranks"] = 3
d["collect"]["args"] = ["--options", "1024", "--batch", "512", "--seed", "{seed}"]
d["regions"][0]["model"]["train"]["epochs"] = 2
json.dump(d, open(sys.argv[2], "w"), indent=2)
PYEOF
}

# small_evaluate DIR: evaluate 512 options per rank.
small_evaluate() {
	"$PY" -c 'import json, sys; p = sys.argv[1] + "/workflow.json"; d = json.load(open(p)); d["evaluate"]["args"] = ["--options", "512", "--batch", "512", "--seed", "7"]; json.dump(d, open(p, "w"))' "$1"
}

@test "3 ranks: three files, one data set whose view holds every rank's rows; train reads it" {
	mpi_workflow wf "$BINOMIAL"
	run --separate-stderr hml -C exp --json collect wf/workflow.json
	assert_success
	echo "$output" > out.json
	[ "$(json out.json 'd["dataset"]["id"]')" = d1 ]
	[ "$(json out.json 'd["dataset"]["complete"]')" = True ]
	[ "$(json out.json 'd["dataset"]["regions"]["binomial"]["rows"]')" = 3072 ]
	# The ranks ran the region side by side: the most a surrogate gives is
	# set by a mean rank's share of the run (their summed time is more
	# than the run's, which read as a sum was "no bound").
	[ "$(json out.json '1 < d["ceiling"]["binomial"] < 1e9')" = True ]
	[ "$(json exp/manifest.json 'd["datasets"][0]["mpi"]["collected"]')" = "[0, 1, 2]" ]
	[ "$(json exp/manifest.json 'd["datasets"][0]["mpi"]["ranks"]')" = 3 ]
	for k in 0 1 2; do
		[ -f exp/data/d1.r000$k.h5 ]
		[ "$(json exp/manifest.json "d['datasets'][0]['files']['data.r000$k']")" = data/d1.r000$k.h5 ]
		[ -n "$(json exp/manifest.json "d['datasets'][0]['provenance']['sha256']['data/d1.r000$k.h5']")" ]
	done
	# The view: virtual data sets over the ranks' files, no rows of its own.
	h5dump -p -H exp/data/d1.h5 > dump.txt
	grep -q VIRTUAL dump.txt
	grep -q 'd1.r0002.h5' dump.txt
	! ls exp/data | grep -q '.tmp-'
	# The region's cost from every rank's profile (HML_PROFILE by the rank rule).
	run --separate-stderr hml -C exp --json show d1
	assert_success
	echo "$output" > d.json
	[ "$(json d.json 'd["regions"]["binomial"]["original_seconds"] > 0')" = True ]
	! ls exp/data | grep -q 'profile'
	run --separate-stderr hml -C exp --json train --epochs 2
	assert_success
	echo "$output" > train.json
	[ "$(json train.json 'd["model"]["datasets"]')" = "['d1']" ]
}

@test "evaluate under the launcher: each rank its QoI file and profile, the QoI compared over all ranks" {
	mpi_workflow wf "$BINOMIAL"
	small_evaluate wf
	run --separate-stderr hml -C exp --json collect wf/workflow.json
	assert_success
	run --separate-stderr hml -C exp --json train --epochs 2
	assert_success
	run --separate-stderr hml -C exp deploy m1
	assert_success
	run --separate-stderr hml -C exp --json evaluate --repeat 1 --keep-runs
	assert_success
	echo "$output" > ev.json
	# Three ranks of 512 options each: the QoI of all three, read as one.
	[ "$(json ev.json 'd["evaluation"]["qoi"]["values"]')" = 1536 ]
	[ "$(json ev.json 'd["evaluation"]["mpi"]["ranks"]')" = 3 ]
	[ "$(json ev.json 'd["evaluation"]["argv"][1:3]')" = "['-n', '3']" ]
	# The profiles summed over the ranks: every rank's model calls.
	[ "$(json ev.json 'd["evaluation"]["surrogate"]["model_calls"]')" = 3 ]
	# The ceiling from a mean rank's region time (the profile sums the three).
	[ "$(json ev.json '(lambda e: abs(e["speedup"]["ceiling"]["median"] - e["accurate"]["wall_seconds"][0] / (e["accurate"]["wall_seconds"][0] - e["accurate"]["region_seconds"][0] / 3)) < 1e-6 * e["speedup"]["ceiling"]["median"])(d["evaluation"])')" = True ]
	for k in 0 1 2; do
		[ "$(json ev.json "d['evaluation']['files']['qoi_accurate.r000$k']")" = eval/e1-accurate.r000$k.h5 ]
		[ -f exp/eval/e1-surrogate.r000$k.h5 ]
		[ -f exp/eval/e1-runs/s1.r000$k.json ]
	done
	[ ! -e exp/eval/e1-runs/s1.json ]
	# --ranks 1: the one rank writes HML_QOI itself.
	run --separate-stderr hml -C exp --json evaluate --repeat 1 --ranks 1
	assert_success
	echo "$output" > ev1.json
	[ "$(json ev1.json 'd["evaluation"]["qoi"]["values"]')" = 512 ]
	[ "$(json ev1.json 'sorted(d["evaluation"]["files"])')" = "['card', 'qoi_accurate', 'qoi_surrogate']" ]
}

@test "evaluate under the launcher: a rank that writes no QoI file is named, exit 3, nothing recorded" {
	mkdir -p wf
	cat > wf/app.sh <<EOF
#!/bin/sh
[ "\$OMPI_COMM_WORLD_RANK" = 1 ] && unset HML_QOI
exec "$BINOMIAL" "\$@"
EOF
	chmod +x wf/app.sh
	mpi_workflow wf app.sh
	small_evaluate wf
	run --separate-stderr hml -C exp --json collect wf/workflow.json
	assert_success
	run --separate-stderr hml -C exp --json train --epochs 2
	assert_success
	run --separate-stderr hml -C exp evaluate m1 --repeat 1
	[ "$status" -eq 3 ]
	[[ "${stderr##*$'\n'}" == "hml: error: rank 1 of 3 wrote no QoI file ("*"a0.r0001.h5' is missing)" ]]
	[ "$(json exp/manifest.json 'len(d["evaluations"])')" = 0 ]
	! ls exp/eval | grep -q .
	run --separate-stderr hml -C exp evaluate m1 --repeat 1 --ranks 0
	[ "$status" -eq 2 ]
	# deploy --max-qoi-error's check runs under the launcher as well, and
	# reads every rank's QoI file: the same one line, nothing deployed.
	run --separate-stderr hml -C exp deploy --max-qoi-error 1
	[ "$status" -eq 3 ]
	[[ "${stderr##*$'\n'}" == "hml: error: rank 1 of 3 wrote no QoI file ("*"a0.r0001.h5' is missing)" ]]
	[ "$(json exp/manifest.json 'len(d["deployments"])')" = 0 ]
	[ -z "$(find exp -name '.tmp-*')" ]
}

@test "--ranks 1 under the launcher: the one rank writes the data file itself" {
	mpi_workflow wf "$BINOMIAL"
	run --separate-stderr hml -C exp --json collect wf/workflow.json --ranks 1
	assert_success
	echo "$output" > out.json
	[ "$(json out.json 'd["dataset"]["regions"]["binomial"]["rows"]')" = 1024 ]
	[ "$(json exp/manifest.json 'sorted(d["datasets"][0]["files"])')" = "['data', 'log']" ]
}

@test "a rank's file changed after collection: train refuses the data set" {
	mpi_workflow wf "$BINOMIAL"
	run --separate-stderr hml -C exp --json collect wf/workflow.json
	assert_success
	printf 'x' >> exp/data/d1.r0002.h5
	run --separate-stderr hml -C exp train --epochs 1
	[ "$status" -eq 3 ]
	[[ "$stderr" == *"data.r0002 file"*"d1.r0002.h5' changed since it was collected"* ]]
	rm exp/data/d1.r0001.h5
	run --separate-stderr hml -C exp train --epochs 1
	[ "$status" -eq 3 ]
	[[ "$stderr" == *"d1.r0001.h5' of data set 'd1' is missing"* ]]
}

# killed_rank_checks: what a run whose rank 1 was killed leaves: the
# others' data registered as the data set, complete, without rank 1, with
# a warning, and the lost rank in the manifest.
killed_rank_checks() {
	[[ "$stderr" == *"1 of 3 ranks did not finish: the others' data is kept"* ]]
	[[ "$stderr" == *"warning: rank 1 of 3 left out of the data set: it did not finish a run ("*"no profile at its exit: killed or crashed)"* ]]
	echo "$output" > out.json
	[ "$(json out.json 'd["dataset"]["complete"]')" = True ]
	[ "$(json out.json 'd["dataset"]["regions"]["binomial"]["rows"]')" = 2048 ]
	[ "$(json exp/manifest.json 'd["datasets"][0]["mpi"]["collected"]')" = "[0, 2]" ]
	[ "$(json exp/manifest.json 'd["datasets"][0]["mpi"]["left_out"][0]["rank"]')" = 1 ]
	[[ "$(json exp/manifest.json 'd["datasets"][0]["mpi"]["left_out"][0]["why"]')" == "it did not finish a run"* ]]
	[ -f exp/data/d1.r0000.h5 ] && [ -f exp/data/d1.r0002.h5 ]
	[ ! -e exp/data/d1.r0001.h5 ]
	! ls exp/data | grep -q '.tmp-'
	[ "$(h5 exp/data/d1.h5 'sorted({s.file_name for s in f["binomial/input"].virtual_sources()})')" = "['d1.r0000.h5', 'd1.r0002.h5']" ]
	run --separate-stderr hml -C exp --json train --epochs 1
	assert_success
}

@test "a rank killed before it collects: the others' files registered without it, with a warning" {
	# Rank 1 kills itself once the others have finished (mpirun would
	# end them if it died first); no time limit, only their markers.
	mkdir -p wf
	cat > wf/app.sh <<EOF
#!/bin/sh
if [ "\$OMPI_COMM_WORLD_RANK" = 1 ]; then
	while [ ! -e "$PWD/wf/done.0" ] || [ ! -e "$PWD/wf/done.2" ]; do sleep 0.1; done
	kill -9 \$\$
fi
"$BINOMIAL" "\$@"
rc=\$?
touch "$PWD/wf/done.\$OMPI_COMM_WORLD_RANK"
exit \$rc
EOF
	chmod +x wf/app.sh
	mpi_workflow wf app.sh
	run --separate-stderr hml -C exp --json collect wf/workflow.json
	assert_success
	killed_rank_checks
}

@test "a rank killed during collection: its file, rows and all, left out; the others' registered" {
	# Rank 1 collects round after round (binomial_api --until, every call
	# flushed) and is killed with SIGKILL once it has collected two rounds
	# and the others have finished: its file is on disk, with rows, but the
	# rank did not finish (no profile at its exit).
	mkdir -p wf
	cat > wf/app.sh <<EOF
#!/bin/sh
if [ "\$OMPI_COMM_WORLD_RANK" = 1 ]; then
	HML_FLUSH_BYTES=1 "$HML_BUILD_DIR/workflows/binomial/binomial_api" "\$@" \
		--until "$PWD/wf/never" > "$PWD/wf/r1.out" &
	pid=\$!
	while ! grep -q "round 1 " "$PWD/wf/r1.out" || [ ! -e "$PWD/wf/done.0" ] ||
	      [ ! -e "$PWD/wf/done.2" ]; do sleep 0.1; done
	kill -9 \$pid
	kill -9 \$\$
fi
"$BINOMIAL" "\$@"
rc=\$?
touch "$PWD/wf/done.\$OMPI_COMM_WORLD_RANK"
exit \$rc
EOF
	chmod +x wf/app.sh
	mpi_workflow wf app.sh
	run --separate-stderr hml -C exp --json collect wf/workflow.json
	assert_success
	grep -q "round 1 " wf/r1.out
	killed_rank_checks
}

@test "a coupled run's rank killed: mpirun ends the others, none finished: an incomplete data set, exit 1" {
	# miniweather_mpi's test knob: rank 1 kills itself at region call 2;
	# the others wait for its halos until mpirun ends them.
	[ -x "$HML_BUILD_DIR/workflows/miniweather-mpi/miniweather_mpi" ] || skip "built without MPI"
	mkdir -p wf
	"$PY" - "$HML_SOURCE_DIR/workflows/miniweather-mpi/workflow.json" wf/workflow.json \
		"$HML_BUILD_DIR/workflows/miniweather-mpi/miniweather_mpi" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
d["program"] = sys.argv[3]
d["collect"]["args"] = ["--nx", "48", "--nz", "16", "--steps", "40", "--k", "10", "--seed", "{seed}"]
d["collect"]["runs"] = 1
d["env"] = {"HML_TEST_MW_DIE_RANK": "1", "HML_TEST_MW_DIE_CALL": "2"}
json.dump(d, open(sys.argv[2], "w"))
PYEOF
	run --separate-stderr hml -C exp --json collect wf/workflow.json
	[ "$status" -eq 1 ]
	[[ "$stderr" != *"ranks did not finish: the others' data is kept"* ]]
	[[ "$stderr" == *"application 'miniweather-mpi' "*"(run 1 of 1)"* ]]
	[[ "$stderr" == *"as incomplete data set d1" ]]
	[ "$(json exp/manifest.json '[x["complete"] for x in d["datasets"]]')" = "[False]" ]
	[ "$(json exp/manifest.json 'd["datasets"][0]["mpi"]["left_out"]')" = "[]" ]
}

@test "a launcher that is not installed: one line, exit 3, nothing registered" {
	mpi_workflow wf "$BINOMIAL" '["no-such-mpirun-xyz", "-n", "{ranks}"]'
	run --separate-stderr hml -C exp collect wf/workflow.json
	[ "$status" -eq 3 ]
	[ "$stderr" = "hml: error: collect: launcher 'no-such-mpirun-xyz' of workflow 'binomial' is not found on PATH (is MPI installed?)" ]
	[ ! -e exp/manifest.json ] || [ "$(json exp/manifest.json 'len(d["datasets"])')" = 0 ]
}

@test "--ranks for a workflow without a launcher, and ranks without a launcher: refused" {
	run --separate-stderr hml -C exp collect binomial --ranks 3
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"--ranks 3 needs an MPI workflow, and workflow 'binomial' has no \"launcher\""* ]]
	run --separate-stderr hml -C exp collect binomial --ranks 0
	[ "$status" -eq 2 ]
	mkdir -p wf
	"$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); d["program"]=sys.argv[2]; d["ranks"]=2; json.dump(d, open("wf/workflow.json","w"))' \
		"$HML_SOURCE_DIR/workflows/binomial/workflow.json" "$BINOMIAL"
	run --separate-stderr hml -C exp collect wf/workflow.json
	[ "$status" -eq 3 ]
	[[ "$stderr" == *"key 'ranks' is 2, but the workflow has no 'launcher' to start ranks with"* ]]
}
