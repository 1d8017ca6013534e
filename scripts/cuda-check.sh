#!/bin/sh
# shellcheck disable=SC2016,SC2012
# scripts/cuda-check.sh - build hml with -DHML_WITH_CUDA=ON against the
# libtorch of the PyTorch wheel on a GPU machine, then check that TorchScript
# inference runs on the GPU and agrees with the CPU.
#
#   OUT=/some/dir sh scripts/cuda-check.sh        (from the repository root)
#
# The machine needs: a CUDA toolkit (nvcc), gcc/g++, CMake, python3 with a
# CUDA torch, h5py and numpy. Everything else hml builds against (HDF5,
# jansson, OpenSSL, NLopt, LAPACKE, OpenBLAS, pkg-config, Open MPI) comes
# from .devbundle/deps.tar.xz, a Debian 12 sysroot made by
# scripts/cuda-bundle.sh and extracted to /tmp/sysroot. Open MPI runs from
# there relocated (OPAL_PREFIX); when 3 ranks of a test program run, hml is
# built with MPI and binomial runs under mpirun -n 3, the ranks sharing the GPU.
#
# Writes to $OUT: summary.txt, check.log (every step), configure.log,
# build.log, results.json. Exits non-zero only when hml does not configure or
# build; the functional steps report FAIL in summary.txt and go on.
#
# Knobs for a trial run without a GPU (the defaults are for the GPU machine):
#   CHECK_TORCH=0        configure with HML_WITH_TORCH=OFF (no libtorch needed)
#   CHECK_STOP=configure|build   stop after that step
#   CHECK_JOBS=N         build parallelism (default 16)
#   CHECK_TARGETS="a b"  build only these targets
#   CHECK_BUILD=DIR      build directory (default /tmp/b)
#   CHECK_BUDGET=S       seconds the whole script may take (default 470)
#   CHECK_PREBUILT=DIR   skip configure and build, use DIR's build
#   CHECK_NICE=1         run the build under nice -n 19
#   CHECK_BUILD_TIMEOUT=S  limit of the build step (default 330)
#   CHECK_COLLECT=N      options collected for training (default 16384)
#   CHECK_SIZES="N M"    options per inference run (default "4096 65536")
#   CHECK_CTEST=0        skip the unit tests at the end
#   CHECK_RESERVOIR=N    only bench/reservoir.sh at N options after the build
#   CHECK_APPS="a b"     only bench/apps.sh at benchmark size after the build,
#                        one run per application in the order given (each
#                        within what is left of the budget), training on
#                        the GPU and the table's GPU column (HML_BENCH_DEVICE
#                        =cuda); the tables go to apps.txt, the kept --json
#                        outputs to apps-keep.tar.gz
#   CHECK_APPS_REPEAT=N  bench/apps.sh's repeats (default 3)
#   CHECK_APPS_DEVICE=D  the GPU column's HML_DEVICE (default cuda; cpu for
#                        a trial without a GPU, with HML_BENCH_TRAIN set)
#   CHECK_APPS_QUICK=1   bench/apps.sh --quick (test sizes: a trial run)
#   CHECK_MPI=0          no Open MPI: hml built without it, no 3-rank runs
#   CHECK_MW_SIZE="..."  miniweather-mpi's arguments (default --nx 240 --nz 80
#                        --steps 200 --k 10: 80 columns per rank)
#   CHECK_MW_TRAIN_S=S   seconds of each miniweather-mpi training (default 30)
set -u

