#!/usr/bin/env bats
# The ensemble guard (issue #28): hml train --ensemble N (members, seeds,
# errors and the calibration of their disagreement in the card),
# hml deploy --guard ensemble[:fa=A] (TorchScript and --target c), rows
# guarded out of distribution through hml evaluate --args, guarded rows
# exactly the original code's, and the bad inputs.

load helpers

API="$HML_BUILD_DIR/workflows/binomial/binomial_api"

setup_file() {
	export EXP0="$BATS_FILE_TMPDIR/exp"
	cd "$BATS_FILE_TMPDIR"
	"$HML" -q -C "$EXP0" collect binomial-api --args '--options 4096 --seed {seed}' >/dev/null
	"$HML" -q -C "$EXP0" train --ensemble 3 --epochs 12 --threads 2 >/dev/null
	"$HML" -q -C "$EXP0" train --epochs 2 --threads 2 >/dev/null
}

setup() {
	common_setup
	unset HML_GUARD_BINOMIAL
	cp -r "$EXP0" "$WORK/exp"
	cd "$WORK"
}

@test "train --ensemble 3: one model, its members' files, seeds, errors and calibration" {
	c=exp/models/m1.json
	[ "$(json $c 'd["ensemble"]["size"]')" = 3 ]
	[ "$(json $c '[m["seed"] for m in d["ensemble"]["members"]] == [42, 43, 44]')" = True ]
	[ "$(json $c 'd["files"]["member1"] == "models/m1.e1.pt" and d["files"]["member2"] == "models/m1.e2.pt"')" = True ]
	[ -f exp/models/m1.e1.pt ] && [ -f exp/models/m1.e2.pt ] && [ ! -e exp/models/m1.e3.pt ]
	[ "$(json $c 'all(m["val_rmse"] > 0 for m in d["ensemble"]["members"])')" = True ]
	# member 0 is the model: the card's metrics are its own
	[ "$(json $c 'd["ensemble"]["members"][0]["val_rmse"] == d["metrics"]["val_rmse"]')" = True ]
	# every 10th of 4096 rows held out of every member
	[ "$(json $c 'd["ensemble"]["calibration_rows"] == 409 and d["ensemble"]["training_rows"] == 3687')" = True ]
	e='d["guard"]["ensemble"]'
	[ "$(json $c "$e['members'] == 3 and $e['outputs'] == 1 and $e['calibration_rows'] == 409")" = True ]
	[ "$(json $c "[p[1] for p in $e['quantiles']] == sorted(p[1] for p in $e['quantiles']) and $e['quantiles'][0][1] > 0")" = True ]
	# every member file has its hash in the provenance
	[ "$(json exp/manifest.json 'len([m for m in d["models"] if m["id"] == "m1"][0]["provenance"]["sha256"]["models/m1.e2.pt"]) == 64')" = True ]
	run --separate-stderr hml -C exp show m1
	assert_success
	assert_output --partial "ensemble.members[2].seed: 44"
	# a model trained without --ensemble has none
	[ "$(json exp/models/m2.json '"ensemble" not in d and d["guard"]["ensemble"] is None')" = True ]
}

@test "deploy --guard ensemble, evaluate over twice the spots: out-of-range rows guarded, per row" {
	run --separate-stderr hml -C exp --json deploy m1 --guard ensemble
	assert_success
	echo "$output" > dep.json
	[ "$(json dep.json 'd["deployment"]["guard"]["spec"]')" = "ensemble:fa=0.01" ]
	g=$(json dep.json 'd["deployment"]["env"]["HML_GUARD_BINOMIAL"]')
	[ "$g" = "$PWD/exp/models/m1.guard-ensemble-fa-0.01.json" ]
	[ "$(json "$g" 'd["kind"]')" = ensemble ]
	[ "$(json "$g" "d['members'] == ['$PWD/exp/models/m1.pt', '$PWD/exp/models/m1.e1.pt', '$PWD/exp/models/m1.e2.pt']")" = True ]
	[ "$(json "$g" 'd["threshold"] > 0')" = True ]
	run --separate-stderr hml -C exp --json evaluate --repeat 1 --args '--options 4096 --seed 42 --spot-range 5:60'
	assert_success
	echo "$output" > ood.json
	run --separate-stderr hml -C exp --json evaluate --repeat 1 --args '--options 4096 --seed 42'
	assert_success
	echo "$output" > ind.json
	e='d["evaluation"]["guard"]'
	[ "$(json ood.json "$e['spec']")" = "ensemble:fa=0.01" ]
	[ "$(json ood.json "$e['checked_rows']")" = 4096 ]
	[ "$(json ood.json "$e['whole_calls'] == 0 and $e['guarded_calls'] == 1 and $e['seconds'] > 0")" = True ]
	# in distribution about the false-alarm rate; out of it many more
	[ "$(json ind.json "$e['guarded_fraction'] < 0.06")" = True ]
	out=$(json ood.json "$e['guarded_fraction']")
	in=$(json ind.json "$e['guarded_fraction']")
	[ "$("$PY" -c "print($out > 0.1 and $out > 3 * $in)")" = True ]
}

