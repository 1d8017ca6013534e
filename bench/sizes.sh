# bench/sizes.sh - sourced by bench/apps.sh and bench/field_arms.sh (so by
# bench/rollout.sh and bench/residual.sh): the one definition of the
# applications' benchmark sizes, so that a size changed here changes every
# script that runs it.
#
#   bench_sizes APP SIZE
#     SIZE: test   the small sizes the tests use (each workflow.json's own
#                  collect and evaluate arguments, smaller for the three
#                  row applications, whose own are their benchmark sizes)
#           bigger heat 64^2 at k 8, miniWeather 80 x 40 cells (between
#                  the two; the other applications: their test sizes)
#           bench  benchmark (paper-like) sizes, following REFERENCE.md:
#                  binomial 16384 options of a 1024-step tree (4 runs
#                  collected: 65536 rows, which its 64x64 MLP needs for a
#                  QoI RMSE under 0.01), bonds
#                  65536, miniBUDE a bm2-sized protein (these three: the
#                  workflow's own), heat 128^2, miniWeather 200 x 100
#                  cells, the particle filter 128 x 128 frames, 10 of
#                  them, 512 particles
#   sets src_app (the application whose lines bench/annotation.sh counts),
#   runs (hml collect --runs), cargs (collect --args), eargs (evaluate
#   --args) and arch (hml train --arch); an empty value keeps the
#   workflow's own.
# shellcheck disable=SC2034 # the variables are for the scripts that source this
bench_sizes() {
	src_app="$1" runs="" cargs="" eargs="" arch=""
	case "$1:$2" in
	binomial:test|binomial:bigger)
		cargs="--options 4096 --seed {seed}" eargs="--options 4096 --seed 42" ;;
	bonds:test|bonds:bigger)
		cargs="--bonds 8192 --seed {seed}" eargs="--bonds 8192 --seed 42" ;;
	minibude:test|minibude:bigger)
		cargs="--poses 2048 --protein 938 --batch 256 --seed {seed}"
		eargs="--poses 1024 --protein 938 --batch 256 --seed 42" ;;
	heat:bigger)
		cargs="--n 64 --steps 128 --k 8 --seed {seed}"
		eargs="--n 64 --steps 128 --k 8 --seed 42" ;;
	miniweather:bigger)
		cargs="--nx 80 --nz 40 --steps 200 --k 10 --seed {seed}"
		eargs="--nx 80 --nz 40 --steps 200 --k 10 --seed 0" ;;
	binomial:bench)
		runs=4 ;;
	heat:bench)
		runs=4 cargs="--n 128 --steps 256 --k 8 --seed {seed}"
		eargs="--n 128 --steps 256 --k 8 --seed 42" ;;
	heat-rows:bench)
		runs=1 cargs="--n 128 --steps 4 --region rows --seed {seed}"
		eargs="--n 128 --steps 256 --region rows --seed 42" ;;
	miniweather:bench)
		runs=4 cargs="--nx 200 --nz 100 --steps 400 --k 20 --seed {seed}"
		eargs="--nx 200 --nz 100 --steps 200 --k 20 --warm 100 --seed 0" ;;
	particlefilter:bench)
		# 4 runs of 96 videos: 384 rows of 10 x 128 x 128 (~500 MB of
		# float64); the workflow's default with one heatmap per frame
		# (10, where the workflow's test size has 8 frames).
		runs=4 cargs="--size 128 --frames 10 --videos 96 --seed {seed} --label truth"
		eargs="--size 128 --frames 10 --videos 96 --seed 1000"
		arch="cnnvec:10:relu:kernel=1:pool=1:head=0:spatial" ;;
	esac
	case "$1" in
	heat-rows) src_app=heat ;;
	esac
}
