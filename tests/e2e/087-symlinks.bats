#!/usr/bin/env bats
# An experiment is untrusted input (#26, rule 1): nothing hml writes,
# creates, truncates, appends to or locks inside it is reached through a
# symbolic link (lib/core/beneath.h). A link planted where hml writes is
# refused with exit 3 and its name; the file it points at is untouched.

load search-helpers

# A file outside the experiment that nothing may change.
outside() {
	printf 'precious\n' > "$WORK/outside.txt"
}

outside_unchanged() {
	[ "$(cat "$WORK/outside.txt")" = precious ]
}

# A search of one worker whose trial 0 hangs, stopped by SIGTERM while
# trial 0 runs: resuming it runs trial 0 again.
stopped_search() {
	HML_SEARCH_TEST_HANG=0 "$HML" -q -C exp search --budget 2 --workers 1 $QUICK \
		> /dev/null 2>&1 &
	pid=$!
	for i in $(seq 600); do
		[ -f exp/search/s1/trials.jsonl ] && grep -q '"trial":0' exp/search/s1/trials.jsonl && break
		sleep 0.1
	done
	kill -TERM "$pid"
	wait "$pid" || true
	[ "$(json exp/manifest.json 'd["searches"][0]["status"]')" = interrupted ]
}

@test "search --resume: a trial's model planted as a link is refused, not written through" {
	stopped_search
	outside
	rm -f exp/search/s1/t0.pt
	ln -s "$WORK/outside.txt" exp/search/s1/t0.pt
	run --separate-stderr hml -q -C exp search --resume $QUICK
	assert_failure 3
	[ "$stderr" = "hml: error: 'search/s1/t0.pt' in experiment 'exp' is a symbolic link; hml does not write through links" ]
	outside_unchanged
	[ -L exp/search/s1/t0.pt ]
	# nothing registered: no model in the manifest, no link among the models
	[ "$(json exp/manifest.json 'len(d["models"])')" = 0 ]
	[ -z "$(find exp/models -type l)" ]
}

@test "search --resume: a history planted as a link is refused, not appended to" {
	stopped_search
	cp exp/search/s1/trials.jsonl "$WORK/trials.jsonl"
	before="$(cat "$WORK/trials.jsonl")"
	ln -sf "$WORK/trials.jsonl" exp/search/s1/trials.jsonl
	run --separate-stderr hml -q -C exp search --resume $QUICK
	assert_failure 3
	[ "$stderr" = "hml: error: 'search/s1/trials.jsonl' in experiment 'exp' is a symbolic link; hml does not write through links" ]
	[ "$(cat "$WORK/trials.jsonl")" = "$before" ]
}

@test "search: a search folder planted as a link is refused" {
	mkdir "$WORK/away"
	rm -rf exp/search
	ln -s "$WORK/away" exp/search
	run --separate-stderr hml -q -C exp search --budget 2 $QUICK
	assert_failure 3
	[ "$stderr" = "hml: error: 'search' in experiment 'exp' is a symbolic link; hml does not write through links" ]
	[ -z "$(ls -A "$WORK/away")" ]
}

@test "collect: a manifest planted as a link is refused, not replaced" {
	outside
	cp exp/manifest.json "$WORK/manifest.json"
	ln -sf "$WORK/manifest.json" exp/manifest.json
	before="$(cat "$WORK/manifest.json")"
	run --separate-stderr hml -q -C exp collect binomial --args '--options 256 --seed {seed}'
	assert_failure 3
	[ "${stderr_lines[0]}" = "hml: error: 'manifest.json' in experiment 'exp' is a symbolic link; hml does not write through links" ]
	[[ "${stderr_lines[1]}" == "hml: error: the collected data is kept in 'exp/data/.tmp-"*".h5'" ]]
	[ -L exp/manifest.json ]
	[ "$(cat "$WORK/manifest.json")" = "$before" ]
}

