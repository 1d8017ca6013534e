#!/usr/bin/env bats
# hml translate: the translation of directives, and one-line errors with
# file:line:column for malformed ones (exit 3).

load helpers

setup() { common_setup; }

@test "a file without directives is printed unchanged" {
	printf '#include <stdio.h>\nint main(void) { return 0; }\n' > plain.c
	run --separate-stderr hml translate plain.c
	assert_success
	[ "$output" = "$(cat plain.c)" ]
}

@test "HPAC-ML directives become runtime calls with #line back to the user's lines" {
	run --separate-stderr hml translate "$HML_SOURCE_DIR/tests/directive/hpac-toy.c"
	assert_success
	assert_output --partial 'hml__dir_ck(hml_dir_begin(&hml__site, ("toy"), "infer"'
	assert_output --partial '"[i, 0:3] = ([i], [i], [i])", "hml__0:hml__1"'
	assert_output --regexp '#line 19 ".*hpac-toy.c"'
	run --separate-stderr hml --json translate -o out.c "$HML_SOURCE_DIR/tests/directive/hpac-toy.c"
	assert_success
	echo "$output" > t.json
	[ "$(json t.json 'd["directives"]')" = 4 ]
	# the calls are libhml's (hml/directive.h): the file carries no copy of them
	grep -q '#include <hml/directive.h>' out.c
	grep -q hml_dir_begin out.c
	run grep -c hml_region_open out.c
	[ "$output" = 0 ]
}

@test "over(i) derives the functors from the loop's subscripts" {
	run --separate-stderr hml translate "$HML_SOURCE_DIR/tests/directive/hml-over.c"
	assert_success
	assert_output --partial '"[i, 0:3] = ([i], [i+1], [i])"'
	assert_output --partial '"[0:hml__0] = ([0:hml__0])"'
}

@test "malformed directives: one line with file:line:column and the token, exit 3" {
	printf 'int main(void) {\n#pragma approx ml(infer) in(a) outt(b)\n;\n}\n' > e1.c
	run --separate-stderr hml translate e1.c
	[ "$status" -eq 3 ]
	[ "$stderr" = "hml: error: e1.c:2:32: unknown clause: 'outt'" ]
	printf 'int main(void) {\n#pragma approx ml(guess) in(a) out(b)\n;\n}\n' > e2.c
	run --separate-stderr hml translate e2.c
	[ "$status" -eq 3 ]
	[ "$stderr" = "hml: error: e2.c:2:19: unknown ml mode (infer, offline, predicated): 'guess'" ]
	printf 'void f(double *S, double *p, int n) {\n  int i;\n#pragma hml ml in(S) out(p) over(i)\n  for (i = 0; i < n; i++) p[i] = S[2*i];\n}\n' > e3.c
	run --separate-stderr hml translate e3.c
	[ "$status" -eq 3 ]
	[ "$stderr" = "hml: error: e3.c:4:34: over() cannot derive a functor from this subscript (it takes [I], [I+C] or [I-C]): 'S[2*i]'" ]
	printf 'int f(double *a, double *b) {\n#pragma approx ml(infer) in(a[0:1]) out(b[0:1])\n { return 1; }\n}\n' > e4.c
	run --separate-stderr hml translate e4.c
	[ "$status" -eq 3 ]
	assert_equal "$stderr" "hml: error: e4.c:3:4: a region's statement cannot leave the region early: 'return'"
	printf '#pragma approx declare tensor(t: f(a[0:n]))\nint x;\n#pragma approx ml(infer) in(t) out(b)\n;\n' > e5.c
	run --separate-stderr hml translate e5.c
	[ "$status" -eq 3 ]
	assert_equal "$stderr" "hml: error: e5.c:1:34: no tensor_functor of this name is declared: 'f'"
	printf '#pragma approx ml(infer) in(a) out(b)\n' > e6.c
	run --separate-stderr hml translate e6.c
	[ "$status" -eq 3 ]
	assert_output ''
	[[ "$stderr" == "hml: error: e6.c:2:1: expected a statement after the directive"* ]]
}

@test "a missing or unreadable input is an error" {
	run --separate-stderr hml translate nothing.c
	[ "$status" -ne 0 ]
	[[ "$stderr" == "hml: error: "*"nothing.c"* ]]
}
