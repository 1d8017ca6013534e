# bench/field_arms.sh - sourced by bench/residual.sh and bench/rollout.sh:
# the regions that advance a field in place (miniWeather, heat) trained in
# arms that differ in one choice, on the same data with the same seed, each
# compiled to C and evaluated end to end.
#
#   . "$(dirname "$0")/field_arms.sh" [BUILD_DIR] [REPEAT]
#     after the script has shifted its own flags; REPEAT is hml evaluate's
#     runs per arm (default 3).
# Sets build, repeat, src, hml, py, tmp (removed at exit), OMP_NUM_THREADS
# and HML_THREADS (default: every cpu), and defines:
#   bench_sizes APP SIZE  runs, cargs and eargs, the collect runs and the
#                         collect and evaluate arguments for SIZE (test,
#                         bigger or bench: bench/sizes.sh, the sizes
#                         bench/apps.sh runs)
#   field_collect APP     collects APP (bench_sizes' runs and cargs) into the
#                         experiment $tmp/APP
#   field_arm APP N ARGS  hml train ARGS (+ $HML_BENCH_TRAIN, seed 1), deploy
#                         --force --target c, hml evaluate; their --json in
#                         $tmp/APP-N-train.json and $tmp/APP-N-eval.json
# bench/field_arms.py reads those files back into the table's figures.

build=$(cd "${1:-build}" && pwd)
repeat=${2:-3}
src=$(cd "$(dirname "$0")/.." && pwd)
hml="$build/cmd/hml"
py=${PYTHON:-/usr/bin/python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-$(nproc)}"
export HML_THREADS="${HML_THREADS:-$OMP_NUM_THREADS}"

# shellcheck source=bench/sizes.sh
. "$src/bench/sizes.sh"

field_collect() {
	set -- -C "$tmp/$1" -q collect "$1"
	[ -n "$runs" ] && set -- "$@" --runs "$runs"
	[ -n "$cargs" ] && set -- "$@" --args "$cargs"
	"$hml" "$@" > /dev/null
}

field_arm() {
	_app=$1 _n=$2 _id=""
	shift 2
	# shellcheck disable=SC2086
	"$hml" -C "$tmp/$_app" -q --json train --threads "$HML_THREADS" --seed 1 "$@" \
		${HML_BENCH_TRAIN:-} > "$tmp/$_app-$_n-train.json"
	_id=$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["model"]["id"])' \
	      "$tmp/$_app-$_n-train.json")
	"$hml" -C "$tmp/$_app" -q deploy --force --target c "$_id" > /dev/null
	set -- -C "$tmp/$_app" -q --json evaluate --repeat "$repeat"
	[ -n "$eargs" ] && set -- "$@" --args "$eargs"
	"$hml" "$@" > "$tmp/$_app-$_n-eval.json"
}