@test "collect: a lock file planted as a link is refused, not truncated" {
	outside
	rm -f exp/.lock
	ln -s "$WORK/outside.txt" exp/.lock
	run --separate-stderr hml -q -C exp collect binomial --args '--options 256 --seed {seed}'
	assert_failure 3
	[ "${stderr_lines[0]}" = "hml: error: '.lock' in experiment 'exp' is a symbolic link; hml does not write through links" ]
	outside_unchanged
}

@test "collect: a data directory planted as a link is refused before the application runs" {
	mkdir "$WORK/away"
	mv exp/data exp/data.real
	ln -s "$WORK/away" exp/data
	run --separate-stderr hml -q -C exp collect binomial --args '--options 256 --seed {seed}'
	assert_failure 3
	[ "$stderr" = "hml: error: 'data' in experiment 'exp' is a symbolic link; hml does not write through links" ]
	[ -z "$(ls -A "$WORK/away")" ]
}

@test "train: a models directory planted as a link is refused before training" {
	mkdir "$WORK/away"
	rmdir exp/models
	ln -s "$WORK/away" exp/models
	run --separate-stderr hml -q -C exp train --epochs 1
	assert_failure 3
	[ "$stderr" = "hml: error: 'models' in experiment 'exp' is a symbolic link; hml does not write through links" ]
	[ -z "$(ls -A "$WORK/away")" ]
	[ "$(json exp/manifest.json 'len(d["models"])')" = 0 ]
}

@test "collect: a FIFO planted at the lock file is refused, not blocked on" {
	rm -f exp/.lock
	mkfifo exp/.lock
	run --separate-stderr hml -q -C exp collect binomial --args '--options 256 --seed {seed}'
	assert_failure 3
	[ "${stderr_lines[0]}" = "hml: error: '.lock' in experiment 'exp' is not a regular file; hml does not write to it" ]
	[ -p exp/.lock ]
}

@test "evaluate: an eval directory planted as a link is refused" {
	hml -q -C exp train --epochs 1 > /dev/null
	hml -q -C exp deploy m1 > /dev/null
	mkdir "$WORK/away"
	rm -rf exp/eval
	ln -s "$WORK/away" exp/eval
	run --separate-stderr hml -q -C exp evaluate --repeat 1
	assert_failure 3
	[ "$stderr" = "hml: error: 'eval' in experiment 'exp' is a symbolic link; hml does not write through links" ]
	[ -z "$(ls -A "$WORK/away")" ]
}

# The manifest's promise (hml-manifest(5)): no command reads, hashes or
# deploys a file that is not the experiment's. A model file replaced by a
# link to an identical copy outside passes the SHA-256 check; the link is
# what is refused.
@test "deploy: a model file replaced by a link to a copy outside is refused, not read" {
	hml -q -C exp train --epochs 1 > /dev/null
	cp exp/models/m1.pt "$WORK/m1.pt"
	ln -sf "$WORK/m1.pt" exp/models/m1.pt
	run --separate-stderr hml -q -C exp deploy m1
	assert_failure 3
	[ "$stderr" = "hml: error: 'models/m1.pt' in experiment 'exp' is a symbolic link; hml does not read through links" ]
	[ "$(json exp/manifest.json 'len(d["deployments"])')" = 0 ]
	# a data set's file: train refuses it the same way
	cp exp/data/d1.h5 "$WORK/d1.h5"
	ln -sf "$WORK/d1.h5" exp/data/d1.h5
	run --separate-stderr hml -q -C exp train --epochs 1
	assert_failure 3
	[ "$stderr" = "hml: error: 'data/d1.h5' in experiment 'exp' is a symbolic link; hml does not read through links" ]
}

@test "the experiment directory itself may be a link: the user named it" {
	mv exp exp.real
	ln -s exp.real exp
	run --separate-stderr hml -q -C exp train --epochs 1
	assert_success
	[ -f exp.real/models/m1.pt ]
}
