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

@test "-MD, -MMD, -MF and -M: the dependencies name the user's source, not the translated copy" {
	cp "$HML_SOURCE_DIR/tests/directive/hpac-toy.c" toy.c
	cp toy.c "my toy.c"
	mkdir obj
	run hml cc gcc -MD -c toy.c
	assert_success
	grep -q '^toy.o: toy.c ' toy.d
	run hml cc gcc -MMD -MT obj/toy.o -MF obj/deps.d -c toy.c -o obj/toy.o
	assert_success
	grep -q '^obj/toy.o: toy.c ' obj/deps.d
	run hml cc gcc -MMD -c "$WORK/toy.c" -o obj/t2.o
	assert_success
	grep -q "^obj/t2.o: $WORK/toy.c " obj/t2.d
	run hml cc gcc -MMD -c "my toy.c"
	assert_success
	grep -q '^my\\ toy.o: my\\ toy.c ' "my toy.d"
	run --separate-stderr hml cc gcc -MM toy.c
	assert_success
	assert_output --regexp '^toy.o: toy.c '
	! grep -q 'hml-cc-' toy.d obj/deps.d obj/t2.d "my toy.d"
	[[ "$output" != *hml-cc-* ]]
	# the header the translation includes is a dependency too
	grep -q 'hml/hml.h' obj/deps.d
}

@test "CMake: hml cc as CMAKE_C_COMPILER_LAUNCHER (and the linker's), with make's dependencies" {
	command -v cmake >/dev/null || skip "no cmake"
	mkdir proj
	cp "$HML_SOURCE_DIR/tests/directive/hpac-toy.c" proj/toy.c
	cat > proj/CMakeLists.txt <<'CM'
cmake_minimum_required(VERSION 3.21)
project(toy C)
add_executable(toy toy.c)
CM
	run cmake -S proj -B b -DCMAKE_BUILD_TYPE=Release \
		"-DCMAKE_C_COMPILER_LAUNCHER=$HML;cc" "-DCMAKE_C_LINKER_LAUNCHER=$HML;cc"
	assert_success
	run cmake --build b
	assert_success
	run b/toy 100
	assert_success
	assert_output "sum 182.335000"
	HML_MODE=collect HML_DB="$WORK/d.h5" run b/toy 64
	assert_success
	[ "$(h5 d.h5 'f["toy"]["input"].shape')" = "(64, 3)" ]
	# the object's dependencies name the source, so make rebuilds on its change
	dep=$(find b -name 'toy.c.o.d')
	grep -q "$WORK/proj/toy.c" "$dep"
	! grep -q 'hml-cc-' "$dep"
	sed -i 's/2 \* a\[i\]/3 * a[i]/' proj/toy.c
	run cmake --build b
	assert_success
	run b/toy 100
	assert_output "sum 231.835000"
}

@test "C++: hml cc g++ compiles a .cpp source with directives, which runs and collects" {
	cat > toy.cpp <<'CPP'
#include <cstdio>
#include <vector>

int main(int argc, char **argv)
{
	int n = argc > 1 ? std::atoi(argv[1]) : 100;
	std::vector<double> a(n), y(n);
	double *pa = a.data(), *py = y.data(), sum = 0;

	for (int i = 0; i < n; i++)
		a[i] = static_cast<double>(i) / n;
#pragma approx declare tensor_functor(f: [i, 0:1] = ([i]))
#pragma approx ml(infer) in(f(pa[0:n])) out(f(py[0:n])) label("cxx")
	for (int i = 0; i < n; i++)
		py[i] = 3 * pa[i];
	for (double v : y)
		sum += v;
	std::printf("sum %.3f\n", sum);
	return 0;
}
CPP
	sed -i 's/#include <vector>/#include <vector>\n#include <cstdlib>/' toy.cpp
	run hml cc g++ -O2 -Wall -Wextra -Werror -o toyxx toy.cpp
	assert_success
	run ./toyxx 100
	assert_success
	assert_output "sum 148.500"
	HML_MODE=collect HML_DB="$WORK/x.h5" run ./toyxx 10
	assert_success
	[ "$(h5 x.h5 'np.round(f["cxx"]["output"][:].ravel()[:2], 6).tolist()')" = "[0.0, 0.3]" ]
}
