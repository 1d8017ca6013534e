#!/bin/sh
# bench/annotation.sh - what hml costs each bundled application in lines:
# the program its directive build compiles (workflows/APP/APP.c, built by
# hml cc, with every other source of the folder but APP_api.c: the shared
# physics APP_physics.c and its header) against the same program written
# against the C API (APP_api.c with the same shared sources), where there
# is one.
#
#   bench/annotation.sh [APP ...]      one row per application; for one
#                                      over the goal, its hml lines and
#                                      the "Annotation:" paragraph of its
#                                      APP.c, which says why they remain
#   bench/annotation.sh --app APP      "hml_lines total_lines" of APP's
#                                      directive build (bench/apps.sh)
#   bench/annotation.sh --count FILE   "hml_lines total_lines" of one source
#   bench/annotation.sh --count-api FILE...  the same for a C API or
#                                      Fortran program (its #ifndef
#                                      HML_BASELINE blocks)
#
# Lines are counted without blank lines and comments, over all the files
# of the program. The lines that belong to hml: in the directive program,
# the #pragma approx and #pragma hml lines (with their continuation lines),
# every #include of an hml header, every line that names the hml API
# outside strings and comments (hml_..., HML_...), and every line marked
# with a /* hml: */ comment (code written only for hml, such as a variable
# a functor names); in the C API program, the lines inside its
# #ifndef HML_BASELINE blocks (what the program without hml leaves out).
# A Fortran application (workflows/APP/*.F90, no APP.c: heat-fortran) is
# written against the module hml and counted as a C API program: the
# lines inside its #ifndef HML_BASELINE blocks, of all its .F90 files,
# without blank lines and ! comments.
# The goal is HPAC-ML's: at most 2% of the program's lines.
set -eu

GOAL=2

# count MODE FILE...: "hml_lines total_lines" of the files together; MODE
# directives (the rules of the directive program) or api.
count() {
	mode=$1
	shift
	awk -v mode="$mode" '
	FNR == 1 { cont = 0; depth = 0 }
	{
		l = $0
		if (cont) { n++; total++; cont = (l ~ /\\$/); if (list) hit(); next }
		if (l ~ /^[ \t]*$/ || l ~ /^[ \t]*(\/\*|\*|\/\/)/) next
		if (FILENAME ~ /\.F90$/ && l ~ /^[ \t]*!/) next
		total++
		if (mode == "directives") {
			code = l
			gsub(/"([^"\\]|\\.)*"/, "\"\"", code)
			if (code ~ /\/\* hml:/) { n++; if (list) hit(); next }
			sub(/\/\*.*/, "", code)
			if (l ~ /^[ \t]*#[ \t]*pragma[ \t]+(approx|hml)([ \t]|$)/) {
				n++
				cont = (l ~ /\\$/)
				if (list) hit()
			} else if (code ~ /^[ \t]*#[ \t]*include[ \t]*<hml\// ||
			           code ~ /(^|[^A-Za-z0-9_])(hml|HML)_[A-Za-z0-9_]/) {
				n++
				if (list) hit()
			}
			next
		}
		if (l ~ /^#ifndef HML_BASELINE/) { depth++; hml[depth] = 1; next }
		if (l ~ /^#if/) { depth++; hml[depth] = 0; next }
		if (l ~ /^#else/) { if (hml[depth]) hml[depth] = 2; next }
		if (l ~ /^#endif/) { depth--; next }
		for (d = 1; d <= depth; d++) if (hml[d] == 1) { n++; break }
	}
	function hit(f) {
		f = FILENAME
		sub(/.*\//, "", f)
		printf "    %s:%d: %s\n", f, FNR, $0
	}
	END { if (!list) print n + 0, total + 0 }' list="${LIST:-0}" "$@"
}

# sources APP FORM: the files of APP's program in FORM (directives or api).
sources() {
	d="$src/workflows/$1"
	for f in "$d"/*.c "$d"/*.h; do
		[ -f "$f" ] || continue
		case "$f" in
		"$d/$1_api.c") [ "$2" = directives ] && continue ;;
		"$d/$1.c") [ "$2" = api ] && [ -f "$d/$1_api.c" ] && continue ;;
		esac
		echo "$f"
	done
}

src=$(cd "$(dirname "$0")/.." && pwd)
case "${1:-}" in
--count)
	count directives "$2"
	exit 0 ;;
--count-api)
	shift
	count api "$@"
	exit 0 ;;
--app)
	count directives $(sources "$2" directives)
	exit 0 ;;
esac

APPS="binomial bonds minibude heat heat-fortran miniweather particlefilter"
[ $# -gt 0 ] && APPS="$*"
printf '%-15s %-12s %5s %6s %7s   %-22s %s\n' app form "hml" lines share "C API form" files
over=""
for app in $APPS; do
	f="$src/workflows/$app/$app.c"
	if [ ! -f "$f" ] && ls "$src/workflows/$app/"*.F90 >/dev/null 2>&1; then
		set -- $(count api "$src/workflows/$app/"*.F90)
		share=$(awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", 100 * a / b }')
		printf '%-15s %-12s %5d %6d %6s%%   %-22s %s\n' "$app" "Fortran API" "$1" "$2" "$share" "-" \
			"$(cd "$src/workflows/$app" && echo *.F90)"
		continue
	fi
	[ -f "$f" ] || { echo "annotation.sh: no application '$app'" >&2; exit 2; }
	form=directives
	grep -Eq '^[[:space:]]*#[[:space:]]*pragma[[:space:]]+(approx|hml)' "$f" || form="C API"
	set -- $(count directives $(sources "$app" directives))
	api="-"
	if [ -f "$src/workflows/$app/${app}_api.c" ]; then
		api=$(count api $(sources "$app" api) |
		      awk '{ printf "%d of %d, %.1f%%", $1, $2, 100 * $1 / $2 }')
	fi
	files=$(sources "$app" directives | sed 's|.*/||' | tr '\n' ' ')
	share=$(awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", 100 * a / b }')
	printf '%-15s %-12s %5d %6d %6s%%   %-22s %s\n' "$app" "$form" "$1" "$2" "$share" "$api" "$files"
	awk -v a="$1" -v b="$2" -v g="$GOAL" 'BEGIN { exit !(100 * a > g * b) }' && over="$over $app"
done
for app in $over; do
	echo "$app: over the goal of $GOAL%; its hml lines:"
	LIST=1 count directives $(sources "$app" directives)
	# why: the paragraph "Annotation: ..." of the source's head comment
	awk '/^ \* Annotation:/ { on = 1 } on && (/^ \*$/ || /^ \*\//) { exit } on { sub(/^ \* ?/, "  "); print }' \
		"$src/workflows/$app/$app.c"
done
exit 0
