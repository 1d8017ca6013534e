#!/usr/bin/env bats
# Files that are not what hml expects: a manifest replaced by a FIFO, by an
# endless device or by a huge file costs no run, blocks nothing and is left
# as it was; the experiment is refused with one line and exit 3.

load helpers

setup() { common_setup; }

# fresh_experiment: an experiment with a valid, empty manifest.
fresh_experiment() {
	mkdir -p exp/data exp/models exp/eval
	printf '{"schema_version": 1}\n' > exp/manifest.json
}

@test "a manifest that is a FIFO is refused at once, by show and by collect" {
	fresh_experiment
	rm exp/manifest.json
	mkfifo exp/manifest.json
	run timeout 20 "$HML" -C exp show
	[ "$status" -eq 3 ]
	assert_output "hml: error: cannot read 'exp/manifest.json': not a regular file"
	run timeout 60 "$HML" -C exp collect binomial -- --options 64
	[ "$status" -eq 3 ]
	assert_output --partial "not a regular file"
	[ -p exp/manifest.json ]
	[ -z "$(ls exp/data)" ]   # the application never ran
}

@test "a manifest linked to an endless device or too large costs no run" {
	fresh_experiment
	ln -sf /dev/zero exp/manifest.json
	run timeout 20 "$HML" -C exp show
	[ "$status" -eq 3 ]
	assert_output --partial "not a regular file"
	rm exp/manifest.json
	truncate -s 100M exp/manifest.json
	run timeout 60 "$HML" -C exp collect binomial -- --options 64
	[ "$status" -eq 3 ]
	assert_output --partial "manifest.json': it is larger than 67108864 bytes"
	[ "$(stat -c %s exp/manifest.json)" -eq 104857600 ]
	[ -z "$(ls exp/data)" ]
}

@test "a workflow.json that is a FIFO is refused without blocking" {
	mkdir wf
	mkfifo wf/workflow.json
	run timeout 20 "$HML" -C exp collect wf/workflow.json
	[ "$status" -eq 3 ]
	assert_output --partial "not a regular file"
}

@test "a manifest with one id twice is corrupt and left alone" {
	fresh_experiment
	printf '{"schema_version": 1, "models": [{"id": "m1"}, {"id": "m1"}]}\n' > exp/manifest.json
	cp exp/manifest.json before.json
	run hml -C exp show
	[ "$status" -eq 3 ]
	assert_output --partial "is corrupt: models[1].id 'm1' is used twice"
	cmp before.json exp/manifest.json
}

@test "an application argument that is not UTF-8 is recorded without loss" {
	# A workflow whose program drops its first argument and runs binomial.
	mkdir wf
	printf '#!/bin/sh\nshift\nexec "%s" "$@"\n' "$BINOMIAL" > wf/wrap
	chmod +x wf/wrap
	wrap_workflow wf
	run --separate-stderr hml -C exp --json collect wf/workflow.json -- $'caf\xe9' \
		--options 64 --batch 64 --seed 3
	assert_success
	"$PY" - <<'EOF2'
import json
m = json.load(open("exp/manifest.json"))
assert len(m["datasets"]) == 1
assert m["datasets"][0]["runs"][0]["argv"][1] == {"hex": "636166e9"}, m["datasets"][0]["runs"][0]["argv"]
EOF2
}

@test "a manifest whose record names a file outside the experiment is refused by every command" {
	fresh_experiment
	printf '{"schema_version": 1, "models": [{"id": "m1", "region": "binomial", "files": {"model": "../outside.pt"}}]}\n' > exp/manifest.json
	cp exp/manifest.json before.json
	for cmd in show "deploy m1" "evaluate m1" train "collect binomial"; do
		run timeout 60 "$HML" -C exp $cmd
		[ "$status" -eq 3 ]
		assert_output "hml: error: manifest 'exp/manifest.json' is corrupt: models[0].files.model '../outside.pt' is not a path inside the experiment"
	done
	cmp before.json exp/manifest.json
	[ -z "$(ls exp/data)" ]
}

@test "a record whose file is missing or changed is refused by every command that uses it" {
	hml -q -C exp collect binomial --args '--options 2048 --batch 512 --seed {seed}' >/dev/null
	hml -q -C exp train --epochs 1 --threads 1 --arch mlp:8 >/dev/null
	cp exp/manifest.json before.json
	mv exp/models/m1.pt m1.pt
	for cmd in "deploy m1" "evaluate m1" "deploy m1 --target c"; do
		run hml -C exp $cmd
		[ "$status" -eq 3 ]
		assert_output --regexp "^hml: error: (.*: )?model file '(.*/)?exp/models/m1.pt' of model 'm1' is missing$"
	done
	printf 'x' >> m1.pt
	mv m1.pt exp/models/m1.pt
	for cmd in "deploy m1" "evaluate m1"; do
		run hml -C exp $cmd
		[ "$status" -eq 3 ]
		assert_output --regexp "model file '.*/exp/models/m1.pt' changed since it was registered \(SHA-256 differs\)$"
	done
	mv exp/data/d1.h5 d1.h5
	run hml -C exp train --epochs 1
	[ "$status" -eq 3 ]
	assert_output --regexp "data file '.*exp/data/d1.h5' of data set 'd1' is missing$"
	cmp before.json exp/manifest.json
}
