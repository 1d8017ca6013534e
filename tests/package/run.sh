#!/bin/sh
# Install hml into a scratch prefix, then build the outside application in
# this folder twice, with find_package(hml) and with pkg-config, and run it;
# check that every man page is installed, and that the installed hml runs
# the installed bundled workflow with nothing from the build tree.
set -eu
src=$1 build=$2 scratch=$3
rm -rf "$scratch"
mkdir -p "$scratch"
prefix=$scratch/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null
# Where GNUInstallDirs put the library (lib, lib64 or lib/<multiarch>).
lib=$(find "$prefix" -name libhml.so | head -n 1)
[ -n "$lib" ] || { echo "libhml.so not installed" >&2; exit 1; }
libdir=$(dirname "$lib")

has_cc=OFF
if "$prefix/bin/hml" --json --version | sed -n '/"commands"/,/]/p' | grep -q '"cc"'; then
	has_cc=ON
fi
cmake -S "$src/tests/package" -B "$scratch/cmake-build" \
	-DCMAKE_PREFIX_PATH="$prefix" -DHML_EXPECT_HML="$(realpath "$prefix")/bin/hml" \
	-DHML_HAS_CC="$has_cc" >/dev/null
cmake --build "$scratch/cmake-build" >/dev/null
LD_LIBRARY_PATH="$libdir" "$scratch/cmake-build/app"
if [ "$has_cc" = ON ]; then
	LD_LIBRARY_PATH="$libdir" "$scratch/cmake-build/app_directives"
	# The annotated program collects through the installed runtime.
	( cd "$scratch" && unset HML_EXPERIMENT &&
	  HML_MODE=off LD_LIBRARY_PATH="$libdir" cmake-build/app_annotated &&
	  HML_MODE=collect HML_DB=annotated.h5 LD_LIBRARY_PATH="$libdir" cmake-build/app_annotated ) ||
		{ echo "the annotated program built with the installed hml cc does not run" >&2; exit 1; }
	[ -s "$scratch/annotated.h5" ] ||
		{ echo "the annotated program built with the installed hml cc collected nothing" >&2; exit 1; }
	h5ls "$scratch/annotated.h5/double/input" | grep -q 'Dataset {8/Inf, 1}' ||
		{ echo "the annotated program did not collect its 8 rows:" >&2; h5ls -r "$scratch/annotated.h5" >&2; exit 1; }
	# and as CC="hml cc gcc" would build it: one command, no CMake, the
	# installed runtime found and linked by the wrapper (RPATH included).
	( cd "$scratch" && unset LD_LIBRARY_PATH HML_EXPERIMENT &&
	  "$prefix/bin/hml" cc cc -O2 -o annotated-cc "$src/tests/package/directives.c" &&
	  HML_MODE=off ./annotated-cc ) ||
		{ echo "hml cc cc from the installed prefix cannot build and run the annotated program" >&2; exit 1; }
	echo "package: a program annotated with HPAC-ML directives builds with the installed hml cc and collects"
fi

export PKG_CONFIG_PATH="$libdir/pkgconfig"
# shellcheck disable=SC2046
cc -std=c11 -Wall -Wextra -Werror -o "$scratch/app-pc" "$src/tests/package/app.c" \
	$(pkg-config --cflags --libs hml)
LD_LIBRARY_PATH="$libdir" "$scratch/app-pc"
echo "package: find_package and pkg-config builds work"

# A Fortran application, wherever hml was built with its module (a Fortran
# compiler found): find_package(hml) with hml::hml_fortran, and pkg-config
# hml-fortran.
if grep -q '^HML_WITH_FORTRAN:BOOL=ON' "$build/CMakeCache.txt"; then
	cmake -S "$src/tests/package/fortran" -B "$scratch/fortran-build" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
	cmake --build "$scratch/fortran-build" >/dev/null
	LD_LIBRARY_PATH="$libdir" "$scratch/fortran-build/app_f"
	# shellcheck disable=SC2046
	gfortran -Wall -Werror -o "$scratch/app-f-pc" "$src/tests/package/fortran/app.f90" \
		$(pkg-config --cflags --libs hml-fortran)
	LD_LIBRARY_PATH="$libdir" "$scratch/app-f-pc"
	echo "package: a Fortran application builds with find_package(hml) and pkg-config hml-fortran"
fi

