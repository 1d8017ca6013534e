#!/bin/sh
# bench/mpi.sh - MPI collection (issue #29): per-rank collection cost at 3
# ranks against a single rank, and reading the 3-rank data set's view (HDF5
# virtual data sets over the ranks' files) against one file of the same
# rows. Both baselines are measured in this run.
#
#   collection: bench_collect_rank (CALLS calls of ROWS rows, collect mode)
#     under `mpirun -n 1` and `mpirun -n 3`; each rank times itself; the
#     best of REPEAT runs of the mean over ranks, in CPU time (user + system:
#     what collecting costs a rank) and in wall time.  Goal: ratio <= 1.05.
#     (On fewer than 3 free cores the wall ratio measures the ranks'
#     contention for them too; the CPU ratio does not.)
#   read: `hml collect` of a 3-rank workflow of that program (the view)
#     and of a 1-rank one with 3 x CALLS calls (one file, the same rows),
#     each loaded by the training reader (bench_vds_read, best of 5).
#     Goal: ratio >= 0.80.
#
# usage: bench/mpi.sh [BUILD_DIR] [ROWS] [CALLS] [REPEAT]
set -eu
build=$(realpath "${1:-build}") rows=${2:-16384} calls=${3:-32} repeat=${4:-5}
command -v mpirun >/dev/null || { echo "bench/mpi.sh: mpirun is not installed" >&2; exit 1; }
app=$build/bench/bench_collect_rank
[ -x "$app" ] || { echo "no $app: build the bench targets" >&2; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
       OMPI_MCA_rmaps_base_oversubscribe=1 OMP_NUM_THREADS=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# per_rank N FIELD: the best over REPEAT runs of the mean over N ranks of
# FIELD (2: wall seconds, 6: CPU seconds).
per_rank() {
	best=
	for r in $(seq "$repeat"); do
		rm -f "$tmp"/c*.h5
		t=$(HML_MODE=collect HML_DB="$tmp/c.h5" mpirun -n "$1" "$app" "$rows" "$calls" |
			awk -v f="$2" '{ s += $f; n++ } END { printf "%.6f", s / n }')
		best=$(awk -v a="${best:-1e300}" -v b="$t" 'BEGIN { print (b < a ? b : a) }')
	done
	echo "$best"
}
printf '%-34s %10s %10s %8s\n' measure baseline mpi ratio
for f in 6 2; do
	one=$(per_rank 1 $f)
	three=$(per_rank 3 $f)
	awk -v a="$one" -v b="$three" -v k=$([ $f = 6 ] && echo cpu || echo wall) 'BEGIN {
		printf "%-34s %10.4f %10.4f %8.3f\n", "collect " k " s/rank (1 vs 3 ranks)", a, b, b / a }'
done

# The read: one data set of 3 ranks, one of 1 rank with 3x the calls.
mkdir -p "$tmp/wf"
cat > "$tmp/wf/workflow.json" <<JSON
{"schema_version": 1, "name": "mpibench", "program": "$app",
 "launcher": ["mpirun", "-n", "{ranks}"], "ranks": 3,
 "collect": {"args": ["$rows", "$calls"]},
 "evaluate": {"args": ["$rows", "$calls"]},
 "regions": [{"label": "bench", "model": {"family": "mlp"}}],
 "qoi": {"dataset": "y"}}
JSON
"$build/cmd/hml" -q -C "$tmp/exp" collect "$tmp/wf/workflow.json" >/dev/null 2>&1
"$build/cmd/hml" -q -C "$tmp/exp" collect "$tmp/wf/workflow.json" --ranks 1 \
	--args "$rows $((3 * calls))" >/dev/null
"$build/bench/bench_vds_read" "$tmp/exp/data/d2.h5" "$tmp/exp/data/d1.h5" bench 5 |
	awk '/^VDS read speed/ { r = $NF } /^single file/ { s = $(NF-1) } /^view/ { v = $(NF-1) }
	     END { gsub(/\(/, "", s); gsub(/\(/, "", v)
	           printf "%-34s %10s %10s %8.3f\n", "read rows/s (one file vs view)", s, v, r }'
