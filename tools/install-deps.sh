#!/usr/bin/env bash
# Installs everything stc needs on Debian 12 (bookworm): the build tools,
# LLVM/MLIR 22 (headers, C API archives, mlir-opt/mlir-runner, lit,
# FileCheck), libyaml, OpenBLAS (loaded by libstc_rt with dlopen for BLAS
# variants; never linked), and clang-22 with its libFuzzer and sanitizer
# runtimes (fuzz/run.sh), pkg-config (test/install builds against stc-rt.pc),
# redis-server and hiredis (the fleet cache's tier, README "Fleet cache
# (Redis)": libstc_rt loads libhiredis.so.0.14 with dlopen, never links it;
# test/remote-cache starts private servers).
# Skips apt entirely when every package is present.
set -euo pipefail

packages=(
  build-essential cmake ninja-build lld python3 pkg-config
  libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools
  libyaml-dev libomp-22-dev libopenblas0
  clang-22 libclang-rt-22-dev
  redis-server libhiredis-dev
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "stc: all dependencies present"
  exit 0
fi

sudo=""
if [ "$(id -u)" != 0 ]; then sudo=sudo; fi
echo "stc: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
