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
#   field_sizes APP SIZE  cargs and eargs, the collect and evaluate
#                         arguments for SIZE: test (the workflow's own,
#                         both empty), bigger (heat 64^2 at k 8,
#                         miniWeather 80 x 40 cells) or bench (bench/apps.sh's
#                         benchmark sizes: heat 128^2, miniWeather 200 x 100)
#   field_collect APP     collects APP into the experiment $tmp/APP
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

field_sizes() {
	cargs="" eargs=""
	case "$1:$2" in
	heat:bigger)
		cargs="--n 64 --steps 128 --k 8 --seed {seed}"
		eargs="--n 64 --steps 128 --k 8 --seed 42" ;;
	miniweather:bigger)
		cargs="--nx 80 --nz 40 --steps 200 --k 10 --seed {seed}"
		eargs="--nx 80 --nz 40 --steps 200 --k 10 --seed 0" ;;
	heat:bench)
		cargs="--n 128 --steps 256 --k 8 --seed {seed}"
		eargs="--n 128 --steps 256 --k 8 --seed 42" ;;
	miniweather:bench)
		cargs="--nx 200 --nz 100 --steps 400 --k 20 --seed {seed}"
		eargs="--nx 200 --nz 100 --steps 200 --k 20 --warm 100 --seed 0" ;;
	esac
}

field_collect() {
	set -- -C "$tmp/$1" -q collect "$1"
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
