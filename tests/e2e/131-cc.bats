#!/usr/bin/env bats
# hml cc: a compiler wrapper that translates directives (hml-cc(1)).

load helpers

setup() { common_setup; }

@test "a file without directives compiles to the same object with and without hml cc" {
	printf '#include <stdio.h>\nint main(void) { printf("hi\\n"); return 0; }\n' > plain.c
	gcc -O2 -c plain.c -o a.o
	run hml cc gcc -O2 -c plain.c -o b.o
	assert_success
	cmp a.o b.o
	run hml cc gcc -O2 -c plain.c
	assert_success
	cmp a.o plain.o
}

@test "a compiler error in an annotated file is reported at the user's line" {
	cp "$HML_SOURCE_DIR/tests/directive/hpac-toy.c" toy.c
	sed -i 's/y\[i\] = 2 \* a\[i\]/y[i] = 2 * undeclared_name[i]/' toy.c
	run hml cc gcc -c toy.c
	[ "$status" -ne 0 ]
	assert_output --partial "toy.c:21:"
	assert_output --partial "undeclared_name"
	[ ! -e toy.o ]
}

@test "a malformed directive stops hml cc before the compiler, exit 3" {
	printf 'int main(void) {\n#pragma approx ml(infer) in(a) outt(b)\n;\n}\n' > e1.c
	run --separate-stderr hml cc gcc -c e1.c
	[ "$status" -eq 3 ]
	[ "$stderr" = "hml: error: e1.c:2:32: unknown clause: 'outt'" ]
	[ ! -e e1.o ]
	run --separate-stderr hml cc
	[ "$status" -eq 2 ]
}

@test "a program annotated only with HPAC-ML directives builds, runs and collects through hml" {
	cp "$HML_SOURCE_DIR/tests/directive/hpac-toy.c" toy.c
	run hml cc gcc -O2 -Wall -Wextra -Werror -o toy toy.c
	assert_success
	# ml(infer) without any model runs the original code
	run ./toy 100
	assert_success
	assert_output "sum 182.335000"
	HML_MODE=collect HML_DB="$WORK/d.h5" run ./toy 100
	assert_success
	[ -s d.h5 ]
	# HPAC-ML's environment: HPAC_DB_FILE names the collection file
	HML_MODE=collect HPAC_DB_FILE="$WORK/e.h5" run ./toy 50
	assert_success
	[ -s e.h5 ]
	# separate compilation and linking, and C++
	run hml cc gcc -c toy.c
	assert_success
	run hml cc gcc -o toy2 toy.o
	assert_success
	./toy2 10
}

@test "#pragma hml over(i), a region per loop iteration and qoi build and run" {
	cp "$HML_SOURCE_DIR/tests/directive/hml-over.c" over.c
	run hml cc gcc -Wall -o over over.c
	assert_success
	HML_DB="$WORK/o.h5" HML_QOI="$WORK/q.h5" run ./over
	assert_success
	assert_output "32.000000 13.000000"
	[ -s o.h5 ]
	[ -s q.h5 ]
}
