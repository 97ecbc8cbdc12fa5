#!/usr/bin/env bash
# Installs a built stc into a fresh prefix and builds a tiny AOT program
# against the INSTALLED tree, outside the source tree, twice: with CMake
# (find_package(stc) + stc_add_aot_executable, plus a host program on
# stc::rt_static) and with pkg-config (stc-rt.pc / stc-aot.pc); runs them.
# In:  BUILD_DIR SRC_DIR. Out: labelled sections on stdout for FileCheck
# (test/install/install.test); exit non-zero on the first failure.
# Uses a temporary directory under $TMPDIR (default /tmp), removed at exit.
set -euo pipefail
build=$(cd "$1" && pwd) src=$(cd "$2" && pwd)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/stc-install-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
work=$(cd "$work" && pwd -P)
case "$work/" in
  "$src"/*|"$build"/*) echo "error: temporary directory $work is inside the source or build tree" >&2; exit 1 ;;
esac
prefix=$work/prefix

# Nothing from the build tree on PATH: only the installed tools may be used.
export PATH=$prefix/bin:/usr/local/bin:/usr/bin:/bin
unset PKG_CONFIG_PATH CMAKE_PREFIX_PATH LD_LIBRARY_PATH
export STC_CACHE_DIR=$work/cache STC_TUNE_SAMPLES=3 STC_TUNE_WARMUPS=1 STC_TUNE_BUDGET_MS=300

# Prints where the dynamic loader finds libstc_rt.so for executable $1.
resolved_rt() {
  local lib
  lib=$(ldd "$1" | awk '$1 == "libstc_rt.so" { print $3 }')
  [[ -n $lib ]] || { echo "error: $1 does not load libstc_rt.so" >&2; ldd "$1" >&2; return 1; }
  echo "libstc_rt.so => $(realpath "$lib" | sed "s|^$prefix/|PREFIX/|")"
}

# Fails unless executable $2 (named $1 in the message) prints with
# libstc_runner_utils.a: it must not need libMLIR, libLLVM or MLIR's
# runner utilities (DESIGN.md section 2).
no_llvm() {
  if readelf -d "$2" | grep -E 'NEEDED.*(libMLIR|libLLVM|runner_utils)'; then
    echo "error: $1 needs MLIR or LLVM libraries" >&2; return 1
  fi
  nm "$2" | grep ' T printMemrefF32$' > /dev/null ||
    { echo "error: $1 does not hold printMemrefF32" >&2; return 1; }
}

echo "== install"
cmake --install "$build" --prefix "$prefix" > "$work/install.log"
(cd "$prefix" && find . \( -type f -o -type l \) | sed 's|^\./||' | sort)

echo "== versions"
command -v stc-opt | sed "s|^$prefix/|PREFIX/|"
stc-opt --version > "$work/stc-opt-version.txt"   # not piped: head would cut it off
head -n 1 "$work/stc-opt-version.txt"
stc-run --version

# stc-run compiles with its compiler module, from the prefix (a miss), and
# runs the stored library without it, and without LLVM (a hit).
echo "== stc-run"
for start in first second; do
  LD_DEBUG=files STC_TUNE=off stc-run --timing --tune-hot-paths "$here/Inputs/matmul.mlir" \
    2> "$work/stc-run-$start.err" | grep -o 'sizes = \[[0-9, ]*\]'
  grep -o 'object cache: .*' "$work/stc-run-$start.err"
  grep -o 'file=[^ ]*stc-run-compiler\.so .*dynamically loaded' "$work/stc-run-$start.err" |
    sed "s|$prefix/|PREFIX/|; s| .*||" || echo "no compiler"
  grep -q 'file=[^ ]*libLLVM' "$work/stc-run-$start.err" && echo "libLLVM" || echo "no libLLVM"
done
# Without the object cache, the JIT module links the objects, from the
# prefix too.
LD_DEBUG=files STC_TUNE=off stc-run --no-object-cache --tune-hot-paths "$here/Inputs/matmul.mlir" \
  2> "$work/stc-run-jit.err" | grep -o 'sizes = \[[0-9, ]*\]'
grep -o 'file=[^ ]*stc-run-jit\.so .*dynamically loaded' "$work/stc-run-jit.err" |
  sed "s|$prefix/|PREFIX/|; s| .*||" || echo "no JIT module"

echo "== cmake"
mkdir "$work/cmake-project"
cp "$here/Inputs/project/CMakeLists.txt" "$here/Inputs/project/host.c" "$here/Inputs/matmul.mlir" \
   "$work/cmake-project/"
cmake -G Ninja -S "$work/cmake-project" -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" \
  > "$work/cmake-configure.log" 2>&1 || { cat "$work/cmake-configure.log"; exit 1; }
grep -o 'stc [0-9.]*: stc-opt .*' "$work/cmake-configure.log" | sed "s|$prefix/|PREFIX/|"
ninja -C "$work/cmake-build" > "$work/cmake-build.log" 2>&1 || { cat "$work/cmake-build.log"; exit 1; }
# The AOT executable takes libstc_rt from the prefix, never from the build
# tree: StcAOT.cmake links the installed static runtime (libstc_rt.a,
# libstc_core.a), so the executable loads no libstc_rt.so and holds the
# runtime's entry points itself (docs/aot.md).
if ldd "$work/cmake-build/matmul_aot" | grep libstc_rt > /dev/null; then
  echo "error: matmul_aot loads a shared libstc_rt" >&2; ldd "$work/cmake-build/matmul_aot" >&2; exit 1
fi
no_llvm matmul "$work/cmake-build/matmul_aot"
grep -o -F "$prefix/lib/libstc_rt.a" "$work/cmake-build/build.ninja" | head -n 1 | sed "s|^$prefix/|static runtime: PREFIX/|"
nm "$work/cmake-build/matmul_aot" | grep -c -E ' T (stc_rt_site_enter|stc_rt_environment)$' | sed 's/^/AOT runtime symbols: /'
if grep -q -F "$build" "$work/cmake-build/build.ninja"; then
  echo "error: the CMake project refers to the build tree $build" >&2; exit 1
fi
"$work/cmake-build/matmul_aot"
"$work/cmake-build/host_static"
nm "$work/cmake-build/host_static" | grep -c ' T stc_rt_abi_version$' | sed 's/^/static runtime symbols: /'

echo "== pkg-config"
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
pkg-config --modversion stc-rt
pkg-config --cflags --libs stc-rt | sed "s|$prefix/lib/pkgconfig/\.\./\.\./|PREFIX/|g; s|$prefix/|PREFIX/|g"
pkg-config --libs --static stc-rt | sed "s|$prefix/lib/pkgconfig/\.\./\.\./|PREFIX/|g; s|$prefix/|PREFIX/|g"
mkdir "$work/pc"
cd "$work/pc"
cp "$here/Inputs/matmul.mlir" "$here/Inputs/main.c" .
stc-opt --tune-hot-paths --emit=obj matmul.mlir -o matmul.o 2> stc-opt.log
objcopy --redefine-sym main=__stc_aot_entry matmul.o
# shellcheck disable=SC2046
cc -std=c11 -Wall -Wextra -Werror -o matmul_pc main.c matmul.o $(pkg-config --cflags --libs stc-aot)
resolved_rt matmul_pc
no_llvm matmul_pc matmul_pc
./matmul_pc
echo "== done"