SRCDIR=$(pwd)
OUT=${OUT:-/tmp/cuda-check-out}
SR=/tmp/sysroot
B=${CHECK_BUILD:-/tmp/b}
T=/tmp/cuda-check.tmp
EXP=$T/exp
JOBS=${CHECK_JOBS:-16}
BUDGET=${CHECK_BUDGET:-470}
TORCH=${CHECK_TORCH:-1}
STOP=${CHECK_STOP:-}
COLLECT=${CHECK_COLLECT:-16384}
SIZES=${CHECK_SIZES:-4096 65536}
MW_SIZE=${CHECK_MW_SIZE:---nx 240 --nz 80 --steps 200 --k 10}
MW_TRAIN_S=${CHECK_MW_TRAIN_S:-30}
BIG=${SIZES##* }
LOG=$OUT/check.log
SUM=$OUT/summary.txt
T0=$(date +%s)
BUILD_FAILED=0

mkdir -p "$OUT"
rm -rf "$T"
mkdir -p "$T"
: >"$LOG"
: >"$SUM"

log() { printf '%s\n' "$*" | tee -a "$LOG"; }
sum() { printf '%s\n' "$*" >>"$SUM"; log "SUMMARY: $*"; }
elapsed() { echo $(($(date +%s) - T0)); }
step() { log ""; log "=== $* === (t+$(elapsed)s)"; }
# lim WANT: WANT seconds, or what is left of the budget less a reserve
# (at least 1: `timeout 0` would mean no limit; 1 means out of time)
lim() {
	l=$((BUDGET - $(elapsed) - 10))
	[ "$1" -lt "$l" ] && l=$1
	[ "$l" -lt 1 ] && l=1
	echo "$l"
}
# runlog WANT CMD...: CMD under timeout, output to check.log and stdout; its rc
runlog() {
	t=$(lim "$1")
	shift
	if [ "$t" -le 1 ]; then
		log "(skipped, out of time: $*)"
		return 124
	fi
	{
		timeout -k 5 "$t" "$@" 2>&1
		echo "rc=$?" >"$T/rc"
	} | tee -a "$LOG"
	rc=$(sed -n 's/^rc=//p' "$T/rc")
	[ "$rc" = 0 ] || log "(exit $rc: $*)"
	return "$rc"
}
finish() {
	step "end"
	log "total $(elapsed)s"
	echo ""
	echo "===== summary.txt ====="
	cat "$SUM"
	exit "$1"
}

# --------------------------------------------------------------------------
step "machine"
runlog 20 nvidia-smi -L
runlog 20 nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used --format=csv
runlog 10 sh -c '. /etc/os-release 2>/dev/null; echo "os: $PRETTY_NAME"; echo "kernel: $(uname -r)"; echo "nproc: $(nproc)"; ldd --version | head -1'
runlog 10 sh -c 'for c in gcc g++ cc cmake ninja make python3 nvcc ncu bats; do printf "%-8s %s\n" "$c" "$(command -v $c || echo MISSING)"; done'
runlog 10 gcc --version
runlog 10 cmake --version
runlog 10 sh -c 'ls -d /usr/local/cuda* 2>/dev/null; nvcc --version 2>/dev/null | tail -2'
runlog 60 python3 -c '
import sys, torch
print("python", sys.version.split()[0], sys.executable)
print("torch", torch.__version__, "cuda", torch.version.cuda, "cxx11abi", torch.compiled_with_cxx11_abi())
print("cmake_prefix_path", torch.utils.cmake_prefix_path)
print("cuda available", torch.cuda.is_available(), torch.cuda.device_count())
if torch.cuda.is_available(): print("device", torch.cuda.get_device_name(0))
import h5py, numpy; print("h5py", h5py.__version__, "numpy", numpy.__version__)
'
gpu=$(nvidia-smi -L 2>/dev/null | head -1)
sum "machine: ${gpu:-no GPU seen by nvidia-smi}"
sum "gcc: $(gcc -dumpfullversion 2>/dev/null) cmake: $(cmake --version 2>/dev/null | head -1 | awk '{print $3}') torch: $(python3 -c 'import torch;print(torch.__version__)' 2>/dev/null)"

# --------------------------------------------------------------------------
step "sysroot"
if [ ! -f "$SRCDIR/.devbundle/deps.tar.xz" ]; then
	sum "FAIL: .devbundle/deps.tar.xz missing (carry [\".devbundle\"])"
	finish 1
fi
rm -rf "$SR"
if ! runlog 60 tar -C /tmp -xJf "$SRCDIR/.devbundle/deps.tar.xz"; then
	sum "FAIL: cannot extract the sysroot"
	finish 1
fi
# The sysroot's runtime libraries the machine lacks, by soname, in one
# directory for LD_LIBRARY_PATH: those it has stay the machine's, so that
# its own programs (python3, nvcc) keep their own libcrypto and the like.
mkdir -p "$SR/ld"
ldconfig -p 2>/dev/null | awk 'NR > 1 {print $1}' | sort -u >"$T/have"
for f in "$SR"/usr/lib/x86_64-linux-gnu/lib*.so.* "$SR"/usr/lib/x86_64-linux-gnu/openblas-openmp/lib*.so.* "$SR"/rt/lib*.so.*; do
	n=${f##*/}
	case $n in
	*.so.[0-9] | *.so.[0-9][0-9] | *.so.[0-9][0-9][0-9]) ;;
	*) continue ;;
	esac
	[ -e "$SR/ld/$n" ] && continue
	grep -qx "$n" "$T/have" || ln -s "$f" "$SR/ld/$n"
done
log "linked from the sysroot (missing here): $(ls "$SR/ld" | tr '\n' ' ')"
export LD_LIBRARY_PATH="$SR/ld${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export CPATH="$SR/usr/include/x86_64-linux-gnu${CPATH:+:$CPATH}"
export LIBRARY_PATH="$SR/usr/lib/x86_64-linux-gnu${LIBRARY_PATH:+:$LIBRARY_PATH}"
export PKG_CONFIG="$SR/bin/pkg-config"
export PKG_CONFIG_LIBDIR="$SR/usr/lib/x86_64-linux-gnu/pkgconfig"
export HDF5_ROOT="$SR/usr/lib/x86_64-linux-gnu/hdf5/serial"
runlog 10 "$PKG_CONFIG" --modversion jansson nlopt lapacke openblas hdf5 libcrypto

# --------------------------------------------------------------------------
step "Open MPI from the sysroot (relocated by OPAL_PREFIX)"
MPI_OK=0
if [ -x "$SR/usr/bin/orterun" ] && [ "${CHECK_MPI:-1}" = 1 ]; then
	export OPAL_PREFIX="$SR/usr" PMIX_INSTALL_PREFIX="$SR/usr/lib/x86_64-linux-gnu/pmix2"
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
	# the machine's own tools first; mpicc and mpirun only from the sysroot
	PATH="$PATH:$SR/usr/bin"
	export PATH
	cat >"$T/hello_mpi.c" <<'EOC'