# Man pages: every page of man/, and one for every command the installed
# hml lists (so a command without a page fails here too).
missing=0
for page in "$src"/man/*.[1-9]; do
	name=${page##*/}
	section=${name##*.}
	if [ ! -f "$prefix/share/man/man$section/$name" ]; then
		echo "man page $name not installed in share/man/man$section" >&2
		missing=1
	fi
done
commands=$("$prefix/bin/hml" --json --version |
	sed -n '/"commands"/,/]/p' | tr -d ' ",[]' | grep -v '^commands:' | grep -v '^$')
[ -n "$commands" ] || { echo "hml --json --version lists no commands" >&2; exit 1; }
for cmd in $commands; do
	if [ ! -f "$prefix/share/man/man1/hml-$cmd.1" ]; then
		echo "command '$cmd' has no installed man page hml-$cmd.1" >&2
		missing=1
	fi
done
for page in man1/hml.1 man3/hml-runtime.3 man3/hml-fortran.3 man5/hml-workflow.5 man5/hml-manifest.5; do
	[ -f "$prefix/share/man/$page" ] || { echo "man page $page not installed" >&2; missing=1; }
done
[ "$missing" = 0 ] || exit 1
echo "package: every man page is installed"

# The installed hml finds the installed bundled workflow in
# PREFIX/libexec/hml/workflows, and the installed application finds the
# installed libhml through its RPATH: no LD_LIBRARY_PATH, no build tree.
wfdir=$(find "$prefix" -path '*/hml/workflows/binomial' -type d | head -n 1)
[ -n "$wfdir" ] && [ -x "$wfdir/binomial" ] && [ -f "$wfdir/workflow.json" ] ||
	{ echo "the binomial workflow is not installed" >&2; exit 1; }
(
	unset HML_WORKFLOW_PATH LD_LIBRARY_PATH HML_EXPERIMENT
	cd "$scratch"
	"$wfdir/binomial" --options 64 --batch 64 --quiet ||
		{ echo "the installed binomial does not run" >&2; exit 1; }
	# As a user runs it: found on PATH (its name then holds no directory;
	# the plugins are found all the same).
	PATH="$prefix/bin:$PATH" hml -q -C exp --json collect binomial \
		--args '--options 1024 --batch 256 --seed {seed}' > collect.json ||
		{ echo "the installed hml cannot collect binomial" >&2; exit 1; }
	grep -q '"rows": 1024' collect.json &&
	grep -q "\"path\": \"$wfdir/workflow.json\"" collect.json ||
		{ echo "installed collect: unexpected record:" >&2; cat collect.json >&2; exit 1; }
)
echo "package: the installed hml runs the installed binomial workflow"
if grep -q '^HML_WITH_FORTRAN:BOOL=ON' "$build/CMakeCache.txt"; then
	fdir=$(find "$prefix" -path '*/hml/workflows/heat-fortran' -type d | head -n 1)
	[ -n "$fdir" ] && [ -x "$fdir/heat" ] && [ -f "$fdir/workflow.json" ] ||
		{ echo "the heat-fortran workflow is not installed" >&2; exit 1; }
	( unset LD_LIBRARY_PATH && "$fdir/heat" --init mode --n 8 --steps 4 | grep -q ' pass$' ) ||
		{ echo "the installed Fortran heat does not run or fails its check" >&2; exit 1; }
	echo "package: the installed Fortran heat runs with nothing from the build tree"
fi

# libhml links no libtorch; the installed plugin, LIBDIR/hml/libhml-torch.so,
# is found next to the installed libhml with no environment variable, and
# loaded only when a region opens a model (LD_DEBUG=files lists every
# object the dynamic loader maps).
plugin=$libdir/hml/libhml-torch.so
[ -f "$plugin" ] || { echo "the libtorch plugin is not installed in $libdir/hml" >&2; exit 1; }
if readelf -d "$lib" | grep NEEDED | grep -q torch; then
	echo "libhml.so links libtorch:" >&2; readelf -d "$lib" | grep NEEDED >&2; exit 1
fi
(
	unset HML_WORKFLOW_PATH LD_LIBRARY_PATH HML_EXPERIMENT HML_TORCH_PLUGIN
	cd "$scratch"
	HML_MODE=off LD_DEBUG=files "$wfdir/binomial" --options 64 --batch 64 --quiet 2> off.log ||
		{ echo "the installed binomial does not run in off mode" >&2; exit 1; }
	if grep -q 'file=.*torch' off.log; then
		echo "binomial in off mode loads libtorch:" >&2; grep 'file=.*torch' off.log >&2; exit 1
	fi
	"${HML_TEST_PYTHON:-/usr/bin/python3}" -c 'import torch, sys
m = torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
torch.jit.script(m).save(sys.argv[1])' m.pt
	HML_MODE=infer HML_MODEL=m.pt HML_PROFILE=p.json LD_DEBUG=files \
		"$wfdir/binomial" --options 64 --batch 64 --quiet 2> infer.log ||
		{ echo "the installed binomial cannot run a model" >&2; tail -n 5 infer.log >&2; exit 1; }
	# The loader names it by the path it was reached through (libhml's
	# directory, with its ..): compare the real paths.
	loaded=$(sed -n 's/.*file=\([^ ]*libhml-torch\.so\) .*/\1/p' infer.log | head -n 1)
	[ -n "$loaded" ] && [ "$(realpath "$loaded")" = "$(realpath "$plugin")" ] ||
		{ echo "infer mode did not load $plugin" >&2; grep 'file=.*hml' infer.log >&2; exit 1; }
	grep -q '"model_calls": 1,' p.json ||
		{ echo "infer mode made no model call:" >&2; cat p.json >&2; exit 1; }
)
echo "package: the installed libhml runs a model through the installed plugin, and only then loads libtorch"

# libhml links no HDF5 either: the installed HDF5 plugin,
# LIBDIR/hml/libhml-hdf5.so, is found the same way and loaded only in
# collect mode (or to write a QoI file); off mode maps no HDF5 at all.
h5plugin=$libdir/hml/libhml-hdf5.so
[ -f "$h5plugin" ] || { echo "the HDF5 plugin is not installed in $libdir/hml" >&2; exit 1; }
if readelf -d "$lib" | grep NEEDED | grep -q hdf5; then
	echo "libhml.so links HDF5:" >&2; readelf -d "$lib" | grep NEEDED >&2; exit 1
fi
(
	unset HML_WORKFLOW_PATH LD_LIBRARY_PATH HML_EXPERIMENT
	cd "$scratch"
	if grep -q 'file=.*hdf5' off.log; then
		echo "binomial in off mode loads HDF5:" >&2; grep 'file=.*hdf5' off.log >&2; exit 1
	fi
	HML_MODE=collect HML_DB=c.h5 LD_DEBUG=files "$wfdir/binomial" --options 64 --batch 64 \
		--quiet 2> collect.log ||
		{ echo "the installed binomial cannot collect" >&2; tail -n 5 collect.log >&2; exit 1; }
	loaded=$(sed -n 's/.*file=\([^ ]*libhml-hdf5\.so\) .*/\1/p' collect.log | head -n 1)
	[ -n "$loaded" ] && [ "$(realpath "$loaded")" = "$(realpath "$h5plugin")" ] ||
		{ echo "collect mode did not load $h5plugin" >&2; grep 'file=.*hml' collect.log >&2; exit 1; }
	[ -s c.h5 ] || { echo "collect mode wrote no c.h5" >&2; exit 1; }
)
echo "package: the installed libhml collects through the installed HDF5 plugin, and only then loads HDF5"

# The installed hml links no libtorch, HDF5, LAPACKE, NLopt, OpenMP or MPI
# either: what a command needs of them it loads as a plugin,
# LIBDIR/hml/libhml-cli-*.so, found from BINDIR with no environment
# variable, when it needs it. --version maps none and still names the
# versions; collect loads the HDF5 reader, train the training plugin.
for p in libhml-cli-hdf5.so libhml-cli-train.so libhml-cli-export.so libhml-cli-bo.so; do
	[ -f "$libdir/hml/$p" ] || { echo "the CLI's plugin $p is not installed in $libdir/hml" >&2; exit 1; }
done
heavy='file=[^ ]*(libtorch|libc10|libhdf5|liblapack|libopenblas|libblas|libnlopt|libgomp|libmpi)'
# loaded_from LOG NAME: the real path LOG (LD_DEBUG=files) loaded NAME from.
loaded_from() {
	l=$(sed -n "s/.*file=\([^ ]*$2\) .*dynamically loaded.*/\1/p" "$1" | head -n 1)
	[ -n "$l" ] && realpath "$l"
}
(
	unset HML_WORKFLOW_PATH LD_LIBRARY_PATH HML_EXPERIMENT HML_TORCH_PLUGIN
	cd "$scratch"
	LD_DEBUG=files "$prefix/bin/hml" --version > version.txt 2> version.log ||
		{ echo "the installed hml --version fails" >&2; exit 1; }
	grep -q '^hdf5 1\.' version.txt && grep -q '^libtorch ' version.txt ||
		{ echo "installed hml --version:" >&2; cat version.txt >&2; exit 1; }
	if grep -E "$heavy" version.log; then
		echo "the installed hml --version maps the libraries above" >&2; exit 1
	fi
	LD_DEBUG=files "$prefix/bin/hml" -q -C exp2 collect binomial \
		--args '--options 1024 --batch 256 --seed {seed}' > /dev/null 2> collect.log ||
		{ echo "the installed hml cannot collect:" >&2; grep -v 'file=\|^ *[0-9]*: *$' collect.log | tail -n 5 >&2; exit 1; }
	[ "$(loaded_from collect.log libhml-cli-hdf5.so)" = "$(realpath "$libdir/hml/libhml-cli-hdf5.so")" ] ||
		{ echo "the installed hml collect did not load $libdir/hml/libhml-cli-hdf5.so" >&2; exit 1; }
	LD_DEBUG=files "$prefix/bin/hml" -q -C exp2 train --epochs 1 --threads 1 > /dev/null 2> train.log ||
		{ echo "the installed hml cannot train:" >&2; grep -v 'file=\|^ *[0-9]*: *$' train.log | tail -n 5 >&2; exit 1; }
	[ "$(loaded_from train.log libhml-cli-train.so)" = "$(realpath "$libdir/hml/libhml-cli-train.so")" ] ||
		{ echo "the installed hml train did not load $libdir/hml/libhml-cli-train.so" >&2; exit 1; }
	[ -s exp2/models/m1.pt ] || { echo "the installed hml train wrote no model" >&2; exit 1; }
)
echo "package: the installed hml starts without libtorch, HDF5 or MPI and loads its installed plugins when a command needs them"
