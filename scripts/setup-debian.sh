#!/bin/sh
# Install every Debian package hml needs to build, test and run its workflows,
# and select the OpenMP variant of OpenBLAS as the BLAS/LAPACK libtorch uses.
# Idempotent: safe to run again. Needs root (or sudo) on Debian 12.
set -eu

SUDO=
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; fi

PKGS="build-essential cmake pkg-config git ca-certificates procps gfortran
  libtorch-dev libhdf5-dev hdf5-tools libjansson-dev libssl-dev zlib1g-dev
  libopenblas0-openmp libopenblas-openmp-dev
  bats bats-assert bats-support
  liblapacke-dev libnlopt-dev
  python3 python3-torch python3-h5py python3-numpy python3-sklearn
  gnuplot-nox openmpi-bin libopenmpi-dev
  python3-optuna
  clang libclang-rt-14-dev hyperfine"

missing=
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
    missing="$missing $p"
done

if [ -n "$missing" ]; then
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  # shellcheck disable=SC2086
  $SUDO apt-get install -y -qq --no-install-recommends $missing
fi

# libtorch links libblas.so.3/liblapack.so.3 through Debian's alternatives.
# The reference BLAS is several times slower and the pthread OpenBLAS fights
# libtorch's own threads, so pin the OpenMP build.
arch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
for lib in libblas.so.3 liblapack.so.3; do
  alt="/usr/lib/$arch/openblas-openmp/$lib"
  if [ -e "$alt" ]; then
    $SUDO update-alternatives --quiet --set "$lib-$arch" "$alt"
  fi
done
echo "hml: build dependencies are installed"
