#!/usr/bin/env bash
# The runtime-only install (-DSTC_BUILD_COMPILER=OFF): configures a fresh
# build of SRC_DIR with the compiler off in a temporary directory outside the
# source tree, builds what gets installed, `cmake --install`s it, then builds
# a host program on libstc_rt against the installed tree with CMake (shared
# and static runtime) and with pkg-config, and runs them.
# In:  SRC_DIR. Out: labelled sections on stdout for FileCheck
# (test/install/runtime-only.test); exit non-zero on the first failure.
set -euo pipefail
src=$(cd "$1" && pwd)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/stc-install-rt-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
work=$(cd "$work" && pwd -P)
case "$work/" in
  "$src"/*) echo "error: temporary directory $work is inside the source tree" >&2; exit 1 ;;
esac
prefix=$work/prefix
export PATH=$prefix/bin:/usr/local/bin:/usr/bin:/bin
unset PKG_CONFIG_PATH CMAKE_PREFIX_PATH LD_LIBRARY_PATH
jobs=${STC_INSTALL_TEST_JOBS:-2}

echo "== build (STC_BUILD_COMPILER=OFF)"
cmake -G Ninja -S "$src" -B "$work/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTC_BUILD_COMPILER=OFF \
  > "$work/configure.log" 2>&1 || { cat "$work/configure.log"; exit 1; }
ninja -C "$work/build" -j"$jobs" stc_rt stc_rt_static stc_rt_aot stc_runner_utils stc_core stc-prof stc-cache \
  > "$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }

echo "== install"
cmake --install "$work/build" --prefix "$prefix" > "$work/install.log"
(cd "$prefix" && find . \( -type f -o -type l \) | sed 's|^\./||' | sort)

echo "== cmake"
mkdir "$work/project"
cp "$here/Inputs/runtime-project/CMakeLists.txt" "$here/Inputs/project/host.c" "$work/project/"
cmake -G Ninja -S "$work/project" -B "$work/project-build" -DCMAKE_PREFIX_PATH="$prefix" \
  > "$work/project-configure.log" 2>&1 || { cat "$work/project-configure.log"; exit 1; }
grep -o 'stc [0-9.]*: runtime only.*' "$work/project-configure.log"
ninja -C "$work/project-build" > "$work/project-build.log" 2>&1 || { cat "$work/project-build.log"; exit 1; }
ldd "$work/project-build/host_shared" | awk '$1 == "libstc_rt.so" { print $1, $2, $3 }' | sed "s|$prefix/|PREFIX/|"
"$work/project-build/host_shared"
"$work/project-build/host_static"

echo "== pkg-config"
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
cd "$work/project"
# shellcheck disable=SC2046
cc -std=c11 -Wall -Wextra -Werror -o host_pc host.c $(pkg-config --cflags --libs stc-rt) \
  -Wl,-rpath,"$(pkg-config --variable=libdir stc-rt)"
./host_pc
echo "== done"
