#!/usr/bin/env bash
# tf32-bench.sh - the TF32 tensor-core kernels (--gpu-tf32=on, docs/gpu.md
# "TF32 tensor-core variants") against cuBLAS f32 and cuBLAS TF32, on a GPU
# machine without LLVM/MLIR (like device-run.sh, smaller).
#
#   tools/gpu/tf32-bench.sh build [BUNDLE]      (here: needs stc-opt, cc)
#   tools/gpu/tf32-bench.sh run BUNDLE OUTDIR   (there: a CUDA driver, torch)
#
# build: BUNDLE (default build/tf32-bundle) gets lib/libstc_rt.so and
#   bin/matmul_bench (tools/gpu/matmul_bench.c) with, per $TF32_SHAPES entry
#   MxKxN: every $TF32_VARIANTS /tf32 kernel the shape admits (N % BN = 0,
#   K % BK = 0; any M), the best f32 kernel of gpu-table.csv
#   (128x128/8x8/k8/shared) and, for shapes up to 2^34 multiply-adds, two
#   GPU dispatch sites: "pick" (the default family, f32) and "pick_tf32"
#   (--gpu-tf32=on: the family plus the TF32 kernels).
# run: OUTDIR gets matmul.csv (every kernel and cuBLAS f32 sgemm on the same
#   buffers, STC_TUNE_ALLOW_TF32=1), matmul.err (tuning reports; the
#   tf32-error lines; a second process at 1024^3 without the opt-in, whose
#   pick_tf32 report must skip the TF32 variants), reference.csv
#   (tools/gpu/tf32_reference.py: torch f32 / TF32), sanitizer.log
#   (memcheck and racecheck of one TF32 kernel with a partial block row),
#   device.txt.
set -uo pipefail
default_shapes="1024x1024x1024 2048x2048x2048 4096x4096x4096 8192x8192x8192
  128x768x3072 128x3072x768 197x768x2304 4096x768x3072 4096x3072x768"
default_variants="128x128/64x32/k16 128x128/64x64/k16 64x64/32x32/k16 128x64/32x32/k16
  256x128/64x64/k8 128x256/64x64/k8 64x128/32x64/k16 128x128/64x64/k32 128x256/64x64/k16"
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=common.sh
source "$here/common.sh"

build() {
  local bundle=${1:-$root/build/tf32-bundle}
  local stc_build=${STC_BUILD:-$root/build/plain}
  local chip=${STC_GPU_CHIP:-sm_90}
  local opt=$stc_build/bin/stc-opt
  set -e
  rm -rf "$bundle"
  mkdir -p "$bundle/lib" "$bundle/bin" "$bundle/obj"
  cp "$stc_build/lib/libstc_rt.so" "$bundle/lib/"
  cp -L /lib/x86_64-linux-gnu/libyaml-0.so.2 "$bundle/lib/" 2>/dev/null || true
  cp "$here/tf32-bench.sh" "$here/tf32_reference.py" "$here/common.sh" "$bundle/"
  local rt=$bundle/lib/libstc_rt.so header=$bundle/obj/matmul_variants.h objects=()
  : > "$header"
  for shape in ${TF32_SHAPES:-$default_shapes}; do
    local m k n
    IFS=x read -r m k n <<< "$shape"
    local list=("s:128x128/8x8/k8/shared")
    for spec in ${TF32_VARIANTS:-$default_variants}; do list+=("t:$spec"); done
    (( m * k * n <= 1 << 34 )) && list+=(pick pick_tf32)
    for variant in "${list[@]}"; do
      local fn label flags
      case $variant in
        pick) fn=mm_${m}x${k}x${n}_pick; label=pick; flags=() ;;
        pick_tf32) fn=mm_${m}x${k}x${n}_pick_tf32; label=pick; flags=(--gpu-tf32=on) ;;
        *)
          local spec=${variant#?:} bm bn tm tn bk
          IFS='x/k' read -r bm bn tm tn _ bk <<< "${spec%%/shared*}"
          (( n % bn == 0 && k % bk == 0 )) || continue
          if [[ $variant == t:* ]]; then
            fn=mm_${m}x${k}x${n}_s${bm}x${bn}_w${tm}x${tn}_k${bk}_tf32
            label=$spec/tf32
            flags=(--gpu-tf32=on --gpu-schedule="$spec/tf32")
          else
            fn=mm_${m}x${k}x${n}_s${bm}x${bn}_${tm}x${tn}_k${bk}_shared
            label=$spec
            flags=(--gpu-schedule="$spec")
          fi ;;
      esac
      objects+=("$(matmul_object "$bundle" "$opt" "$chip" "$fn" "$m" "$k" "$n" "$label" "${flags[@]}")")
    done
  done
  cc -O2 -I"$root/include" -I"$bundle/obj" -o "$bundle/bin/matmul_bench" \
    "$here/matmul_bench.c" "${objects[@]}" "$rt" -Wl,-rpath,'$ORIGIN/../lib' -lm -lpthread
  rm -rf "$bundle/obj"
  echo "tf32-bench.sh: bundle in $bundle ($(du -sh "$bundle" | cut -f1))"
}

