#!/usr/bin/env bats
# The hml command itself: dispatch, help, versions, exit codes, and that
# every command has its --help, its man page and its Bats test.

load helpers

setup() { common_setup; }

commands() {
	"$HML" --json --version | "$PY" -c 'import json,sys; print("\n".join(json.load(sys.stdin)["commands"]))'
}

@test "--version names hml, libtorch, HDF5 and jansson" {
	run hml --version
	assert_success
	assert_line --regexp '^hml [0-9]+\.[0-9]+\.[0-9]+$'
	assert_line --regexp '^libtorch [0-9]+\.[0-9]+'
	assert_line --regexp '^hdf5 1\.'
	assert_line --regexp '^jansson 2\.'
	run --separate-stderr hml --json --version
	assert_success
	echo "$output" > v.json
	[ "$(json v.json 'd["schema_version"]')" = 1 ]
	[ "$(json v.json 'd["libtorch"] != "unknown"')" = True ]
}

@test "hml links no libtorch, HDF5, LAPACKE, NLopt, OpenMP or MPI: --version and --help map none" {
	# What a command needs of them it loads as a plugin, when it needs it.
	run ldd "$HML"
	assert_success
	# the libraries' names and paths only: a load address such as
	# 0x00007f36688c1000 holds "c10"
	output=$(printf '%s\n' "$output" | sed 's/ (0x[0-9a-f]*)$//')
	refute_output --regexp 'torch|c10|hdf5|lapack|blas|nlopt|gomp|mpi'
	LD_DEBUG=files "$HML" --version > /dev/null 2> ld.log
	refute_heavy ld.log
	for c in $(commands); do
		LD_DEBUG=files "$HML" "$c" --help > /dev/null 2> ld.log
		refute_heavy ld.log
		refute_mapped 'file=.*libhml-' ld.log
	done
}

@test "--help lists every command; hml alone is a usage error" {
	run hml --help
	assert_success
	for c in $(commands); do assert_output --partial "  $c "; done
	run hml
	[ "$status" -eq 2 ]
	assert_output --partial "usage: hml"
}

