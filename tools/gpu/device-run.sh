#!/usr/bin/env bash
# device-run.sh - build --target=cuda executables here, run them on a GPU
# machine that has no LLVM/MLIR, compare with the CPU build, measure.
#
#   tools/gpu/device-run.sh build [BUNDLE]      (here: needs stc-opt, cc)
#   tools/gpu/device-run.sh run BUNDLE OUTDIR   (there: needs a CUDA driver)
#
# build: BUNDLE (default build/gpu-bundle) gets
#   lib/libstc_rt.so (+ libyaml), bin/test_gpu (the GPU unit tests),
#   examples/<name>.cuda   each examples/*.mlir, test/gpu/Inputs/*.mlir,
#                          test/e2e/Inputs/*.mlir with a @main that prints
#                          and tools/gpu/convred.mlir (the conv/reduction
#                          bench) compiled with --tune-hot-paths
#                          --target=cuda --emit=obj and AOT-linked with
#                          libstc_rt and runtime/runner_utils.c (MLIR's
#                          printMemrefF32 library needs libLLVM);
#   examples/<name>.not-compiled  the error of a program that does not
#                          compile for CUDA (listed as NOT-COMPILED);
#   examples/<name>.cpu.out  what the CPU build (--target=cpu, AOT, tuned)
#                          prints: the expected output;
#   examples/mlp.cubin.cuda  mlp with --gpu-format=bin (cubin from ptxas);
#   examples/launch_failure{,.cubin}.cuda  tools/gpu/launch_failure.mlir
#                          with --gpu-sites=$launch_failure_sites (PTX, and
#                          a cubin): a site variant whose launch the device
#                          refuses (260 KiB of shared memory per block);
#   bin/matmul_bench       f32 matmul kernels for each $STC_BENCH_SHAPES
#                          entry MxKxN (A is MxK; default: squares 256 to
#                          8192, the transformer example's and BERT/GPT/ViT
#                          shapes), one per $STC_BENCH_VARIANTS entry:
#                          "rows,cols:mapping" (default kernel: block tile,
#                          --gpu-mapping) or "s:BMxBN/TMxTN/kBK[/shared]"
#                          (--gpu-schedule; only for shapes it divides:
#                          /shared takes any M; /splitS needs K % (BK S) = 0),
#                          or "pick" (a GPU dispatch site, tuned on its
#                          first call; the others are built with
#                          --gpu-sites=off), and cuBLAS on the same buffers;
#   bin/test_trial_gpu     the GPU trial runner's unit tests;
#   bin/constant_loop      tools/gpu/constant_loop.c: a function with a
#                          1 MiB constant called 1000 times (device memory
#                          must not grow: one copy per constant);
#   compare-outputs.py, device-run.sh.
# run: writes into OUTDIR: examples.csv (name,status,seconds), one
#   <name>.log per failing example, matmul.csv (tools/gpu/matmul_bench.c),
#   reference.csv (tools/gpu/triton_matmul.py: torch.matmul f32 with TF32
#   off, a cross-check of cuBLAS, and an autotuned f32 Triton matmul),
#   table.csv (tools/gpu/gpu_table.py --full: one row per shape, with the
#   device, driver, date and command in its header),
#   test_gpu.log, device.txt (nvidia-smi), examples.log (each program's
#   output and tuning reports, cut at 4000 bytes, but the conv/reduction
#   bench's reports whole, first: each variant's paired ratio to the
#   default kernel), sanitizer.log (compute-sanitizer
#   memcheck on every example: out-of-bounds and freed-memory accesses; no
#   leak check, since constants' device copies live until exit). Exit 0 when every example
#   matched, the sanitizer found nothing, every kernel was right and the
#   launch_failure programs rejected their unlaunchable variant with the
#   device's note.
#
# Environment (build): STC_BUILD (default build/gpu: bin/stc-opt,
#   lib/libstc_rt.so, bin/test_gpu), STC_GPU_CHIP (default sm_90),
#   STC_CONVRED_SITES (the --gpu-sites list of the conv/reduction bench;
#   default: the compiler's default list).
# Environment (run): STC_DEVICE_QUICK=1 skips compute-sanitizer and the
#   torch/Triton reference (device time); STC_DEVICE_SANITIZER=off skips
#   compute-sanitizer only (then table.csv takes sanitizer.log's place in
#   the device tool's 8 files); matmul.err also gets the tuning
#   reports of the bench's sites and a second process's cache hits.
set -uo pipefail
default_shapes="256x256x256 1024x1024x1024 2048x2048x2048 4096x4096x4096 8192x8192x8192
  128x256x256 128x768x3072 128x3072x768 197x768x2304 4096x768x3072 4096x3072x768"
