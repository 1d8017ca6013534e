#!/bin/sh
# Install hml into a scratch prefix, then build the outside application in
# this folder twice, with find_package(hml) and with pkg-config, and run it.
set -eu
src=$1 build=$2 scratch=$3
rm -rf "$scratch"
mkdir -p "$scratch"
cmake --install "$build" --prefix "$scratch/prefix" >/dev/null
libdir=$(ls -d "$scratch"/prefix/lib*/ | head -n 1)

cmake -S "$src/tests/package" -B "$scratch/cmake-build" \
	-DCMAKE_PREFIX_PATH="$scratch/prefix" >/dev/null
cmake --build "$scratch/cmake-build" >/dev/null
LD_LIBRARY_PATH="$libdir" "$scratch/cmake-build/app"

export PKG_CONFIG_PATH="$libdir/pkgconfig"
# shellcheck disable=SC2046
cc -std=c11 -Wall -Wextra -Werror -o "$scratch/app-pc" "$src/tests/package/app.c" \
	$(pkg-config --cflags --libs hml)
LD_LIBRARY_PATH="$libdir" "$scratch/app-pc"
[ -e "$scratch/prefix/share/man/man3/hml-runtime.3" ] || { echo "hml-runtime.3 not installed" >&2; exit 1; }
echo "package: find_package and pkg-config builds work"
