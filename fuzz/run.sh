#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ with clang-22 (ASan + UBSan) and runs
# each on its seed corpus (fuzz/corpus/<target>/, committed) plus a work
# corpus under build/fuzz/ that grows between runs. Targets: profile_reader,
# object_entry (stc-run's object-cache entries), warm_index (the runtime's
# warm-start index),
# cache_record (the MLIR-free core), verify_diagnostics and pipeline_parser
# (stc-opt's parsers; they link a CMake build of stc with the compiler).
#
#   fuzz/run.sh                      # every target, 10 minutes each
#   fuzz/run.sh --seconds=20         # what tools/run-tests.sh runs in CI
#   fuzz/run.sh --runs=1000000 cache_record
#
# Prints one "FUZZ <target> execs=N seconds=S crashes=0" line per target.
# A crash, leak or UBSan report fails the run; the input that caused it is
# kept in build/fuzz/artifacts/ (turn it into a regression test: add it to
# the target's seed corpus, and a unit or lit test of the fixed behaviour).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

seconds=600
runs=
targets=()
for arg in "$@"; do
  case "$arg" in
    --seconds=*) seconds=${arg#--seconds=} ;;
    --runs=*) runs=${arg#--runs=} ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    -*) echo "fuzz/run.sh: unknown option $arg" >&2; exit 2 ;;
    *) targets+=("$arg") ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || targets=(profile_reader cache_record object_entry warm_index verify_diagnostics pipeline_parser)

cc=${STC_FUZZ_CC:-clang-22}
command -v "$cc" >/dev/null ||
  { echo "fuzz/run.sh: $cc not found (tools/install-deps.sh installs clang-22 and libclang-rt-22-dev)" >&2; exit 1; }

out=build/fuzz
mkdir -p "$out/artifacts"
# The MLIR-free core, built into each target with the sanitizers; libyaml is
# the system's (not instrumented).
core=(lib/support/*.c lib/hints/*.c lib/profile/*.c lib/tuner/*.c)
flags=(-g -O1 -std=c11 -D_DEFAULT_SOURCE -D_POSIX_C_SOURCE=200809L -D_GNU_SOURCE
       -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
       -fno-omit-frame-pointer -Iinclude -Ilib/tuner)
# stc-opt's parsers: their own files built with the sanitizers, the rest of
# stc from a CMake build with the compiler (STC_FUZZ_BUILD, default
# build/plain as tools/run-tests.sh makes it, else build/rel), and the MLIR
# C API linked the way cmake/StcMLIR.cmake does.
stc_build=${STC_FUZZ_BUILD:-}
if [ -z "$stc_build" ]; then
  for dir in build/plain build/rel; do
    [ -f "$dir/lib/libstc_passes.a" ] && { stc_build=$dir; break; }
  done
fi
mlir=/usr/lib/llvm-22/lib
mlir_capi=()
# The components are cmake/StcMLIR.cmake's STC_MLIR_CAPI_COMPONENTS (one list,
# so that a component the build adds cannot be missing here).
components=$(sed -n '/^set(STC_MLIR_CAPI_COMPONENTS/,/)/p' cmake/StcMLIR.cmake |
             sed 's/set(STC_MLIR_CAPI_COMPONENTS//; s/)//')
[ -n "$components" ] || { echo "fuzz/run.sh: no STC_MLIR_CAPI_COMPONENTS in cmake/StcMLIR.cmake" >&2; exit 1; }
for component in $components; do
  mlir_capi+=("$mlir/libMLIRCAPI$component.a")
done
compiler_flags=(-Itools/stc-opt -Itools/common -Ipasses -isystem /usr/lib/llvm-22/include)
compiler_libs=("$stc_build/lib/libstc_tool_support.a" "$stc_build/lib/libstc_tool_base.a" "$stc_build/lib/libstc_host.a"
               "$stc_build/lib/libstc_passes.a" "$stc_build/lib/libstc_core.a" -Wl,--start-group "${mlir_capi[@]}" -Wl,--end-group
               "$mlir/libMLIR.so" "$mlir/libLLVM.so" -lstdc++ -Wl,-rpath,"$mlir")
# "core" and any more files built with it; else stc-opt's files (below).
declare -A sources=(
  [profile_reader]="core"
  [cache_record]="core"
  [warm_index]="core runtime/warm_start.c"
  [verify_diagnostics]="tools/stc-opt/verify.c tools/stc-opt/diagnostics.c"
  [pipeline_parser]="tools/stc-opt/pipeline.c tools/stc-opt/text.c tools/stc-opt/tune_hot_paths.c"
)

# A private scratch directory for the cache target, on tmpfs when possible.
scratch_base=/dev/shm
[ -d "$scratch_base" ] && [ -w "$scratch_base" ] || scratch_base=${TMPDIR:-/tmp}
scratch=$(mktemp -d "$scratch_base/stc-fuzz.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

status=0
for target in "${targets[@]}"; do
  [ -f "fuzz/$target.c" ] || { echo "fuzz/run.sh: no target fuzz/$target.c" >&2; exit 2; }
  spec=${sources[$target]:-core}
  if [ "${spec%% *}" = core ]; then
    # shellcheck disable=SC2086 # a list of files
    "$cc" "${flags[@]}" "fuzz/$target.c" ${spec#core} "${core[@]}" -lyaml -lm -lpthread \
      -o "$out/$target"
  else
    if [ -z "$stc_build" ]; then
      echo "FUZZ $target SKIPPED: no CMake build with the compiler (set STC_FUZZ_BUILD)"
      [ -z "${CI:-}" ] || status=1
      continue
    fi
    # shellcheck disable=SC2086 # a list of files
    "$cc" "${flags[@]}" "${compiler_flags[@]}" "fuzz/$target.c" ${sources[$target]} \
      "${compiler_libs[@]}" -lyaml -lm -lpthread -o "$out/$target"
  fi
  work="$out/corpus/$target"
  mkdir -p "$work"
  limit=(-max_total_time="$seconds")
  [ -z "$runs" ] || limit=(-runs="$runs")
  dict=()
  [ ! -f "fuzz/$target.dict" ] || dict=(-dict="fuzz/$target.dict")
  log="$out/$target.log"
  start=$(date +%s)
  if TMPDIR="$scratch" UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
     "$out/$target" "${limit[@]}" "${dict[@]}" -print_final_stats=1 \
       -max_len=8192 -timeout=10 -rss_limit_mb=2048 \
       -artifact_prefix="$out/artifacts/$target-" \
       "$work" "fuzz/corpus/$target" > "$log" 2>&1; then
    crashes=0
  else
    crashes=1
    status=1
    tail -40 "$log"
  fi
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  echo "FUZZ $target execs=${execs:-0} seconds=$(( $(date +%s) - start )) crashes=$crashes"
done
exit $status