default_variants="16,16:inner-x 32,32:inner-x 8,32:inner-x 16,16:outer-x
  s:64x64/4x4/k8 s:128x128/8x8/k8 s:64x128/4x8/k8 s:128x64/8x4/k16
  s:128x128/8x8/k8/shared s:128x128/8x8/k16/shared s:256x128/8x8/k8/shared
  s:128x128/4x8/k8/shared s:128x64/8x4/k16/shared s:64x64/4x4/k16/shared
  s:32x32/2x2/k16/shared s:64x64/4x4/k16/shared/split4 s:32x64/2x4/k16/shared/split4
  pick"
# The first needs 266240 bytes of shared memory per block (227 KiB is
# sm_90's limit): its launch is refused wherever it runs.
launch_failure_sites="128x128/8x8/k128/shared,64x64/4x4/k16/shared,cublas"
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=common.sh
source "$here/common.sh"

build() {
  local bundle=${1:-$root/build/gpu-bundle}
  local stc_build=${STC_BUILD:-$root/build/gpu}
  local chip=${STC_GPU_CHIP:-sm_90}
  local opt=$stc_build/bin/stc-opt
  set -e
  rm -rf "$bundle"
  mkdir -p "$bundle/lib" "$bundle/bin" "$bundle/examples" "$bundle/obj"
  cp "$stc_build/lib/libstc_rt.so" "$bundle/lib/"
  cp -L /lib/x86_64-linux-gnu/libyaml-0.so.2 "$bundle/lib/" 2>/dev/null || true
  cp "$stc_build/bin/test_gpu" "$bundle/bin/"
  cp "$stc_build/bin/test_trial_gpu" "$bundle/bin/"
  cp "$root/test/e2e/compare-outputs.py" "$here/device-run.sh" "$here/common.sh" "$here/triton_matmul.py" \
    "$here/gpu_table.py" "$bundle/"
  local rt=$bundle/lib/libstc_rt.so
  local link=(-Wl,-rpath,'$ORIGIN/../lib' -lm -lpthread)
  cc -O2 -c -o "$bundle/obj/runner_utils.o" "$root/runtime/runner_utils.c"
  cat > "$bundle/obj/main.c" <<'MAIN'
extern void __stc_aot_entry(void);
int main(void) {
  __stc_aot_entry();
  return 0;
}
MAIN
  # Each example: the CUDA executable, and the CPU build's output.
  local cpu_cache
  cpu_cache=$(mktemp -d)
  # The e2e programs that print (a @main and printMemrefF32) too, and the
  # conv/reduction bench. A program that does not compile for CUDA is
  # listed with its error (examples.csv: NOT-COMPILED), never skipped.
  local models=("$root"/examples/*.mlir "$root"/test/gpu/Inputs/*.mlir "$here/convred.mlir")
  local e2e
  for e2e in "$root"/test/e2e/Inputs/*.mlir; do
    # Not the runner utilities' own fixtures (test/e2e/runner-utils.test):
    # they print NaNs, addresses and empty memrefs, which compare-outputs.py
    # does not compare, and no tunable op.
    [[ $(basename "$e2e") == runner-utils-* ]] && continue
    if grep -q 'func.func @main' "$e2e" && grep -q 'printMemrefF32' "$e2e"; then
      models+=("$e2e")
    fi
  done
  for model in "${models[@]}"; do
    local name
    name=$(basename "$model" .mlir)
    local obj=$bundle/obj/$name.o
    local sites=()
    [[ $name == convred && -n ${STC_CONVRED_SITES:-} ]] && sites=(--gpu-sites="$STC_CONVRED_SITES")
    if ! "$opt" --tune-hot-paths --target=cuda --gpu-chip="$chip" ${sites[@]+"${sites[@]}"} \
        --emit=obj "$model" -o "$obj" 2> "$bundle/obj/$name.log"; then
      { grep -m1 'error:' "$bundle/obj/$name.log" || echo "stc-opt failed"; } | sed "s|$root/||" \
        > "$bundle/examples/$name.not-compiled"
      echo "device-run.sh: $name does not compile for --target=cuda: $(cat "$bundle/examples/$name.not-compiled")" >&2
      continue
    fi
    objcopy --redefine-sym main=__stc_aot_entry "$obj"
    cc -o "$bundle/examples/$name.cuda" "$bundle/obj/main.c" "$obj" \
      "$bundle/obj/runner_utils.o" "$rt" "${link[@]}"
    PATH=$stc_build/bin:$PATH "$root/test/e2e/aot-build.sh" "$model" "$bundle/obj/$name.cpu"
    STC_CACHE_DIR=$cpu_cache "$bundle/obj/$name.cpu" > "$bundle/examples/$name.cpu.out"
  done
  "$opt" --tune-hot-paths --target=cuda --gpu-chip="$chip" --gpu-format=bin --emit=obj \
    "$root/examples/mlp.mlir" -o "$bundle/obj/mlp.cubin.o"
  objcopy --redefine-sym main=__stc_aot_entry "$bundle/obj/mlp.cubin.o"
  cc -o "$bundle/examples/mlp.cubin.cuda" "$bundle/obj/main.c" "$bundle/obj/mlp.cubin.o" \
    "$bundle/obj/runner_utils.o" "$rt" "${link[@]}"
  cp "$bundle/examples/mlp.cpu.out" "$bundle/examples/mlp.cubin.cpu.out"
  # A site variant the device cannot launch (PTX and cubin: ptxas accepts
  # it, the dynamic shared memory size is the launch's).
  local format
  for format in isa bin; do
    local lf=launch_failure
    [[ $format == bin ]] && lf=launch_failure.cubin
    "$opt" --tune-hot-paths --target=cuda --gpu-chip="$chip" --gpu-format=$format \
      --gpu-sites="$launch_failure_sites" --emit=obj "$here/launch_failure.mlir" \
      -o "$bundle/obj/$lf.o" 2> /dev/null
    objcopy --redefine-sym main=__stc_aot_entry "$bundle/obj/$lf.o"
    cc -o "$bundle/examples/$lf.cuda" "$bundle/obj/main.c" "$bundle/obj/$lf.o" \
      "$bundle/obj/runner_utils.o" "$rt" "${link[@]}"
  done
  PATH=$stc_build/bin:$PATH "$root/test/e2e/aot-build.sh" "$here/launch_failure.mlir" \
    "$bundle/obj/launch_failure.cpu" 2> /dev/null
  STC_CACHE_DIR=$cpu_cache "$bundle/obj/launch_failure.cpu" > "$bundle/examples/launch_failure.cpu.out"
  cp "$bundle/examples/launch_failure.cpu.out" "$bundle/examples/launch_failure.cubin.cpu.out"
  rm -rf "$cpu_cache"
  # A constant's device copy, once per process.
  "$opt" --tune-hot-paths --target=cuda --gpu-chip="$chip" --gpu-sites=off --emit=obj \
    "$here/constant_loop.mlir" -o "$bundle/obj/constant_loop.o" 2> /dev/null
  cc -O2 -I"$root/include" -o "$bundle/bin/constant_loop" "$here/constant_loop.c" \
    "$bundle/obj/constant_loop.o" "$rt" "${link[@]}" -ldl
  # The matmul bench: one object per (shape, block tile, mapping).
  local header=$bundle/obj/matmul_variants.h objects=()
  : > "$header"
  for shape in ${STC_BENCH_SHAPES:-$default_shapes}; do
    local m k n
    IFS=x read -r m k n <<< "$shape"
    for variant in ${STC_BENCH_VARIANTS:-$default_variants}; do
      local fn label flags
      if [[ $variant == pick ]]; then
        fn=mm_${m}x${k}x${n}_pick
        label=pick
        flags=()
      elif [[ $variant == s:* ]]; then
        local spec=${variant#s:} bm bn tm tn bk split=1
        IFS='x/k' read -r bm bn tm tn _ bk <<< "${spec%%/shared*}"
        [[ $spec == */split* ]] && split=${spec##*/split}
        # /shared handles a partial last block row (any M).
        local rows=$bm
        [[ $spec == */shared* ]] && rows=1
        (( m % rows == 0 && n % bn == 0 && k % (bk * split) == 0 )) || continue
        fn=mm_${m}x${k}x${n}_s${bm}x${bn}_${tm}x${tn}_k${bk}
        [[ $spec == */shared* ]] && fn+=_shared
        (( split > 1 )) && fn+=_split$split
        label=$spec
        flags=(--gpu-schedule="$spec")
      else
        local block=${variant%%:*} mapping=${variant##*:}
        fn=mm_${m}x${k}x${n}_b${block/,/x}_${mapping/-/_}
        label=${block/,/x}/$mapping
        flags=(--gpu-block="$block" --gpu-mapping="$mapping" --gpu-sites=off)
      fi
      objects+=("$(matmul_object "$bundle" "$opt" "$chip" "$fn" "$m" "$k" "$n" "$label" "${flags[@]}")")
    done
  done
  cc -O2 -I"$root/include" -I"$bundle/obj" -o "$bundle/bin/matmul_bench" \
    "$here/matmul_bench.c" "${objects[@]}" "$rt" "${link[@]}"
  rm -rf "$bundle/obj"
  echo "device-run.sh: bundle in $bundle ($(du -sh "$bundle" | cut -f1))"
}

run() {
  local bundle=$1 out=$2 failures=0
  mkdir -p "$out"
  export LD_LIBRARY_PATH=$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  find_cublas
  echo "cuBLAS: ${STC_CUBLAS_LIBRARY:-loader path}" > "$out/device.txt"
  nvidia-smi >> "$out/device.txt" 2>&1 || true
  # One process per test, as ctest runs them: the device-fault test leaves
  # its process's context unusable on purpose (a sticky error), which made
  # the later cuBLAS test fail when all ran in one process. Exit 77 =
  # skipped (with its reason in the log).
  : > "$out/test_gpu.log"
  local t rc
  local suite
  for suite in test_gpu test_trial_gpu; do
    [[ -x $bundle/bin/$suite ]] || continue
    for t in $("$bundle/bin/$suite" --list); do
      rc=0
      echo "== $suite $t" >> "$out/test_gpu.log"
      "$bundle/bin/$suite" "$t" >> "$out/test_gpu.log" 2>&1 || rc=$?
      if [[ $rc != 0 && $rc != 77 ]]; then
        echo "$suite $t failed (exit $rc)"; failures=$((failures + 1))
      fi
    done
  done
  echo "name,status,seconds,stderr" > "$out/examples.csv"
  local nc
  for nc in "$bundle"/examples/*.not-compiled; do
    [[ -e $nc ]] || continue
    echo "$(basename "$nc" .not-compiled),NOT-COMPILED,0,$(tr '\n,' '; ' < "$nc")" >> "$out/examples.csv"
  done
  for exe in "$bundle"/examples/*.cuda; do
    local name
    name=$(basename "$exe" .cuda)
    local start end status
    local bench=()
    # The conv/reduction bench: every variant measured in full (no early
    # rejection, a long tuning target), its reports kept whole.
    [[ $name == convred ]] && bench=(env STC_TUNE_EARLY_REJECTION=0 STC_TUNE_TARGET_S=30
                                     STC_TUNE_BUDGET_S=60)
    start=$(date +%s.%N)
    # Sites tune on this first run; their reports go to examples.log. The
    # launch_failure programs get a fresh cache each: the second of them
    # would otherwise find the first one's decision there (a disk hit, no
    # tuning, nothing rejected).
    local cache_dir='' fresh=()
    if [[ $name == launch_failure* ]]; then
      cache_dir=$(mktemp -d)
      fresh=(STC_CACHE_DIR="$cache_dir")
    fi
    if env ${fresh[@]+"${fresh[@]}"} STC_TUNE_REPORT=1 ${bench[@]+"${bench[@]}"} "$exe" > "$out/$name.out" 2> "$out/$name.err"; then
      if python3 "$bundle/compare-outputs.py" "$bundle/examples/$name.cpu.out" "$out/$name.out" \
          > "$out/$name.cmp" 2>&1; then
        status=match
      else
        status=MISMATCH
      fi
    else
      status=CRASH
    fi
    # The unlaunchable variant: rejected with the device's note, the output
    # still right (the status above).
    if [[ $name == launch_failure* && $status == match ]] &&
       ! grep -q "rejected: variant 'gpu_b128x128_t8x8_k128_shared' failed on the GPU: .*266240 bytes of shared memory" "$out/$name.err"; then
      status=NOT-REJECTED
    fi
    [[ -n $cache_dir ]] && rm -rf "$cache_dir"
    end=$(date +%s.%N)
    echo "$name,$status,$(python3 -c "print(round($end - $start, 3))"),$(head -c 300 "$out/$name.err" | tr '\n,' '; ')" \
      >> "$out/examples.csv"
    [[ $status == match ]] || failures=$((failures + 1))
  done
  # Constants: one device copy per process, however often the function runs.
  rc=0
  "$bundle/bin/constant_loop" 1000 > "$out/constant_loop.out" 2> "$out/constant_loop.err" || rc=$?
  echo "constant_loop,$([[ $rc == 0 ]] && echo match || echo "FAILED($rc)"),0,$(tr '\n,' '; ' < "$out/constant_loop.out")" \
    >> "$out/examples.csv"
  [[ $rc == 0 ]] || failures=$((failures + 1))
  # One log of everything per example (the 8-file limit of what comes
  # back): the bench's reports whole, first; the rest cut at 4000 bytes.
  { [[ -e $out/convred.err ]] && { echo "==== convred.err (whole)"; cat "$out/convred.err"; }
    for f in "$out"/*.out "$out"/*.err "$out"/*.cmp; do
      [[ -e $f ]] && { echo "==== $(basename "$f")"; head -c 4000 "$f"; echo; }
    done; } > "$out/examples.log" 2>/dev/null
  rm -f "$out"/*.out "$out"/*.err "$out"/*.cmp
  # Memory errors and leaks of the compiled programs (compute-sanitizer is
  # in the CUDA toolkit; skipped where it is missing).
  local sanitizer
  sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  if [[ -x $sanitizer && -z ${STC_DEVICE_QUICK:-} && ${STC_DEVICE_SANITIZER:-on} != off ]]; then
    for exe in "$bundle"/examples/*.cuda; do
      echo "== $(basename "$exe" .cuda)"
      timeout 120 "$sanitizer" --tool memcheck --print-limit 10 "$exe" 2>&1 \
        | grep '^=========' | grep -v '^========= *$' | head -12
    done > "$out/sanitizer.log"
    # The scheduled kernels: shared-memory races (barriers) and accesses.
    local only tool
    for only in 256x256x256_s64x64_4x4_k16_shared 128x256x256_s128x128_8x8_k16_shared \
                197x768x2304_s128x128_8x8_k8_shared 197x768x2304_s64x64_4x4_k16_shared_split4 \
                256x256x256_s64x64_4x4_k8 \
                128x256x256_s64x128_4x8_k8; do
      for tool in memcheck racecheck; do
        echo "== matmul_bench $only ($tool)"
        STC_BENCH_ONLY=$only timeout 120 "$sanitizer" --tool $tool --print-limit 10 \
          "$bundle/bin/matmul_bench" 2>&1 | grep -E '^=========|WRONG|gpu-error' \
          | grep -v '^========= *$' | head -12
      done
    done >> "$out/sanitizer.log"
    grep -q 'ERROR SUMMARY: [1-9]\|RACECHECK SUMMARY: [1-9]' "$out/sanitizer.log" &&
      failures=$((failures + 1))
  fi
  # The bench's "pick" sites tune on their first call (reports on stderr)
  # and store their decisions in a fresh cache; a second process then finds
  # them there (disk hits, no tuning). The read-back limit is raised from
  # 64 MiB so that 8192^2 f32 outputs (256 MiB) can be validated: at the
  # default such a site cannot validate a candidate and keeps its reference.
  local cache
  cache=$(mktemp -d)
  export STC_TUNE_READBACK_LIMIT=${STC_TUNE_READBACK_LIMIT:-512MiB}
  STC_CACHE_DIR=$cache STC_TUNE_REPORT=1 "$bundle/bin/matmul_bench" > "$out/matmul.csv" \
    2> "$out/matmul.err" || failures=$((failures + 1))
  { echo "==== second process, same cache (STC_BENCH_ONLY=pick)"
    STC_CACHE_DIR=$cache STC_TUNE_REPORT=1 STC_BENCH_ONLY=pick "$bundle/bin/matmul_bench" 2>&1
  } >> "$out/matmul.err"
  rm -rf "$cache"
  [[ -n ${STC_DEVICE_QUICK:-} ]] ||
    python3 "$bundle/triton_matmul.py" ${STC_BENCH_SHAPES:-$default_shapes} > "$out/reference.csv" \
      2>> "$out/matmul.err" || true
  # The per-shape table, with where and when it was measured.
  local device driver reference=()
  [[ -s $out/reference.csv ]] && reference=("$out/reference.csv")
  device=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
  driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1)
  python3 "$bundle/gpu_table.py" --full \
    --comment "device: ${device:-unknown}, driver ${driver:-unknown}; $(grep -m1 '^matmul_bench: ' "$out/matmul.err")" \
    --comment "date: $(date -u '+%Y-%m-%d %H:%M UTC')" \
    --comment "command: tools/gpu/device-run.sh run (STC_DEVICE_QUICK=${STC_DEVICE_QUICK:-} STC_DEVICE_SANITIZER=${STC_DEVICE_SANITIZER:-on} STC_TUNE_READBACK_LIMIT=$STC_TUNE_READBACK_LIMIT); bundle built with STC_BENCH_SHAPES=${STC_BENCH_SHAPES:-default} STC_BENCH_VARIANTS=${STC_BENCH_VARIANTS:-default}" \
    --comment "GFLOP/s, f32, TF32 off; best of all = generated kernels and cuBLAS (Triton informational); pick = the GPU dispatch site's winner called through its dispatch" \
    "$out/matmul.csv" "${reference[@]}" > "$out/table.csv" 2>> "$out/matmul.err" || true
  cat "$out/examples.csv" "$out/matmul.csv"
  [[ -e $out/reference.csv ]] && cat "$out/reference.csv"
  cat "$out/table.csv"
  echo "device-run.sh: $failures failure(s)"
  [[ $failures -eq 0 ]]
}

case ${1:-} in
  build) shift; build "$@" ;;
  run) shift; [[ $# -eq 2 ]] || { echo "usage: $0 run BUNDLE OUTDIR" >&2; exit 2; }; run "$@" ;;
  *) echo "usage: $0 build [BUNDLE] | run BUNDLE OUTDIR" >&2; exit 2 ;;
esac