@test "every command has --help, help CMD, a man page and a Bats test" {
	for c in $(commands); do
		run hml "$c" --help
		assert_success
		assert_output --partial "usage: hml $c"
		run hml help "$c"
		assert_success
		assert_output --partial "usage: hml $c"
		page="$HML_SOURCE_DIR/man/hml-$c.1"
		[ -f "$page" ] || { echo "no man page for $c"; false; }
		MANWIDTH=80 run man --warnings -l "$page"
		assert_success
		[ "$c" = ls ] || ls "$HML_SOURCE_DIR"/tests/e2e/*-"$c".bats >/dev/null ||
			{ echo "no Bats test for $c"; false; }
	done
	for p in hml.1 hml-workflow.5 hml-manifest.5 hml-runtime.3 hml-fortran.3; do
		[ -f "$HML_SOURCE_DIR/man/$p" ]
	done
}

@test "every option a command's --help lists is in its man page (global ones in hml(1))" {
	for c in $(commands); do
		[ "$c" = ls ] && continue   # show's alias: hml-show(1)
		for o in $("$HML" "$c" --help | grep -oE '^ +(-[A-Za-z], )?--[a-z][a-z0-9-]*' |
		           grep -oE -- '--[a-z][a-z0-9-]*'); do
			p=${o//-/\\-}   # groff writes an option's hyphens as \-
			grep -qF -- "$p" "$HML_SOURCE_DIR/man/hml-$c.1" || grep -qF -- "$p" "$HML_SOURCE_DIR/man/hml.1" ||
				{ echo "hml $c: option $o is not in hml-$c(1)"; false; }
		done
	done
}

@test "unknown commands and options are usage errors (exit 2)" {
	run hml frobnicate
	[ "$status" -eq 2 ]
	assert_output "hml: error: unknown command 'frobnicate' (see 'hml --help')"
	run hml --frob show
	[ "$status" -eq 2 ]
	assert_output --partial "unknown option '--frob'"
	run hml show --frob
	[ "$status" -eq 2 ]
	assert_output --partial "show: unknown option '--frob'"
	run hml help frobnicate
	[ "$status" -eq 2 ]
	run hml train --epochs
	[ "$status" -eq 2 ]
	assert_output --partial "needs a value"
	run hml train --epochs ten
	[ "$status" -eq 2 ]
	assert_output --partial "needs an integer, not 'ten'"
	run hml -C
	[ "$status" -eq 2 ]
}

@test "every numeric option of every command refuses a value out of its range (exit 2)" {
	# No value stands for an option's default (evaluate --repeat -1 and
	# import --batch -1 did, while 0 was refused; #26): each option's range
	# is checked where every option is parsed (cmd/common.c).
	local opts="collect:runs collect:seed collect:run-timeout collect:rate collect:reservoir collect:ranks
		train:epochs train:batch train:lr train:weight-decay train:patience train:clip
		train:seed train:threads train:val-fraction train:test-fraction train:max-seconds
		train:infer-batch train:ensemble deploy:max-error deploy:max-qoi-error deploy:max-latency
		deploy:rows-per-run deploy:run-timeout evaluate:repeat evaluate:run-timeout evaluate:ranks
		evaluate:k evaluate:interleave
		import:batch import:threads search:budget search:workers search:threads search:seed
		search:max-epochs search:max-latency search:max-params search:max-error
		search:trial-timeout search:qoi-check search:run-timeout"
	for co in $opts; do
		run --separate-stderr hml -C nowhere "${co%%:*}" "--${co#*:}" -1
		[ "$status" -eq 2 ] || { echo "$co: exit $status: $stderr"; return 1; }
		[[ "$stderr" == *"option '--${co#*:}' must be "*", not -1" ]] ||
			{ echo "$co: $stderr"; return 1; }
	done
	# Every numeric option of every --help is in the list above.
	for c in collect train deploy evaluate import search; do
		for o in $("$HML" "$c" --help | grep -oE -- '--[a-z-]+ (N|S|E|L|X|K|SECONDS)\b' | cut -c3- | cut -d' ' -f1); do
			[[ " $(echo $opts) " == *" $c:$o "* ]] || { echo "$c --$o is not checked here"; return 1; }
		done
	done
	run --separate-stderr hml -C nowhere search --workers 65
	assert_equal "$stderr" "hml: error: search: option '--workers' must be from 1 to 64, not 65"
	run --separate-stderr hml -C nowhere train --val-fraction 1.5
	assert_equal "$stderr" "hml: error: train: option '--val-fraction' must be more than 0 and at most 1, not 1.5"
	[ ! -e nowhere ]
}

@test "global options are accepted before and after the command name" {
	mkdir -p exp
	printf '{"schema_version": 1}\n' > exp/manifest.json
	for args in "--dir exp show" "--dir=exp show" "-C exp show" "-Cexp show" \
	            "show --dir exp" "show --dir=exp" "show -C exp" "show -Cexp" \
	            "--json -C exp show" "-C exp show --json" "-q --dir exp --json show"; do
		run --separate-stderr hml $args
		[ "$status" -eq 0 ] || { echo "hml $args: exit $status: $stderr"; false; }
	done
	run --separate-stderr hml --json --dir exp show
	assert_success
	echo "$output" > s.json
	[ "$(json s.json 'd["schema_version"]')" = 1 ]
	# The last -C wins, wherever it stands; a missing experiment is exit 3.
	run hml --dir nowhere show --dir exp
	assert_success
	run hml --dir exp show --dir nowhere
	[ "$status" -eq 3 ]
	assert_output --partial "no experiment at 'nowhere'"
	run hml --dir
	[ "$status" -eq 2 ]
	assert_output "hml: error: option '--dir' needs a value"
	run hml --json=1 show
	[ "$status" -eq 2 ]
	assert_output "hml: error: option '--json' takes no value"
}

@test "a failed write of the results is an error, not a silent success" {
	run sh -c "'$HML' --version > /dev/full"
	[ "$status" -eq 1 ]
	assert_output --partial "cannot write the output"
}
