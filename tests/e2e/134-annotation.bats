#!/usr/bin/env bats
# bench/annotation.sh, which counts the lines each bundled application
# spends on hml: what it counts as hml, and that an application's count
# covers every file its directive build compiles (the shared physics too).

load helpers

setup() { common_setup; }

ANN() { sh "$HML_SOURCE_DIR/bench/annotation.sh" "$@"; }

@test "annotation: directives with continuation lines, hml calls, hml includes and hml: marks count; comments and blank lines do not" {
	cat > a.c <<'C'
/* a comment: hml_region_open #pragma hml */
#include <stdio.h>
#include <hml/hml.h>

#pragma approx declare tensor_functor(f: [i, 0:1] = ([i]))
int main(void)
{
	double x[4] = { 0 };
	long n = 4; /* hml: a symbol the functor names */
#pragma hml ml in(f(x[0:n])) \
	out(f(x[0:n])) label("a")
	x[0] = 1;
	printf("hml_mode_name\n");
	// hml_region_find
	puts(hml_mode_name(hml_region_mode(hml_region_find("a"))));
	return 0;
}
C
	run ANN --count a.c
	assert_success
	# hml: the include, the functor, the marked line, the directive and its
	# continuation, the mode line; of 14 lines that are not blank or comments.
	assert_output "6 14"
}

@test "annotation: a Fortran program counts the lines inside #ifndef HML_BASELINE, without ! comments and blank lines" {
	cat > a.F90 <<'F'
! a comment: use hml
program a
#ifndef HML_BASELINE
  use hml
  ! not counted: a comment inside the block
#endif
  implicit none
  integer :: x = 1
#ifndef HML_BASELINE
  type(hml_region) :: r
  if (hml_region_open(r, "a") < 0) &
    stop 1
#else
  x = 2
#endif
#if 1
  print *, x
#endif
end program a
F
	run ANN --count-api a.F90
	assert_success
	# hml: use, the declaration, the open and its continuation (the
	# #else branch is the baseline's); of the 17 lines that are not blank
	# or ! comments (preprocessor lines included).
	assert_output "4 17"
	run ANN heat-fortran
	assert_success
	assert_line --regexp "^heat-fortran +Fortran API +[0-9]+ +[0-9]+ .* heat.F90$"
}

@test "annotation: every application's row counts all the files of its directive build" {
	run ANN
	assert_success
	for app in binomial bonds minibude heat miniweather particlefilter; do
		assert_line --regexp "^$app +directives +[0-9]+ +[0-9]+ "
	done
	for app in bonds minibude heat miniweather particlefilter; do
		assert_line --regexp "^$app .* $app.c ${app}_physics.c ${app}_physics.h $"
		# The C API form's files are not the directive program's.
		refute_line --regexp "^$app .*${app}_api.c"
	done
	# An application over the 2% goal has its hml lines listed, and the
	# "Annotation:" paragraph of its source that says why.
	for app in $(printf '%s\n' "${lines[@]}" | awk '$2 == "directives" && 100 * $3 > 2 * $4 { print $1 }'); do
		assert_line "$app: over the goal of 2%; its hml lines:"
		assert_line --regexp "^    $app\.c:[0-9]+: "
		assert_line --regexp "^  Annotation: "
	done
	# --app is the row's count, all files together.
	set -- $(ANN --app bonds)
	total=0
	for f in bonds.c bonds_physics.c bonds_physics.h; do
		set -- $(ANN --count "$HML_SOURCE_DIR/workflows/bonds/$f") "$@"
		total=$((total + $2))
	done
	run ANN --app bonds
	assert_output --regexp " $total\$"
}

@test "annotation: an unknown application is one line and exit 2" {
	run --separate-stderr ANN nosuchapp
	[ "$status" -eq 2 ]
	[ "$stderr" = "annotation.sh: no application 'nosuchapp'" ]
}
