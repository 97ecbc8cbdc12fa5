#!/usr/bin/env bash
# Runs one conformance case (test/conformance/*.mlir) one way and prints what
# the program prints, for FileCheck with the case's upstream CHECK lines.
# In: mode case.mlir [work-dir]. Modes:
#   ref      upstream: mlir-opt with the case's `// REF-PIPELINE: <pipeline>`
#            line (its upstream RUN pipeline, as one --pass-pipeline), or
#            test/e2e/reference-pipeline.txt without one, then mlir-runner
#            (%inputs in the pipeline: this Inputs folder)
#   default  stc-run --tune-hot-paths (the static-cost plan), a fresh cache
#   all-hot  stc-run --tune-hot-paths with options that make every tunable
#            op hot and plan variants for all of them, a fresh cache
#            (work-dir/cache), every variant checked (STC_TUNE_CHECK_ALL=1)
#            (stderr kept in work-dir/all-hot.err; a mismatch or a runtime
#            warning fails)
#   cached   the all-hot command again, from all-hot's cache, which it must
#            leave unchanged
# Tools: mlir-opt, mlir-runner, stc-run on PATH (lit's PATH).
set -euo pipefail
mode=$1 case=$2 work=${3:-}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
llvm_lib=${STC_LLVM_LIB:-/usr/lib/llvm-22/lib}
all_hot='hot-share=1.0 cold-share=1.0 min-samples=0 budget=1000 variants-per-hot=4'
case $mode in
  ref)
    pipeline=$(sed -n 's|^// REF-PIPELINE: *||p' "$case")
    [[ -n $pipeline ]] || pipeline=$(<"$here/../../e2e/reference-pipeline.txt")
    pipeline=${pipeline//%inputs/$here}
    mlir-opt "$case" --pass-pipeline="$pipeline" |
      mlir-runner -e main -entry-point-result=void \
        -shared-libs="$llvm_lib/libmlir_runner_utils.so,$llvm_lib/libmlir_c_runner_utils.so" ;;
  default)
    rm -rf "$work/default-cache" && mkdir -p "$work"
    STC_CACHE_DIR=$work/default-cache stc-run --tune-hot-paths "$case" ;;
  all-hot)
    rm -rf "$work/cache" && mkdir -p "$work"
    status=0
    STC_CACHE_DIR=$work/cache STC_TUNE_CHECK_ALL=1 STC_TUNE_SAMPLES=3 STC_TUNE_WARMUPS=1 \
      STC_TUNE_BUDGET_MS=300 stc-run --tune-hot-paths --hot-path-options="$all_hot" "$case" \
      2> "$work/all-hot.err" || status=$?
    cat "$work/all-hot.err" >&2
    [[ $status == 0 ]] || exit $status
    # every site's variants agree with its reference; nothing failed
    if grep -E 'FAIL|[1-9][0-9]* mismatches|stc: warning' "$work/all-hot.err" >&2; then
      echo "run-case: all-hot: a variant disagreed or the runtime warned (above)" >&2; exit 1
    fi ;;
  cached)
    # The all-hot command again on all-hot's cache: it must tune nothing new
    # (the records are the same files, byte for byte, before and after). A
    # program without sites writes no cache: then this is a plain rerun.
    records() { [[ ! -d $work/cache ]] || (cd "$work" && find cache -type f | LC_ALL=C sort | xargs -r md5sum); }
    before=$(records)
    STC_CACHE_DIR=$work/cache stc-run --tune-hot-paths --hot-path-options="$all_hot" "$case"
    [[ $(records) == "$before" ]] ||
      { echo "run-case: cached: the run changed the cache (it tuned again?)" >&2; exit 1; } ;;
  *) echo "usage: $0 ref|default|all-hot|cached case.mlir [work-dir]" >&2; exit 2 ;;
esac
