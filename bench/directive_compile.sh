#!/bin/sh
# bench/directive_compile.sh - what a translated file costs the compiler:
# `cc -O2 -c` of a workflow translated by this tree's `hml translate`
# against the same file translated by the translator of git revision BASE
# (the baseline, built here from BASE's lib/directive and lib/core/error.c
# with a small driver). BASE defaults to the commit before the directive
# helpers moved into libhml (hml/directive.h), whose translations carried
# ~350 lines of helpers. Prints the lines of each translation, the best of
# N wall times of each compile (interleaved), and the ratio new/base. Then
# what the move costs at run time: bench/rows_dir.c (a directive in an
# OpenMP loop body, one row call per iteration) translated by both and
# built with hml cc, ns per row (best of 5 repeats of ROWS rows, one
# thread) in off and collect mode, and the ratio new/base.
#
# usage: bench/directive_compile.sh [BUILD_DIR] [SOURCE] [N] [BASE] [ROWS]
set -eu
build=$(realpath "${1:-build}")
top=$(cd "$(dirname "$0")/.." && pwd)
src=$(realpath "${2:-$top/workflows/binomial/binomial.c}")
n=${3:-5}
base=${4:-4099b5c}
rows=${5:-200000}
cc=${CC:-cc}
hml=$build/cmd/hml
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# The baseline translator.
mkdir -p "$scratch/old"
(cd "$top" && git archive "$base" lib/directive lib/core/error.c lib/core/error.h \
	runtime/include/hml/error.h runtime/include/hml/common.h) | tar -x -C "$scratch/old"
cat > "$scratch/old/main.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include "directive/directive.h"
int main(int argc, char **argv)
{
	static char src[1 << 22];
	FILE *f = fopen(argv[1], "r");
	size_t len = f ? fread(src, 1, sizeof(src) - 1, f) : 0;
	char *out = NULL;
	int count = 0;
	(void)argc;
	src[len] = 0;
	if (!f || hml__directive_translate(&out, &count, src, argv[1]) < 0 || !out)
		return 1;
	fputs(out, stdout);
	return 0;
}
C
(cd "$scratch/old" && $cc -O1 -w -Ilib -Iruntime/include -o translate_old main.c \
	lib/directive/*.c lib/core/error.c)

# The same source, the same #line paths, translated by both.
cp "$src" "$scratch/app.c"
(cd "$scratch" && ./old/translate_old app.c > base.c && "$hml" translate app.c > new.c)
incs="-I$(dirname "$src") -I$top/runtime/include -I$build/include"   # version.h: generated

best() { sort -n | head -1; }
t() {   # wall seconds of one compile
	s=$(date +%s.%N)
	$cc -O2 -fopenmp $incs -c -o "$scratch/o.o" "$scratch/$1"
	e=$(date +%s.%N)
	echo "$e - $s" | bc
}
: > "$scratch/tb"; : > "$scratch/tn"
for i in $(seq "$n"); do
	t base.c >> "$scratch/tb"
	t new.c >> "$scratch/tn"
done
tb=$(best < "$scratch/tb") tn=$(best < "$scratch/tn")
printf 'source %s, %s -O2 -c, best of %d\n' "$(basename "$src")" "$cc" "$n"
printf '%-10s %8s %10s\n' translation lines seconds
printf '%-10s %8d %10.3f\n' "base" "$(wc -l < "$scratch/base.c")" "$tb"
printf '%-10s %8d %10.3f\n' "new" "$(wc -l < "$scratch/new.c")" "$tn"
printf 'ratio new/base: %.3f\n' "$(echo "$tn / $tb" | bc -l)"

# The row calls at run time.
cp "$top/bench/rows_dir.c" "$scratch/rows_dir.c"
(cd "$scratch" && ./old/translate_old rows_dir.c > rows_base.c && "$hml" translate rows_dir.c > rows_new.c)
for v in base new; do
	"$hml" cc "$cc" -O2 -fopenmp -o "$scratch/rows_$v" "$scratch/rows_$v.c"
done
printf '\nbench/rows_dir.c, %d rows, 1 thread, ns per row (best of 5)\n' "$rows"
printf '%-8s %10s %10s %8s\n' mode base new ratio
for mode in off collect; do
	rb=$(cd "$scratch" && OMP_NUM_THREADS=1 HML_MODE=$mode HML_DB="$scratch/b.h5" ./rows_base "$rows" 5)
	rn=$(cd "$scratch" && OMP_NUM_THREADS=1 HML_MODE=$mode HML_DB="$scratch/n.h5" ./rows_new "$rows" 5)
	printf '%-8s %10s %10s %8.3f\n' "$mode" "$rb" "$rn" "$(echo "$rn / $rb" | bc -l)"
done