#include <mpi.h>
#include <stdio.h>
int main(int c, char **v)
{
	int r, n, s, t = 0;
	MPI_Init(&c, &v);
	MPI_Comm_rank(MPI_COMM_WORLD, &r);
	MPI_Comm_size(MPI_COMM_WORLD, &n);
	s = r;
	MPI_Allreduce(&s, &t, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	printf("rank %d of %d sum %d\n", r, n, t);
	MPI_Finalize();
	return 0;
}
EOC
	if runlog 60 "$SR/usr/bin/mpicc" -o "$T/hello_mpi" "$T/hello_mpi.c" &&
		runlog 60 mpirun -n 3 "$T/hello_mpi" && [ "$(grep -c 'of 3 sum 3' "$LOG")" -ge 3 ]; then
		MPI_OK=1
		sum "Open MPI (sysroot, OPAL_PREFIX): 3 ranks ran and reduced: OK"
	else
		sum "FAIL: Open MPI from the sysroot did not run 3 ranks; hml is built without MPI"
	fi
else
	log "(no Open MPI in the sysroot, or CHECK_MPI=0)"
fi
MPI_ON=OFF
[ "$MPI_OK" = 1 ] && MPI_ON=ON

# --------------------------------------------------------------------------
step "toolchain for CUDA"
TORCH_CMAKE=""
TORCH_LIB=""
RPL="$SR/ld:$SR/usr/lib/x86_64-linux-gnu:$SR/usr/lib/x86_64-linux-gnu/openblas-openmp"
if [ "$TORCH" = 1 ]; then
	TORCH_CMAKE=$(python3 -c 'import torch;print(torch.utils.cmake_prefix_path)' 2>/dev/null)
	TORCH_PY=$(python3 -c 'import torch,os;print(os.path.dirname(torch.__file__))' 2>/dev/null)
	TORCH_LIB="$TORCH_PY/lib"
	SITE=$(dirname "$TORCH_PY")
	if ! command -v nvcc >/dev/null 2>&1; then
		for d in /usr/local/cuda/bin /usr/local/cuda-*/bin "$SITE"/nvidia/cu*/bin "$SITE"/nvidia/cuda_nvcc/bin; do
			[ -x "$d/nvcc" ] && PATH="$d:$PATH" && break
		done
		export PATH
	fi
	NVCC=$(command -v nvcc || true)
	if [ -n "$NVCC" ]; then
		CUDA_HOME=$(cd "$(dirname "$(readlink -f "$NVCC")")/.." && pwd)
		export CUDA_HOME CUDA_PATH="$CUDA_HOME" CUDACXX="$NVCC" CUDAToolkit_ROOT="$CUDA_HOME"
		log "nvcc $NVCC, CUDA_HOME $CUDA_HOME"
	else
		log "no nvcc found: libtorch's CMake config will not find CUDA"
	fi
	# H100/H200: sm_90; saves libtorch's config detecting the GPU
	export TORCH_CUDA_ARCH_LIST="${TORCH_CUDA_ARCH_LIST:-9.0}"
	for d in "$SITE"/nvidia/*/lib "$SITE"/nvidia/cu*/lib; do
		[ -d "$d" ] && RPL="$RPL:$d"
	done
	RPL="$RPL:$TORCH_LIB"
	log "torch cmake prefix: $TORCH_CMAKE"
	ls "$TORCH_LIB" 2>&1 | tr '\n' ' ' | tee -a "$LOG"
	log ""
	grep -E 'TORCH_CUDA_LIBRARIES|CUDA_NVRTC_LIB|c10_cuda' "$TORCH_CMAKE/Torch/TorchConfig.cmake" 2>&1 | tee -a "$LOG"
fi

# libtorch's headers may demand C++20 (PyTorch >= 2.12/2.13 has
# "#error C++20 or later compatible compiler is required"); hml builds C++17.
CXXSTD=17
use_cxx20() { # build a copy of the tree whose CMakeLists.txt asks for C++20
	CXXSTD=20
	sum "NOTE: $1: building a copy of the tree with CMAKE_CXX_STANDARD 20 (hml's CMakeLists.txt sets 17)"
	rm -rf /tmp/src-cxx20
	mkdir -p /tmp/src-cxx20
	(cd "$SRCDIR" && tar --exclude=./.devbundle -cf - .) | (cd /tmp/src-cxx20 && tar -xf -)
	sed -i 's/set(CMAKE_CXX_STANDARD 17)/set(CMAKE_CXX_STANDARD 20)/' /tmp/src-cxx20/CMakeLists.txt
	grep -n 'CMAKE_CXX_STANDARD ' /tmp/src-cxx20/CMakeLists.txt | tee -a "$LOG"
	SRCDIR=/tmp/src-cxx20
}
if [ "$TORCH" = 1 ] && [ -n "$TORCH_LIB" ]; then
	hit=$(grep -rls --include='*.h' 'C++20 or later' "$TORCH_PY/include/ATen" "$TORCH_PY/include/c10" "$TORCH_PY/include/torch" 2>/dev/null | head -3 | tr '\n' ' ')
	if [ -n "$hit" ]; then
		use_cxx20 "libtorch headers require C++20 ($hit)"
	else
		log "libtorch headers: no C++20 #error found, building as C++17"
	fi
fi

# --------------------------------------------------------------------------
GEN="Unix Makefiles"
command -v ninja >/dev/null 2>&1 && GEN=Ninja
configure() { # configure TESTS(ON|OFF)
	tests=$1
	rm -rf "$B"
	if [ "$TORCH" = 1 ]; then
		set -- -DHML_WITH_TORCH=ON -DHML_WITH_CUDA=ON \
			"-DCMAKE_PREFIX_PATH=$TORCH_CMAKE;$SR/usr" "-DTorch_DIR=$TORCH_CMAKE/Torch"
		[ -n "${CUDA_HOME:-}" ] && set -- "$@" "-DCUDA_TOOLKIT_ROOT_DIR=$CUDA_HOME"
	else
		set -- -DHML_WITH_TORCH=OFF -DHML_WITH_CUDA=OFF "-DCMAKE_PREFIX_PATH=$SR/usr"
	fi
	timeout -k 5 "$(lim 200)" cmake -S "$SRCDIR" -B "$B" -G "$GEN" -DCMAKE_BUILD_TYPE=Release \
		-DHML_WITH_MPI="$MPI_ON" -DMPI_C_COMPILER="$SR/usr/bin/mpicc" -DHML_FUZZ=OFF -DHML_BUILD_TESTS="$tests" \
		-DCMAKE_POLICY_VERSION_MINIMUM=3.5 \
		-DPKG_CONFIG_EXECUTABLE="$SR/bin/pkg-config" \
		-DHDF5_ROOT="$HDF5_ROOT" -DHDF5_NO_FIND_PACKAGE_CONFIG_FILE=ON -DHDF5_PREFER_PARALLEL=OFF \
		-DOPENSSL_ROOT_DIR="$SR/usr" -DOPENSSL_USE_STATIC_LIBS=OFF \
		-DOPENSSL_INCLUDE_DIR="$SR/usr/include" \
		-DOPENSSL_CRYPTO_LIBRARY="$SR/usr/lib/x86_64-linux-gnu/libcrypto.so" \
		-DOPENSSL_SSL_LIBRARY="$SR/usr/lib/x86_64-linux-gnu/libssl.so" \
		-DHML_TEST_PYTHON="$(command -v python3)" -DHML_BATS="$(command -v bats || echo /bin/true)" \
		-DCMAKE_EXE_LINKER_FLAGS="-Wl,-rpath-link,$RPL" \
		-DCMAKE_SHARED_LINKER_FLAGS="-Wl,-rpath-link,$RPL" \
		-DCMAKE_MODULE_LINKER_FLAGS="-Wl,-rpath-link,$RPL" \
		"$@" >"$OUT/configure.log" 2>&1
}

configure_all() { # tests ON, else OFF; exits on failure
	step "configure (tests ON, C++$CXXSTD)"
	if configure ON; then
		sum "configure: OK (tests ON, C++$CXXSTD)"
	else
		log "configure with tests failed; the end of configure.log:"
		tail -30 "$OUT/configure.log" | tee -a "$LOG"
		mv "$OUT/configure.log" "$T/configure-tests.log"
		step "configure (tests OFF)"
		if configure OFF; then
			sum "configure: OK only with HML_BUILD_TESTS=OFF (with tests: $(grep -m1 -A2 'Error' "$T/configure-tests.log" | tr '\n' ' '))"
			{ echo "##### first try, HML_BUILD_TESTS=ON"; cat "$T/configure-tests.log"; } >>"$OUT/configure.log"
		else
			sum "FAIL: configure (see configure.log)"
			grep -n -B2 -A12 'CMake Error' "$OUT/configure.log" | head -60 | tee -a "$LOG"
			finish 1
		fi
	fi
	grep -E '^-- ( +[A-Za-z_0-9]+ +|PyTorch|Found|Caffe2|CUDA|Checking for)' "$OUT/configure.log" | tee -a "$LOG"
	# What the cache resolved: every external library should be a sysroot path.
	grep -E '^(HDF5_C_INCLUDE_DIR|HDF5_hdf5_LIBRARY_RELEASE|HDF5_C_LIBRARY_hdf5|OPENSSL_(CRYPTO_LIBRARY|INCLUDE_DIR)|pkgcfg_lib_[A-Z_]+_[a-z]+|PKG_CONFIG_EXECUTABLE|Torch_DIR|C10_CUDA_LIBRARY|CUDA_TOOLKIT_ROOT_DIR|CMAKE_CXX_COMPILER):' "$B/CMakeCache.txt" | tee -a "$LOG"
	outside=$(grep -E '^(HDF5_hdf5_LIBRARY_RELEASE|HDF5_C_LIBRARY_hdf5|OPENSSL_CRYPTO_LIBRARY|pkgcfg_lib_[A-Z_]+_[a-z]+):' "$B/CMakeCache.txt" | grep -v "=$SR/" | tr '\n' ' ')
	[ -n "$outside" ] && sum "WARNING: some libraries resolved outside the sysroot: $outside"
	return 0
}
build_all() { # the build; sets brc
	step "build (-j$JOBS, C++$CXXSTD)"
	NICE=""
	[ "${CHECK_NICE:-0}" = 1 ] && NICE="nice -n 19"
	set --
	for t in ${CHECK_TARGETS:-}; do set -- "$@" --target "$t"; done
	KEEP="-k 0"
	[ "$GEN" = Ninja ] || KEEP="-k"
	s=$(date +%s)
	# shellcheck disable=SC2086
	timeout -k 5 "$(lim "${CHECK_BUILD_TIMEOUT:-330}")" $NICE cmake --build "$B" -j "$JOBS" "$@" -- $KEEP >"$OUT/build.log" 2>&1
	brc=$?
	log "build exit $brc in $(($(date +%s) - s))s"
	if [ "$brc" != 0 ]; then
		log "first errors of build.log:"
		grep -n -E 'error|Error|undefined reference|FAILED' "$OUT/build.log" | head -40 | cut -c1-300 | tee -a "$LOG"
		log "end of build.log:"
		tail -25 "$OUT/build.log" | cut -c1-300 | tee -a "$LOG"
	else
		sum "build: OK in $(($(date +%s) - s))s (C++$CXXSTD)"
	fi
	grep -c -i 'warning:' "$OUT/build.log" | sed 's/^/compiler warnings: /' | tee -a "$LOG"
}

if [ -n "${CHECK_PREBUILT:-}" ]; then
	B=$CHECK_PREBUILT
	log "using the prebuilt tree $B (no configure, no build)"
else
	configure_all
	[ "$STOP" = configure ] && finish 0
	build_all
	# Headers that need C++20 without saying so fail as C++17 with errors
	# such as "'requires' only available with '-std=c++20'": once more as C++20.
	if [ "$brc" != 0 ] && [ "$TORCH" = 1 ] && [ "$CXXSTD" = 17 ] &&
		grep -q -E 'c\+\+2[0a]|C\+\+20|requires.* only available|concepts' "$OUT/build.log" && [ "$(lim 300)" -gt 150 ]; then
		sum "NOTE: the C++17 build failed with C++20 errors: $(grep -m2 -E 'c\+\+2[0a]|C\+\+20|requires.* only available|concepts' "$OUT/build.log" | cut -c1-200 | tr '\n' ' ')"
		mv "$OUT/build.log" "$OUT/build-cxx17.log"
		use_cxx20 "C++17 build failed on libtorch headers"
		configure_all
		build_all
	fi
	if [ "$brc" != 0 ]; then
		BUILD_FAILED=1
		sum "FAIL: build (exit $brc; see build.log): $(grep -m3 -E 'error:|undefined reference' "$OUT/build.log" | cut -c1-200 | tr '\n' ' ')"
	fi
	[ "$STOP" = build ] && finish "$BUILD_FAILED"
fi

HML=$B/cmd/hml
APP=$B/workflows/binomial/binomial

# --------------------------------------------------------------------------
# CHECK_RESERVOIR=N: only bench/reservoir.sh at N options (the issue's
# scale: 10000000), both arms trained on the GPU, then stop.
if [ -n "${CHECK_RESERVOIR:-}" ]; then
	step "bench/reservoir.sh $B $CHECK_RESERVOIR (training on the GPU)"
	export HML_BENCH_TRAIN="${HML_BENCH_TRAIN:---device cuda --max-seconds 120}"
	runlog "$(lim 900)" sh "$SRCDIR/bench/reservoir.sh" "$B" "$CHECK_RESERVOIR" 1 >"$T/reservoir.txt"
	sum "bench/reservoir.sh $B $CHECK_RESERVOIR 1 ($HML_BENCH_TRAIN): exit $?"
	while read -r line; do sum "  $line"; done <"$T/reservoir.txt"
	finish "$BUILD_FAILED"
fi
# CHECK_APPS="a b": only bench/apps.sh at benchmark size, one application
# at a time (a table each, so that those done survive a time-out), then stop.
if [ -n "${CHECK_APPS:-}" ]; then
	export HML_BENCH_TRAIN="${HML_BENCH_TRAIN:---device cuda}" HML_BENCH_DEVICE="${CHECK_APPS_DEVICE:-cuda}"
	quick=""
	[ "${CHECK_APPS_QUICK:-0}" = 1 ] && quick=--quick
	# the table's python needs h5py and numpy: the machine's python3 (there,
	# PyTorch's), else Debian's
	for p in python3 /usr/bin/python3; do
		if "$p" -c 'import h5py, numpy' 2>/dev/null; then
			HML_BENCH_PYTHON=$(command -v "$p")
			export HML_BENCH_PYTHON
			break
		fi
	done
	mkdir -p "$T/apps-keep"
	: >"$OUT/apps.txt"
	for a in $CHECK_APPS; do
		step "bench/apps.sh $quick $B ${CHECK_APPS_REPEAT:-3} $a (HML_BENCH_TRAIN=$HML_BENCH_TRAIN, HML_BENCH_DEVICE=$HML_BENCH_DEVICE)"
		if [ "$(lim 600)" -lt 40 ]; then
			sum "bench/apps.sh $a: not run (out of time)"
			continue
		fi
		s=$(date +%s)
		# shellcheck disable=SC2086
		HML_BENCH_KEEP="$T/apps-keep/$a" runlog 600 sh "$SRCDIR/bench/apps.sh" $quick "$B" "${CHECK_APPS_REPEAT:-3}" "$a" >"$T/apps-$a.txt"
		rc=$?
		sum "bench/apps.sh $quick $B ${CHECK_APPS_REPEAT:-3} $a: exit $rc in $(($(date +%s) - s))s"
		cat "$T/apps-$a.txt" >>"$OUT/apps.txt"
	done
	tar -C "$T" -czf "$OUT/apps-keep.tar.gz" apps-keep
	finish "$BUILD_FAILED"
fi
PLUGIN=$(find "$B" -name libhml-torch.so 2>/dev/null | head -1)
if [ ! -x "$HML" ] || [ ! -x "$APP" ]; then
	sum "FAIL: no $HML or $APP: nothing to check"
	finish 1
fi

# --------------------------------------------------------------------------
step "linkage"
runlog 20 "$HML" --version
if [ -n "$PLUGIN" ]; then
	runlog 10 sh -c "readelf -d '$PLUGIN' | grep -E 'NEEDED|RPATH|RUNPATH'"
	ldd "$PLUGIN" >"$T/ldd" 2>&1
	awk '{print $1, $2, $3}' "$T/ldd" | grep -E '^lib(torch|c10|cud|nvrtc|cublas)|not found' | tee -a "$LOG"
	if grep -q 'not found' "$T/ldd"; then
		sum "WARNING: libhml-torch.so has unresolved libraries; adding libtorch's lib dir to LD_LIBRARY_PATH"
		export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$TORCH_LIB"
	fi
	if grep -q 'libtorch_cuda.so' "$T/ldd"; then
		sum "libhml-torch.so loads libtorch_cuda.so: yes"
	else
		sum "FAIL: libhml-torch.so does not load libtorch_cuda.so (dropped by --as-needed?): CUDA ops will not be registered"
	fi
else
	sum "FAIL: libhml-torch.so not built"
fi
for f in "$HML" "$APP" "$(dirname "$APP")/../../runtime/libhml-hdf5.so"; do
	[ -e "$f" ] && ldd "$f" 2>&1 | grep 'not found' | sed "s#^#$f: #" | tee -a "$LOG"
done

# --------------------------------------------------------------------------
step "hml collect binomial ($COLLECT options)"
if runlog 120 "$HML" -C "$EXP" -q collect binomial --args "--options $COLLECT --seed {seed}"; then
	sum "collect: OK"
else
	sum "FAIL: hml collect"
fi

step "hml train (small MLP, CPU training, <= 45 s)"
if runlog 150 "$HML" -C "$EXP" train --arch mlp:64x64:relu --epochs 25 --max-seconds 45 --patience 0; then
	sum "train: OK"
else
	sum "FAIL: hml train"
fi

# models_of EXP: one line per model of EXP: where it trained, how fast, its error
models_of() {
	python3 - "$1/manifest.json" <<'EOP'
import json, sys
for m in json.load(open(sys.argv[1]))["models"]:
    x = m.get("metrics", {})
    print("%s %s on %s: %s epochs in %.2f s, %.4g samples/s, val RMSE %.4g" % (
        m["id"], m["arch"], x.get("device"), x.get("epochs_run"), x.get("train_seconds") or 0,
        x.get("samples_per_second") or 0, x.get("val_rmse") or float("nan")))
EOP
}

step "hml train --device cuda (the same MLP on the GPU)"
if runlog 150 "$HML" -C "$EXP" train --arch mlp:64x64:relu --epochs 25 --max-seconds 45 --patience 0 --device cuda; then
	sum "train --device cuda: OK"
else
	sum "FAIL: hml train --device cuda"
fi
models_of "$EXP" >"$T/models.txt" 2>&1
while read -r line; do sum "  $line"; done <"$T/models.txt"

step "hml deploy m1 (TorchScript)"
runlog 60 "$HML" -C "$EXP" deploy m1
sed -n "/=== hml deploy m1/,\$p" "$LOG" | grep -E "^export HML_[A-Z0-9_]+=" >"$T/deploy.env"
# shellcheck disable=SC1090,SC1091
. "$T/deploy.env"
if [ "${HML_MODE_BINOMIAL:-}" = infer ] && [ -n "${HML_MODEL_BINOMIAL:-}" ] && [ -f "$HML_MODEL_BINOMIAL" ]; then
	sum "deploy: OK ($HML_MODEL_BINOMIAL)"
else
	m=$(ls "$EXP"/models/*.pt 2>/dev/null | head -1)
	sum "FAIL: hml deploy printed no usable HML_MODEL_BINOMIAL; using '$m'"
	export HML_MODE_BINOMIAL=infer HML_MODEL_BINOMIAL="$m"
fi

# --------------------------------------------------------------------------
TIMECMD=""
[ -x /usr/bin/time ] && TIMECMD="/usr/bin/time -f time:wall=%es,user=%Us,maxrss=%MKB"
# app_run TAG OPTIONS [env args...]: one binomial run, QoI and profile kept
app_run() {
	tag=$1
	n=$2
	shift 2
	rm -f "$T/q_$tag.h5" "$T/prof_$tag.json"
	t=$(lim 90)
	[ "$t" -le 1 ] && { log "(skipped $tag: out of time)"; return 124; }
	s=$(date +%s%N)
	# shellcheck disable=SC2086
	{
		timeout -k 5 "$t" $TIMECMD env "$@" HML_QOI="$T/q_$tag.h5" HML_PROFILE="$T/prof_$tag.json" \
			HML_ON_ERROR=fail "$APP" --options "$n" --seed 42 $APPARGS
		echo "rc=$?" >"$T/rc"
	} >"$T/out_$tag.txt" 2>&1
	e=$(date +%s%N)
	rc=$(sed -n 's/^rc=//p' "$T/rc")
	log "--- run $tag: exit $rc, process wall $(((e - s) / 1000000)) ms"
	tee -a "$LOG" <"$T/out_$tag.txt"
	echo "$tag $n $rc $(((e - s) / 1000000))" >>"$T/runs.txt"
	return "$rc"
}

step "binomial: accurate, GPU and CPU inference"
: >"$T/runs.txt"
APPARGS=""
for n in $SIZES; do
	app_run "acc_$n" "$n" -u HML_MODE_BINOMIAL -u HML_MODEL_BINOMIAL
	app_run "gpu_$n" "$n" HML_DEVICE=cuda
	app_run "cpu_$n" "$n" HML_DEVICE=cpu
	# a second pair: the first pays for loading libtorch and starting CUDA
	app_run "gpu2_$n" "$n" HML_DEVICE=cuda
	app_run "cpu2_$n" "$n" HML_DEVICE=cpu
done
# one model call for all options (the workflow's batch is 4096 rows)
APPARGS="--batch $BIG"
app_run "gpuB_$BIG" "$BIG" HML_DEVICE=cuda
app_run "cpuB_$BIG" "$BIG" HML_DEVICE=cpu
APPARGS=""
# HML_DEVICE=cuda with no GPU visible: refused (HML_ON_ERROR=fail: exit 1)
if app_run "nogpu_4096" 4096 HML_DEVICE=cuda CUDA_VISIBLE_DEVICES=; then
	sum "FAIL: HML_DEVICE=cuda with no visible GPU was not refused"
elif grep -q "HML_DEVICE=cuda: no CUDA device is visible to libtorch" "$T/out_nogpu_4096.txt"; then
	sum "HML_DEVICE=cuda with CUDA_VISIBLE_DEVICES= refused: OK"
else
	sum "FAIL: HML_DEVICE=cuda with no visible GPU: unexpected message"
fi

step "compare"
runlog 60 python3 - "$T" "$OUT/results.json" "$SIZES" <<'EOF'
import json, os, re, sys
import h5py, numpy as np
tmp, out = sys.argv[1], sys.argv[2]
def qoi(tag):
    p = os.path.join(tmp, "q_%s.h5" % tag)
    if not os.path.exists(p): return None
    with h5py.File(p, "r") as f: return np.asarray(f["price"][...], dtype=np.float64)
def prof(tag):
    p = os.path.join(tmp, "prof_%s.json" % tag)
    try:
        with open(p) as f: return json.load(f)["regions"][0]
    except Exception: return None
def priced(tag):
    try:
        m = re.search(r"priced in ([0-9.]+) s", open(os.path.join(tmp, "out_%s.txt" % tag)).read())
        return float(m.group(1)) if m else None
    except Exception: return None
runs = {}
for line in open(os.path.join(tmp, "runs.txt")):
    tag, n, rc, ms = line.split()
    runs[tag] = {"options": int(n), "exit": int(rc), "process_ms": int(ms), "priced_s": priced(tag)}
    p = prof(tag)
    if p:
        runs[tag].update({k: p.get(k) for k in ("mode", "calls", "model_calls", "fallback_calls",
                                                 "nonfinite_calls", "region_s", "forward_s", "gather_s", "scatter_s")})
res = {"runs": runs, "compare": {}}
for n in [int(x) for x in sys.argv[3].split()]:
    a = qoi("acc_%d" % n)
    d = {}
    for pre in ("", "B"):
        g, c = qoi("gpu%s_%d" % (pre, n)), qoi("cpu%s_%d" % (pre, n))
        if g is None or c is None or g.shape != c.shape: continue
        diff = np.abs(g - c)
        big = np.abs(c) > 1e-3 * np.abs(c).max()
        d["gpu%s_vs_cpu%s_max_abs" % (pre, pre)] = float(diff.max())
        d["gpu%s_vs_cpu%s_max_rel" % (pre, pre)] = float((diff[big] / np.abs(c[big])).max()) if big.any() else None
        d["gpu%s_vs_cpu%s_identical" % (pre, pre)] = bool((g == c).all())
    g, c = qoi("gpu_%d" % n), qoi("cpu_%d" % n)
    g2, c2 = qoi("gpu2_%d" % n), qoi("cpu2_%d" % n)
    if g is not None and g2 is not None: d["gpu_rerun_max_abs"] = float(np.abs(g - g2).max())
    if c is not None and c2 is not None: d["cpu_rerun_max_abs"] = float(np.abs(c - c2).max())
    for k, v in (("gpu", g), ("cpu", c)):
        if a is not None and v is not None and a.shape == v.shape:
            d["%s_vs_accurate_rmse" % k] = float(np.sqrt(np.mean((v - a) ** 2)))
            d["%s_vs_accurate_max_abs" % k] = float(np.abs(v - a).max())
    res["compare"][str(n)] = d
json.dump(res, open(out, "w"), indent=1)
print("%-12s %7s %4s %9s %9s %9s %6s %6s" % ("run", "options", "rc", "proc_ms", "priced_s", "forward_s", "model", "fallbk"))
for tag, r in runs.items():
    print("%-12s %7d %4d %9d %9s %9s %6s %6s" % (tag, r["options"], r["exit"], r["process_ms"], r["priced_s"],
          "%.4f" % r["forward_s"] if r.get("forward_s") is not None else "-", r.get("model_calls"), r.get("fallback_calls")))
for n, d in res["compare"].items():
    print("options %s: %s" % (n, json.dumps(d)))
EOF
if [ -f "$OUT/results.json" ]; then
	python3 - "$OUT/results.json" >>"$SUM" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
for tag, v in r["runs"].items():
    print("run %-10s exit %d, process %5d ms, priced %s s, forward %s s, model_calls %s, fallback_calls %s"
          % (tag, v["exit"], v["process_ms"], v["priced_s"], v.get("forward_s"), v.get("model_calls"), v.get("fallback_calls")))
for n, d in r["compare"].items():
    print("compare %s options: %s" % (n, ", ".join("%s=%.3g" % (k, x) if isinstance(x, float) else "%s=%s" % (k, x) for k, x in d.items())))
EOF
else
	sum "FAIL: no comparison (results.json missing)"
fi

# --------------------------------------------------------------------------
step "evidence that the GPU ran the model"
# 1. which CUDA libraries the dynamic loader initialised, GPU run and CPU run
for tag in gpu cpu; do
	rm -f "$T"/lddebug.*
	if [ "$tag" = cpu ]; then
		set -- HML_DEVICE=cpu
	else
		set -- HML_DEVICE=cuda
	fi
	timeout -k 5 "$(lim 60)" env "$@" LD_DEBUG=libs LD_DEBUG_OUTPUT="$T/lddebug" "$APP" --options 4096 --quiet >/dev/null 2>&1
	libs=$(cat "$T"/lddebug.* 2>/dev/null | sed -n 's/.*calling init: //p' | sed 's#.*/##' | grep -E '^lib(cuda|cudart|cublas|cudnn|nvrtc|c10_cuda|torch_cuda|nvJitLink|cusparse|cufft|curand|cusolver)' | sort -u | tr '\n' ' ')
	sum "loader, $tag run: CUDA libraries initialised: ${libs:-none}"
done
# 2. nvidia-smi's compute processes while a GPU run is going on
if command -v nvidia-smi >/dev/null 2>&1 && [ "$(lim 60)" -gt 20 ]; then
	nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader -lms 100 >"$T/smi.txt" 2>&1 &
	smi=$!
	sleep 1
	timeout -k 5 "$(lim 60)" "$APP" --options 262144 --quiet >/dev/null 2>&1
	sleep 0.5
	kill "$smi" 2>/dev/null
	wait "$smi" 2>/dev/null
	seen=$(grep -i binomial "$T/smi.txt" | sort -u | head -3 | tr '\n' ';')
	log "nvidia-smi samples: $(wc -l <"$T/smi.txt"); $(head -3 "$T/smi.txt" | tr '\n' ';')"
	sum "nvidia-smi saw binomial on the GPU: ${seen:-no}"
fi
# 3. Nsight Compute: the kernels a GPU run launched
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
if [ -n "$NCU" ] && [ "$(lim 90)" -gt 40 ]; then
	log "$NCU --target-processes all --launch-count 4 --metrics gpu__time_duration.sum binomial --options 4096"
	timeout -k 5 "$(lim 90)" "$NCU" --target-processes all --launch-count 4 --metrics gpu__time_duration.sum \
		"$APP" --options 4096 --quiet >"$T/ncu.txt" 2>&1
	log "(ncu exit $?)"
	tail -40 "$T/ncu.txt" | cut -c1-200 | tee -a "$LOG"
	k=$(grep ', Context ' "$T/ncu.txt" | sed 's/^ *//' | cut -c1-70 | head -4 | tr '\n' ';')
	sum "ncu kernels launched by binomial (GPU run): ${k:-none seen}"
else
	log "(ncu not found or out of time)"
fi

# --------------------------------------------------------------------------
step "binomial under mpirun -n 3, the ranks sharing the GPU"
if [ "$MPI_OK" = 1 ] && [ -n "${HML_MODEL_BINOMIAL:-}" ] && [ "$(lim 60)" -gt 30 ]; then
	for dev in cuda cpu; do
		runlog 60 env HML_DEVICE=$dev HML_PROFILE=1 HML_ON_ERROR=fail mpirun -n 3 "$APP" --options "$BIG" --seed 42 >"$T/mpi_$dev.txt" 2>&1
		rc=$?
		log "mpirun -n 3, HML_DEVICE=$dev: exit $rc; $(grep -c 'priced' "$T/mpi_$dev.txt") ranks priced"
		sum "mpirun -n 3 binomial, HML_DEVICE=$dev, $BIG options per rank: exit $rc, $(grep -c 'priced' "$T/mpi_$dev.txt") of 3 ranks priced; $(grep -o 'priced in [0-9.]* s' "$T/mpi_$dev.txt" | tr '\n' ' ')"
	done
else
	log "(skipped: no MPI, no deployed model, or out of time)"
fi

# --------------------------------------------------------------------------
step "miniweather-mpi: the CNN trained on the GPU and the CPU, evaluated under mpirun -n 3 (the ranks sharing the GPU)"
MW=$B/workflows/miniweather-mpi/miniweather_mpi
MWX=$T/mw
if [ "$MPI_OK" = 1 ] && [ -x "$MW" ] && [ "$(lim 200)" -gt 150 ]; then
	mkdir -p "$MWX"
	python3 - "$SRCDIR/workflows/miniweather-mpi/workflow.json" "$MWX/workflow.json" "$MW" "$MW_SIZE" <<'EOP'
import json, sys
d = json.load(open(sys.argv[1]))
d["program"] = sys.argv[3]
size = sys.argv[4].split()
d["collect"]["args"] = size + ["--seed", "{seed}"]
d["evaluate"]["args"] = size + ["--seed", "0"]
json.dump(d, open(sys.argv[2], "w"), indent=2)
EOP
	if runlog 120 "$HML" -C "$MWX/exp" collect "$MWX/workflow.json"; then
		sum "miniweather-mpi collect, 3 ranks, $MW_SIZE: OK"
	else
		sum "FAIL: miniweather-mpi collect"
	fi
	runlog 90 "$HML" -C "$MWX/exp" train --device cuda --epochs 60 --max-seconds "$MW_TRAIN_S" --patience 0 ||
		sum "FAIL: miniweather-mpi train --device cuda"
	runlog 90 "$HML" -C "$MWX/exp" train --device cpu --epochs 60 --max-seconds "$MW_TRAIN_S" --patience 0 ||
		sum "FAIL: miniweather-mpi train --device cpu"
	models_of "$MWX/exp" >"$T/mwmodels.txt" 2>&1
	while read -r line; do sum "  miniweather-mpi $line"; done <"$T/mwmodels.txt"
	runlog 60 "$HML" -C "$MWX/exp" deploy m1 --force
	for dev in cuda cpu; do
		runlog 150 env HML_DEVICE=$dev "$HML" -C "$MWX/exp" evaluate --repeat 2 >"$T/mweval_$dev.txt"
		sum "miniweather-mpi evaluate (m1, TorchScript, HML_DEVICE=$dev, 3 ranks): exit $?; $(grep -E '^(quantity|end to end|region)' "$T/mweval_$dev.txt" | tr -s ' ' | tr '\n' ';')"
	done
else
	log "(skipped: no MPI, no miniweather-mpi in this tree, or out of time)"
fi

# --------------------------------------------------------------------------
step "bench/mpi.sh: per-rank collection at 3 ranks against 1, the view's read speed (16 cores: no sharing)"
if [ "$MPI_OK" = 1 ] && [ -x "$B/bench/bench_collect_rank" ] && [ "$(lim 90)" -gt 60 ]; then
	runlog 90 sh "$SRCDIR/bench/mpi.sh" "$B" 16384 64 5 >"$T/benchmpi.txt"
	sum "bench/mpi.sh $B 16384 64 5: exit $?; $(grep -E '^(measure|collect|read)' "$T/benchmpi.txt" | tr -s ' ' | tr '\n' ';')"
else
	log "(skipped: no MPI, no bench_collect_rank, or out of time)"
fi

# --------------------------------------------------------------------------
step "hml evaluate (TorchScript on the GPU, $BIG options, --repeat 2)"
if runlog 150 "$HML" -C "$EXP" evaluate --repeat 2 --args "--options $BIG --seed 42"; then
	sum "evaluate: OK: $(grep -E -i 'rmse|speedup' "$LOG" | tail -3 | tr -s ' ' | tr '\n' ';')"
else
	sum "FAIL: hml evaluate"
fi

step "unit tests that run TorchScript models (GPU)"
if [ "${CHECK_CTEST:-1}" = 1 ] && [ -f "$B/CTestTestfile.cmake" ] && [ -d "$B/tests" ] && [ "$(lim 150)" -gt 60 ]; then
	if runlog 150 ctest --test-dir "$B" -R '^(fixture\.models|unit\.(model|region|inout|latency))$' --output-on-failure -j 4 --timeout 120; then
		sum "ctest (model, region, inout, latency): OK"
	else
		sum "ctest (model, region, inout, latency): FAILED: $(grep -E 'tests passed|Failed|\*\*\*' "$LOG" | tail -6 | tr '\n' ';')"
	fi
else
	log "(no tests built, or out of time)"
fi

finish "$BUILD_FAILED"
