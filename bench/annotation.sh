#!/bin/sh
# bench/annotation.sh - what hml costs each bundled application in lines:
# its directive source (workflows/APP/APP.c, built by hml cc) against the
# same program written against the C API (APP_api.c), where there is one.
#
#   bench/annotation.sh [APP ...]      one row per application
#   bench/annotation.sh --count FILE   "hml_lines total_lines" of one source
#
# Lines are counted without blank lines and comments. The lines that
# belong to hml: in a source with directives, the #pragma approx and
# #pragma hml lines (with their continuation lines), every line that names
# the hml API outside strings and comments (hml_..., HML_...), and every
# line marked with a /* hml: */ comment (code written only for hml, such
# as a variable a functor names); in a source written against
# the API, the lines inside its #ifndef HML_BASELINE blocks (what the
# program without hml leaves out). The goal is HPAC-ML's: at most 2% of
# the program's lines.
set -eu

count() {
	awk '
	BEGIN { directives = 0 }
	{ lines[NR] = $0 }
	/^[ \t]*#[ \t]*pragma[ \t]+(approx|hml)([ \t]|$)/ { directives = 1 }
	END {
		for (i = 1; i <= NR; i++) {
			l = lines[i]
			if (cont) { n++; total++; cont = (l ~ /\\$/); continue }
			if (l ~ /^[ \t]*$/ || l ~ /^[ \t]*(\/\*|\*|\/\/)/) continue
			total++
			if (directives) {
				code = l
				gsub(/"([^"\\]|\\.)*"/, "\"\"", code)
				if (code ~ /\/\* hml:/) { n++; continue }
				sub(/\/\*.*/, "", code)
				if (l ~ /^[ \t]*#[ \t]*pragma[ \t]+(approx|hml)([ \t]|$)/) {
					n++
					cont = (l ~ /\\$/)
				} else if (code ~ /(^|[^A-Za-z0-9_])(hml|HML)_[A-Za-z0-9_]/) {
					n++
				}
				continue
			}
			if (l ~ /^#ifndef HML_BASELINE/) { depth++; hml[depth] = 1; continue }
			if (l ~ /^#if/) { depth++; hml[depth] = 0; continue }
			if (l ~ /^#else/) { if (hml[depth]) hml[depth] = 2; continue }
			if (l ~ /^#endif/) { depth--; continue }
			for (d = 1; d <= depth; d++) if (hml[d] == 1) { n++; break }
		}
		print n + 0, total + 0
	}' "$1"
}

if [ "${1:-}" = --count ]; then
	count "$2"
	exit 0
fi
src=$(cd "$(dirname "$0")/.." && pwd)
APPS="binomial bonds minibude heat miniweather particlefilter"
[ $# -gt 0 ] && APPS="$*"
printf '%-15s %-28s %5s %6s %7s   %s\n' app source "hml" lines share "C API (APP_api.c)"
for app in $APPS; do
	f="$src/workflows/$app/$app.c"
	set -- $(count "$f")
	form=directives
	grep -Eq '^[[:space:]]*#[[:space:]]*pragma[[:space:]]+(approx|hml)' "$f" || form="C API"
	api="-"
	if [ -f "$src/workflows/$app/${app}_api.c" ]; then
		api=$(count "$src/workflows/$app/${app}_api.c" |
		      awk '{ printf "%d of %d, %.1f%%", $1, $2, 100 * $1 / $2 }')
	fi
	printf '%-15s %-28s %5d %6d %6.1f%%   %s\n' "$app" "$app.c ($form)" "$1" "$2" \
	       "$(awk -v a="$1" -v b="$2" 'BEGIN { print 100 * a / b }')" "$api"
done