@test "guarded rows hold exactly the original code's prices; the profile counts them" {
	hml -q -C exp deploy m1 --guard ensemble:fa=0.05 >/dev/null
	g="$PWD/exp/models/m1.guard-ensemble-fa-0.05.json"
	args=(--options 2048 --seed 9 --spot-range 5:60 --quiet)
	HML_QOI=acc.h5 "$API" "${args[@]}"
	HML_MODE_BINOMIAL=infer HML_MODEL_BINOMIAL="$PWD/exp/models/m1.pt" HML_GUARD_BINOMIAL="$g" \
		HML_ON_ERROR=fail HML_PROFILE=prof.json HML_QOI=sur.h5 "$API" "${args[@]}"
	run h5 acc.h5 "int(np.sum(f['price'][:] == h5py.File('sur.h5')['price'][:]))"
	[ "$(json prof.json 'd["regions"][0]["guarded_rows"]')" = "$output" ]
	[ "$output" -gt 100 ]
	[ "$(json prof.json 'd["regions"][0]["guard"]')" = "ensemble:fa=0.05" ]
	[ "$(json prof.json 'd["regions"][0]["guard_s"] > 0 and d["regions"][0]["guard_whole_calls"] == 0')" = True ]
}

@test "deploy --target c --guard ensemble: the members compiled to C too" {
	run --separate-stderr hml -C exp --json deploy m1 --target c --force --guard ensemble
	assert_success
	echo "$output" > dep.json
	g=$(json dep.json 'd["deployment"]["env"]["HML_GUARD_BINOMIAL"]')
	cid=$(json dep.json 'd["compiled"]["id"]')
	[ "$g" = "$PWD/exp/models/m1.guard-ensemble-fa-0.01-$cid.json" ]
	[ "$(json "$g" 'len(set(d["members"])) == 3 and all(m.endswith(".so") for m in d["members"])')" = True ]
	[ "$(json "$g" "d['members'][0]")" = "$(json dep.json 'd["deployment"]["env"]["HML_MODEL_BINOMIAL"]')" ]
	run --separate-stderr hml -C exp --json evaluate --repeat 1 --args '--options 2048 --seed 42 --spot-range 5:60'
	assert_success
	echo "$output" > ood.json
	[ "$(json ood.json 'd["evaluation"]["guard"]["guarded_rows"] > 100')" = True ]
}

@test "bad ensembles: one-line errors, documented exit codes, nothing recorded" {
	cp exp/manifest.json before.json
	for bad in 1 17 0 x; do
		run --separate-stderr hml -C exp train --ensemble "$bad"
		[ "$status" -eq 2 ]
		[ "${#stderr_lines[@]}" -eq 1 ]
		[[ "$stderr" == *"--ensemble"* ]]
	done
	run --separate-stderr hml -C exp train --ensemble 2 --from m1
	[ "$status" -eq 2 ]
	[ "$stderr" = "hml: error: train: --ensemble cannot be given with --from (a continued model is one)" ]
	# --guard ensemble on a model trained without --ensemble
	run --separate-stderr hml -C exp deploy m2 --guard ensemble
	[ "$status" -eq 3 ]
	[ "$stderr" = "hml: error: model 'm2': the model was trained without --ensemble: guard 'ensemble' needs the disagreement of its members (hml train --ensemble N)" ]
	for bad in ensemble:fa=0.9 ensemble:margin=1; do
		run --separate-stderr hml -C exp deploy m1 --guard "$bad"
		[ "$status" -eq 2 ]
		[[ "$stderr" == *"malformed guard '$bad'"* ]]
	done
	# a member file gone from the experiment
	mv exp/models/m1.e2.pt e2.pt
	run --separate-stderr hml -C exp deploy m1 --guard ensemble
	[ "$status" -eq 3 ]
	[[ "$stderr" == "hml: error: ensemble member 2 of model 'm1': "*"m1.e2.pt"*"is missing" ]]
	mv e2.pt exp/models/m1.e2.pt
	cmp before.json exp/manifest.json
	# too few rows to hold out a calibration
	hml -q -C small collect binomial-api --args '--options 150 --seed {seed}' >/dev/null
	run --separate-stderr hml -q -C small train --ensemble 2 --epochs 1
	[ "$status" -eq 3 ]
	[ "$stderr" = "hml: error: 150 rows are too few for an ensemble: it holds out every 10th row for its calibration and needs at least 20 of them" ]
	[ "$(json small/manifest.json 'len(d["models"])')" = 0 ]
}

@test "a member corrupt at run time: a warning and the original code, an error under HML_ON_ERROR=fail" {
	hml -q -C exp deploy m1 --guard ensemble >/dev/null
	g="$PWD/exp/models/m1.guard-ensemble-fa-0.01.json"
	echo garbage > exp/models/m1.e1.pt
	run --separate-stderr env HML_MODE_BINOMIAL=infer HML_MODEL_BINOMIAL="$PWD/exp/models/m1.pt" \
		HML_GUARD_BINOMIAL="$g" HML_PROFILE=prof.json "$API" --options 64 --quiet
	assert_success
	[[ "$stderr" == *"ensemble member 1: cannot open model '$PWD/exp/models/m1.e1.pt'"*"running the original code"* ]]
	[ "$(json prof.json 'd["regions"][0]["model_calls"] == 0 and d["regions"][0]["original_calls"] == 1')" = True ]
	run --separate-stderr env HML_MODE_BINOMIAL=infer HML_MODEL_BINOMIAL="$PWD/exp/models/m1.pt" \
		HML_GUARD_BINOMIAL="$g" HML_ON_ERROR=fail "$API" --options 64 --quiet
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"ensemble member 1: cannot open model"* ]]
}
