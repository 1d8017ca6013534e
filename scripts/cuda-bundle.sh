#!/bin/sh
# shellcheck disable=SC2016,SC2012,SC2013
# scripts/cuda-bundle.sh - builds .devbundle/deps.tar.xz: a sysroot (to be extracted at /tmp/sysroot)
# with the Debian 12 packages hml needs besides libtorch, for a machine that
# has none of them (the GPU machine; see scripts/cuda-check.sh).
#   usr/...   headers, .so + symlinks, pkg-config files, CMake configs
#             (.pc prefixes rewritten to /tmp/sysroot/usr)
#   rt/       runtime-only libraries (closure of libhdf5, OpenBLAS, ...);
#             cuda-check.sh links only the sonames the machine lacks
#   bin/pkg-config  wrapper around Debian's pkgconf that sees the sysroot's
#             .pc files only
# Run on Debian 12 (amd64) with apt-get update done. Not part of hml.
set -eu
SR=/tmp/sysroot            # where cuda-check.sh extracts it: paths are baked in
W=${W:-/tmp/dbw}
here=$(cd "$(dirname "$0")/.." && pwd)/.devbundle   # git-ignored (.git/info/exclude)
mkdir -p "$here"
MAIN="libhdf5-dev libhdf5-103-1 libjansson-dev libjansson4 libssl-dev libssl3 zlib1g-dev
  libnlopt-dev libnlopt0 liblapacke-dev liblapacke libtmglib3
  libopenblas-openmp-dev libopenblas0-openmp pkgconf pkgconf-bin libpkgconf3
  openmpi-bin openmpi-common libopenmpi3 libopenmpi-dev libpmix2"
RT="libsz2 libaec0 libcurl4 libnghttp2-14 libidn2-0 librtmp1 libssh2-1 libpsl5
  libgssapi-krb5-2 libldap-2.5-0 libzstd1 libbrotli1 libunistring2 libgnutls30
  libnettle8 libhogweed6 libgmp10 libkrb5-3 libk5crypto3 libcom-err2
  libkrb5support0 libsasl2-2 libsasl2-modules-db libdb5.3 libp11-kit0 libtasn1-6
  libkeyutils1 libffi8 libgfortran5 libquadmath0 libgomp1 zlib1g
  libevent-core-2.1-7 libevent-pthreads-2.1-7 libevent-2.1-7 libhwloc15 libfabric1
  libucx0 libibverbs1 librdmacm1 libnl-3-200 libnl-route-3-200 libpsm2-2
  libpsm-infinipath1 libnuma1 libpciaccess0 libmunge2 libltdl7 libudev1 libxnvctrl0
  libx11-6 libxext6 libxcb1 libxau6 libxdmcp6 libbsd0 libmd0 ocl-icd-libopencl1"

rm -rf "$W" "$SR"
mkdir -p "$W/debs" "$W/main" "$W/rt"
# shellcheck disable=SC2086
(cd "$W/debs" && apt-get download $MAIN $RT >/dev/null 2>&1)
for p in $MAIN; do dpkg -x "$W"/debs/"${p}"_*.deb "$W/main"; done
for p in $RT; do dpkg -x "$W"/debs/"${p}"_*.deb "$W/rt"; done

mkdir -p "$SR/usr/lib" "$SR/usr/bin" "$SR/rt" "$SR/bin"
cp -a "$W/main/usr/include" "$SR/usr/"
cp -a "$W/main/usr/lib/x86_64-linux-gnu" "$SR/usr/lib/"
cp -a "$W/main/usr/bin/pkgconf" "$SR/usr/bin/"
# Open MPI (Debian's 4.1), relocated at run time by OPAL_PREFIX=$SR/usr: its
# launcher and daemon, the compiler wrapper and its data, the help texts.
for f in orterun orted opal_wrapper ompi_info mpirun.openmpi mpicc.openmpi; do
  cp -a "$W/main/usr/bin/$f" "$SR/usr/bin/"
done
ln -sf mpirun.openmpi "$SR/usr/bin/mpirun"
ln -sf mpicc.openmpi "$SR/usr/bin/mpicc"
mkdir -p "$SR/usr/share"
cp -a "$W/main/usr/share/openmpi" "$SR/usr/share/"
L="$SR/usr/lib/x86_64-linux-gnu"
# What hml does not need: static archives, Fortran/C++ HDF5, docs.
find "$SR" -name '*.a' -delete
find "$SR/usr/include" -name '*.mod' -delete
rm -f "$L"/libhdf5_serial_*.so "$L"/libhdf5_serialhl_*.so "$L"/libhdf5_serial_*.settings
rm -rf "$L/ossl-modules" "$L/engines-3"
# Debian's alternatives, as scripts/setup-debian.sh selects them (OpenMP OpenBLAS).
ob=openblas-openmp
for f in libblas.so libblas.so.3 liblapack.so liblapack.so.3 libopenblas.so libopenblas.so.0; do
  ln -sf "$ob/$f" "$L/$f"
done
ln -sf "../$ob/pkgconfig/blas-openblas.pc" "$L/pkgconfig/blas.pc"
ln -sf "../$ob/pkgconfig/lapack-openblas.pc" "$L/pkgconfig/lapack.pc"
ln -sf "../$ob/pkgconfig/openblas.pc" "$L/pkgconfig/openblas.pc"
ln -sf hdf5-serial.pc "$L/pkgconfig/hdf5.pc"
ln -sf "$ob/cblas.h" "$SR/usr/include/x86_64-linux-gnu/cblas.h"
# Dangling links left by the pruning.
find "$SR" -xtype l -delete
# Absolute /usr paths -> the sysroot (pkg-config, CMake configs).
for f in $(grep -rl '/usr' "$L/pkgconfig" "$L/$ob/pkgconfig" "$L/$ob/cmake" "$L/cmake"); do
  sed -i -e "s#=/usr#=$SR/usr#g" -e "s#-I/usr#-I$SR/usr#g" -e "s#-L/usr#-L$SR/usr#g" \
         -e "s#\"/usr/#\"$SR/usr/#g" -e "s# /usr/# $SR/usr/#g" "$f"
done
# Debian's nlopt.pc says libdir=${exec_prefix}/lib, where there is no libnlopt.
sed -i 's#^libdir=.*#libdir=${exec_prefix}/lib/x86_64-linux-gnu#' "$L/pkgconfig/nlopt.pc"
# Runtime-only libraries, flat.
for d in "$W/rt/lib/x86_64-linux-gnu" "$W/rt/usr/lib/x86_64-linux-gnu"; do
  find "$d" -maxdepth 1 -name 'lib*.so*' -exec cp -a {} "$SR/rt/" \;
done
cat >"$SR/bin/pkg-config" <<EOF
#!/bin/sh
# Debian 12's pkgconf, seeing the sysroot's .pc files only.
PKG_CONFIG_LIBDIR=$L/pkgconfig:$SR/usr/share/pkgconfig
export PKG_CONFIG_LIBDIR
unset PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR
LD_LIBRARY_PATH=$L\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH} exec $SR/usr/bin/pkgconf "\$@"
EOF
chmod +x "$SR/bin/pkg-config"
ls "$W"/debs/*.deb | sed 's#.*/##' >"$SR/PACKAGES"
(cd /tmp && tar -cf - sysroot | xz -9e -T2 >"$here/deps.tar.xz")
ls -l "$here/deps.tar.xz"
