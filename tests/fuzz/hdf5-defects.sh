#!/bin/sh
# tests/fuzz/hdf5-defects.sh FUZZ_BUILD - ctest's fuzz.hdf5-defects.
# The inputs on which HDF5 1.10.8 itself fails (tests/fuzz/hdf5-defects/
# README) still fail inside libhdf5, and scripts/fuzz.sh's classification
# says so; the 8 EB malloc, which ASan is told to answer with NULL as glibc
# does, no longer faults. When Debian's libhdf5 fixes one, this test says
# which: remove its reproducer and its line below.
set -eu
src=$(cd "$(dirname "$0")/../.." && pwd)
d="$src/tests/fuzz/hdf5-defects"
got=$(sh "$src/scripts/fuzz.sh" -b "$1" -c fuzz_dataset \
	"$d/memcpy-overlap-H5HG_read" "$d/segv-H5HG_read" "$d/hang-H5HG_protect" \
	"$d/use-after-free-H5O_attr_exists" "$d/huge-malloc-H5C_protect")
want="$d/memcpy-overlap-H5HG_read: hdf5
$d/segv-H5HG_read: hdf5
$d/hang-H5HG_protect: hdf5
$d/use-after-free-H5O_attr_exists: hdf5
$d/huge-malloc-H5C_protect: not reproduced"
echo "$got"
if [ "$got" != "$want" ]; then
	echo "hdf5-defects: expected:" >&2
	echo "$want" >&2
	exit 1
fi
