#!/bin/sh
# The build tree is a package as well as an installed prefix: the outside
# application in this folder builds against BUILD with find_package(hml)
# (-Dhml_DIR=BUILD) and with pkg-config (PKG_CONFIG_PATH=BUILD), and runs
# with no LD_LIBRARY_PATH; every path the package names lies in the source
# or build tree; hml_target_directives() makes hml::cli, BUILD's hml, the
# compiler launcher.
set -eu
src=$1 build=$2 scratch=$3
rm -rf "$scratch"
mkdir -p "$scratch"
unset LD_LIBRARY_PATH
src=$(realpath "$src") build=$(realpath "$build")
hml=$build/cmd/hml
[ -x "$hml" ] || { echo "no hml in $build/cmd" >&2; exit 1; }
has_cc=OFF
if "$hml" --json --version | sed -n '/"commands"/,/]/p' | grep -q '"cc"'; then
	has_cc=ON
fi

cmake -S "$src/tests/package" -B "$scratch/cmake-build" -Dhml_DIR="$build" \
	-DHML_EXPECT_HML="$hml" -DHML_HAS_CC="$has_cc" >/dev/null
cmake --build "$scratch/cmake-build" >/dev/null
"$scratch/cmake-build/app"
if [ "$has_cc" = ON ]; then
	"$scratch/cmake-build/app_directives"
	( cd "$scratch" && unset HML_EXPERIMENT &&
	  HML_MODE=off cmake-build/app_annotated &&
	  HML_MODE=collect HML_DB=annotated.h5 cmake-build/app_annotated ) ||
		{ echo "the annotated program built with the build tree's hml cc does not run" >&2; exit 1; }
	[ -s "$scratch/annotated.h5" ] ||
		{ echo "the annotated program built with the build tree's hml cc collected nothing" >&2; exit 1; }
	h5ls "$scratch/annotated.h5/double/input" | grep -q 'Dataset {8/Inf, 1}' ||
		{ echo "the annotated program did not collect its 8 rows:" >&2; h5ls -r "$scratch/annotated.h5" >&2; exit 1; }
	echo "package: build tree: an application builds through hml_target_directives (hml cc)"
else
	echo "package: build tree: this hml has no cc command: launcher checked, not run"
fi

export PKG_CONFIG_PATH="$build"
for dir in $(pkg-config --cflags-only-I --libs-only-L hml | sed 's/-[IL]//g') \
	"$(pkg-config --variable=hml hml)"; do
	case $dir in
	"$src"/*|"$build"/*) ;;
	*) echo "hml.pc in the build tree names '$dir', outside the trees" >&2; exit 1 ;;
	esac
	[ -e "$dir" ] || { echo "hml.pc names '$dir', which does not exist" >&2; exit 1; }
done
[ "$(pkg-config --variable=hml hml)" = "$hml" ] ||
	{ echo "hml.pc: hml is '$(pkg-config --variable=hml hml)', not '$hml'" >&2; exit 1; }
# shellcheck disable=SC2046
cc -std=c11 -Wall -Wextra -Werror -o "$scratch/app-pc" "$src/tests/package/app.c" \
	$(pkg-config --cflags --libs hml)
"$scratch/app-pc"
echo "package: build tree: find_package(hml) and pkg-config builds work"

# A Fortran application, wherever hml was built with its module (a Fortran
# compiler found): find_package(hml) with hml::hml_fortran, and pkg-config
# hml-fortran.
if grep -q '^HML_WITH_FORTRAN:BOOL=ON' "$build/CMakeCache.txt"; then
	cmake -S "$src/tests/package/fortran" -B "$scratch/fortran-build" -Dhml_DIR="$build" >/dev/null
	cmake --build "$scratch/fortran-build" >/dev/null
	"$scratch/fortran-build/app_f"
	# shellcheck disable=SC2046
	gfortran -Wall -Werror -o "$scratch/app-f-pc" "$src/tests/package/fortran/app.f90" \
		$(pkg-config --cflags --libs hml-fortran)
	"$scratch/app-f-pc"
	echo "package: a Fortran application builds with find_package(hml) and pkg-config hml-fortran"
fi