run() {
  local bundle=$1 out=$2 failures=0
  mkdir -p "$out"
  export LD_LIBRARY_PATH=$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  find_cublas
  { echo "cuBLAS: ${STC_CUBLAS_LIBRARY:-loader path}"; date -u; nvidia-smi; } > "$out/device.txt" 2>&1
  local cache
  cache=$(mktemp -d)
  export STC_TUNE_READBACK_LIMIT=512MiB
  STC_CACHE_DIR=$cache STC_TUNE_REPORT=1 STC_TUNE_ALLOW_TF32=1 "$bundle/bin/matmul_bench" \
    > "$out/matmul.csv" 2> "$out/matmul.err" || failures=$((failures + 1))
  { echo "==== without STC_TUNE_ALLOW_TF32 (fresh cache, 1024^3 pick_tf32 only)"
    STC_CACHE_DIR=$(mktemp -d) STC_TUNE_REPORT=1 STC_BENCH_ONLY=1024x1024x1024_pick_tf32 \
      "$bundle/bin/matmul_bench" 2>&1
  } >> "$out/matmul.err"
  rm -rf "$cache"
  python3 "$bundle/tf32_reference.py" ${TF32_SHAPES:-$default_shapes} > "$out/reference.csv" \
    2>> "$out/matmul.err" || failures=$((failures + 1))
  local sanitizer
  sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  if [[ -x $sanitizer ]]; then
    local tool
    for tool in memcheck racecheck; do
      echo "== 197x768x2304_s128x128_w64x32_k16_tf32 ($tool)"
      STC_BENCH_ONLY=197x768x2304_s128x128_w64x32_k16_tf32 timeout 120 "$sanitizer" \
        --tool $tool --print-limit 10 "$bundle/bin/matmul_bench" 2>&1 \
        | grep -E '^=========|WRONG|gpu-error' | grep -v '^========= *$' | head -12
    done > "$out/sanitizer.log"
    grep -q 'ERROR SUMMARY: [1-9]\|RACECHECK SUMMARY: [1-9]' "$out/sanitizer.log" &&
      failures=$((failures + 1))
  fi
  cat "$out/matmul.csv" "$out/reference.csv"
  grep -E '^tf32-error' "$out/matmul.err"
  echo "tf32-bench.sh: $failures failure(s)"
  [[ $failures -eq 0 ]]
}

case ${1:-} in
  build) shift; build "$@" ;;
  run) shift; [[ $# -eq 2 ]] || { echo "usage: $0 run BUNDLE OUTDIR" >&2; exit 2; }; run "$@" ;;
  *) echo "usage: $0 build [BUNDLE] | run BUNDLE OUTDIR" >&2; exit 2 ;;
esac
