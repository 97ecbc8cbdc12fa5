#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ with clang-22 (ASan + UBSan) and runs
# each on its seed corpus (fuzz/corpus/<target>/, committed) plus a work
# corpus under build/fuzz/ that grows between runs.
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
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    -*) echo "fuzz/run.sh: unknown option $arg" >&2; exit 2 ;;
    *) targets+=("$arg") ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || targets=(profile_reader cache_record)

cc=${STC_FUZZ_CC:-clang-22}
command -v "$cc" >/dev/null ||
  { echo "fuzz/run.sh: $cc not found (tools/install-deps.sh installs clang-22 and libclang-rt-22-dev)" >&2; exit 1; }

out=build/fuzz
mkdir -p "$out/artifacts"
# The MLIR-free core, built into each target with the sanitizers; libyaml is
# the system's (not instrumented).
core=(lib/support/*.c lib/hints/*.c lib/profile/*.c lib/tuner/*.c)
flags=(-g -O1 -std=c11 -D_DEFAULT_SOURCE -D_POSIX_C_SOURCE=200809L
       -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
       -fno-omit-frame-pointer -Iinclude -Ilib/tuner)

# A private scratch directory for the cache target, on tmpfs when possible.
scratch_base=/dev/shm
[ -d "$scratch_base" ] && [ -w "$scratch_base" ] || scratch_base=${TMPDIR:-/tmp}
scratch=$(mktemp -d "$scratch_base/stc-fuzz.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

status=0
for target in "${targets[@]}"; do
  [ -f "fuzz/$target.c" ] || { echo "fuzz/run.sh: no target fuzz/$target.c" >&2; exit 2; }
  "$cc" "${flags[@]}" "fuzz/$target.c" "${core[@]}" -lyaml -lm -lpthread -o "$out/$target"
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
